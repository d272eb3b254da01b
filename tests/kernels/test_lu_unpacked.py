import numpy as np
import pytest
import scipy.linalg
from numpy.testing import assert_allclose, assert_array_equal

from kernels.lu_unpacked import lu_batched


def backward_error(A, perm, L, U):
    """``max_t ||L[perm] U - A||_F / ||A||_F``, in double precision."""
    A, L, U = A.astype(complex), L.astype(complex), U.astype(complex)
    R = np.take_along_axis(L, perm[..., None].astype(np.intp), axis=-2) @ U - A
    scale = np.maximum(np.linalg.norm(A, axis=(1, 2)), np.finfo(float).tiny)  # A = 0 at n = 1
    return float(np.max(np.linalg.norm(R, axis=(1, 2)) / scale))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 16])
def test_backward_error_within_10x_lapack(families, dtype, n):
    eps = np.finfo(dtype).eps
    for name, A in families(n, 40).items():
        perm, L, U = lu_batched(A)
        assert perm.dtype == np.int32
        assert L.dtype == dtype
        assert_array_equal(np.triu(L, 1), 0)
        assert_array_equal(np.diagonal(L, axis1=1, axis2=2), 1)
        assert_array_equal(np.tril(U, -1), 0)
        ref = [scipy.linalg.lu(a, p_indices=True) for a in A]  # LAPACK getrf per matrix
        lapack = max(
            backward_error(a[None], p[None], l[None], u[None])
            for a, (p, l, u) in zip(A, ref, strict=True)
        )
        assert backward_error(A, perm, L, U) <= 10 * max(lapack, eps), name
        if name == "random":  # no near-ties: scipy's pivots and factors
            assert_array_equal(perm, np.stack([p for p, _, _ in ref]))
            assert_allclose(U, np.stack([u for _, _, u in ref]), rtol=1e3 * eps, atol=1e3 * eps)


def test_complex_pivots_by_abs1_like_lapack():
    """LAPACK's izamax compares |Re| + |Im|: 3+3j (6) wins over 5 (|5| > |3+3j| = 4.24)."""
    A = np.array([[[5, 1], [3 + 3j, 2]]], dtype=np.complex128)
    perm, _, _ = lu_batched(A)
    assert_array_equal(perm[0], scipy.linalg.lu(A[0], p_indices=True)[0])
    assert_array_equal(perm[0], [1, 0])


@pytest.mark.jit_only
def test_singular_and_nan(dtype):
    A = np.stack([[[1.0, 2.0], [2.0, 4.0]], [[np.nan, 1.0], [1.0, 1.0]]]).astype(dtype)
    A_before = A.copy()
    _perm, L, U = lu_batched(A)
    assert U[0, 1, 1] == 0  # an exact zero pivot, no inf/nan (as getrf)
    assert np.isfinite(L[0]).all()
    assert np.isnan(U[1]).any()
    assert_array_equal(A, A_before)


def test_empty_and_shape_errors(dtype):
    perm, L, U = lu_batched(np.zeros((0, 3, 3), dtype))
    assert perm.shape == (0, 3)
    assert L.shape == U.shape == (0, 3, 3)
    with pytest.raises(ValueError, match="lu_batched"):
        lu_batched(np.zeros((2, 3, 4), dtype))
