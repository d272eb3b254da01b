import numpy as np
import pytest
import scipy.linalg as sla

from kernels import _spectral, crossovers
from kernels import tiled_products as ktiled
from rules import frule, rrule, split_cotangent
from rules.linalg import svd as rsvd
from rules.linalg.svd import GaugeError
from rules.testing import check_frule, check_rrule
from tangents import (
    AbstractZero,
    Diagonal,
    NoTangent,
    Tangent,
    UpperTriangular,
    ZeroTangent,
    unthunk,
)

SVDResult = type(np.linalg.svd(np.eye(1)))
SHAPES = [(4, 4), (5, 3), (3, 5)]  # square, tall, wide: the kernel tests' shapes (cached kernels)


@pytest.fixture(params=["loops", "blas"])
def path(request, monkeypatch):
    """The kernels' loop path, or their BLAS path forced at small sizes."""
    if request.param == "blas":
        monkeypatch.setattr(crossovers, "SVD_LOOPS_MAX_N", 0)
    return request.param


@pytest.fixture
def blas_path(monkeypatch):
    """Shapes other than SHAPES through the BLAS path, whose kernels do not compile per shape."""
    monkeypatch.setattr(crossovers, "SVD_LOOPS_MAX_N", 0)


@pytest.fixture
def svd_gauge_fixed(first_row_phase):
    """``svd_gauge_fixed(f)``: ``f`` returning ``(U, s, Vh)`` with the vectors in a smooth gauge.

    Each column of ``U`` gets a real non-negative first entry and the matching row of ``Vh`` the
    conjugate factor (so ``U diag(s) Vh`` is unchanged); extra rows of a full ``Vh`` get a real
    first entry of their own. The rules compose ``f``'s rules under test with the fixing.
    """
    fix = first_row_phase
    registered = []

    def parts(U, s, Vh):
        k = s.shape[-1]
        cu = fix.factor(U)
        cv = fix.factor(Vh[..., k:, :].swapaxes(-1, -2))
        Y_U = U * cu[..., None, :]
        Y_Vh = np.concatenate(
            [cu[..., :k].conj()[..., :, None] * Vh[..., :k, :], cv[..., :, None] * Vh[..., k:, :]],
            axis=-2,
        )
        return (Y_U, s, Y_Vh), cu, cv

    def svd_gauge_fixed(f):
        def fixed(A, *args, **kwargs):
            return parts(*f(A, *args, **kwargs))[0]

        def fixed_rrule(A, *args, **kwargs):
            (U, s, Vh), pullback = rrule(f, A, *args, **kwargs)
            y, cu, cv = parts(U, s, Vh)
            k = s.shape[-1]

            def fixed_pullback(y_bar):
                U_bar, s_bar, Vh_bar = (unthunk(t) for t in split_cotangent(y_bar, 3))
                U_bar = np.zeros_like(U) if isinstance(U_bar, AbstractZero) else U_bar
                Vh_bar = np.zeros_like(Vh) if isinstance(Vh_bar, AbstractZero) else Vh_bar
                r = np.zeros(cu.shape)
                r[..., :k] = np.real(
                    np.sum(Vh_bar[..., :k, :].conj() * 1j * y[2][..., :k, :], axis=-1)
                )
                U_bar_v = fix.pullback(U, cu, U_bar, r)
                Vh_bar_v = np.concatenate(
                    [
                        cu[..., :k, None] * Vh_bar[..., :k, :],
                        fix.pullback(
                            Vh[..., k:, :].swapaxes(-1, -2), cv, Vh_bar[..., k:, :].swapaxes(-1, -2)
                        ).swapaxes(-1, -2),
                    ],
                    axis=-2,
                )
                return pullback((U_bar_v, s_bar, Vh_bar_v))[:2]

            return y, fixed_pullback

        def fixed_frule(tangents, A, *args, **kwargs):
            (U, s, Vh), y_dot = frule(tangents, f, A, *args, **kwargs)
            U_dot, s_dot, Vh_dot = (unthunk(t) for t in split_cotangent(y_dot, 3))
            y, cu, cv = parts(U, s, Vh)
            k = s.shape[-1]
            theta = fix.dtheta(U, U_dot)[..., :k]
            Vh_dot_k = cu[..., :k].conj()[..., :, None] * (
                Vh_dot[..., :k, :] + 1j * theta[..., :, None] * Vh[..., :k, :]
                if U.dtype.kind == "c"
                else Vh_dot[..., :k, :]
            )
            Vh_dot_p = fix.pushforward(
                Vh[..., k:, :].swapaxes(-1, -2), cv, Vh_dot[..., k:, :].swapaxes(-1, -2)
            ).swapaxes(-1, -2)
            return y, Tangent(
                tuple,
                fix.pushforward(U, cu, U_dot),
                s_dot,
                np.concatenate([Vh_dot_k, Vh_dot_p], axis=-2),
            )

        rrule.register(fixed)(fixed_rrule)
        frule.register(fixed)(fixed_frule)
        registered.append(fixed)
        return fixed

    yield svd_gauge_fixed
    for fixed in registered:
        rrule.unregister(fixed)
        frule.unregister(fixed)


