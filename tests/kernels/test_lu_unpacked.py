import numpy as np
import pytest
import scipy.linalg
from numpy.testing import assert_allclose, assert_array_equal

from kernels.lu import lu_factor_batched
from kernels.lu_unpacked import lu_batched, plu_batched


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


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 16])
def test_plu_batched_is_scipys_P_with_lu_batched(rng, dtype, n):
    """``P`` as ``scipy.linalg.lu`` returns it (its real dtype), the rest ``lu_batched``'s; orders 2
    to 4 (flat lane blocks) give ``lu_factor_batched``'s factors (kernels._smallmat) bit for bit."""
    A = rng.standard_normal((70, n, n)).astype(dtype)  # two lane blocks and a partial one
    if np.issubdtype(dtype, np.complexfloating):
        A = A + 1j * rng.standard_normal(A.shape)
    A[3, 0, 0] = np.nan
    A[4] = 0
    A[5, :, 0] = 0
    A_before = A.copy()
    P, perm, L, U, info = plu_batched(A)
    assert_array_equal(A, A_before)
    assert P.dtype == np.zeros(1, dtype).real.dtype
    zero = np.diagonal(U, axis1=1, axis2=2) == 0  # info: getrf's, the first zero pivot 1-based
    assert_array_equal(info, np.where(zero.any(axis=1), np.argmax(zero, axis=1) + 1, 0))
    assert info[4] == 1
    assert info.dtype == np.int32
    for x, y in zip((perm, L, U), lu_batched(A), strict=True):
        assert_array_equal(x, y)
    for t in (0, 4, 5, 69):
        P_ref, _, _ = scipy.linalg.lu(A[t])
        assert_array_equal(P[t], P_ref)
    assert_array_equal(np.take_along_axis(P, perm[..., None], axis=-1)[..., 0], 1)
    lu, _piv = lu_factor_batched(A)
    assert_array_equal(U, np.triu(lu))
    assert_array_equal(L, np.tril(lu, -1) + np.eye(n, dtype=dtype))
    Pe, perm_e, Le, Ue, info_e = plu_batched(np.zeros((0, n, n), dtype))
    assert Pe.shape == Le.shape == Ue.shape == (0, n, n)
    assert perm_e.shape == (0, n)
    assert info_e.shape == (0,)
