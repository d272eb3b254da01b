import numpy as np
import pytest
import scipy.linalg as sla

from kernels import _spectral, crossovers
from rules import frule, rrule
from rules.linalg import eigh as reigh
from rules.linalg._spectral import default_rtol
from rules.linalg.eigh import GaugeError
from rules.testing import check_frule, check_rrule
from tangents import Diagonal, Hermitian, NoTangent, Symmetric, Tangent, Thunk, ZeroTangent

EighResult = type(np.linalg.eigh(np.eye(1)))


def hermitian(randn, dtype, *shape):
    X = randn(dtype, *shape)
    return (0.5 * (X + X.conj().swapaxes(-1, -2))).astype(dtype)


@pytest.fixture(params=["loops", "blas", "trmm"])
def path(request, monkeypatch):
    """The kernels' loop path, or their BLAS path (gemm or trmm) forced at small n."""
    if request.param != "loops":
        monkeypatch.setattr(crossovers, "EIGH_LOOPS_MAX_N", 0)
        monkeypatch.setattr(crossovers, "EIGVALSH_LOOPS_MAX_N", {})
    if request.param == "trmm":  # V^H herm(A_dot) V by kernels.hermitian_products' trmm
        monkeypatch.setattr(crossovers, "EIGH_HERMITIAN_GEMM_MAX_N", {"f": 0, "d": 0, "D": 0})
    return request.param


# --- the checker at generic inputs ---------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 4), (3, 4, 4), (2, 11, 11)])  # 11: tridiagonal QR
@pytest.mark.parametrize("UPLO", ["L", "U"])
def test_numpy_eigh(randn, gauge_fixed, dtype, shape, UPLO):
    A = hermitian(randn, dtype, *shape)
    eigh = gauge_fixed(np.linalg.eigh)  # eigenvectors in a smooth gauge: random cotangents work
    check_rrule(eigh, A, UPLO, symmetric=[0])
    check_frule(eigh, A, UPLO, symmetric=[0])


def test_numpy_eigh_directly_with_invariant_cotangents(randn, dtype):
    A = hermitian(randn, dtype, 4, 4)
    w_bar = randn(np.float64, 4)
    # LAPACK flips eigenvector signs under tiny perturbations, so finite differences of <V_bar, V>
    # are reliable only for V_bar = 0; the vectors' cotangents are checked through gauge_fixed.
    # One matrix: a stack's forward is the batched kernel, whose eigenvector gauge differs from
    # LAPACK's, so the checker's primal comparison with f(*args) would see the sign choice; the
    # stack is checked against this one-matrix rule in the next test.
    check_rrule(
        np.linalg.eigh, A, symmetric=[0], output_tangent=Tangent(EighResult, w_bar, ZeroTangent())
    )


# 4: Jacobi for real stacks (tridiagonal QR for complex ones, from 3); 12: tridiagonal QR
@pytest.mark.parametrize("n", [4, 12])
def test_numpy_eigh_stack_forward_is_the_kernel(randn, dtype, n):
    """A stack's rrule forward: LAPACK's eigenvalues, its eigenvectors up to the kernel's gauge.

    The whole-call pullback then equals the stacked numpy formula at those factors, for a
    phase-invariant eigenvector cotangent (``V_bar[:, j] = H_j v_j``, ``H_j`` Hermitian: the
    loss ``sum_j v_j^H H_j v_j / 2``), so the gauge check lets it through.
    """
    A = hermitian(randn, dtype, 3, n, n)
    (w, V), pullback = rrule(np.linalg.eigh, A)
    wl, Vl = np.linalg.eigh(A)
    tol = 1e-4 if np.dtype(dtype) == np.float32 else 1e-10
    np.testing.assert_allclose(w, wl, atol=tol)
    overlap = np.abs(np.sum(V.conj() * Vl, axis=-2))  # |v_j^H v_j^LAPACK| = 1: the same vectors
    np.testing.assert_allclose(overlap, 1, atol=tol)
    H = hermitian(randn, dtype, 3, n, n, n)
    V_bar = np.einsum("pjik,pkj->pij", H, V).astype(dtype)
    w_bar = randn(np.float64, 3, n).astype(w.dtype)
    A_bar = pullback(Tangent(EighResult, w_bar, V_bar))[1]
    expected = reigh.eigh_pullback_formula(w, V, w_bar, V_bar, default_rtol(n, w.dtype))
    np.testing.assert_allclose(A_bar, expected, atol=tol * np.abs(expected).max())