# --- the checker at generic inputs ---------------------------------------------------------------


# bidiagonal QR: (2, 9, 9) and (2, 10, 8) real, (2, 6, 5) complex
@pytest.mark.parametrize("shape", [*SHAPES, (2, 5, 3), (2, 9, 9), (2, 10, 8), (2, 6, 5)])
def test_numpy_svd(randn, svd_gauge_fixed, dtype, shape):
    A = randn(dtype, *shape)
    svd = svd_gauge_fixed(np.linalg.svd)
    check_rrule(svd, A, False)
    check_frule(svd, A, False)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 4)])
def test_full_matrices(randn, svd_gauge_fixed, blas_path, dtype, shape):
    # one extra vector, whose only gauge is its phase, which the wrapper fixes
    A = randn(dtype, *shape)
    svd = svd_gauge_fixed(np.linalg.svd)
    check_rrule(svd, A)
    check_frule(svd, A)
    check_rrule(svd_gauge_fixed(sla.svd), A, lapack_driver="gesvd")


@pytest.mark.parametrize("shape", [*SHAPES, (2, 5, 3), (2, 10, 10), (2, 8, 11), (2, 5, 7)])
def test_singular_values(randn, dtype, shape):
    A = randn(dtype, *shape)
    for f, kwargs in [
        (np.linalg.svd, {"compute_uv": False}),
        (np.linalg.svdvals, {}),
        (sla.svd, {"compute_uv": False}),
        (sla.svdvals, {}),
    ]:
        check_rrule(f, A, **kwargs)
        check_frule(f, A, **kwargs)


def test_scipy_svd(randn, svd_gauge_fixed, dtype):
    A = randn(dtype, 5, 3)
    svd = svd_gauge_fixed(sla.svd)
    check_rrule(svd, A, False)
    check_frule(svd, A, False)


def test_hermitian(randn, svd_gauge_fixed, dtype):
    X = randn(dtype, 4, 4)
    A = (X + X.conj().T).astype(dtype)
    check_rrule(svd_gauge_fixed(np.linalg.svd), A, symmetric=[0], hermitian=True)
    check_frule(svd_gauge_fixed(np.linalg.svd), A, symmetric=[0], hermitian=True)
    check_rrule(np.linalg.svd, A, symmetric=[0], compute_uv=False, hermitian=True)


def test_structured_inputs(randn):
    check_rrule(np.linalg.svdvals, UpperTriangular(randn(np.float64, 4, 4)))
    D = Diagonal(np.array([3.0, -1.0, 2.0, 0.5]))
    check_rrule(np.linalg.svdvals, D)
    _, pullback = rrule(np.linalg.svd, D)
    assert type(pullback((ZeroTangent(), np.ones(4), ZeroTangent()))[1]) is Diagonal


def test_float32_stays_float32(randn):
    A = randn(np.float32, 5, 3)
    _, pullback = rrule(np.linalg.svd, A)
    A_bar = pullback((np.zeros((5, 5)), np.ones(3), np.zeros((3, 3))))[1]
    assert A_bar.dtype == np.float32
    _, (U_dot, s_dot, Vh_dot) = frule((NoTangent(), np.ones((5, 3))), np.linalg.svd, A)
    assert U_dot.dtype == s_dot.dtype == Vh_dot.dtype == np.float32


def test_complex64_takes_the_formula(randn):
    A = randn(np.complex64, 5, 3)
    check_rrule(np.linalg.svdvals, A)
    (U, _, Vh), pullback = rrule(np.linalg.svd, A, False)
    A_bar = pullback((ZeroTangent(), np.ones(3), ZeroTangent()))[1]
    assert A_bar.dtype == np.complex64
    np.testing.assert_allclose(A_bar, U @ Vh, atol=1e-5)


