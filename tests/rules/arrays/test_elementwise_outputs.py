"""np.modf and np.frexp: two outputs each, from scalar_rule(..., outputs=2)."""

import numpy as np
import pytest

import rules  # noqa: F401  (registers the rules)
from rules import rrule
from rules.testing import check_frule, check_rrule
from tangents import ZeroTangent


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", [np.modf, np.frexp], ids=lambda f: f.__name__)
def test_two_outputs(rng, f, dtype):
    x = (3 * rng.standard_normal((2, 3))).astype(dtype)
    check_rrule(f, x)
    check_frule(f, x)
    check_rrule(f, np.asarray(x[0, 0]))


def test_frexp_mantissa_slope_is_two_to_the_minus_exponent():
    x = np.array([0.75, 3.0, -20.0])
    (_, e), pullback = rrule(np.frexp, x)
    _, x_bar = pullback((np.ones(3), ZeroTangent()))
    np.testing.assert_array_equal(x_bar, 2.0 ** -e.astype(float))