@pytest.mark.parametrize("shape", [(4, 4), (3, 4, 4), (2, 12, 12)])
def test_eigvalsh(randn, dtype, shape):
    A = hermitian(randn, dtype, *shape)
    for f in (np.linalg.eigvalsh, sla.eigvalsh):
        check_rrule(f, A, symmetric=[0])
        check_frule(f, A, symmetric=[0])


@pytest.mark.parametrize("lower", [True, False])
def test_scipy_eigh(randn, gauge_fixed, dtype, lower):
    A = hermitian(randn, dtype, 4, 4)
    check_rrule(gauge_fixed(sla.eigh), A, symmetric=[0], lower=lower)
    check_frule(gauge_fixed(sla.eigh), A, symmetric=[0], lower=lower, driver="evd")
    check_rrule(sla.eigh, A, symmetric=[0], lower=lower, eigvals_only=True)
    check_frule(sla.eigh, A, symmetric=[0], lower=lower, eigvals_only=True)


@pytest.mark.parametrize("subset", [[1, 2], [0, 0], [2, 3]])
def test_scipy_eigh_subset_by_index(randn, gauge_fixed, dtype, subset):
    A = hermitian(randn, dtype, 4, 4)
    eigh = gauge_fixed(sla.eigh)
    check_rrule(eigh, A, symmetric=[0], subset_by_index=subset)
    check_frule(eigh, A, symmetric=[0], subset_by_index=subset)
    check_rrule(sla.eigvalsh, A, symmetric=[0], subset_by_index=subset)
    check_frule(sla.eigh, A, symmetric=[0], eigvals_only=True, subset_by_index=subset)


def test_subset_at_a_tie(randn, with_spectrum):
    A = with_spectrum(np.float64, [1.0, 2.0, 2.0, 3.0])
    # the tie inside the subset: Re tr(G V f(w) V^H) with G a multiple of I on the tie is exact
    (w, V), pullback = rrule(sla.eigh, A, subset_by_index=[1, 3])
    G = V @ np.diag([1.5, 1.5, -0.7]) @ V.T + 0.3 * (np.outer(V[:, 0], V[:, 2]) * 2)
    G = (G + G.T) / 2

    def loss(X):
        wx, Vx = sla.eigh(X, subset_by_index=[1, 3])
        return np.trace(G @ (Vx * np.exp(wx)) @ Vx.T)

    w_bar = np.exp(w) * np.sum(V * (G @ V), axis=0)
    got = pullback((w_bar, 2 * G @ V * np.exp(w)))[1]
    np.testing.assert_allclose(got, hermitian_gradient(loss, A), atol=1e-7)
    # the tie straddling the subset's edge: the computed vector is any unit vector of the tie
    (w, V), pullback = rrule(sla.eigh, A, subset_by_index=[0, 1])
    V_bar = np.zeros_like(V)
    V_bar[0, 1] = 1.0
    with pytest.raises(GaugeError, match="inside a degenerate eigenspace"):
        pullback((ZeroTangent(), V_bar))
    pullback((np.ones(2), ZeroTangent()))  # eigenvalues only: V diag(w_bar) V^H, no gauge


def test_structured_inputs(randn):
    S = Symmetric(randn(np.float64, 4, 4), uplo="L")
    check_rrule(np.linalg.eigvalsh, S)
    H = Hermitian(hermitian(randn, np.complex128, 3, 3))
    check_rrule(np.linalg.eigvalsh, H)
    _, pullback = rrule(np.linalg.eigh, H)
    assert type(pullback((np.ones(3), ZeroTangent()))[1]) is Hermitian
    D = Diagonal(np.array([3.0, 1.0, 2.0]))
    check_rrule(np.linalg.eigvalsh, D)
    _, pullback = rrule(np.linalg.eigh, D)
    assert type(pullback((np.ones(3), ZeroTangent()))[1]) is Diagonal


