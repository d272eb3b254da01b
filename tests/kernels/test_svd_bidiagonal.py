"""The batched bidiagonal-QR SVD against LAPACK (numpy's svd) on the issue's families."""

import numpy as np
import pytest

from kernels.svd_bidiagonal import svd_bidiagonal_batched, svdvals_bidiagonal_batched
from kernels.svd_forward import svd_batched

DTYPES = [np.float64, np.float32, np.complex128]
KINDS = ["random", "graded", "ill", "rank"]  # _accuracy.KINDS


def reconstruct(U, s, Vh):
    return (U * s[..., None, :]) @ Vh


SHAPES = [(1, 1), (2, 2), (3, 3), (16, 16), (33, 33), (3, 1), (1, 3), (17, 9), (9, 17)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_accuracy_within_lapack(rng, acc, dtype, kind, shape):
    m, n = shape
    k = min(m, n)
    A = acc.general(rng, kind, 21, m, n, dtype)
    A_in = A.copy()
    U, s, Vh = svd_bidiagonal_batched(A)
    np.testing.assert_array_equal(A, A_in)  # the input is not written
    assert (U.dtype, s.dtype, Vh.dtype) == (dtype, np.finfo(dtype).dtype, dtype)
    assert (U.shape, s.shape, Vh.shape) == ((21, m, k), (21, k), (21, k, n))
    n = max(m, n)  # the order in the tolerances below
    Ul, sl, Vhl = np.linalg.svd(A, full_matrices=False)
    ours, lapack = (
        acc.backward_error(A, reconstruct(U, s, Vh)),
        acc.backward_error(A, reconstruct(Ul, sl, Vhl)),
    )
    assert acc.within_lapack(ours, lapack, n, dtype), (ours, lapack)
    for X, Xl in ((U, Ul), (Vh.conj().mT, Vhl.conj().mT)):
        ours, lapack = acc.orthogonality(X), acc.orthogonality(Xl)
        assert acc.within_lapack(ours, lapack, n, dtype), (ours, lapack)
    assert np.all(np.diff(s, axis=-1) <= 0)  # descending, as numpy
    assert np.all(s >= 0)
    tol = 20 * n * acc.eps(dtype) * sl[:, :1]
    assert np.all(np.abs(s - sl) <= tol)
    np.testing.assert_allclose(svdvals_bidiagonal_batched(A), s, rtol=0, atol=tol.max())


@pytest.mark.parametrize("dtype", DTYPES)
def test_gauge_is_the_jacobi_kernels(rng, acc, dtype):
    """``u_j``'s first largest-magnitude entry real positive, ``v_j`` in its phase, as Jacobi's."""
    tol = 1e-3 if dtype == np.float32 else 1e-9
    A = acc.general(rng, "random", 30, 6, 5, dtype)
    for M in (A, np.ascontiguousarray(A.mT)):  # tall, and wide (reduced as its transpose)
        U, s, Vh = svd_bidiagonal_batched(M)
        top = np.take_along_axis(U, np.argmax(np.abs(U), axis=-2)[..., None, :], axis=-2)
        assert np.all(top.real > 0)
        np.testing.assert_array_equal(top.imag, 0)
        for ours, jacobi in zip((U, s, Vh), svd_batched(M), strict=True):
            np.testing.assert_allclose(ours, jacobi, atol=tol)


def test_zero_on_the_diagonal_splits(rng):
    """Bidiagonal inputs with zero diagonal entries (first, inner, last) take the chases."""
    n = 7
    i = np.arange(n)
    B = np.zeros((4, n, n))
    B[:, i, i] = rng.standard_normal((4, n))
    B[:, i[:-1], i[1:]] = rng.standard_normal((4, n - 1))
    B[0, 0, 0] = B[1, 3, 3] = B[2, n - 1, n - 1] = 0.0
    B[3, 2, 2] = B[3, 5, 5] = B[3, n - 1, n - 1] = 0.0
    U, s, Vh = svd_bidiagonal_batched(B)
    np.testing.assert_allclose(s, np.linalg.svd(B, compute_uv=False), atol=1e-14)
    np.testing.assert_allclose(reconstruct(U, s, Vh), B, atol=1e-14)
    assert np.abs(s[:3, -1]).max() <= 1e-15  # one zero singular value each
    np.testing.assert_allclose(U.mT @ U, np.broadcast_to(np.eye(n), U.shape), atol=1e-14)
    np.testing.assert_allclose(Vh @ Vh.mT, np.broadcast_to(np.eye(n), U.shape), atol=1e-14)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_in_nan_out(rng, acc, dtype, bad):
    A = acc.general(rng, "random", 10, 12, 12, dtype)
    A[3, 7, 2] = bad
    U, s, Vh = svd_bidiagonal_batched(A)
    for X in (U, s, Vh):
        assert np.isnan(X[3]).all()
        assert np.isfinite(X[np.arange(10) != 3]).all()
    assert np.isnan(svdvals_bidiagonal_batched(A)[3]).all()


def test_extreme_scales_and_zero(rng, acc):
    A = acc.general(rng, "random", 5, 16, 16, np.float64)
    for scale in (1e-300, 1e-200, 1e200, 1e300):
        U, s, Vh = svd_bidiagonal_batched(A * scale)
        np.testing.assert_allclose(s / scale, np.linalg.svd(A, compute_uv=False), atol=1e-13)
        assert acc.orthogonality(U) < 1e-13
        assert acc.orthogonality(Vh.mT) < 1e-13
    U, s, Vh = svd_bidiagonal_batched(np.zeros((2, 5, 5)))
    np.testing.assert_array_equal(s, 0)
    np.testing.assert_array_equal(reconstruct(U, s, Vh), 0)
    assert acc.orthogonality(U) == 0


def test_bad_input():
    with pytest.raises(ValueError, match="svd_bidiagonal_batched"):
        svd_bidiagonal_batched(np.zeros((2, 0, 4)))
    with pytest.raises(ValueError, match="svd_bidiagonal_batched"):
        svd_bidiagonal_batched(np.zeros((2, 3, 3), dtype=np.complex64))
    with pytest.raises(ValueError, match="svdvals_bidiagonal_batched"):
        svdvals_bidiagonal_batched(np.zeros((3, 3)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_tiny_columns_give_orthogonal_reflectors(dtype):
    """A column far below the matrix's scale: its norm is scaled before squaring (no subnormals)."""
    tiny = 1e-161 if np.finfo(dtype).tiny < 1e-300 else 1e-22
    A = np.array([[[0.0, 1.0], [tiny, 0.0], [0.0, 0.0]]], dtype=dtype)
    U, s, Vh = svd_bidiagonal_batched(A)
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(s[0], [1.0, tiny], rtol=10 * eps, atol=10 * eps)
    np.testing.assert_allclose(reconstruct(U, s, Vh), A, atol=10 * eps)
    np.testing.assert_allclose(U[0].conj().T @ U[0], np.eye(2), atol=10 * eps)
    B = np.array([[[1.0, 0, 0], [0, 0, 1e-200], [0, 0, 0]]], dtype=dtype)  # tiny, zero diagonal
    U, s, Vh = svd_bidiagonal_batched(B)
    assert np.isfinite(s).all()
    np.testing.assert_allclose(reconstruct(U, s, Vh), B, atol=10 * eps)


def test_tiny_complex_entries_and_subnormal_matrices():
    A = np.array([[[1, 1e-170j], [1e-170j, 1]]])  # |alpha|^2 underflows, alpha not real
    U, s, Vh = svd_bidiagonal_batched(A)
    np.testing.assert_allclose(s, [[1.0, 1.0]], atol=1e-15)
    np.testing.assert_allclose(reconstruct(U, s, Vh), A, atol=1e-15)
    A = np.diag([1.0, 2.0, 3.0, 4.0])[None] * 5e-324 * 3  # subnormal largest entry
    U, s, Vh = svd_bidiagonal_batched(A)
    assert np.isfinite(s).all()
    assert np.isfinite(U).all()
    np.testing.assert_array_equal(s, np.linalg.svd(A, compute_uv=False))