# --- kernel path against the formula -------------------------------------------------------------


def with_singular_values(randn, dtype, m, n, s):
    """``U diag(s) V^H`` with random orthonormal ``U`` (m, k), ``V`` (n, k)."""
    U, _ = np.linalg.qr(randn(dtype, m, len(s)))
    V, _ = np.linalg.qr(randn(dtype, n, len(s)))
    return ((U * np.asarray(s, dtype=float)) @ V.conj().T).astype(dtype)


@pytest.mark.parametrize("shape", SHAPES)
def test_kernel_path_agrees_with_the_formula(randn, dtype, shape, path):
    m, n = shape
    k = min(m, n)
    A = randn(dtype, 4, m, n)
    A[1] = with_singular_values(randn, dtype, m, n, [2.0, 1.0, 1.0, 0.5][:k])  # a tie
    A[2] = with_singular_values(randn, dtype, m, n, [2.0, 1.0, 0.0, 0.0][:k])  # zeros
    U, s, Vh = np.linalg.svd(A, full_matrices=False)
    # gauge-invariant cotangents: those of Re <G, U f(S) Vh>, f(s) = s**3
    G = randn(dtype, 4, m, n)
    U_bar = G @ Vh.conj().swapaxes(-1, -2) * s[..., None, :] ** 3
    Vh_bar = s[..., :, None] ** 3 * (U.conj().swapaxes(-1, -2) @ G)
    s_bar = randn(s.dtype, *s.shape)
    tol = 1e-4 if dtype == np.float32 else 1e-11
    rtol = _spectral.default_rtol(max(m, n), s.dtype)
    np.testing.assert_allclose(
        rsvd.svd_pullback_array("svd", U, s, Vh, U_bar, s_bar, Vh_bar),
        rsvd.svd_pullback_formula(U, s, Vh, U_bar, s_bar, Vh_bar, rtol),
        rtol=tol,
        atol=tol,
    )
    A_dot = randn(dtype, 4, m, n)
    for got, want in zip(
        rsvd.svd_pushforward_array(U, s, Vh, A_dot),
        rsvd.svd_pushforward_formula(U, s, Vh, A_dot, rtol),
        strict=True,
    ):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# --- repeated and zero singular values: finite differences of gauge-invariant losses ------------


DEGENERATE = {
    "identity": ((4, 4), [1.0, 1.0, 1.0, 1.0]),
    "tie": ((4, 4), [3.0, 1.0, 1.0, 0.5]),
    "tall, tie and zero": ((5, 3), [2.0, 2.0, 0.0]),
    "wide, zeros": ((3, 5), [1.5, 0.0, 0.0]),
    "square, zeros": ((4, 4), [2.0, 1.0, 0.0, 0.0]),
}


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("case", list(DEGENERATE))
def test_gauge_invariant_losses_at_ties_and_zeros(randn, gradient, dtype, case):
    (m, n), spectrum = DEGENERATE[case]
    A = with_singular_values(randn, dtype, m, n, spectrum)
    if case == "identity":
        A = np.eye(4, dtype=dtype)
    (U, s, Vh), pullback = rrule(np.linalg.svd, A, False)
    k = len(s)

    # sum(s**3), through the singular values alone
    want = gradient(lambda X: np.sum(np.linalg.svd(X, compute_uv=False) ** 3), A)
    np.testing.assert_allclose(
        pullback((ZeroTangent(), 3 * s**2, ZeroTangent()))[1], want, atol=1e-7
    )
    _, values_pullback = rrule(np.linalg.svdvals, A)
    np.testing.assert_allclose(values_pullback(3 * s**2)[1], want, atol=1e-7)

    # Re <G, U S^3 Vh> = Re <G, A A^H A> with G = U B V^H, B's Hermitian part in each tie a
    # multiple of I (no in-block Daleckii-Krein term), its skew part free (the F^+ term)
    B = randn(dtype, k, k)
    tie = np.abs(s[:, None] - s[None, :]) <= 1e-8
    herm, skew = (B + B.conj().T) / 2, (B - B.conj().T) / 2
    B = np.where(tie & ~np.eye(k, dtype=bool), 0, herm) + skew
    G = U @ B @ Vh

    def loss(X):
        Ux, sx, Vhx = np.linalg.svd(X, full_matrices=False)
        return np.real(np.vdot(G, (Ux * sx**3) @ Vhx))

    U_bar = G @ Vh.conj().T * s**3
    Vh_bar = s[:, None] ** 3 * (U.conj().T @ G)
    s_bar = 3 * s**2 * np.real(np.sum(U.conj() * (G @ Vh.conj().T), axis=0))
    got = pullback((U_bar, s_bar, Vh_bar))[1]
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, gradient(loss, A), atol=1e-7)


