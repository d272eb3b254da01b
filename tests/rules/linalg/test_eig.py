import numpy as np
import pytest

from rules import frule, rrule
from rules.linalg.eig import GaugeError
from rules.testing import check_frule, check_rrule
from tangents import Diagonal, NoTangent, Tangent, UpperTriangular, ZeroTangent

EigResult = type(np.linalg.eig(np.eye(1)))


def with_eigenvalues(randn, dtype, w, batch=()):
    """``X diag(w) X^{-1}`` with a well-conditioned random ``X`` (real for real ``dtype``)."""
    n = w.shape[-1]
    X = np.eye(n) + 0.3 * randn(dtype, *batch, n, n)
    return (X * w[..., None, :]) @ np.linalg.inv(X)


def rotation_block(a, b):
    return np.array([[a, -b], [b, a]])


def real_with_complex_pairs(randn, batch=()):
    """A real matrix with eigenvalues 1 +- 2i, -0.5 and 2 (a conjugate pair and two real ones)."""
    n = 4
    B = np.zeros((n, n))
    B[:2, :2] = rotation_block(1.0, 2.0)
    B[2, 2], B[3, 3] = -0.5, 2.0
    X = np.eye(n) + 0.3 * randn(np.float64, *batch, n, n)
    return X @ B @ np.linalg.inv(X)


def generic(randn, dtype, batch=()):
    if np.dtype(dtype).kind == "c":
        w = np.array([1.0 + 1j, -0.5 + 0.2j, 2.0 - 1j, -1.5 - 0.7j])
        return with_eigenvalues(randn, dtype, w, batch).astype(dtype)
    return real_with_complex_pairs(randn, batch).astype(dtype)


# --- the checker at generic inputs ---------------------------------------------------------------


@pytest.mark.parametrize("batch", [(), (3,)])
def test_eig(randn, gauge_fixed, dtype, batch):
    A = generic(randn, dtype, batch)
    eig = gauge_fixed(np.linalg.eig)  # eigenvector phases fixed: a smooth function of A
    check_rrule(eig, A)
    check_frule(eig, A)


def test_eig_real_eigenvalues(randn, gauge_fixed):
    A = with_eigenvalues(randn, np.float64, np.array([-1.0, 0.5, 2.0, 3.0]))
    assert np.linalg.eig(A).eigenvectors.dtype == np.float64  # real output
    check_rrule(gauge_fixed(np.linalg.eig), A)
    check_frule(gauge_fixed(np.linalg.eig), A)


@pytest.mark.parametrize("batch", [(), (3,)])
def test_eigvals(randn, dtype, batch):
    A = generic(randn, dtype, batch)
    check_rrule(np.linalg.eigvals, A)
    check_frule(np.linalg.eigvals, A)


def test_eig_directly_with_eigenvalue_cotangents(randn):
    A = generic(randn, np.complex128)
    w_bar = randn(np.complex128, 4)
    check_rrule(np.linalg.eig, A, output_tangent=Tangent(EigResult, w_bar, ZeroTangent()))


def test_structured_inputs(randn):
    T = UpperTriangular(randn(np.float64, 4, 4))
    check_rrule(np.linalg.eigvals, T)
    _, pullback = rrule(np.linalg.eigvals, T)
    assert type(pullback(np.ones(4))[1]) is UpperTriangular
    _, pullback = rrule(np.linalg.eig, Diagonal(np.array([1.0, 2.0, 3.0])))
    assert type(pullback((np.ones(3), ZeroTangent()))[1]) is Diagonal


def test_float32_stays_float32(randn):
    A = generic(randn, np.float32)
    (_, V), pullback = rrule(np.linalg.eig, A)
    assert V.dtype == np.complex64
    assert pullback((np.ones(4), ZeroTangent()))[1].dtype == np.float32
    _, (w_dot, V_dot) = frule((NoTangent(), np.eye(4)), np.linalg.eig, A)
    assert w_dot.dtype == np.complex64
    assert V_dot.dtype == np.complex64


