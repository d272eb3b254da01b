"""Non-differentiable functions: NoTangent() for every argument, both directions; complex sign."""

import operator

import numpy as np
import pytest

import rules  # noqa: F401  (registers the rules)
from rules import frule, rrule
from rules.testing import check_frule, check_rrule
from tangents import NoTangent

X = np.array([[0.3, -1.7, 2.2], [1.2, 0.4, -0.6]])  # away from the jumps of round and floor
Y = np.array([[0.1, -1.0, 3.0], [1.0, 0.5, -0.9]])

CALLS = [
    (np.argmax, (X,), {}),
    (np.argmin, (X,), {"axis": 1}),
    (np.argsort, (X,), {}),
    (np.argpartition, (X[0], 1), {}),
    (np.searchsorted, (np.sort(X[0]), 0.5), {}),
    (np.digitize, (X, [0.0, 1.0]), {}),
    (np.nonzero, (X,), {}),
    (np.flatnonzero, (X,), {}),
    (np.argwhere, (X,), {}),
    (np.count_nonzero, (X,), {}),
    (np.sign, (X,), {}),
    (np.floor, (X,), {}),
    (np.ceil, (X,), {}),
    (np.round, (X,), {}),
    (np.around, (X, 1), {}),
    (np.trunc, (X,), {}),
    (np.fix, (X,), {}),
    (np.rint, (X,), {}),
    (np.floor_divide, (X, Y), {}),
    (operator.floordiv, (X, Y), {}),
    (np.isnan, (X,), {}),
    (np.isfinite, (X,), {}),
    (np.isinf, (X,), {}),
    (np.isposinf, (X,), {}),
    (np.isneginf, (X,), {}),
    (np.signbit, (X,), {}),
    (np.isreal, (X,), {}),
    (np.iscomplex, (X,), {}),
    (np.isclose, (X, Y), {}),
    (np.allclose, (X, Y), {}),
    (np.array_equal, (X, Y), {}),
    (np.equal, (X, Y), {}),
    (np.not_equal, (X, Y), {}),
    (np.less, (X, Y), {}),
    (np.less_equal, (X, Y), {}),
    (np.greater, (X, Y), {}),
    (np.greater_equal, (X, Y), {}),
    (np.logical_and, (X, Y), {}),
    (np.logical_or, (X, Y), {}),
    (np.logical_xor, (X, Y), {}),
    (np.logical_not, (X,), {}),
    (operator.eq, (X, Y), {}),
    (operator.ne, (X, Y), {}),
    (operator.lt, (X, Y), {}),
    (operator.le, (X, Y), {}),
    (operator.gt, (X, Y), {}),
    (operator.ge, (X, Y), {}),
    (operator.not_, (X[0, 0],), {}),
    (operator.and_, (X > 0, Y > 0), {}),
    (operator.or_, (X > 0, Y > 0), {}),
    (operator.xor, (X > 0, Y > 0), {}),
    (operator.invert, (X > 0,), {}),
    (np.zeros_like, (X,), {}),
    (np.ones_like, (X,), {}),
    (np.empty_like, (X,), {}),
    (np.shape, (X,), {}),
    (np.ndim, (X,), {}),
    (np.size, (X,), {}),
]


@pytest.mark.parametrize(("f", "args", "kwargs"), CALLS, ids=lambda v: getattr(v, "__name__", ""))
def test_no_tangents(f, args, kwargs):
    y, pullback = rrule(f, *args, **kwargs)
    if f is not np.empty_like:
        np.testing.assert_equal(y, f(*args, **kwargs))
    cotangents = pullback(np.ones(np.shape(y)))
    assert cotangents == (NoTangent(),) * (len(args) + 1)
    tangents = (NoTangent(), *(np.ones(np.shape(a)) for a in args))
    assert frule(tangents, f, *args, **kwargs)[1] is NoTangent()


@pytest.mark.parametrize("f", [np.floor, np.round, np.sign, np.argmax, np.zeros_like])
def test_checker_agrees_away_from_jumps(f):
    check_rrule(f, X)
    check_frule(f, X)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_sign_is_differentiable(rng, dtype):
    z = (rng.uniform(0.5, 2, (2, 3)) * np.exp(1j * rng.uniform(-3, 3, (2, 3)))).astype(dtype)
    check_rrule(np.sign, z)
    check_frule(np.sign, z)


def test_complex_sign_at_zero_is_zero():
    _, pullback = rrule(np.sign, np.array([0j, 2j]))
    _, z_bar = pullback(np.array([1.0 + 0j, 1.0 + 0j]))
    np.testing.assert_allclose(z_bar, [0, 0.5])
