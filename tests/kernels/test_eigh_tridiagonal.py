"""The batched tridiagonal-QR eigendecomposition against LAPACK (numpy's eigh) on the issue's families."""

import numpy as np
import pytest

from kernels.eigh_forward import eigh_batched
from kernels.eigh_tridiagonal import eigh_tridiagonal_batched, eigvalsh_tridiagonal_batched

DTYPES = [np.float64, np.float32, np.complex128]
KINDS = ["random", "graded", "ill", "rank", "clustered", "repeated"]  # _accuracy.HERMITIAN_KINDS


def reconstruct(w, V):
    return (V * w[..., None, :]) @ V.conj().mT


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [1, 2, 3, 16, 33])
def test_accuracy_within_lapack(rng, acc, dtype, kind, n):
    A = acc.hermitian(rng, kind, 21, n, dtype)
    A_in = A.copy()
    w, V = eigh_tridiagonal_batched(A)
    np.testing.assert_array_equal(A, A_in)  # the input is not written
    assert (w.dtype, V.dtype) == (np.finfo(dtype).dtype, dtype)
    assert (w.shape, V.shape) == ((21, n), (21, n, n))
    wl, Vl = np.linalg.eigh(A)
    ours, lapack = (
        acc.backward_error(A, reconstruct(w, V)),
        acc.backward_error(A, reconstruct(wl, Vl)),
    )
    assert acc.within_lapack(ours, lapack, n, dtype), (ours, lapack)
    ours, lapack = acc.orthogonality(V), acc.orthogonality(Vl)
    assert acc.within_lapack(ours, lapack, n, dtype), (ours, lapack)
    assert np.all(np.diff(w, axis=-1) >= 0)  # ascending, as numpy
    # eigenvalues: both within a small multiple of eps ||A||_2 of the exact ones (Weyl)
    scale = np.linalg.norm(A.astype(np.complex128), 2, axis=(-2, -1))[:, None]
    tol = 20 * n * acc.eps(dtype) * np.maximum(scale, np.finfo(dtype).tiny)
    assert np.all(np.abs(w - wl) <= tol)
    # the values-only call runs the same steps without the vectors
    np.testing.assert_allclose(eigvalsh_tridiagonal_batched(A), w, rtol=0, atol=tol.max())