def test_float32_stays_float32(randn):
    A = hermitian(randn, np.float32, 4, 4)
    (_w, _V), pullback = rrule(np.linalg.eigh, A)
    A_bar = pullback((np.ones(4), np.zeros((4, 4))))[1]  # float64 cotangents are cast
    assert A_bar.dtype == np.float32
    _, (w_dot, V_dot) = frule((NoTangent(), np.eye(4)), np.linalg.eigh, A)
    assert w_dot.dtype == np.float32
    assert V_dot.dtype == np.float32


def test_complex64_takes_the_formula(randn):
    A = hermitian(randn, np.complex64, 4, 4)
    check_rrule(np.linalg.eigvalsh, A, symmetric=[0])
    (_w, _V), pullback = rrule(np.linalg.eigh, A)
    A_bar = pullback((np.ones(4), np.zeros((4, 4))))[1]
    assert A_bar.dtype == np.complex64
    np.testing.assert_allclose(A_bar, np.eye(4), atol=1e-5)


# --- kernel path against the formula -------------------------------------------------------------


def test_kernel_path_agrees_with_the_formula(randn, with_spectrum, dtype, path):
    A = hermitian(randn, dtype, 5, 4, 4)
    A[1] = with_spectrum(dtype, [1.0, 1.0, 2.0, 3.0])  # a tie: the masks must agree too
    w, V = np.linalg.eigh(A)
    w_bar = randn(w.dtype, *w.shape)
    # G V with G coupling no eigenvectors inside the tie (which raises TieError, test_ties.py)
    G = np.stack([block_diagonal_coupling(w[i], V[i], randn, dtype) for i in range(5)])
    V_bar = np.einsum("...ij,...jk->...ik", G, V)
    tol = 1e-4 if dtype == np.float32 else 1e-11
    rtol = _spectral.default_rtol(4, w.dtype)
    np.testing.assert_allclose(
        reigh.eigh_pullback_array("eigh", w, V, w_bar, V_bar),
        reigh.eigh_pullback_formula(w, V, w_bar, V_bar, rtol),
        rtol=tol,
        atol=tol,
    )
    A_dot = randn(dtype, 5, 4, 4)
    for got, want in zip(
        reigh.eigh_pushforward_array(w, V, A_dot),
        reigh.eigh_pushforward_formula(w, V, A_dot, rtol),
        strict=True,
    ):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# --- repeated and zero eigenvalues: finite differences of gauge-invariant losses -----------------


def hermitian_gradient(loss, A, h=1e-4):
    """The Hermitian gradient of the real ``loss`` at ``A`` by central differences (5 points)."""
    n = A.shape[-1]
    G = np.zeros(A.shape, dtype=A.dtype)

    def derivative(E):
        values = [loss(A + t * h * E) for t in (-2, -1, 1, 2)]
        return (values[0] - 8 * values[1] + 8 * values[2] - values[3]) / (12 * h)

    for i in range(n):
        for j in range(i, n):
            E = np.zeros(A.shape, dtype=A.dtype)
            E[i, j] = E[j, i] = 1
            d = derivative(E) if i != j else 2 * derivative(E)
            G[i, j] += d / 2
            if A.dtype.kind == "c" and i != j:
                E[i, j], E[j, i] = 1j, -1j
                G[i, j] += 1j * derivative(E) / 2
            G[j, i] = np.conj(G[i, j])
    return G


def degenerate_matrices(dtype, with_spectrum, randn):
    B = hermitian(randn, dtype, 2, 2)
    return {
        "identity": np.eye(4, dtype=dtype),
        "equal blocks": np.kron(np.eye(2), B).astype(dtype),
        "tie and zeros": with_spectrum(dtype, [0.0, 0.0, 1.5, 1.5]),
        "three-fold": with_spectrum(dtype, [-1.0, 2.0, 2.0, 2.0]),
    }


