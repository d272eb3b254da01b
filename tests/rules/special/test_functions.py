"""scipy.special: the elementwise table, logsumexp (with b), softmax and log_softmax."""

import numpy as np
import pytest
import scipy.special as sc

import rules  # noqa: F401  (registers the rules)
from rules import frule, rrule
from rules.testing import check_frule, check_rrule
from tangents import NoTangent

UNARY = {
    sc.expit: ((-2, 2), False),
    sc.logit: ((0.2, 0.8), False),
    sc.erf: ((-1, 1), True),
    sc.erfc: ((-1, 1), True),
    sc.gammaln: ((0.5, 3), False),
    sc.digamma: ((0.5, 3), False),
}
BINARY = [sc.xlogy, sc.xlog1py]
REDUCING = [
    {},
    {"axis": 1},
    {"axis": 0, "keepdims": True},
    {"axis": (0, 1)},
]


def draw(rng, interval, shape, dtype):
    x = rng.uniform(*interval, shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.uniform(-0.3, 0.3, shape)
    return x.astype(dtype)


@pytest.mark.parametrize(
    ("f", "dtype"),
    [(f, d) for f, (_, c) in UNARY.items() for d in [np.float64, np.float32] + [np.complex128] * c],
    ids=str,
)
def test_unary(rng, f, dtype):
    x = draw(rng, UNARY[f][0], (2, 3), dtype)
    check_rrule(f, x)
    check_frule(f, x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("f", BINARY, ids=lambda f: f.__name__)
def test_xlogy_family(rng, f, dtype):
    x = draw(rng, (-2, 2), (2, 3), dtype)
    y = draw(rng, (0.5, 2), (3,), dtype)
    check_rrule(f, x, y)
    check_frule(f, x, y)
    check_rrule(f, 1.5, y)


@pytest.mark.parametrize("f", BINARY, ids=lambda f: f.__name__)
def test_xlogy_at_zero_x_has_a_zero_y_partial(f):
    zero_at = -1.0 if f is sc.xlog1py else 0.0
    x = np.array([0.0, 0.0])
    y = np.array([zero_at, 2.0])
    _, pullback = rrule(f, x, y)
    _, x_bar, y_bar = pullback(np.ones(2))
    np.testing.assert_array_equal(y_bar, [0.0, 0.0])
    assert x_bar[0] == -np.inf  # log(0): the slope in x really is infinite there


@pytest.mark.parametrize("options", REDUCING, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_logsumexp(rng, dtype, options):
    a = draw(rng, (-2, 2), (2, 3), dtype)
    check_rrule(sc.logsumexp, a, **options)
    check_frule(sc.logsumexp, a, **options)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_logsumexp_with_positional_b(rng, dtype):
    a = draw(rng, (-2, 2), (2, 3), dtype)
    b = draw(rng, (0.5, 2), (3,), dtype)
    check_rrule(sc.logsumexp, a, 1, b)
    check_frule(sc.logsumexp, a, 1, b)
    check_rrule(sc.logsumexp, a, None, draw(rng, (0.5, 2), (2, 3), dtype), True)


def test_logsumexp_b_by_keyword_is_a_constant(rng):
    a = draw(rng, (-2, 2), (2, 3), np.float64)
    b = np.array([1.0, 2.0, 3.0])
    check_rrule(sc.logsumexp, a, axis=1, b=b)
    check_frule(sc.logsumexp, a, axis=1, b=b)
    assert len(rrule(sc.logsumexp, a, axis=1, b=b)[1](np.ones(2))) == 2


def test_logsumexp_return_sign_is_refused():
    with pytest.raises(ValueError, match="return_sign"):
        rrule(sc.logsumexp, np.ones(3), return_sign=True)


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)], ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("f", [sc.softmax, sc.log_softmax], ids=lambda f: f.__name__)
def test_softmax_family(rng, f, dtype, axis):
    x = draw(rng, (-2, 2), (2, 3), dtype)
    check_rrule(f, x, axis=axis)
    check_frule(f, x, axis=axis)


def test_softmax_positional_axis(rng):
    x = draw(rng, (-2, 2), (2, 3), np.float64)
    check_rrule(sc.softmax, x, 1)
    assert rrule(sc.softmax, x, 1)[1](np.ones((2, 3)))[2] is NoTangent()
    _, y_dot = frule((NoTangent(), np.ones((2, 3)), NoTangent()), sc.log_softmax, x, 1)
    np.testing.assert_allclose(y_dot, 0.0, atol=1e-15)  # shifting x does not move log_softmax


def test_complex_digamma_is_refused_by_name():
    _, pullback = rrule(sc.digamma, np.array([1.0 + 1.0j]))
    with pytest.raises(TypeError, match="digamma"):
        pullback(np.ones(1))
