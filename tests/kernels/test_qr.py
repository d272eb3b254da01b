import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from kernels._qr_lanes4 import qr_pullback_flat4
from kernels.qr import (
    FLAT4_PULLBACK_MIN_B,
    STACKED_PULLBACK_MIN_N,
    _qr_pullback_lanes,
    qr_pullback,
    qr_pullback_batched,
    qr_pullback_blas,
    qr_pushforward,
    qr_pushforward_batched,
    qr_pushforward_blas,
)

DTYPES = [np.float64, np.float32, np.complex128]
SHAPES = [(4, 4), (5, 3), (3, 5), (1, 1), (1, 3), (3, 1), (2, 2)]


def rand(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return np.ascontiguousarray(x, dtype=dtype)


def inner(a, b):
    """Real inner product Re tr(a^H b), the pairing of the complex convention."""
    return np.real(np.vdot(a, b))


def rtol(dtype):
    return 2e-4 if dtype == np.float32 else 1e-10


def qr_c(A):
    Q, R = np.linalg.qr(A)
    return np.ascontiguousarray(Q), np.ascontiguousarray(R)


def test_numpy_qr_has_a_real_diagonal(rng):
    # the gauge the kernels assume for complex input (LAPACK geqrf)
    _, R = np.linalg.qr(rand(rng, (5, 4), np.complex128))
    assert_array_equal(np.diagonal(R).imag, 0)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape", SHAPES)
def test_qr_pushforward_matches_finite_differences(rng, dtype, shape):
    A, A_dot = rand(rng, shape, dtype), rand(rng, shape, dtype)
    Q, R = qr_c(A)
    Q_dot, R_dot = qr_pushforward(Q, R, A_dot)
    h = 1e-6
    Q_p, R_p = np.linalg.qr(A + h * A_dot)
    Q_m, R_m = np.linalg.qr(A - h * A_dot)
    assert_allclose(Q_dot, (Q_p - Q_m) / (2 * h), rtol=1e-6, atol=1e-7)
    assert_allclose(R_dot, (R_p - R_m) / (2 * h), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_qr_pullback_is_adjoint_of_pushforward(rng, dtype, shape):
    A, A_dot = rand(rng, shape, dtype), rand(rng, shape, dtype)
    Q, R = qr_c(A)
    Q_bar, R_bar = rand(rng, Q.shape, dtype), rand(rng, R.shape, dtype)
    A_bar = qr_pullback(Q, R, Q_bar, R_bar)
    Q_dot, R_dot = qr_pushforward(Q, R, A_dot)
    assert A_bar.dtype == Q_dot.dtype == R_dot.dtype == dtype
    lhs = inner(A_bar, A_dot)
    rhs = inner(Q_bar, Q_dot) + inner(R_bar, R_dot)
    assert_allclose(lhs, rhs, rtol=rtol(dtype) * 10, atol=rtol(dtype) * 10)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3)])
def test_qr_pullback_matches_formula(rng, dtype, shape):
    # A_bar = (Q_bar + Q copyltu(M)) R^-H, M = R R_bar^H - Q_bar^H Q (real diagonal)
    Q, R = qr_c(rand(rng, shape, dtype))
    Q_bar, R_bar = rand(rng, Q.shape, dtype), rand(rng, R.shape, dtype)
    M = R @ R_bar.conj().T - Q_bar.conj().T @ Q
    K = np.tril(M, -1) + np.tril(M, -1).conj().T + np.diag(np.diagonal(M).real)
    expected = (Q_bar + Q @ K) @ np.linalg.inv(R).conj().T
    assert_allclose(qr_pullback(Q, R, Q_bar, R_bar), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_qr_stacked_pullback_matches_formula_and_lanes(rng, dtype):
    """Square stacks from ``STACKED_PULLBACK_MIN_N`` take numpy's matmul and compiled passes."""
    n = STACKED_PULLBACK_MIN_N + 1
    Q, R = qr_c(rand(rng, (5, n, n), dtype))
    Q_bar, R_bar = rand(rng, Q.shape, dtype), rand(rng, R.shape, dtype)
    inputs = [x.copy() for x in (Q, R, Q_bar, R_bar)]
    A_bar = qr_pullback_batched(Q, R, Q_bar, R_bar)
    assert A_bar.dtype == dtype
    assert A_bar.flags.c_contiguous
    for x, x0 in zip((Q, R, Q_bar, R_bar), inputs, strict=True):
        assert_array_equal(x, x0)
    tol = {"rtol": rtol(dtype) * 10, "atol": rtol(dtype) * 10}
    assert_allclose(A_bar, _qr_pullback_lanes(Q, R, Q_bar, R_bar), **tol)
    for t in range(5):
        M = R[t] @ R_bar[t].conj().T - Q_bar[t].conj().T @ Q[t]
        K = np.tril(M, -1) + np.tril(M, -1).conj().T + np.diag(np.diagonal(M).real)
        expected = (Q_bar[t] + Q[t] @ K) @ np.linalg.inv(R[t]).conj().T
        assert_allclose(A_bar[t], expected, **tol)
    R[2, 3, 3] = 0  # rank deficiency: inf/nan in that matrix, never a raise
    A_bar = qr_pullback_batched(Q, R, Q_bar, R_bar)
    assert not np.isfinite(A_bar[2]).all()
    assert np.isfinite(A_bar[[0, 1, 3, 4]]).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_qr_blas_variants_match_kernels(rng, dtype, shape):
    A, A_dot = rand(rng, shape, dtype), rand(rng, shape, dtype)
    Q, R = qr_c(A)
    Q_bar, R_bar = rand(rng, Q.shape, dtype), rand(rng, R.shape, dtype)
    tol = {"rtol": rtol(dtype) * 10, "atol": rtol(dtype) * 10}
    A_bar = qr_pullback_blas(Q, R, Q_bar, R_bar)
    assert A_bar.dtype == dtype
    assert_allclose(A_bar, qr_pullback(Q, R, Q_bar, R_bar), **tol)
    for got, want in zip(
        qr_pushforward_blas(Q, R, A_dot), qr_pushforward(Q, R, A_dot), strict=True
    ):
        assert got.dtype == dtype
        assert_allclose(got, want, **tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 4)])
