"""np.fft shifts and sample frequencies against finite differences."""

import numpy as np
import pytest

import rules  # noqa: F401  (registers the rules)
from rules import rrule
from rules.testing import check_frule, check_rrule
from tangents import NoTangent


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("f", [np.fft.fftshift, np.fft.ifftshift])
@pytest.mark.parametrize(("shape", "args"), [((5,), ()), ((3, 4), ()), ((3, 4, 2), ((0, 2),))])
def test_shifts(make_array, f, dtype, shape, args):
    x = make_array(shape, dtype)
    check_rrule(f, x, *args)
    check_frule(f, x, *args)


@pytest.mark.parametrize("f", [np.fft.fftfreq, np.fft.rfftfreq])
@pytest.mark.parametrize("n", [5, 8])
def test_frequencies_in_the_spacing(f, n):
    check_rrule(f, n, 0.3)
    check_frule(f, n, 0.3)


def test_frequencies_count_is_not_differentiated():
    _, pullback = rrule(np.fft.fftfreq, 4)
    assert pullback(np.ones(4)) == (NoTangent(), NoTangent())