def block_diagonal_coupling(w, V, randn, dtype):
    """``G = V B V^H`` with ``B`` Hermitian, a multiple of I inside each block of equal ``w``.

    ``trace(G f(A))`` then has no in-block Daleckii-Krein term, so its derivative is determined
    by the cotangents of ``(w, V)`` even at the tie (but the cross-block terms are all there).
    """
    B = hermitian(randn, dtype, 4, 4)
    tol = max(1e-8, 64 * np.finfo(w.dtype).eps * np.max(np.abs(w)))  # float32 ties: ~1e-7 apart
    tie = np.abs(w[:, None] - w[None, :]) <= tol
    B = np.where(tie, 0, B) + np.diag(np.real(np.diag(B)))
    for i in range(4):  # equal diagonal inside a block
        B[i, i] = np.real(B[np.argmax(tie[i]), np.argmax(tie[i])])
    return V @ B @ V.conj().T


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("case", ["identity", "equal blocks", "tie and zeros", "three-fold"])
def test_gauge_invariant_losses_at_repeated_eigenvalues(randn, with_spectrum, dtype, case):
    A = degenerate_matrices(dtype, with_spectrum, randn)[case]
    (w, V), pullback = rrule(np.linalg.eigh, A)

    def f(x):
        return np.sin(x) + x**3

    def df(x):
        return np.cos(x) + 3 * x**2

    # sum(f(w)), through the eigenvalues alone and through trace(V diag(f(w)) V^H)
    want = hermitian_gradient(lambda X: np.sum(f(np.linalg.eigvalsh(X))), A)
    got = pullback((df(w), ZeroTangent()))[1]
    np.testing.assert_allclose(got, want, atol=1e-8)
    _, values_pullback = rrule(np.linalg.eigvalsh, A)
    np.testing.assert_allclose(values_pullback(df(w))[1], want, atol=1e-8)
    got = pullback((np.zeros(4), 2 * V * f(w)))[1] + pullback((df(w), ZeroTangent()))[1]
    np.testing.assert_allclose(got, want, atol=1e-8)

    # trace(G f(A)) with G coupling distinct eigenvalues: the masked cross terms are exact
    G = block_diagonal_coupling(w, V, randn, dtype)

    def loss(X):
        wx, Vx = np.linalg.eigh(X)
        return np.real(np.trace(G @ (Vx * f(wx)) @ Vx.conj().T))

    w_bar = df(w) * np.real(np.sum(V.conj() * (G @ V), axis=0))
    V_bar = 2 * G @ V * f(w)
    got = pullback((w_bar, V_bar))[1]
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, hermitian_gradient(loss, A), atol=1e-7)


def test_gauge_dependent_losses_raise(randn, with_spectrum):
    A = with_spectrum(np.float64, [1.0, 1.0, 2.0, 3.0])
    (_, V), pullback = rrule(np.linalg.eigh, A)
    V_bar = np.zeros((4, 4))
    V_bar[:, 0] = V[:, 1]  # rotates v_0 towards v_1, inside the tie
    with pytest.raises(GaugeError, match=r"np.linalg.eigh.*inside a degenerate eigenspace"):
        pullback((ZeroTangent(), V_bar))
    B = hermitian(randn, np.complex128, 4, 4)
    (_w, V), pullback = rrule(np.linalg.eigh, B)
    with pytest.raises(GaugeError, match="phase of complex eigenvectors"):
        pullback((ZeroTangent(), 1j * V))  # d/dt of the phase: Im(v^H v_bar) = 1
    # a gauge-invariant cotangent (G V with G Hermitian) passes
    pullback((ZeroTangent(), hermitian(randn, np.complex128, 4, 4) @ V))


