"""Kernels for eigh: numpy oracle, finite differences, adjointness, degenerate spectra, batching."""

import numpy as np
import pytest

from kernels import _spectral, crossovers
from kernels.eigh import (
    eigh_gauge_residual,
    eigh_gauge_residual_batched,
    eigh_pullback,
    eigh_pullback_and_residual,
    eigh_pullback_and_residual_batched,
    eigh_pullback_batched,
    eigh_pushforward,
    eigh_pushforward_batched,
    eigvalsh_pullback,
    eigvalsh_pullback_batched,
)

DTYPES = [np.float64, np.float32, np.complex128]
RTOL = {np.float64: 1e-12, np.float32: 2e-5, np.complex128: 1e-12}


@pytest.fixture(params=["loops", "blas", "trmm"])
def path(request, monkeypatch):
    """Run a test through the loop kernels and the BLAS path, gemm or trmm (tiny n each way)."""
    if request.param != "loops":
        monkeypatch.setattr(crossovers, "EIGH_LOOPS_MAX_N", 0)
        monkeypatch.setattr(crossovers, "EIGVALSH_LOOPS_MAX_N", {})
    if request.param == "trmm":  # V^H herm(A_dot) V by kernels.hermitian_products' trmm
        for name in ("EIGH_HERMITIAN_GEMM_MAX_N", "EIGH_HERMITIAN_GEMM_SMALL_GEMM_MAX_N"):
            monkeypatch.setattr(crossovers, name, {"f": 0, "d": 0, "D": 0})  # either core's
    return request.param


