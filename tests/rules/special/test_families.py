"""scipy.special: gamma, beta and incomplete families, normal distribution, entropies, Bessel."""

import numpy as np
import pytest
import scipy.special as sc

import rules  # noqa: F401  (registers the rules)
from rules import frule, rrule
from rules.testing import check_frule, check_rrule
from tangents import NoTangent, NotImplementedTangent

FLOATS = [np.float64, np.float32]


def draw(rng, interval, shape, dtype):
    x = rng.uniform(*interval, shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.uniform(-0.3, 0.3, shape)
    return x.astype(dtype)


# function -> (interval, complex supported)
UNARY = {
    sc.gamma: ((0.5, 3), True),
    sc.rgamma: ((0.5, 3), True),
    sc.loggamma: ((0.5, 3), True),
    sc.ndtr: ((-2, 2), True),
    sc.log_ndtr: ((-2, 2), True),
    sc.ndtri: ((0.1, 0.9), False),
    sc.erfinv: ((-0.8, 0.8), False),
    sc.erfcinv: ((0.2, 1.8), False),
    sc.entr: ((0.2, 2), False),
    sc.j0: ((0.5, 3), False),
    sc.j1: ((0.5, 3), False),
    sc.y0: ((0.5, 3), False),
    sc.y1: ((0.5, 3), False),
    sc.i0: ((-2, 2), False),
    sc.i1: ((-2, 2), False),
    sc.i0e: ((-2, 2), False),
    sc.i1e: ((-2, 2), False),
    sc.k0: ((0.5, 3), False),
    sc.k1: ((0.5, 3), False),
}


@pytest.mark.parametrize(
    ("f", "dtype"),
    [(f, d) for f, (_, c) in UNARY.items() for d in [*FLOATS] + [np.complex128] * c],
    ids=str,
)
def test_unary(rng, f, dtype):
    x = draw(rng, UNARY[f][0], (2, 3), dtype)
    check_rrule(f, x)
    check_frule(f, x)
    check_rrule(f, np.asarray(x[0, 0]))


# function -> (intervals of the arguments)
BINARY = {
    sc.beta: ((0.5, 3), (0.5, 3)),
    sc.betaln: ((0.5, 3), (0.5, 3)),
    sc.rel_entr: ((0.2, 2), (0.2, 2)),
    sc.kl_div: ((0.2, 2), (0.2, 2)),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("f", list(BINARY), ids=str)
def test_binary_with_broadcasting(rng, f, dtype):
    ia, ib = BINARY[f]
    a, b = draw(rng, ia, (2, 3), dtype), draw(rng, ib, (3,), dtype)
    check_rrule(f, a, b)
    check_frule(f, a, b)
    check_rrule(f, float(a[0, 0]), b)


@pytest.mark.parametrize("dtype", FLOATS)
def test_betainc_in_x_with_not_implemented_a_and_b(rng, dtype):
    a, b = draw(rng, (1, 3), (3,), dtype), draw(rng, (1, 3), (2, 1), dtype)
    x = draw(rng, (0.2, 0.8), (2, 3), dtype)
    report = check_rrule(sc.betainc, a, b, x)
    assert len(report.not_implemented) == 2
    check_frule(sc.betainc, a, b, x, constant=[0, 1])
    _, pullback = rrule(sc.betainc, a, b, x)
    _, a_bar, b_bar, _ = pullback(np.ones((2, 3), dtype))
    assert isinstance(a_bar, NotImplementedTangent)
    assert "betainc" in a_bar.info
    assert isinstance(b_bar, NotImplementedTangent)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("f", [sc.gammainc, sc.gammaincc], ids=str)
def test_incomplete_gamma_in_x(rng, f, dtype):
    a, x = draw(rng, (0.5, 3), (3,), dtype), draw(rng, (0.3, 3), (2, 3), dtype)
    report = check_rrule(f, a, x)
    assert report.not_implemented == ["argument 0 (ndarray (3,))"]
    check_frule(f, a, x, constant=[0])
    check_rrule(f, 2, x)  # an int shape parameter is a constant


@pytest.mark.parametrize("dtype", FLOATS)
def test_polygamma_integer_orders(rng, dtype):
    x = draw(rng, (0.5, 3), (2, 3), dtype)
    for n in (0, 1, 2):
        check_rrule(sc.polygamma, n, x)
        check_frule(sc.polygamma, n, x)
    n = np.array([0, 1, 3])
    check_rrule(sc.polygamma, n, x, constant=[0])
    check_frule(sc.polygamma, n, x, constant=[0])


@pytest.mark.parametrize("dtype", FLOATS)
def test_multigammaln(rng, dtype):
    a = draw(rng, (3, 5), (2, 3), dtype)
    check_rrule(sc.multigammaln, a, 3)
    check_frule(sc.multigammaln, a, 3)
    check_rrule(sc.multigammaln, 4.5, 2)


def test_zeta_hurwitz_in_q_riemann_not_implemented(rng):
    x = rng.uniform(2, 4, (3,))
    q = rng.uniform(0.5, 2, (2, 3))
    report = check_rrule(sc.zeta, x, q)
    assert report.not_implemented == ["argument 0 (ndarray (3,))"]
    check_frule(sc.zeta, x, q, constant=[0])
    check_rrule(sc.zeta, 3, q)
    _, pullback = rrule(sc.zeta, x)
    assert isinstance(pullback(np.ones(3))[1], NotImplementedTangent)


@pytest.mark.parametrize("dtype", FLOATS)
def test_expn(rng, dtype):
    x = draw(rng, (0.3, 3), (2, 3), dtype)
    for n in (0, 1, 3):
        check_rrule(sc.expn, n, x)
        check_frule(sc.expn, n, x)
    n = np.array([0, 1, 2])
    check_rrule(sc.expn, n, x, constant=[0])


@pytest.mark.filterwarnings("ignore:floating point number truncated")
def test_expn_truncates_a_float_order_as_scipy_does(rng):
    # expn(n, x) = E_trunc(n)(x): piecewise constant in n, so n's finite differences are zero
    x = draw(rng, (0.3, 3), (2, 3), np.float64)
    n = np.array([0.4, 1.7, 2.9])
    check_rrule(sc.expn, n, x)
    check_frule(sc.expn, n, x)


@pytest.mark.parametrize(
    ("f", "dtype"),
    [(f, d) for f in [sc.jv, sc.yv, sc.iv, sc.kv] for d in [*FLOATS, np.complex128]]
    + [(sc.ive, d) for d in FLOATS],  # ive's scaling is not holomorphic: real only, see below
    ids=str,
)
def test_bessel_of_order_v(rng, f, dtype):
    x = draw(rng, (0.5, 3), (2, 3), dtype)
    for v in (0, 1, 2):
        check_rrule(f, v, x)
        check_frule(f, v, x)
    v = np.array([0.5, 1.5, 2.5], dtype=np.real(x).dtype)
    report = check_rrule(f, v, x)
    assert report.not_implemented == ["argument 0 (ndarray (3,))"]
    check_frule(f, v, x, constant=[0])
    _, y_dot = frule((NoTangent(), np.ones(3), np.zeros((2, 3), dtype)), f, v, x)
    assert isinstance(y_dot, NotImplementedTangent)
    assert "order" in y_dot.info


def test_ive_with_negative_arguments_and_complex_refused(rng):
    x = rng.uniform(-3, -0.5, (2, 3))
    check_rrule(sc.ive, 1, x)
    check_rrule(sc.ive, 0.5, np.abs(x))
    _, pullback = rrule(sc.ive, 1, x + 0.1j)
    with pytest.raises(TypeError, match="ive"):
        pullback(np.ones((2, 3), complex))


def test_gammasgn_is_not_differentiable():
    _, pullback = rrule(sc.gammasgn, np.array([-1.5, 2.0]))
    assert pullback(np.ones(2)) == (NoTangent(), NoTangent())