@pytest.mark.parametrize("dtype", DTYPES)
def test_gauge_is_the_jacobi_kernels(rng, acc, dtype):
    """Each eigenvector's first largest-magnitude entry is real positive, as in ``eigh_batched``."""
    A = acc.hermitian(rng, "random", 30, 6, dtype)
    w, V = eigh_tridiagonal_batched(A)
    top = np.take_along_axis(V, np.argmax(np.abs(V), axis=-2)[..., None, :], axis=-2)[..., 0, :]
    assert np.all(top.real > 0)
    np.testing.assert_array_equal(top.imag, 0)
    wj, Vj = eigh_batched(A)  # distinct eigenvalues: the same vectors to rounding
    tol = 1e-3 if dtype == np.float32 else 1e-9
    np.testing.assert_allclose(w, wj, atol=tol)
    np.testing.assert_allclose(V, Vj, atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_reads_one_triangle(rng, acc, dtype):
    A = acc.hermitian(rng, "random", 6, 12, dtype)
    i = np.arange(12)
    junk = A.copy()
    junk[:, i, i] += 5j if dtype == np.complex128 else 0  # the diagonal's imaginary part ignored
    np.testing.assert_allclose(eigh_tridiagonal_batched(junk)[0], np.linalg.eigvalsh(A), atol=1e-12)
    iu = np.triu_indices(12, 1)
    junk = A.copy()
    junk[:, iu[0], iu[1]] = np.nan  # upper triangle ignored with lower=True
    np.testing.assert_allclose(eigh_tridiagonal_batched(junk)[0], np.linalg.eigvalsh(A), atol=1e-12)
    junk = A.copy()
    junk[:, iu[1], iu[0]] = 99.0
    w, V = eigh_tridiagonal_batched(junk, lower=False)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(A), atol=1e-12)
    np.testing.assert_allclose(reconstruct(w, V), A, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_in_nan_out(rng, acc, dtype, bad):
    A = acc.hermitian(rng, "random", 10, 12, dtype)
    A[3, 7, 2] = bad
    w, V = eigh_tridiagonal_batched(A)
    assert np.isnan(w[3]).all()
    assert np.isnan(V[3]).all()
    others = np.arange(10) != 3
    assert np.isfinite(w[others]).all()
    assert np.isfinite(V[others]).all()
    assert np.isnan(eigvalsh_tridiagonal_batched(A)[3]).all()


def test_extreme_scales_and_zero(rng, acc):
    """Tiny and huge matrices: the power-of-two scaling keeps the rotations finite."""
    A = acc.hermitian(rng, "random", 5, 16, np.float64)
    for s in (1e-300, 1e-200, 1e200, 1e300):
        w, V = eigh_tridiagonal_batched(A * s)
        np.testing.assert_allclose(w / s, np.linalg.eigvalsh(A), atol=1e-13)
        assert acc.orthogonality(V) < 1e-13
    w, V = eigh_tridiagonal_batched(np.zeros((2, 5, 5)))
    np.testing.assert_array_equal(w, 0)
    np.testing.assert_array_equal(V, np.broadcast_to(np.eye(5), V.shape))


def test_already_tridiagonal_and_diagonal(rng):
    """Columns with nothing below the subdiagonal take no reflector (``tau = 0``)."""
    d = rng.standard_normal((4, 9))
    e = rng.standard_normal((4, 8))
    T = np.zeros((4, 9, 9))
    i = np.arange(9)
    T[:, i, i] = d
    T[:, i[1:], i[:-1]] = T[:, i[:-1], i[1:]] = e
    w, V = eigh_tridiagonal_batched(T)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(T), atol=1e-13)
    np.testing.assert_allclose(reconstruct(w, V), T, atol=1e-13)
    D = np.zeros((1, 6, 6))
    D[0, i[:6], i[:6]] = [3.0, -1.0, 2.0, 2.0, 0.0, -5.0]
    w, V = eigh_tridiagonal_batched(D)
    np.testing.assert_array_equal(w[0], [-5.0, -1.0, 0.0, 2.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.abs(V[0]).sum(axis=0), 1.0)  # unit vectors, not rotated


def test_bad_input():
    with pytest.raises(ValueError, match="eigh_tridiagonal_batched"):
        eigh_tridiagonal_batched(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match="eigh_tridiagonal_batched"):
        eigh_tridiagonal_batched(np.zeros((2, 3, 3), dtype=np.complex64))
    with pytest.raises(ValueError, match="eigvalsh_tridiagonal_batched"):
        eigvalsh_tridiagonal_batched(np.zeros((3, 3)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("tiny", [1e-161, 1e-200, 1e-22])
def test_tiny_columns_give_orthogonal_reflectors(dtype, tiny):
    """A column far below the matrix's scale: its norm is scaled before squaring (no subnormals)."""
    if np.finfo(dtype).tiny > 1e-300 and tiny < 1e-30:
        tiny = 1e-21  # float32: squares of 1e-21 are subnormal there
    A = np.diag(np.array([1.0, 2.0, 3.0], dtype=dtype))[None].copy()
    A[0, 0, 2] = A[0, 2, 0] = tiny
    w, V = eigh_tridiagonal_batched(A)
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(w[0], [1.0, 2.0, 3.0], atol=10 * eps)
    np.testing.assert_allclose(V[0].conj().T @ V[0], np.eye(3), atol=10 * eps)
    np.testing.assert_allclose(reconstruct(w, V), A, atol=10 * eps)


def test_tiny_complex_entries_and_zero_diagonal_blocks():
    """Entries whose squares underflow: no NaN, no lost orthogonality (LAPACK is exact here)."""
    A = np.array([[[1, 1e-170j], [-1e-170j, 1]]])  # |alpha|^2 underflows, alpha not real
    w, V = eigh_tridiagonal_batched(A)
    np.testing.assert_allclose(w, [[1.0, 1.0]], atol=1e-15)
    np.testing.assert_allclose(V[0].conj().T @ V[0], np.eye(2), atol=1e-15)
    for delta in (1e-160, 1e-200):  # a zero-diagonal 2x2 block beside a 1: no relative deflation
        T = np.array([[[1.0, 0, 0], [0, 0, delta], [0, delta, 0]]])
        w, V = eigh_tridiagonal_batched(T)
        assert np.isfinite(w).all()
        np.testing.assert_allclose(w, np.linalg.eigvalsh(T), atol=1e-15)
        np.testing.assert_allclose(V[0].T @ V[0], np.eye(3), atol=1e-15)
        np.testing.assert_allclose(reconstruct(w, V), T, atol=1e-15)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_subnormal_matrices(dtype):
    """A largest entry below the normal range: the power-of-two scale stays finite."""
    A = np.diag(np.array([1.0, 2.0, 3.0, 4.0], dtype=dtype))[None] * 5e-324 * 3
    w, V = eigh_tridiagonal_batched(A)
    assert np.isfinite(w).all()
    assert np.isfinite(V).all()
    np.testing.assert_array_equal(w, np.linalg.eigvalsh(A))