# --- repeated eigenvalues and the gauge ---------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("case", ["identity", "tie", "two ties"])
def test_gauge_invariant_losses_at_repeated_eigenvalues(randn, gradient, dtype, case):
    w0 = {
        "identity": np.ones(4),
        "tie": np.array([1.0, 1.0, 2.0, -1.0]),
        "two ties": np.array([1.0, -0.5, 1.0, -0.5]),
    }[case]
    X = np.eye(4) + 0.3 * randn(dtype, 4, 4)
    A = (X * w0) @ np.linalg.inv(X) if case != "identity" else np.eye(4, dtype=dtype)
    (w, V), pullback = rrule(np.linalg.eig, A)

    def f(x):
        return np.exp(x) + x**3

    def df(x):
        return np.exp(x) + 3 * x**2

    # sum(f(w)) = trace f(A): through the eigenvalues alone
    want = gradient(lambda Y: np.real(np.sum(f(np.linalg.eigvals(Y)))), A, h=1e-5)
    np.testing.assert_allclose(pullback((np.conj(df(w)), ZeroTangent()))[1], want, atol=1e-6)

    # Re <G, V f(w) V^{-1}> = Re tr(G^H f(A)) with G^H = X B X^{-1}, B a multiple of I in each
    # tie: no in-block Daleckii-Krein term, but the coupling of distinct eigenvalues and the
    # normalisation are used
    B = randn(dtype, 4, 4)
    tie = np.abs(w0[:, None] - w0[None, :]) < 1e-8
    B = np.where(tie, 0, B) + np.diag(1.7 * w0)  # equal diagonal inside a tie
    G = (X @ B @ np.linalg.inv(X)).conj().T

    def loss(Y):
        wy, Vy = np.linalg.eig(Y)
        return np.real(np.vdot(G, (Vy * f(wy)) @ np.linalg.inv(Vy)))

    W = np.linalg.inv(V)
    F = f(w)
    Y = (V * F) @ W
    V_bar = G @ W.conj().T * F.conj() - Y.conj().T @ G @ W.conj().T
    w_bar = np.conj(df(w) * np.diagonal(W @ G.conj().T @ V))
    got = pullback((w_bar, V_bar))[1]
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, gradient(loss, A, h=1e-5), atol=1e-6)


def test_gauge_dependent_losses_raise(randn):
    A = generic(randn, np.complex128)
    (w, V), pullback = rrule(np.linalg.eig, A)
    with pytest.raises(GaugeError, match=r"np.linalg.eig pullback.*phase of complex eigenvectors"):
        pullback((ZeroTangent(), 1j * V))
    B = real_with_complex_pairs(randn)
    (w, V), pullback = rrule(np.linalg.eig, B)
    real = w.imag == 0
    V_bar = np.zeros_like(V)
    V_bar[:, real] = 1j * V[:, real]  # real eigenvalues: real eigenvectors, no phase gauge
    pullback((ZeroTangent(), V_bar))
    V_bar[:, ~real] = 1j * V[:, ~real]  # the complex pair's phases are free
    with pytest.raises(GaugeError, match="phase"):
        pullback((ZeroTangent(), V_bar))
    X = np.eye(4) + 0.3 * randn(np.float64, 4, 4)
    C = (X * np.array([1.0, 1.0, 2.0, 3.0])) @ np.linalg.inv(X)
    (w, V), pullback = rrule(np.linalg.eig, C)
    tied = np.flatnonzero(np.abs(w - 1) < 1e-8)
    V_bar = np.zeros_like(V)
    V_bar[:, tied[0]] = V[:, tied[1]]  # moves one eigenvector of the tie towards the other
    with pytest.raises(GaugeError, match="eigenspace of a repeated eigenvalue"):
        pullback((ZeroTangent(), V_bar))


# --- bad input, NaN, defective matrices ----------------------------------------------------------


def test_bad_input():
    with pytest.raises(np.linalg.LinAlgError, match=r"np.linalg.eig.*square.*\(2, 3\)"):
        rrule(np.linalg.eig, np.ones((2, 3)))
    _, pullback = rrule(np.linalg.eigvals, np.diag([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"np.linalg.eigvals pullback.*\(3,\)"):
        pullback(np.ones(3))
    with pytest.raises(ValueError, match=r"np.linalg.eig pushforward.*\(3, 3\)"):
        frule((NoTangent(), np.ones((3, 3))), np.linalg.eig, np.eye(2))


def test_nan_raises_as_the_primal_does():
    with pytest.raises(np.linalg.LinAlgError, match=r"np.linalg.eigvals.*NaN.*\(2, 2\)"):
        rrule(np.linalg.eigvals, np.array([[1.0, np.nan], [0.0, 1.0]]))


def test_defective_matrix():
    # a Jordan block: the trace is smooth, the eigenvalues are not; V is singular to rounding
    A = np.array([[1.0, 1.0], [0.0, 1.0]])
    _, pullback = rrule(np.linalg.eigvals, A)
    np.testing.assert_allclose(pullback(np.ones(2))[1], np.eye(2))
    assert np.abs(pullback(np.array([1.0, 0.0]))[1]).max() > 1e6