@pytest.mark.parametrize("shape", SHAPES)
def test_one_matrix_path_equals_the_stack_path(randn, dtype, shape, path):
    # One matrix skips the stacking and, with every cotangent given, the batched kernel wrapper:
    # same bits as a stack of one, and the same errors.
    m, n = shape
    k = min(m, n)
    A = with_singular_values(randn, dtype, m, n, [2.0, 1.0, 1.0, 0.5][:k])  # a tie
    U, s, Vh = np.linalg.svd(A, full_matrices=False)
    G = randn(dtype, m, n)  # Re <G, A>: gauge-invariant cotangents
    U_bar, Vh_bar = G @ Vh.conj().T * s, s[:, None] * (U.conj().T @ G)
    s_bar = randn(s.dtype, k)
    for bars in [(U_bar, s_bar, Vh_bar), (U_bar, None, Vh_bar), (None, s_bar, None)]:
        one = rsvd.svd_pullback_array("f", U, s, Vh, *bars)
        stack = rsvd.svd_pullback_array(
            "f", U[None], s[None], Vh[None], *(None if x is None else x[None] for x in bars)
        )
        np.testing.assert_array_equal(one, stack[0])
    fortran = rsvd.svd_pullback_array("f", np.asfortranarray(U), s, Vh, None, s_bar, None)
    np.testing.assert_array_equal(
        fortran, rsvd.svd_pullback_array("f", U, s, Vh, None, s_bar, None)
    )
    U_bar = np.zeros_like(U)
    U_bar[:, 1] = U[:, 2]  # rotates u_1 towards u_2 inside the tie
    with pytest.raises(GaugeError, match="inside a repeated singular value"):
        rsvd.svd_pullback_array("f", U, s, Vh, U_bar, s_bar, np.zeros_like(Vh))


def test_one_matrix_gauge_limit_equals_the_stack_limit(randn):
    # One matrix compares its residuals with the limit as scalars; a stack of one goes through
    # raise_if_gauge_dependent. A phase component below / above sqrt(eps) |cotangent| decides alike.
    A = randn(np.complex128, 4, 4)
    U, s, Vh = np.linalg.svd(A)
    G = randn(np.complex128, 4, 4)
    U_bar, Vh_bar = G @ Vh.conj().T * s, s[:, None] * (U.conj().T @ G)  # Re <G, A>: invariant
    norm = np.hypot(np.linalg.norm(U_bar), np.linalg.norm(Vh_bar))
    for scale, raises in [(1e-10, False), (1e-6, True)]:
        bars = (U_bar + scale * norm * 1j * U, None, Vh_bar)
        for stack in (False, True):
            args = (U, s, Vh, *bars)
            if stack:
                args = tuple(None if x is None else x[None] for x in args)
            if raises:
                with pytest.raises(GaugeError, match="common phase"):
                    rsvd.svd_pullback_array("f", *args)
            else:
                rsvd.svd_pullback_array("f", *args)


def test_gauge_dependent_losses_raise(randn):
    A = with_singular_values(randn, np.float64, 4, 4, [3.0, 1.0, 1.0, 0.5])
    (U, _, _), pullback = rrule(np.linalg.svd, A)
    U_bar = np.zeros((4, 4))
    U_bar[:, 1] = U[:, 2]  # rotates u_1 towards u_2 inside the tie, v_1 stays
    with pytest.raises(GaugeError, match=r"np.linalg.svd.*inside a repeated singular value"):
        pullback((U_bar, ZeroTangent(), ZeroTangent()))
    B = randn(np.complex128, 4, 3)
    (U, _, _), pullback = rrule(np.linalg.svd, B, False)
    with pytest.raises(GaugeError, match="common phase"):
        pullback((1j * U, ZeroTangent(), ZeroTangent()))
    C = with_singular_values(randn, np.float64, 5, 3, [2.0, 1.0, 0.0])
    (U, _, _), pullback = rrule(np.linalg.svd, C, False)
    U_bar = np.zeros((5, 3))
    U_bar[0, 2] = 1.0  # the loss u_2[0] reads the direction of u_2, which A does not determine
    with pytest.raises(GaugeError, match="zero singular values"):
        pullback((U_bar, ZeroTangent(), ZeroTangent()))


