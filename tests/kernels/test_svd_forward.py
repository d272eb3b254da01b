"""The batched one-sided Jacobi SVD against LAPACK (numpy's svd) on the issue's families."""

import numpy as np
import pytest

from kernels.svd_forward import svd_batched, svdvals_batched

DTYPES = [np.float64, np.float32, np.complex128]
KINDS = ["random", "graded", "ill", "rank"]  # _accuracy.KINDS
SHAPES = [(1, 1), (4, 4), (6, 3), (3, 5)]


def reconstruct(U, s, Vh):
    return (U * s[..., None, :]) @ Vh


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_accuracy_within_lapack(rng, acc, dtype, kind, shape):
    m, n = shape
    k = min(m, n)
    A = acc.general(rng, kind, 37, m, n, dtype)
    A_in = A.copy()
    U, s, Vh = svd_batched(A)
    np.testing.assert_array_equal(A, A_in)  # the input is not written
    assert (U.dtype, s.dtype, Vh.dtype) == (dtype, np.finfo(dtype).dtype, dtype)
    assert (U.shape, s.shape, Vh.shape) == ((37, m, k), (37, k), (37, k, n))
    Ul, sl, Vhl = np.linalg.svd(A, full_matrices=False)
    size = max(m, n)
    ours, lapack = (
        acc.backward_error(A, reconstruct(U, s, Vh)),
        acc.backward_error(A, reconstruct(Ul, sl, Vhl)),
    )
    assert acc.within_lapack(ours, lapack, size, dtype), (ours, lapack)
    for X, Xl in ((U, Ul), (Vh.conj().mT, Vhl.conj().mT)):
        ours, lapack = acc.orthogonality(X), acc.orthogonality(Xl)
        assert acc.within_lapack(ours, lapack, size, dtype), (ours, lapack)
    assert np.all(np.diff(s, axis=-1) <= 0)  # descending, as numpy
    # within a small multiple of eps s_max of LAPACK's: an eigh of A^H A (the "Gram" route)
    # misses this by far on the ill-conditioned family (errors near sqrt(eps) s_max)
    assert np.all(np.abs(s - sl) <= 20 * size * acc.eps(dtype) * sl[:, :1])
    np.testing.assert_allclose(svdvals_batched(A), s, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gauge_normalisation(rng, acc, dtype):
    """Each column of U has its first largest-magnitude entry real positive; pairs match LAPACK's."""
    A = acc.general(rng, "random", 50, 5, 4, dtype)
    U, _, Vh = svd_batched(A)
    top = np.take_along_axis(U, np.argmax(np.abs(U), axis=-2)[..., None, :], axis=-2)[..., 0, :]
    assert np.all(top.real > 0)
    np.testing.assert_array_equal(top.imag, 0)
    Ul, _, Vhl = np.linalg.svd(A, full_matrices=False)
    phase = Ul.conj()[np.arange(50)[:, None], np.argmax(np.abs(Ul), axis=-2), np.arange(4)]
    phase = phase / np.abs(phase)
    tol = 1e-3 if dtype == np.float32 else 1e-9
    np.testing.assert_allclose(U, Ul * phase[:, None, :], atol=tol)
    np.testing.assert_allclose(Vh, Vhl * phase.conj()[:, :, None], atol=tol)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_zero_columns_are_completed(shape):
    """Exact zeros (a zero matrix, zero columns): U and V stay orthonormal."""
    m, n = shape
    A = np.zeros((3, m, n))
    A[1, 0, 0] = 2.0
    A[2, :, 0] = 1.0
    U, s, Vh = svd_batched(A)
    k = min(m, n)
    np.testing.assert_allclose(U.mT @ U, np.broadcast_to(np.eye(k), (3, k, k)), atol=1e-15)
    np.testing.assert_allclose(Vh @ Vh.mT, np.broadcast_to(np.eye(k), (3, k, k)), atol=1e-15)
    np.testing.assert_allclose(reconstruct(U, s, Vh), A, atol=1e-15)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_in_nan_out(rng, acc, dtype):
    A = acc.general(rng, "random", 40, 4, 3, dtype)
    A[3, 2, 1] = np.nan
    U, s, _ = svd_batched(A)
    assert np.isnan(s[3]).all()
    assert np.isnan(U[3]).all()
    assert np.isfinite(s[np.arange(40) != 3]).all()


def test_extreme_scales(rng, acc):
    A = acc.general(rng, "random", 5, 4, 3, np.complex128)
    for scale in (1e-200, 1e200):
        U, s, _ = svd_batched(A * scale)
        np.testing.assert_allclose(s / scale, np.linalg.svd(A, compute_uv=False), rtol=1e-13)
        assert acc.orthogonality(U) < 1e-13


@pytest.mark.parametrize(
    ("dtype", "tiny"), [(np.float64, 1e-130), (np.float32, 1e-17), (np.complex128, 1e-130)]
)
def test_pairs_whose_norm_product_underflows_are_still_rotated(acc, dtype, tiny):
    """Columns 2 and 3 at ``tiny`` (60 degrees apart): ``|g_2|^2 |g_3|^2`` underflows to 0.

    The rotation test is taken on squares where that is exact; here squares of ``g_2^H g_3``
    underflow too, and a squared test would leave the pair unrotated: singular values
    ``[1, tiny, tiny]`` or NaN instead of those of the 2x2 block, 1.22 and 0.71 times ``tiny``.
    """
    block = np.array([[1.0, 0.5], [0.0, np.sqrt(0.75)]])
    A = np.zeros((2, 3, 3), dtype=dtype)
    A[:, 0, 0] = 1.0
    A[:, 1:, 1:] = block * tiny
    A[1] = A[1].T  # and as rows: the same singular values
    U, s, Vh = svd_batched(A)
    expected = np.linalg.svd(block, compute_uv=False)
    rtol = 50 * np.finfo(dtype).eps
    for p in range(2):
        np.testing.assert_allclose(s[p, 0], 1.0, rtol=rtol)
        np.testing.assert_allclose(s[p, 1:] / tiny, expected, rtol=rtol)
    np.testing.assert_allclose(reconstruct(U, s, Vh) / tiny, A / tiny, atol=rtol * 4 / tiny)
    assert acc.orthogonality(U) < rtol
    assert acc.orthogonality(Vh.conj().mT) < rtol


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_lane_with_tiny_columns_leaves_the_others_alone(rng, acc, dtype):
    """The scaled rotations of a tiny lane do not change the results of the lanes beside it."""
    A = acc.general(rng, "random", 32, 4, 4, dtype)
    B = A.copy()
    B[5] *= 1e-150 if dtype != np.float32 else 1e-20  # squared norm products underflow
    U, s, Vh = svd_batched(A)
    U_b, s_b, Vh_b = svd_batched(B)
    others = np.arange(32) != 5
    np.testing.assert_array_equal(s_b[others], s[others])
    np.testing.assert_array_equal(U_b[others], U[others])
    np.testing.assert_array_equal(Vh_b[others], Vh[others])


def test_bad_input():
    with pytest.raises(ValueError, match="svd_batched"):
        svd_batched(np.zeros((2, 0, 4)))
    with pytest.raises(ValueError, match="svdvals_batched"):
        svdvals_batched(np.zeros((2, 3, 3), dtype=np.float16))


def _sweeps_and_factors(A):
    from kernels.svd_forward import _svd_kernel

    b, m, n = A.shape
    k = min(m, n)
    U = np.empty((b, m, k), dtype=A.dtype)
    s = np.empty((b, k), dtype=np.finfo(A.dtype).dtype)
    Vh = np.empty((b, k, n), dtype=A.dtype)
    sweeps = _svd_kernel(A, True, float(np.finfo(s.dtype).eps), U, s, Vh)
    return sweeps, U, s, Vh


@pytest.mark.parametrize(
    ("dtype", "tiny"), [(np.float32, 1e-25), (np.float64, 1e-170), (np.complex128, 1e-170)]
)
def test_columns_below_the_zero_bound_keep_u_orthonormal(acc, dtype, tiny):
    """A column whose squares underflow is left unrotated, and its direction completed."""
    A = acc.general(np.random.default_rng(7), "random", 40, 5, 3, dtype)
    A[:, :, 2] *= tiny  # every matrix has a column far below the others
    sweeps, U, s, Vh = _sweeps_and_factors(A)
    assert sweeps < 10
    m, eps = 5, np.finfo(dtype).eps
    assert acc.orthogonality(U) < 20 * eps
    assert acc.orthogonality(Vh.conj().mT) < 20 * eps
    sl = np.linalg.svd(A, compute_uv=False)
    assert np.all(np.abs(s - sl) <= 20 * m * eps * sl[:, :1])
    atol = 20 * m * eps * float(np.abs(A).max())
    np.testing.assert_allclose(reconstruct(U, s, Vh), A, atol=atol)


def test_a_column_whose_norm_underflows_does_not_hold_its_block_for_30_sweeps(rng):
    """float32, the second column near 1e-38: its squared norm underflows to 0.

    Its pair's test then passed only at an exact zero, which the rotations never reach: the
    whole lane block ran all 30 sweeps (3 before the squared test, 30 with it; found in review).
    """
    A = rng.standard_normal((32, 3, 2)).astype(np.float32)
    A[0] = [[-1.0983568, -1.0819952e-38], [-1.4791001, 4.6526469e-38], [-0.6662001, 6.1101938e-40]]
    sweeps, U, s, _ = _sweeps_and_factors(A)
    assert sweeps < 10
    np.testing.assert_allclose(s, np.linalg.svd(A, compute_uv=False), rtol=0, atol=1e-6 * s.max())
    assert np.abs(U.mT @ U - np.eye(2)).max() < 1e-5


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_matrix_is_not_changed_by_the_others_in_its_block(rng, acc, dtype):
    """A column near 1e-160: dot products with it have subnormal squares and inexact phases.

    A lane that did not rotate still had that phase applied whenever another lane of its block
    rotated: complex matrices then came out with a relative reconstruction error of 0.5% when
    stacked with others, and exact when alone (landed bug; found by fuzzing after review).
    """
    A = acc.general(rng, "random", 16, 4, 3, dtype)
    # every other matrix; the rest rotate their first column
    A[::2, :, 0] *= (10.0 ** rng.uniform(-170, -150, size=(8, 1))).astype(A.real.dtype)
    U, s, Vh = svd_batched(A)
    for p in range(16):
        U_alone, s_alone, Vh_alone = svd_batched(A[p : p + 1])
        np.testing.assert_array_equal(s[p], s_alone[0])
        np.testing.assert_array_equal(U[p], U_alone[0])
        np.testing.assert_array_equal(Vh[p], Vh_alone[0])
    eps = np.finfo(dtype).eps
    assert acc.orthogonality(U) < 20 * eps
    assert acc.orthogonality(Vh.conj().mT) < 20 * eps
    atol = 20 * 4 * eps * float(np.abs(A).max())
    np.testing.assert_allclose(reconstruct(U, s, Vh), A, atol=atol)