def test_one_matrix_path_equals_the_stack_path(randn, with_spectrum, dtype, path):
    # One matrix takes a path of its own (scalar residuals, no stacking): same bits as a stack of
    # one, and the same errors.
    A = with_spectrum(dtype, [1.0, 1.0, 2.0, 3.0])
    w, V = np.linalg.eigh(A)
    w_bar = randn(w.dtype, 4)
    V_bar = np.ascontiguousarray(block_diagonal_coupling(w, V, randn, dtype) @ V)  # no TieError
    one = reigh.eigh_pullback_array("f", w, V, w_bar, V_bar)
    stack = reigh.eigh_pullback_array("f", w[None], V[None], w_bar[None], V_bar[None])
    np.testing.assert_array_equal(one, stack[0])
    fortran = reigh.eigh_pullback_array("f", w, np.asfortranarray(V), w_bar, V_bar)
    np.testing.assert_array_equal(fortran, one)  # a strided V takes the stack path
    values = reigh.eigh_pullback_array("f", w, V, w_bar, None)
    stack = reigh.eigh_pullback_array("f", w[None], V[None], w_bar[None], None)
    np.testing.assert_array_equal(values, stack[0])
    V_bar = np.zeros_like(V)
    V_bar[:, 0] = V[:, 1]  # rotates v_0 towards v_1, inside the tie
    with pytest.raises(GaugeError, match="inside a degenerate eigenspace"):
        reigh.eigh_pullback_array("f", w, V, None, V_bar)


def test_gauge_error_names_the_matrix_of_the_stack(randn, with_spectrum):
    A = hermitian(randn, np.float64, 3, 4, 4)
    A[2] = with_spectrum(np.float64, [1.0, 1.0, 2.0, 3.0])
    (_w, V), pullback = rrule(np.linalg.eigh, A)
    V_bar = np.zeros_like(V)
    V_bar[2, :, 0] = V[2, :, 1]
    with pytest.raises(GaugeError, match="matrix 2 of the stack"):
        pullback((ZeroTangent(), V_bar))


# --- bad input, NaN, tangent types -----------------------------------------------------------------


def test_bad_input():
    with pytest.raises(np.linalg.LinAlgError, match=r"np.linalg.eigh.*square.*\(2, 3\)"):
        rrule(np.linalg.eigh, np.ones((2, 3)))
    with pytest.raises(np.linalg.LinAlgError, match=r"scipy.linalg.eigvalsh.*square.*\(3,\)"):
        rrule(sla.eigvalsh, np.ones(3))
    _, pullback = rrule(np.linalg.eigh, np.eye(3))
    with pytest.raises(ValueError, match=r"np.linalg.eigh pullback.*eigenvectors.*\(2, 2\)"):
        pullback((np.ones(3), np.ones((2, 2))))
    with pytest.raises(ValueError, match=r"np.linalg.eigh pushforward.*\(2, 2\)"):
        frule((NoTangent(), np.ones((2, 2))), np.linalg.eigh, np.eye(3))
    with pytest.raises(NotImplementedError, match=r"scipy.linalg.eigh.*generalized"):
        rrule(sla.eigh, np.eye(2), np.eye(2))
    with pytest.raises(NotImplementedError, match="subset_by_value"):
        rrule(sla.eigh, np.eye(2), subset_by_value=[0, 1])
    with pytest.raises(ValueError, match="overwrite_a"):
        rrule(sla.eigvalsh, np.eye(2), overwrite_a=True)
    with pytest.raises(ValueError, match="infs or NaNs"):
        rrule(sla.eigh, np.full((2, 2), np.nan))


def test_nan_in_nan_out():
    A = np.eye(3)
    A[1, 1] = np.nan
    (w, _), pullback = rrule(np.linalg.eigh, A)
    assert np.isnan(w).any()
    assert np.isnan(pullback((np.ones(3), np.ones((3, 3))))[1]).any()
    _, (_w_dot, V_dot) = frule((NoTangent(), np.eye(3)), np.linalg.eigh, A)
    assert np.isnan(V_dot).any()
    # scipy's default driver can loop forever on NaN; with check_finite=False the rule gives NaN
    (w, _V), pullback = rrule(sla.eigh, A, check_finite=False)
    assert np.isnan(w).any()
    assert np.isnan(pullback((np.ones(3), np.ones((3, 3))))[1]).any()
    with pytest.raises(np.linalg.LinAlgError, match=r"np.linalg.eigvalsh.*\(3, 3\)"):
        rrule(np.linalg.eigvalsh, A)  # as np.linalg.eigvalsh itself