def test_full_matrices_complement(randn, gradient):
    A = randn(np.complex128, 5, 3)
    (U, _, _), pullback = rrule(np.linalg.svd, A)
    U_p = U[:, 3:]
    # Re trace(G U_p U_p^H), G Hermitian: a function of A (the complement's projector)
    H = randn(np.complex128, 5, 5)
    G = H + H.conj().T

    def loss(X):
        Ux = np.linalg.svd(X)[0][:, 3:]
        return np.real(np.trace(G @ Ux @ Ux.conj().T))

    U_bar = np.zeros((5, 5), dtype=complex)
    U_bar[:, 3:] = 2 * G @ U_p
    np.testing.assert_allclose(
        pullback((U_bar, ZeroTangent(), ZeroTangent()))[1], gradient(loss, A), atol=1e-7
    )
    U_bar[:, 3:] = U_p @ np.array([[0, 1], [-1, 0]])  # rotates the complement's basis
    with pytest.raises(GaugeError, match="orthogonal complement"):
        pullback((U_bar, ZeroTangent(), ZeroTangent()))
    # the frule's complement tangent is the projector's derivative
    A_dot = randn(np.complex128, 5, 3)
    _, (U_dot, _, _) = frule((NoTangent(), A_dot), np.linalg.svd, A)
    P_dot = U_dot[:, 3:] @ U_p.conj().T + U_p @ U_dot[:, 3:].conj().T
    h = 1e-6
    P = [np.linalg.svd(A + t * h * A_dot)[0][:, 3:] for t in (-1, 1)]
    np.testing.assert_allclose(
        P_dot, (P[1] @ P[1].conj().T - P[0] @ P[0].conj().T) / (2 * h), atol=1e-7
    )


# --- bad input, NaN, tangent types -----------------------------------------------------------------


def test_bad_input():
    with pytest.raises(np.linalg.LinAlgError, match=r"np.linalg.svd.*\(3,\)"):
        rrule(np.linalg.svd, np.ones(3))
    with pytest.raises(np.linalg.LinAlgError, match=r"hermitian=True.*square.*\(2, 3\)"):
        rrule(np.linalg.svd, np.ones((2, 3)), hermitian=True)
    _, pullback = rrule(np.linalg.svd, np.eye(3))
    with pytest.raises(ValueError, match=r"np.linalg.svd pullback.*Vh.*\(2, 2\)"):
        pullback((ZeroTangent(), np.ones(3), np.ones((2, 2))))
    with pytest.raises(ValueError, match=r"scipy.linalg.svdvals pushforward.*\(2, 2\)"):
        frule((NoTangent(), np.ones((2, 2))), sla.svdvals, np.eye(3))
    with pytest.raises(ValueError, match="overwrite_a"):
        rrule(sla.svd, np.eye(2), overwrite_a=True)


def test_nan_raises_as_the_primal_does():
    A = np.eye(3)
    A[1, 1] = np.nan
    with pytest.raises(np.linalg.LinAlgError, match=r"np.linalg.svd: SVD did not converge"):
        rrule(np.linalg.svd, A)


def test_cotangent_types():
    _, pullback = rrule(np.linalg.svd, np.diag([3.0, 2.0, 1.0]))
    with pytest.raises(TypeError, match=r"np.linalg.svd's pullback.*str"):
        pullback(("U", ZeroTangent(), ZeroTangent()))
    got = pullback(Tangent(SVDResult, ZeroTangent(), ZeroTangent(), Diagonal(np.ones(3))))[1]
    want = pullback((ZeroTangent(), ZeroTangent(), np.eye(3)))[1]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("matmul", [False, True])
