"""scipy.signal: convolve, correlate, fftconvolve, convolve2d, correlate2d and lfilter."""

import numpy as np
import pytest
import scipy.signal as ss

import rules  # noqa: F401  (registers the rules)
from rules import rrule
from rules.testing import check_frule, check_rrule

DTYPES = [np.float64, np.float32, np.complex128]


def draw(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


SHAPES = [((6,), (3,)), ((3,), (5,)), ((4, 5), (2, 3)), ((4, 5), (3, 2)), ((2, 3, 4), (2, 2, 2))]


def _nested(s1, s2):
    """'valid' needs one input at least as large as the other along every axis."""
    return all(n >= m for n, m in zip(s1, s2, strict=True)) or all(
        m >= n for n, m in zip(s1, s2, strict=True)
    )


@pytest.mark.parametrize(
    ("shapes", "mode"),
    [(s, m) for s in SHAPES for m in ("full", "same", "valid") if m != "valid" or _nested(*s)],
    ids=str,
)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", [ss.convolve, ss.correlate, ss.fftconvolve], ids=lambda f: f.__name__)
def test_nd(rng, f, dtype, shapes, mode):
    a, b = draw(rng, shapes[0], dtype), draw(rng, shapes[1], dtype)
    check_rrule(f, a, b, mode)
    check_frule(f, a, b, mode)


@pytest.mark.parametrize("method", ["direct", "fft"])
def test_method_and_mixed_real_complex(rng, method):
    a, b = draw(rng, (5,), np.float64), draw(rng, (3,), np.complex128)
    check_rrule(ss.convolve, a, b, "same", method)
    check_rrule(ss.correlate, b, a, mode="valid", method=method)
    check_frule(ss.correlate, a, b, "full", method)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", [((4, 5), (2, 3)), ((5, 4), (3, 2)), ((3, 3), (3, 3))], ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", [ss.convolve2d, ss.correlate2d], ids=lambda f: f.__name__)
def test_2d(rng, f, dtype, shapes, mode):
    a, b = draw(rng, shapes[0], dtype), draw(rng, shapes[1], dtype)
    check_rrule(f, a, b, mode)
    check_frule(f, a, b, mode)
    check_rrule(f, a, b, mode=mode)


def test_convolve2d_with_a_larger_kernel_in_valid_mode(rng):
    a, b = draw(rng, (2, 3), np.float64), draw(rng, (3, 4), np.float64)
    check_rrule(ss.convolve2d, a, b, "valid")


def test_unsupported_options_are_refused_by_name(rng):
    a, b = np.ones((3, 3)), np.ones((2, 2))
    with pytest.raises(ValueError, match="convolve2d support boundary='fill'"):
        rrule(ss.convolve2d, a, b, "full", "wrap")
    with pytest.raises(ValueError, match="fftconvolve"):
        rrule(ss.fftconvolve, a, b, axes=0)
    with pytest.raises(ValueError, match="correlate2d support mode='valid' only"):
        rrule(ss.correlate2d, b, a, "valid")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("taps_b", "taps_a"), [(3, 1), (2, 3), (1, 2)])
def test_lfilter(rng, dtype, taps_b, taps_a):
    b = draw(rng, (taps_b,), dtype)
    a = np.concatenate([[1.5], 0.3 * draw(rng, (taps_a - 1,), dtype)]).astype(dtype)
    x = draw(rng, (7,), dtype)
    check_rrule(ss.lfilter, b, a, x)
    check_frule(ss.lfilter, b, a, x)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_lfilter_along_an_axis(rng, axis):
    b, a = draw(rng, (2,), np.float64), np.array([1.0, -0.4, 0.1])
    x = draw(rng, (4, 5), np.float64)
    check_rrule(ss.lfilter, b, a, x, axis)
    check_frule(ss.lfilter, b, a, x, axis=axis)


def test_lfilter_initial_conditions_are_refused():
    with pytest.raises(ValueError, match="zi"):
        rrule(ss.lfilter, [1.0], [1.0], np.ones(3), -1, np.zeros(0))
