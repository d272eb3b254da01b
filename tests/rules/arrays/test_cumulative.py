"""cumsum and cumprod: every axis, dtypes, and cumprod through zeros."""

import numpy as np
import pytest

import rules  # noqa: F401  (registers the rules)
from rules import frule, rrule
from rules.testing import check_frule, check_rrule
from tangents import NoTangent


def values(rng, dtype, shape=(2, 4)):
    x = rng.uniform(0.5, 1.5, shape) * rng.choice([-1, 1], shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.uniform(-0.5, 0.5, shape)
    return x.astype(dtype)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("f", [np.cumsum, np.cumprod], ids=lambda f: f.__name__)
def test_cumulative(rng, f, dtype, axis):
    x = values(rng, dtype)
    check_rrule(f, x, axis=axis)
    check_frule(f, x, axis=axis)


@pytest.mark.parametrize("f", [np.cumsum, np.cumprod], ids=lambda f: f.__name__)
def test_positional_axis_and_dtype(rng, f):
    x = values(rng, np.float64)
    check_rrule(f, x, 1)
    check_rrule(f, x, 0, "float64")  # (the checker cannot take the class np.float64)
    _, pullback = rrule(f, x, 1)
    assert pullback(np.ones_like(x))[2] is NoTangent()


@pytest.mark.parametrize(
    "zeros", [[(0, 1)], [(0, 0)], [(1, 3)], [(0, 1), (0, 2)], [(1, 0), (1, 2)]], ids=str
)
@pytest.mark.parametrize("axis", [None, 1, 0])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_cumprod_through_zeros(rng, zeros, axis, dtype):
    x = values(rng, dtype)
    for index in zeros:
        x[index] = 0
    check_rrule(np.cumprod, x, axis=axis)  # a polynomial: finite differences are exact
    check_frule(np.cumprod, x, axis=axis)


def test_cumprod_with_a_zero_matches_the_exclusive_products():
    a = np.array([2.0, 0.0, 3.0])  # y = [2, 0, 0]
    _, pullback = rrule(np.cumprod, a)
    _, a_bar = pullback(np.ones(3))
    # dy/da0 = [1, 0, 0]; dy/da1 = [0, 2, 6]; dy/da2 = [0, 0, 0]
    np.testing.assert_array_equal(a_bar, [1.0, 8.0, 0.0])
    _, y_dot = frule((NoTangent(), np.array([0.0, 1.0, 0.0])), np.cumprod, a)
    np.testing.assert_array_equal(y_dot, [0.0, 2.0, 6.0])


def test_integer_input(rng):
    n = np.array([[1, 2, 3], [4, 5, 6]])
    check_rrule(np.cumsum, n, axis=1)
    check_rrule(np.cumprod, n, axis=0)
    assert rrule(np.cumprod, n)[1](np.ones(6))[1].dtype == np.float64