@pytest.mark.parametrize("shape", [(5, 5), (6, 3), (3, 6), (9, 7), (7, 9)])
@pytest.mark.parametrize("real", [np.float64, np.float32])
def test_svdvals_of_one_plain_real_matrix(real, shape, matmul, monkeypatch):
    # the one-matrix fast paths (plain cotangent, plain tangent) against the formulas and the
    # general path (a cotangent of another dtype, cast, takes it); above 6 on a side the BLAS
    # product, by ndarray.dot or (PLAIN_DOT_MAX_N lowered) matmul
    if matmul:
        monkeypatch.setattr(crossovers, "PLAIN_DOT_MAX_N", 0)
    rng = np.random.default_rng(8)
    a = rng.standard_normal(shape).astype(real)
    U, s, Vh = np.linalg.svd(a, full_matrices=False)
    s_bar = rng.standard_normal(s.shape).astype(real)
    y, pullback = rrule(np.linalg.svdvals, a)
    tol = 1e-4 if real == np.float32 else 1e-12
    np.testing.assert_allclose(y, s, rtol=tol, atol=tol)
    a_bar = pullback(s_bar)[1]
    assert a_bar.dtype == real
    assert a_bar.shape == shape
    np.testing.assert_allclose(a_bar, (U * s_bar) @ Vh, rtol=tol, atol=tol)
    general = pullback(s_bar.astype(np.complex128))[1]
    np.testing.assert_allclose(a_bar, general, rtol=tol, atol=tol)
    with pytest.raises(ValueError, match="svdvals"):
        pullback(np.ones(s.shape[0] + 1, real))
    a_dot = rng.standard_normal(shape).astype(real)
    _, s_dot = frule((NoTangent(), a_dot), np.linalg.svdvals, a)
    assert s_dot.dtype == real
    np.testing.assert_allclose(s_dot, np.diagonal(U.T @ a_dot @ Vh.T), rtol=tol, atol=tol)


@pytest.mark.parametrize("shape", [(9, 7), (7, 9)])
def test_the_scaled_product_takes_dot_or_matmul_by_size(shape, monkeypatch):
    # both call the same gemm (the same bits): a spy on np.matmul tells the paths apart
    rng = np.random.default_rng(9)
    U, _, Vh = np.linalg.svd(rng.standard_normal(shape), full_matrices=False)
    s_bar = rng.standard_normal(min(shape))
    calls = []
    matmul = np.matmul
    monkeypatch.setattr(np, "matmul", lambda *a: calls.append(1) or matmul(*a))
    want = matmul(U * s_bar, Vh)
    np.testing.assert_allclose(rsvd._scaled_product(U, Vh, s_bar), want, rtol=1e-13, atol=1e-13)
    assert calls == []  # ndarray.dot at this size
    monkeypatch.setattr(crossovers, "PLAIN_DOT_MAX_N", 0)
    np.testing.assert_array_equal(rsvd._scaled_product(U, Vh, s_bar), want)
    assert calls == [1]


@pytest.mark.parametrize("shape", [(4, 9, 9), (3, 12, 7), (2, 7, 12), (3, 4, 4), (2, 16, 8)])
@pytest.mark.parametrize("real", [np.float64, np.float32])
def test_svdvals_of_a_plain_real_stack(real, shape, monkeypatch):
    # stacks above the loop kernels take numpy's stacked product straight away (the BLAS path
    # without its checks), or kernels.tiled_products where it fits (sides in fours); a
    # cotangent of another dtype takes the general path: same bits, but for the tiles' sums
    rng = np.random.default_rng(9)
    a = rng.standard_normal(shape).astype(real)
    U, s, Vh = np.linalg.svd(a, full_matrices=False)
    s_bar = rng.standard_normal(s.shape).astype(real)
    calls = []
    original = ktiled.matmul_scaled_tiled
    monkeypatch.setattr(ktiled, "matmul_scaled_tiled", lambda *xs: calls.append(1) or original(*xs))
    y, pullback = rrule(np.linalg.svdvals, a)
    tol = 1e-4 if real == np.float32 else 1e-12
    np.testing.assert_allclose(y, s, rtol=tol, atol=tol)
    a_bar = pullback(s_bar)[1]
    assert a_bar.dtype == real
    assert a_bar.shape == shape
    np.testing.assert_allclose(a_bar, (U * s_bar[..., None, :]) @ Vh, rtol=tol, atol=tol)
    tiled = shape == (2, 16, 8)  # the one shape with sides in fours above the loop kernels
    assert calls == ([1] if tiled else [])
    for other in (np.asfortranarray(s_bar), s_bar.astype(np.complex128)):  # not plain
        if tiled:
            np.testing.assert_allclose(a_bar, pullback(other)[1], rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(a_bar, pullback(other)[1])
    with pytest.raises(ValueError, match="svdvals"):
        pullback(np.ones((shape[0], s.shape[1] + 1), real))