def randn(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def hermitian(rng, shape, dtype):
    x = randn(rng, shape, dtype)
    return ((x + np.conj(np.swapaxes(x, -1, -2))) / 2).astype(dtype)


def unitary(rng, n, dtype):
    q, _ = np.linalg.qr(randn(rng, (n, n), dtype).astype(np.result_type(dtype, np.float64)))
    return q


def with_spectrum(rng, w, dtype):
    """A Hermitian matrix with exactly the eigenvalues ``w`` (up to the rounding of Q diag(w) Q^H)."""
    q = unitary(rng, len(w), dtype)
    a = (q * np.asarray(w)) @ q.conj().T
    return ((a + a.conj().T) / 2).astype(dtype)


def inner(x, y):
    """Real inner product Re <x, y> = Re sum(conj(x) y), the pairing of cotangents and tangents."""
    return float(np.real(np.vdot(np.asarray(x, np.complex128), np.asarray(y, np.complex128))))


def oracle_pullback(w, V, w_bar, V_bar, tol=0.0):
    """Plain numpy formula with an explicit mask."""
    Vh = V.conj().T
    M = Vh @ V_bar
    gap = w[None, :] - w[:, None]
    keep = np.abs(gap) > tol
    F = np.where(keep, 1.0 / np.where(keep, gap, 1.0), 0.0)
    X = V @ (F * (M - M.conj().T) / 2 + np.diag(w_bar)) @ Vh
    return (X + X.conj().T) / 2


def oracle_pushforward(w, V, A_dot, tol=0.0):
    C = V.conj().T @ ((A_dot + A_dot.conj().T) / 2) @ V
    gap = w[None, :] - w[:, None]
    keep = np.abs(gap) > tol
    F = np.where(keep, 1.0 / np.where(keep, gap, 1.0), 0.0)
    return np.real(np.diag(C)), V @ (F * C)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pullback_matches_oracle(rng, dtype, path):
    n = 4
    w, V = np.linalg.eigh(hermitian(rng, (n, n), dtype))
    w_bar, V_bar = randn(rng, n, w.dtype), randn(rng, (n, n), dtype)
    got = eigh_pullback(w, V, w_bar, V_bar)
    assert got.dtype == dtype
    assert got.shape == (n, n)
    np.testing.assert_allclose(
        got, oracle_pullback(w, V, w_bar, V_bar), rtol=RTOL[dtype], atol=RTOL[dtype]
    )
    np.testing.assert_array_equal(got, got.conj().T)  # exactly Hermitian


@pytest.mark.parametrize("dtype", DTYPES)
def test_pushforward_matches_oracle(rng, dtype, path):
    n = 4
    w, V = np.linalg.eigh(hermitian(rng, (n, n), dtype))
    A_dot = randn(rng, (n, n), dtype)  # not Hermitian: the kernel reads its Hermitian part
    w_dot, V_dot = eigh_pushforward(w, V, A_dot)
    assert w_dot.dtype == w.dtype
    assert V_dot.dtype == dtype
    w_exp, V_exp = oracle_pushforward(w, V, A_dot)
    np.testing.assert_allclose(w_dot, w_exp, rtol=RTOL[dtype], atol=RTOL[dtype])
    np.testing.assert_allclose(V_dot, V_exp, rtol=RTOL[dtype], atol=RTOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_pullback_is_adjoint_of_pushforward(rng, dtype, path):
    n = 4
    w, V = np.linalg.eigh(hermitian(rng, (n, n), dtype))
    w_bar, V_bar, A_dot = (
        randn(rng, n, w.dtype),
        randn(rng, (n, n), dtype),
        randn(rng, (n, n), dtype),
    )
    w_dot, V_dot = eigh_pushforward(w, V, A_dot)
    lhs = inner(w_bar, w_dot) + inner(V_bar, V_dot)
    rhs = inner(eigh_pullback(w, V, w_bar, V_bar), A_dot)
    assert lhs == pytest.approx(rhs, rel=100 * RTOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_pullback_and_pushforward_match_finite_differences(rng, dtype):
    # L(A) = sum(c w) + sum(H |V|^2): invariant under the sign/phase gauge of each eigenvector.
    n = 4
    A = hermitian(rng, (n, n), dtype)
    A_dot = hermitian(rng, (n, n), dtype)
    c, H = rng.standard_normal(n), rng.standard_normal((n, n))

    def loss(a):
        w, V = np.linalg.eigh(a)
        return np.sum(c * w) + np.sum(H * np.abs(V) ** 2)

    h = 1e-6
    fd = (loss(A + h * A_dot) - loss(A - h * A_dot)) / (2 * h)
    w, V = np.linalg.eigh(A)
    A_bar = eigh_pullback(w, V, c, 2 * H * V)
    assert inner(A_bar, A_dot) == pytest.approx(fd, rel=1e-6, abs=1e-8)
    w_dot, V_dot = eigh_pushforward(w, V, A_dot)
    jvp = np.sum(c * w_dot) + np.sum(H * 2 * np.real(V.conj() * V_dot))
    assert jvp == pytest.approx(fd, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("n", [1, 3, 8])
def test_other_orders(rng, n, dtype):
    # every order has its own compiled loop kernel (same source, another constant); check a few.
    # 8: the Hermitian product goes through its scratch (HERMITIAN_PRODUCT_SCRATCH_MIN_N)
    w, V = np.linalg.eigh(hermitian(rng, (2, n, n), dtype))
    w_bar = randn(rng, (2, n), np.float64)
    V_bar, A_dot = randn(rng, (2, 2, n, n), dtype)
    A_bar = eigh_pullback_batched(w, V, w_bar, V_bar)
    w_dot, V_dot = eigh_pushforward_batched(w, V, A_dot)
    for p in range(2):
        np.testing.assert_allclose(
            A_bar[p], oracle_pullback(w[p], V[p], w_bar[p], V_bar[p]), atol=1e-12
        )
        w_exp, V_exp = oracle_pushforward(w[p], V[p], A_dot[p])
        np.testing.assert_allclose(w_dot[p], w_exp, atol=1e-12)
        np.testing.assert_allclose(V_dot[p], V_exp, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("block", [None, 16])
def test_blas_path_above_the_tile_size(rng, dtype, block, monkeypatch):
    # n = 70 spans three TILE = 32 tiles (the last one partial) of the mirroring pass; block = 16
    # multiplies only the block lower triangle, as at n >= 2 * PRODUCT_BLOCK
    if block is not None:
        monkeypatch.setattr(_spectral, "PRODUCT_BLOCK", block)
    n = 70
    w, V = np.linalg.eigh(hermitian(rng, (2, n, n), dtype))
    w_bar, V_bar = randn(rng, (2, n), w.dtype), randn(rng, (2, n, n), dtype)
    A_bar = eigh_pullback_batched(w, V, w_bar, V_bar)
    vals_bar = eigvalsh_pullback_batched(V, w_bar)
    tol = 1e-3 if dtype == np.float32 else 1e-11
    for p in range(2):
        np.testing.assert_allclose(
            A_bar[p], oracle_pullback(w[p], V[p], w_bar[p], V_bar[p]), rtol=tol, atol=tol
        )
        want = (V[p] * w_bar[p]) @ V[p].conj().T
        np.testing.assert_allclose(vals_bar[p], want, rtol=tol, atol=tol)
    for X in (A_bar, vals_bar):
        np.testing.assert_array_equal(X, X.conj().swapaxes(-1, -2))  # exactly Hermitian


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [9, 16])
def test_eigvalsh_pullback_between_the_crossovers(rng, dtype, n, monkeypatch):
    # 9 and 16 sit above EIGH_LOOPS_MAX_N but at or below EIGVALSH_LOOPS_MAX_N for float64 and
    # complex128: the loop kernel there, BLAS for float32 and when the entry is emptied
    w, V = np.linalg.eigh(hermitian(rng, (3, n, n), dtype))
    V = np.ascontiguousarray(V)  # the kernels' input contract
    w_bar = randn(rng, (3, n), w.dtype)
    assert n > crossovers.EIGH_LOOPS_MAX_N
    direct = eigvalsh_pullback_batched(V, w_bar)
    for p in range(3):  # one matrix takes the same kernel
        np.testing.assert_array_equal(eigvalsh_pullback(V[p], w_bar[p]), direct[p])
    monkeypatch.setattr(crossovers, "EIGVALSH_LOOPS_MAX_N", {})
    blas = eigvalsh_pullback_batched(V, w_bar)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    for X in (direct, blas):
        assert X.dtype == V.dtype
        np.testing.assert_array_equal(X, X.conj().swapaxes(-1, -2))  # exactly Hermitian
        np.testing.assert_allclose(X, (V * w_bar[:, None, :]) @ V.conj().mT, rtol=tol, atol=tol)
    np.testing.assert_allclose(direct, blas, rtol=tol, atol=tol)
    if dtype != np.float32:  # d/dt sum(c * eigvalsh(A + t A_dot)) = <A_bar, A_dot>, A_bar for c
        A = hermitian(rng, (n, n), dtype)
        V1 = np.ascontiguousarray(np.linalg.eigh(A)[1])
        c = randn(rng, n, w.dtype)
        A_dot = hermitian(rng, (n, n), dtype)
        h = 1e-6
        up, down = np.linalg.eigvalsh(A + h * A_dot), np.linalg.eigvalsh(A - h * A_dot)
        fd = c @ (up - down) / (2 * h)
        monkeypatch.undo()
        assert inner(eigvalsh_pullback(V1, c), A_dot) == pytest.approx(fd, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_blas_path_at_n_256(rng, dtype):
    # The sizes DESIGN's n >= 256 target is about, unpatched: 2 * PRODUCT_BLOCK rows, so the
    # product is taken in row blocks, and the residuals come from BLAS's V^H V_bar (0.2-0.3 s).
    n = 256
    w, V = np.linalg.eigh(hermitian(rng, (n, n), dtype))
    w_bar, V_bar = randn(rng, n, w.dtype), randn(rng, (n, n), dtype)
    A_bar, phase, rotation = eigh_pullback_and_residual(w, V, w_bar, V_bar)
    np.testing.assert_allclose(A_bar, oracle_pullback(w, V, w_bar, V_bar), rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(A_bar, A_bar.conj().T)
    expected = eigh_gauge_residual(w, V, V_bar)
    assert phase == pytest.approx(expected[0], rel=1e-10, abs=1e-12)
    assert rotation == expected[1] == 0  # distinct eigenvalues
    vals_bar = eigvalsh_pullback(V, w_bar)
    np.testing.assert_allclose(vals_bar, (V * w_bar) @ V.conj().T, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(vals_bar, vals_bar.conj().T)


DEGENERATE_SPECTRA = {
    "identity": [1.0, 1.0, 1.0, 1.0],
    "equal_blocks": [-2.0, -2.0, 3.0, 3.0],
    "zero_eigenvalues": [0.0, 0.0, 0.0, 1.5],
    "zero_matrix": [0.0, 0.0, 0.0, 0.0],
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spectrum", DEGENERATE_SPECTRA)
def test_degenerate_spectrum_gauge_invariant_losses(rng, dtype, spectrum, path):
    # At exactly repeated eigenvalues the unmasked formula gives inf/NaN (0 / 0). For
    # L = sum f(w) the gradient is f'(A) = V diag(f'(w)) V^H; with f(w) = w^3 it is 3 A^2.
    # The same loss written through V, L = tr(V diag(f(w)) V^H), gives the same gradient.
    w_exact = DEGENERATE_SPECTRA[spectrum]
    A = (
        np.diag(w_exact).astype(dtype)
        if spectrum == "identity"
        else with_spectrum(rng, w_exact, dtype)
    )
    w, V = np.linalg.eigh(A)
    a64 = A.astype(np.complex128 if np.dtype(dtype).kind == "c" else np.float64)
    expected = 3 * a64 @ a64
    tol = 10 * RTOL[dtype] * max(1.0, np.abs(expected).max())

    through_w = eigh_pullback(w, V, 3 * w**2, None)
    np.testing.assert_allclose(through_w, expected, atol=tol)
    # tr(V diag(w^3) V^H): w_bar = 3 w^2 diag(V^H V) = 3 w^2, V_bar = 2 V diag(w^3)
    A_bar = eigh_pullback(w, V, 3 * w**2, (2 * V * w**3).astype(dtype))
    assert np.all(np.isfinite(A_bar))
    np.testing.assert_allclose(A_bar, expected, atol=tol)

    # finite differences of the gauge-invariant loss, perturbing A symmetrically
    if dtype != np.float32:
        A_dot = hermitian(rng, A.shape, dtype)
        h = 1e-5

        def loss(a):
            return np.sum(np.linalg.eigvalsh(a) ** 3)

        fd = (loss(A + h * A_dot) - loss(A - h * A_dot)) / (2 * h)
        assert inner(A_bar, A_dot) == pytest.approx(fd, rel=1e-6, abs=1e-8)

    phase, rotation = eigh_gauge_residual(w, V, (2 * V * w**3).astype(dtype))
    assert phase <= 1e3 * RTOL[dtype]
    assert rotation <= 1e3 * RTOL[dtype]

    # forward mode: d/dt sum f(w) = sum f'(w) w_dot is right at ties; V_dot is finite
    w_dot, V_dot = eigh_pushforward(w, V, np.eye(4, dtype=dtype))
    np.testing.assert_allclose(w_dot, np.ones(4), atol=tol)
    assert np.all(np.isfinite(V_dot))


def test_gauge_residual_detects_gauge_dependent_cotangents(rng):
    A = with_spectrum(rng, [1.0, 1.0, 2.0, 5.0], np.complex128)
    w, V = np.linalg.eigh(A)
    X = np.zeros((4, 4), np.complex128)
    X[0, 1], X[1, 0] = 0.3, -0.3  # rotation inside the degenerate block {0, 1}
    X[2, 3], X[3, 2] = 0.7, -0.7  # rotation between distinct eigenvalues: not a gauge
    phase, rotation = eigh_gauge_residual(w, V, V @ X)
    assert phase == pytest.approx(0, abs=1e-14)
    assert rotation == pytest.approx(0.3, rel=1e-12)
    phase, rotation = eigh_gauge_residual(w, V, V @ np.diag([0, 0.5j, 0, -0.25j]))
    assert phase == pytest.approx(0.5, rel=1e-12)
    assert rotation == pytest.approx(0, abs=1e-14)

    real = with_spectrum(rng, [1.0, 1.0, 2.0, 5.0], np.float64)
    ws, Vs = np.linalg.eigh(np.stack([real, real]))
    phase, rotation = eigh_gauge_residual_batched(ws, Vs, Vs @ X.real)
    np.testing.assert_array_equal(phase, [0.0, 0.0])
    np.testing.assert_allclose(rotation, [0.3, 0.3], rtol=1e-12)


def test_rtol_controls_the_mask(rng):
    gap = 1e-9
    A = with_spectrum(rng, [1.0, 1.0 + gap, 2.0, 3.0], np.float64)
    w, V = np.linalg.eigh(A)
    w_bar, V_bar = randn(rng, 4, np.float64), randn(rng, (4, 4), np.float64)
    exact_gap = w[1] - w[0]
    np.testing.assert_allclose(
        eigh_pullback(w, V, w_bar, V_bar), oracle_pullback(w, V, w_bar, V_bar), rtol=1e-8
    )
    np.testing.assert_allclose(
        eigh_pullback(w, V, w_bar, V_bar, rtol=1e-6),
        oracle_pullback(w, V, w_bar, V_bar, tol=2 * exact_gap),
        rtol=1e-12,
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_batched_equals_per_matrix(rng, dtype, path):
    b, n = 3, 4
    A = hermitian(rng, (b, n, n), dtype)
    A[1] = with_spectrum(rng, [2.0, 2.0, 2.0, -1.0], dtype)  # a degenerate member
    w, V = np.linalg.eigh(A)
    w_bar, V_bar, A_dot = (
        randn(rng, (b, n), w.dtype),
        randn(rng, (b, n, n), dtype),
        randn(rng, (b, n, n), dtype),
    )
    A_bar = eigh_pullback_batched(w, V, w_bar, V_bar)
    vals_bar = eigvalsh_pullback_batched(V, w_bar)
    w_dot, V_dot = eigh_pushforward_batched(w, V, A_dot)
    phase, rotation = eigh_gauge_residual_batched(w, V, V_bar)
    for p in range(b):
        np.testing.assert_array_equal(A_bar[p], eigh_pullback(w[p], V[p], w_bar[p], V_bar[p]))
        np.testing.assert_array_equal(vals_bar[p], eigvalsh_pullback(V[p], w_bar[p]))
        single = eigh_pushforward(w[p], V[p], A_dot[p])
        np.testing.assert_array_equal(w_dot[p], single[0])
        np.testing.assert_array_equal(V_dot[p], single[1])
        assert (phase[p], rotation[p]) == eigh_gauge_residual(w[p], V[p], V_bar[p])


@pytest.mark.parametrize("dtype", DTYPES)
def test_pullback_and_residual_equals_the_two_kernels(rng, dtype, path):
    # The fused kernel reads the residuals off V^H V_bar before the masks drop them: the same
    # sums as eigh_gauge_residual on the loop path, BLAS's product on the BLAS path.
    b, n = 3, 4
    A = hermitian(rng, (b, n, n), dtype)
    A[1] = with_spectrum(rng, [2.0, 2.0, 2.0, -1.0], dtype)  # a degenerate member
    w, V = np.linalg.eigh(A)
    w_bar, V_bar = randn(rng, (b, n), w.dtype), randn(rng, (b, n, n), dtype)
    A_bar, phase, rotation = eigh_pullback_and_residual_batched(w, V, w_bar, V_bar)
    np.testing.assert_array_equal(A_bar, eigh_pullback_batched(w, V, w_bar, V_bar))
    expected = eigh_gauge_residual_batched(w, V, V_bar)
    if path == "loops":
        np.testing.assert_array_equal(phase, expected[0])
        np.testing.assert_array_equal(rotation, expected[1])
    else:
        np.testing.assert_allclose(phase, expected[0], rtol=RTOL[dtype], atol=10 * RTOL[dtype])
        np.testing.assert_allclose(rotation, expected[1], rtol=RTOL[dtype])
    assert rotation[1] > 0.1  # only the tie rotates
    assert rotation[0] == rotation[2] == 0
    single = eigh_pullback_and_residual(w[1], V[1], w_bar[1], V_bar[1])
    np.testing.assert_array_equal(single[0], A_bar[1])
    assert single[1:] == (phase[1], rotation[1])
    zero = eigh_pullback_and_residual_batched(w, V, w_bar, None)
    np.testing.assert_array_equal(zero[1], 0)
    np.testing.assert_array_equal(zero[2], 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_absent_cotangents(rng, dtype, path):
    n = 4
    w, V = np.linalg.eigh(hermitian(rng, (n, n), dtype))
    w_bar, V_bar = randn(rng, n, w.dtype), randn(rng, (n, n), dtype)
    np.testing.assert_allclose(
        eigvalsh_pullback(V, w_bar), (V * w_bar) @ V.conj().T, rtol=RTOL[dtype], atol=RTOL[dtype]
    )
    np.testing.assert_array_equal(eigh_pullback(w, V, w_bar, None), eigvalsh_pullback(V, w_bar))
    np.testing.assert_array_equal(
        eigh_pullback(w, V, None, V_bar), eigh_pullback(w, V, np.zeros_like(w), V_bar)
    )
    assert not np.any(eigh_pullback(w, V, None, None))


def test_inputs_are_not_mutated(rng, path):
    n = 4
    w, V = np.linalg.eigh(hermitian(rng, (2, n, n), np.complex128))
    args = [w, V, randn(rng, (2, n), np.float64), randn(rng, (2, n, n), np.complex128)]
    A_dot = randn(rng, (2, n, n), np.complex128)
    copies = [a.copy() for a in [*args, A_dot]]
    eigh_pullback_batched(*args)
    eigvalsh_pullback_batched(args[1], args[2])
    eigh_pushforward_batched(w, V, A_dot)
    eigh_gauge_residual_batched(w, V, args[3])
    for a, c in zip([*args, A_dot], copies, strict=True):
        np.testing.assert_array_equal(a, c)


@pytest.mark.jit_only
@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_in_nan_out(rng, dtype, path):
    n = 4
    w, V = np.linalg.eigh(hermitian(rng, (n, n), dtype))
    w_bar, V_bar = randn(rng, n, w.dtype), randn(rng, (n, n), dtype)
    w_nan = w.copy()
    w_nan[2] = np.nan
    V_nan = V.copy()
    V_nan[1, 1] = np.nan
    assert np.isnan(eigh_pullback(w_nan, V, w_bar, V_bar)).any()
    assert np.isnan(eigh_pullback(w, V_nan, w_bar, V_bar)).any()
    assert np.isnan(eigh_pushforward(w_nan, V, V_bar)[1]).any()
    assert np.isnan(eigh_pushforward(w, V_nan, V_bar)[0]).any()
    assert np.isnan(eigh_gauge_residual(w, V_nan, V_bar)[0])
    assert np.isnan(eigh_gauge_residual(w_nan, V, V_bar)[1])


def test_inconsistent_shapes_raise(rng):
    w, V = np.linalg.eigh(hermitian(rng, (2, 4, 4), np.float64))
    with pytest.raises(ValueError, match=r"eigh_pullback: .* got w \(2, 4\), V \(2, 3, 3\)"):
        eigh_pullback_batched(w, V[:, :3, :3].copy(), w, V)
    with pytest.raises(ValueError, match="eigh_pullback"):
        eigh_pullback(w[0], V[0], w[0, :3], None)
    with pytest.raises(ValueError, match="eigvalsh_pullback"):
        eigvalsh_pullback(V[0], w[0, :3])
    with pytest.raises(ValueError, match="eigh_pushforward"):
        eigh_pushforward(w[0], V[0], V[0, :3])
    with pytest.raises(ValueError, match="eigh_gauge_residual"):
        eigh_gauge_residual_batched(w, V, V[:1])


def test_blas_path_takes_a_real_direction_for_a_complex_matrix(rng, path):
    # found in review: the trmm helper refused mixed dtypes on the BLAS path
    n = 12
    w, V = np.linalg.eigh(hermitian(rng, (n, n), np.complex128))
    A_dot = hermitian(rng, (n, n), np.float64)
    w_dot, V_dot = eigh_pushforward(w, V, A_dot)
    w_exp, V_exp = oracle_pushforward(w, V, A_dot.astype(np.complex128))
    np.testing.assert_allclose(w_dot, w_exp, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(V_dot, V_exp, rtol=1e-12, atol=1e-12)