def test_qr_batched_equals_per_matrix_and_inputs_unchanged(rng, dtype, shape):
    b = 37
    A, A_dot = rand(rng, (b, *shape), dtype), rand(rng, (b, *shape), dtype)
    Q, R = qr_c(A)
    Q_bar, R_bar = rand(rng, Q.shape, dtype), rand(rng, R.shape, dtype)
    inputs = (Q, R, Q_bar, R_bar, A_dot)
    copies = [x.copy() for x in inputs]
    A_bar = qr_pullback_batched(Q, R, Q_bar, R_bar)
    Q_dot, R_dot = qr_pushforward_batched(Q, R, A_dot)
    for i in range(b):
        assert_array_equal(A_bar[i], qr_pullback(Q[i], R[i], Q_bar[i], R_bar[i]))
        Q_dot_i, R_dot_i = qr_pushforward(Q[i], R[i], A_dot[i])
        assert_array_equal(Q_dot[i], Q_dot_i)
        assert_array_equal(R_dot[i], R_dot_i)
    for x, c in zip(inputs, copies, strict=True):
        assert_array_equal(x, c)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("b", [1, FLAT4_PULLBACK_MIN_B, 70])  # one block, and a partial last one
def test_qr_flat_lane_pullback_gives_the_lane_kernels_bits(rng, dtype, b):
    """Real 4x4 stacks: ``kernels._qr_lanes4`` and the small lane blocks agree bit for bit, also
    with a zero on the diagonal of ``R`` (inf, NaN) and NaN and inf in the inputs."""
    Q, R = qr_c(rand(rng, (b, 4, 4), dtype))
    Q_bar, R_bar = rand(rng, (b, 4, 4), dtype), rand(rng, (b, 4, 4), dtype)
    R[::3, 2, 2] = 0
    Q[1::5, 1, 2] = np.nan
    R_bar[2::7, 0, 3] = np.inf
    copies = [x.copy() for x in (Q, R, Q_bar, R_bar)]
    with np.errstate(all="ignore"):
        got = qr_pullback_flat4(Q, R, Q_bar, R_bar)
        want = _qr_pullback_lanes(Q, R, Q_bar, R_bar)
        routed = qr_pullback_batched(Q, R, Q_bar, R_bar)
    assert got.dtype == dtype
    assert_array_equal(got, want)  # NaN where NaN
    finite = ~np.isnan(want)
    assert_array_equal(np.signbit(got[finite]), np.signbit(want[finite]))
    assert_array_equal(routed, want)
    for x, original in zip((Q, R, Q_bar, R_bar), copies, strict=True):
        assert_array_equal(x, original)
    junk = np.tril(np.full((4, 4), np.nan, dtype), -1)  # the strict lower triangles never enter
    with np.errstate(all="ignore"):
        assert_array_equal(qr_pullback_flat4(Q, R + junk, Q_bar, R_bar + junk), want)


@pytest.mark.jit_only
@pytest.mark.parametrize("dtype", DTYPES)
def test_qr_nan_and_rank_deficiency_give_nan_or_inf(rng, dtype):
    Q, R = qr_c(rand(rng, (4, 3), dtype))
    Q_bar, R_bar = rand(rng, Q.shape, dtype), rand(rng, R.shape, dtype)
    Q_bar[0, 0] = np.nan
    assert np.isnan(qr_pullback(Q, R, Q_bar, R_bar)).any()
    A_dot = rand(rng, (4, 3), dtype)
    A_dot[2, 1] = np.nan
    assert all(np.isnan(x).any() for x in qr_pushforward(Q, R, A_dot))
    R[2, 2] = 0  # rank-deficient A: R^-1 does not exist
    assert not np.isfinite(qr_pullback(Q, R, rand(rng, Q.shape, dtype), R_bar)).all()


@pytest.mark.parametrize("shape", [(0, 3, 3), (2, 0, 0)])
def test_qr_empty_stacks_and_matrices(shape):
    A = np.zeros(shape)
    assert qr_pullback_batched(A, A, A, A).shape == shape
    assert [x.shape for x in qr_pushforward_batched(A, A, A)] == [shape, shape]


def test_qr_kernels_reject_mismatched_shapes():
    Q, R = np.zeros((2, 4, 3)), np.zeros((2, 3, 3))
    with pytest.raises(ValueError, match="qr_pullback_batched"):
        qr_pullback_batched(Q, R, Q, np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match="qr_pushforward_batched"):
        qr_pushforward_batched(Q, np.zeros((2, 4, 3)), np.zeros((2, 4, 3)))
