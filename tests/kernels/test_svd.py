"""Kernels for the thin svd: numpy oracle, finite differences, adjointness, ties and zeros, batching."""

import numpy as np
import pytest

from kernels import _spectral, crossovers
from kernels.svd import (
    svd_gauge_residual,
    svd_gauge_residual_batched,
    svd_pullback,
    svd_pullback_batched,
    svd_pushforward,
    svd_pushforward_batched,
    svdvals_pullback,
    svdvals_pullback_batched,
)

DTYPES = [np.float64, np.float32, np.complex128]
RTOL = {np.float64: 1e-12, np.float32: 3e-5, np.complex128: 1e-12}
SHAPES = [(4, 4), (5, 3), (3, 5)]  # square, tall, wide


@pytest.fixture(params=["loops", "blas"])
def path(request, monkeypatch):
    """Run a test through the loop kernels and through the BLAS path (tiny sizes either way)."""
    if request.param == "blas":
        monkeypatch.setattr(crossovers, "SVD_LOOPS_MAX_N", 0)
    return request.param


def randn(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def real_dtype(dtype):
    return np.finfo(dtype).dtype


def inner(x, y):
    """Real inner product Re <x, y> = Re sum(conj(x) y), the pairing of cotangents and tangents."""
    return float(np.real(np.vdot(np.asarray(x, np.complex128), np.asarray(y, np.complex128))))


def with_singular_values(rng, m, n, s, dtype):
    """An (m, n) matrix U0 diag(s) V0^H with random orthonormal U0, V0 (s has min(m, n) entries)."""
    wide = np.result_type(dtype, np.float64)
    u0, _ = np.linalg.qr(randn(rng, (m, len(s)), wide))
    v0, _ = np.linalg.qr(randn(rng, (n, len(s)), wide))
    return ((u0 * np.asarray(s)) @ v0.conj().T).astype(dtype)


def cotangents(rng, U, s, Vh):
    return (
        randn(rng, U.shape, U.dtype),
        randn(rng, s.shape, s.dtype),
        randn(rng, Vh.shape, Vh.dtype),
    )


def oracle_pullback(U, s, Vh, U_bar, s_bar, Vh_bar):
    """Textbook formula with E = 1/(s_j^2 - s_i^2) (Townsend 2016; complex: Wan & Zhang 2019)."""
    m, n = U.shape[0], Vh.shape[1]
    V, V_bar = Vh.conj().T, Vh_bar.conj().T
    E = s[None, :] ** 2 - s[:, None] ** 2
    np.fill_diagonal(E, np.inf)
    E = 1 / E
    J, K = U.conj().T @ U_bar, V.conj().T @ V_bar
    S = np.diag(s)
    X = (E * (J - J.conj().T)) @ S + S @ (E * (K - K.conj().T)) + np.diag(s_bar)
    X = X + np.diag(1j * np.imag(np.diag(J) - np.diag(K)) / (2 * s))
    A_bar = U @ X @ Vh
    A_bar = A_bar + (np.eye(m) - U @ U.conj().T) @ U_bar @ np.diag(1 / s) @ Vh
    A_bar = A_bar + U @ np.diag(1 / s) @ V_bar.conj().T @ (np.eye(n) - V @ Vh)
    return A_bar if np.iscomplexobj(U) else A_bar.real


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_pullback_matches_oracle(rng, dtype, shape, path):
    U, s, Vh = np.linalg.svd(randn(rng, shape, dtype), full_matrices=False)
    U_bar, s_bar, Vh_bar = cotangents(rng, U, s, Vh)
    got = svd_pullback(U, s, Vh, U_bar, s_bar, Vh_bar)
    assert got.dtype == dtype
    assert got.shape == shape
    expected = oracle_pullback(U, s, Vh, U_bar, s_bar, Vh_bar)
    np.testing.assert_allclose(got, expected, rtol=10 * RTOL[dtype], atol=10 * RTOL[dtype])


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_pullback_is_adjoint_of_pushforward(rng, dtype, shape, path):
    U, s, Vh = np.linalg.svd(randn(rng, shape, dtype), full_matrices=False)
    U_bar, s_bar, Vh_bar = cotangents(rng, U, s, Vh)
    A_dot = randn(rng, shape, dtype)
    U_dot, s_dot, Vh_dot = svd_pushforward(U, s, Vh, A_dot)
    assert (U_dot.dtype, s_dot.dtype, Vh_dot.dtype) == (U.dtype, s.dtype, Vh.dtype)
    assert (U_dot.shape, s_dot.shape, Vh_dot.shape) == (U.shape, s.shape, Vh.shape)
    lhs = inner(U_bar, U_dot) + inner(s_bar, s_dot) + inner(Vh_bar, Vh_dot)
    rhs = inner(svd_pullback(U, s, Vh, U_bar, s_bar, Vh_bar), A_dot)
    assert lhs == pytest.approx(rhs, rel=100 * RTOL[dtype])


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_pullback_and_pushforward_match_finite_differences(rng, dtype, shape):
    # L = sum(c s) + sum(G1 |U|^2) + sum(G2 |Vh|^2) + Re <G, U diag(g) Vh>: invariant under the
    # common phase (sign) of (u_i, v_i), and it reads U and Vh jointly through the last term.
    A, A_dot = randn(rng, shape, dtype), randn(rng, shape, dtype)
    U, s, Vh = np.linalg.svd(A, full_matrices=False)
    c, g = rng.standard_normal(s.shape), rng.standard_normal(s.shape)
    G1, G2, G = (
        rng.standard_normal(U.shape),
        rng.standard_normal(Vh.shape),
        randn(rng, shape, dtype),
    )

    def loss(a):
        u, sv, vh = np.linalg.svd(a, full_matrices=False)
        return (
            np.sum(c * sv)
            + np.sum(G1 * np.abs(u) ** 2)
            + np.sum(G2 * np.abs(vh) ** 2)
            + inner(G, (u * g) @ vh)
        )

    h = 1e-6
    fd = (loss(A + h * A_dot) - loss(A - h * A_dot)) / (2 * h)
    U_bar = 2 * G1 * U + G @ Vh.conj().T * g
    Vh_bar = 2 * G2 * Vh + g[:, None] * (U.conj().T @ G)
    assert inner(svd_pullback(U, s, Vh, U_bar, c, Vh_bar), A_dot) == pytest.approx(fd, rel=1e-6)
    U_dot, s_dot, Vh_dot = svd_pushforward(U, s, Vh, A_dot)
    jvp = (
        np.sum(c * s_dot)
        + np.sum(G1 * 2 * np.real(U.conj() * U_dot))
        + np.sum(G2 * 2 * np.real(Vh.conj() * Vh_dot))
        + inner(G, (U_dot * g) @ Vh + (U * g) @ Vh_dot)
    )
    assert jvp == pytest.approx(fd, rel=1e-6)


DEGENERATE = {
    "identity": ((4, 4), [1.0, 1.0, 1.0, 1.0]),
    "equal_blocks": ((4, 4), [2.0, 2.0, 0.5, 0.5]),
    "square_rank_2": ((4, 4), [3.0, 1.0, 0.0, 0.0]),
    "tall_tie_and_zero": ((5, 3), [2.0, 2.0, 0.0]),
    "wide_tie_and_zero": ((3, 5), [1.5, 0.0, 0.0]),
    "zero_matrix": ((3, 5), [0.0, 0.0, 0.0]),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", DEGENERATE)
def test_ties_and_zeros_gauge_invariant_losses(rng, dtype, case, path):
    # Unmasked formulas give inf/NaN here (0/0 at ties, 1/0 at zeros). Gauge-invariant losses:
    #   sum(s^3) through s, gradient U diag(3 s^2) Vh;
    #   ||U diag(s^2) Vh||_F^2 = sum(s^4) through U, s and Vh, gradient U diag(4 s^3) Vh.
    shape, s_exact = DEGENERATE[case]
    A = (
        np.eye(4, dtype=dtype)
        if case == "identity"
        else with_singular_values(rng, *shape, s_exact, dtype)
    )
    U, s, Vh = np.linalg.svd(A, full_matrices=False)
    tol = float(10 * RTOL[dtype] * max(1.0, np.max(s) ** 3))
    np.testing.assert_allclose(
        svd_pullback(U, s, Vh, None, 3 * s**2, None), (U * 3 * s**2) @ Vh, atol=tol
    )
    f = s**2
    B = (U * f) @ Vh
    U_bar, Vh_bar = 2 * B @ Vh.conj().T * f, f[:, None] * (U.conj().T @ (2 * B))
    s_bar = 2 * f * 2 * s
    A_bar = svd_pullback(U, s, Vh, U_bar.astype(dtype), s_bar, Vh_bar.astype(dtype))
    assert np.all(np.isfinite(A_bar))
    np.testing.assert_allclose(A_bar, (U * 4 * s**3) @ Vh, atol=tol)

    if dtype != np.float32:
        A_dot = randn(rng, shape, dtype)
        h = 1e-5

        def loss(a):
            return np.sum(np.linalg.svd(a, compute_uv=False) ** 4)

        fd = (loss(A + h * A_dot) - loss(A - h * A_dot)) / (2 * h)
        assert inner(A_bar, A_dot) == pytest.approx(fd, rel=1e-6, abs=1e-8)

    residual = svd_gauge_residual(U, s, Vh, U_bar.astype(dtype), Vh_bar.astype(dtype))
    assert max(residual) <= 1e3 * RTOL[dtype] * max(1.0, np.max(s) ** 4)

    # forward mode: finite, and d sum(s^3) = sum(3 s^2 s_dot) is right at ties and zeros
    A_dot = randn(rng, shape, dtype)
    U_dot, s_dot, Vh_dot = svd_pushforward(U, s, Vh, A_dot)
    assert all(np.all(np.isfinite(x)) for x in (U_dot, s_dot, Vh_dot))
    assert np.sum(3 * s**2 * s_dot) == pytest.approx(
        inner((U * 3 * s**2) @ Vh, A_dot), rel=100 * RTOL[dtype], abs=tol
    )


def test_ties_keep_the_finite_coupling_term(rng):
    # L = Re <G, U diag(g) Vh> with g = (1, 1, 0, 0) at a tie s = (2, 2, 1, 0.5): the in-block
    # part (J - J^H - K + K^H)/(2 (s_i + s_j)) is finite and needed; only the gauge part is
    # masked. Along directions that keep the tie (A_dot = U0 W V0^H with W skew on the block),
    # the loss is differentiable and the pullback must match finite differences.
    U0, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    V0, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    A = (U0 * [2.0, 2.0, 1.0, 0.5]) @ V0.T
    W = np.zeros((4, 4))
    W[0, 1], W[1, 0] = 0.7, -0.7
    A_dot = U0 @ W @ V0.T
    G, g = rng.standard_normal((4, 4)), np.array([1.0, 1.0, 0.0, 0.0])

    def loss(a):
        u, _, vh = np.linalg.svd(a)
        return np.sum(G * ((u * g) @ vh))

    h = 1e-6
    fd = (loss(A + h * A_dot) - loss(A - h * A_dot)) / (2 * h)
    U, s, Vh = np.linalg.svd(A)
    A_bar = svd_pullback(U, s, Vh, G @ Vh.T * g, np.zeros(4), g[:, None] * (U.T @ G))
    assert abs(fd) > 0.1
    assert inner(A_bar, A_dot) == pytest.approx(fd, rel=1e-6)


def test_gauge_residual_detects_gauge_dependent_cotangents(rng):
    A = with_singular_values(rng, 5, 3, [2.0, 2.0, 0.0], np.complex128)
    U, s, Vh = np.linalg.svd(A, full_matrices=False)
    zeros_U, zeros_Vh = np.zeros_like(U), np.zeros_like(Vh)
    # common phase of (u_0, v_0): phase residual
    res = svd_gauge_residual(U, s, Vh, U * [0.5j, 0, 0], zeros_Vh)
    assert res == pytest.approx((0.5, 0.0, 0.0), abs=1e-14)
    # rotation of u_0 into u_1 (tie at 2): rotation residual
    X = np.zeros((3, 3), np.complex128)
    X[1, 0] = 0.25
    res = svd_gauge_residual(U, s, Vh, U @ X, zeros_Vh)
    assert res == pytest.approx((0.0, 0.125, 0.0), abs=1e-14)
    # moving u_2 (zero singular value) into the complement of U: null residual
    q, _ = np.linalg.qr(np.concatenate([U, randn(rng, (5, 1), np.complex128)], axis=1))
    U_bar = np.zeros_like(U)
    U_bar[:, 2] = 0.3 * q[:, 3]
    res = svd_gauge_residual(U, s, Vh, U_bar, zeros_Vh)
    assert res == pytest.approx((0.0, 0.0, 0.3), abs=1e-14)
    # a gauge-invariant cotangent has none of them
    assert max(svd_gauge_residual(U, s, Vh, U * s**2, s[:, None] ** 2 * Vh)) < 1e-14
    batched = svd_gauge_residual_batched(U[None], s[None], Vh[None], zeros_U[None], zeros_Vh[None])
    assert all(r.shape == (1,) and r[0] == 0 for r in batched)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_batched_equals_per_matrix(rng, dtype, shape, path):
    b = 3
    A = randn(rng, (b, *shape), dtype)
    A[1] = with_singular_values(rng, *shape, [1.0, 1.0, 0.0], dtype)  # tie and zero
    U, s, Vh = np.linalg.svd(A, full_matrices=False)
    U_bar, s_bar, Vh_bar = cotangents(rng, U, s, Vh)
    A_dot = randn(rng, A.shape, dtype)
    A_bar = svd_pullback_batched(U, s, Vh, U_bar, s_bar, Vh_bar)
    vals_bar = svdvals_pullback_batched(U, Vh, s_bar)
    dots = svd_pushforward_batched(U, s, Vh, A_dot)
    residual = svd_gauge_residual_batched(U, s, Vh, U_bar, Vh_bar)
    for p in range(b):
        np.testing.assert_array_equal(
            A_bar[p], svd_pullback(U[p], s[p], Vh[p], U_bar[p], s_bar[p], Vh_bar[p])
        )
        np.testing.assert_array_equal(vals_bar[p], svdvals_pullback(U[p], Vh[p], s_bar[p]))
        for got, single in zip(dots, svd_pushforward(U[p], s[p], Vh[p], A_dot[p]), strict=True):
            np.testing.assert_array_equal(got[p], single)
        single = svd_gauge_residual(U[p], s[p], Vh[p], U_bar[p], Vh_bar[p])
        assert tuple(float(r[p]) for r in residual) == single


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_absent_cotangents(rng, dtype, shape, path):
    U, s, Vh = np.linalg.svd(randn(rng, shape, dtype), full_matrices=False)
    U_bar, s_bar, Vh_bar = cotangents(rng, U, s, Vh)
    np.testing.assert_allclose(
        svdvals_pullback(U, Vh, s_bar), (U * s_bar) @ Vh, rtol=RTOL[dtype], atol=RTOL[dtype]
    )
    np.testing.assert_array_equal(
        svd_pullback(U, s, Vh, None, s_bar, None), svdvals_pullback(U, Vh, s_bar)
    )
    zero_U, zero_s, zero_Vh = np.zeros_like(U), np.zeros_like(s), np.zeros_like(Vh)
    for args, full in [
        ((None, s_bar, Vh_bar), (zero_U, s_bar, Vh_bar)),
        ((U_bar, None, None), (U_bar, zero_s, zero_Vh)),
    ]:
        np.testing.assert_array_equal(svd_pullback(U, s, Vh, *args), svd_pullback(U, s, Vh, *full))
    zero = svd_pullback(U, s, Vh, None, None, None)
    assert zero.shape == shape
    assert not np.any(zero)


def test_inputs_are_not_mutated(rng, path):
    for shape in SHAPES:
        U, s, Vh = np.linalg.svd(randn(rng, (2, *shape), np.complex128), full_matrices=False)
        bars = cotangents(rng, U, s, Vh)
        A_dot = randn(rng, (2, *shape), np.complex128)
        args = [U, s, Vh, *bars, A_dot]
        copies = [a.copy() for a in args]
        svd_pullback_batched(U, s, Vh, *bars)
        svdvals_pullback_batched(U, Vh, bars[1])
        svd_pushforward_batched(U, s, Vh, A_dot)
        svd_gauge_residual_batched(U, s, Vh, bars[0], bars[2])
        for a, c in zip(args, copies, strict=True):
            np.testing.assert_array_equal(a, c)


@pytest.mark.jit_only
@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_in_nan_out(rng, dtype, path):
    U, s, Vh = np.linalg.svd(randn(rng, (4, 4), dtype), full_matrices=False)
    U_bar, s_bar, Vh_bar = cotangents(rng, U, s, Vh)
    s_nan, U_nan = s.copy(), U.copy()
    s_nan[1] = np.nan
    U_nan[2, 0] = np.nan
    A_dot = randn(rng, (4, 4), dtype)
    assert np.isnan(svd_pullback(U, s_nan, Vh, U_bar, s_bar, Vh_bar)).any()
    assert np.isnan(svd_pullback(U_nan, s, Vh, U_bar, s_bar, Vh_bar)).any()
    assert np.isnan(svd_pushforward(U, s_nan, Vh, A_dot)[0]).any()
    assert np.isnan(svd_pushforward(U_nan, s, Vh, A_dot)[1]).any()
    assert np.isnan(svd_gauge_residual(U_nan, s, Vh, U_bar, Vh_bar)[0])
    assert np.isnan(svd_gauge_residual(U, s_nan, Vh, U_bar, Vh_bar)[1])


def test_inconsistent_shapes_raise(rng):
    U, s, Vh = np.linalg.svd(randn(rng, (2, 5, 3), np.float64), full_matrices=False)
    with pytest.raises(ValueError, match=r"svd_pullback: .* got U \(2, 5, 3\), s \(2, 3\)"):
        svd_pullback_batched(U, s, Vh, U[:, :4], None, None)
    full_U = np.linalg.svd(randn(rng, (5, 3), np.float64))[0]  # full_matrices=True: (5, 5)
    with pytest.raises(ValueError, match="svd_pullback"):
        svd_pullback(full_U, s[0], Vh[0], None, s[0], None)
    with pytest.raises(ValueError, match="svdvals_pullback"):
        svdvals_pullback(U[0], Vh[0], s[0, :2])
    with pytest.raises(ValueError, match="svd_pushforward"):
        svd_pushforward(U[0], s[0], Vh[0], Vh[0])
    with pytest.raises(ValueError, match="svd_gauge_residual"):
        svd_gauge_residual_batched(U, s, Vh, U, Vh[:, :2])


def oracle_near_ties(values, rtol, zeros):
    rows = []
    for p, v in enumerate(values):
        tol = rtol * max(abs(v[0]), abs(v[-1]))
        if np.isnan(tol):
            continue
        if np.any(np.abs(np.diff(v)) <= tol) or (zeros and abs(v[-1]) <= tol):
            rows.append(p)
    return np.array(rows, dtype=np.intp)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("zeros", [False, True])
def test_near_tie_rows_matches_oracle(rng, dtype, zeros):
    values = -np.sort(-rng.random((40, 4)), axis=1).astype(dtype)  # descending, as svd's
    values[3, 1] = values[3, 2]  # a tie
    values[7, 3] = 0.0  # a zero singular value
    values[11] = 0.0  # the zero matrix: all tied
    values[13, 1:3] = np.nan  # NaN inside: the ends still decide
    values[13, 0] = values[13, 3]
    values[17, 0] = np.nan  # NaN at an end: never flagged
    values[17, 1:] = values[17, 1]
    values[19, 2] = values[19, 1] * (1 - 1e-5)  # within 1e-4, outside 1e-6
    for rtol in (1e-6, 1e-4):
        rows = _spectral.near_tie_rows(values, rtol, zeros)
        np.testing.assert_array_equal(rows, oracle_near_ties(values, rtol, zeros))
    assert _spectral.near_tie_rows(values[:0], 1e-6, zeros).shape == (0,)