class OpaqueTangent:
    """A tangent type with no array conversion."""

    shape = (3,)


def test_cotangent_types():
    A = np.diag([1.0, 2.0, 3.0])
    (_w, _V), pullback = rrule(np.linalg.eigh, A)
    with pytest.raises(TypeError, match=r"np.linalg.eigh's pullback.*OpaqueTangent"):
        pullback((OpaqueTangent(), ZeroTangent()))
    # structured cotangents are arrays for this rule: Diagonal(w_bar) as V_bar is V's diagonal part
    got = pullback(Tangent(EighResult, ZeroTangent(), Diagonal(np.ones(3))))[1]
    want = pullback((ZeroTangent(), np.eye(3)))[1]
    np.testing.assert_array_equal(got, want)


def test_thunk_of_a_zero():
    _, pullback = rrule(np.linalg.eigvalsh, np.eye(2))
    assert pullback(Thunk(lambda: ZeroTangent()))[1] == ZeroTangent()
    _, pullback = rrule(np.linalg.eigh, np.eye(2))
    assert pullback(Thunk(lambda: ZeroTangent()))[1] == ZeroTangent()


def test_scipy_eigh_of_a_stack_returns_what_scipy_returns(randn):
    # scipy's batched eigh returns a list [w, v] for a stack, a tuple for one matrix
    for A in (hermitian(randn, np.float64, 2, 3, 3), hermitian(randn, np.float64, 3, 3)):
        expected = sla.eigh(A)
        y, _ = rrule(sla.eigh, A)
        y_fwd, _ = frule((NoTangent(), np.zeros_like(A)), sla.eigh, A)
        for got in (y, y_fwd):
            assert type(got) is type(expected)
            np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)


@pytest.mark.parametrize("real", [np.float64, np.float32])
def test_eigvalsh_of_one_plain_real_matrix(real):
    # the one-matrix fast paths (plain cotangent, plain tangent) against the formulas and the
    # general path (a cotangent of another dtype, cast, takes it)
    rng = np.random.default_rng(7)
    E = rng.standard_normal((5, 5))
    a = (E + E.T).astype(real)
    w, V = np.linalg.eigh(a)
    w_bar = rng.standard_normal(5).astype(real)
    y, pullback = rrule(np.linalg.eigvalsh, a)
    tol = 1e-4 if real == np.float32 else 1e-12
    np.testing.assert_allclose(y, w, rtol=tol, atol=tol)
    a_bar = pullback(w_bar)[1]
    assert a_bar.dtype == real
    np.testing.assert_array_equal(a_bar, a_bar.T)  # exactly symmetric, as the general path
    np.testing.assert_allclose(a_bar, (V * w_bar) @ V.T, rtol=tol, atol=tol)
    general = pullback(w_bar.astype(np.complex128))[1]
    assert general.dtype == real
    np.testing.assert_allclose(a_bar, general, rtol=tol, atol=tol)
    with pytest.raises(ValueError, match="eigvalsh"):
        pullback(np.ones(4, real))
    a_dot = rng.standard_normal((5, 5)).astype(real)
    _, w_dot = frule((NoTangent(), a_dot), np.linalg.eigvalsh, a)
    assert w_dot.dtype == real
    np.testing.assert_allclose(w_dot, np.diagonal(V.T @ a_dot @ V), rtol=tol, atol=tol)
    _, w_dot_general = frule((NoTangent(), a_dot.astype(np.float16)), np.linalg.eigvalsh, a)
    np.testing.assert_allclose(w_dot, w_dot_general, rtol=1e-2, atol=1e-2)
