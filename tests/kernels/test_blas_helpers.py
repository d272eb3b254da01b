"""kernels._blas: the LAPACK helpers of the large-matrix paths."""

import numpy as np
import pytest
import scipy.linalg as sla

from kernels import _blas


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("n", [1, 5, 130])
def test_getri_inverts_from_the_lu_and_leaves_it_unless_asked(rng, dtype, n):
    A = rng.standard_normal((n, n)) + 3 * np.eye(n)
    if np.dtype(dtype).kind == "c":
        A = A + 1j * rng.standard_normal((n, n))
    A = A.astype(dtype)
    lu, piv = sla.lu_factor(A)
    kept = lu.copy()
    inverse, info = _blas.getri(lu, piv)
    assert info == 0
    assert inverse.dtype == A.dtype
    np.testing.assert_array_equal(lu, kept)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(inverse @ A, np.eye(n), atol=tol * n)
    np.testing.assert_allclose(_blas.getri(lu.copy(order="F"), piv, overwrite_lu=True)[0], inverse)


def test_getri_asks_lapack_for_its_workspace_once_per_dtype_and_order(rng):
    # the blocked algorithm needs more than scipy's default lwork = n; the size is cached
    A = rng.standard_normal((200, 200)) + 3 * np.eye(200)
    lu, piv = sla.lu_factor(A)
    _blas._getri_with_lwork.cache_clear()
    _blas.getri(lu, piv)
    _, lwork = _blas._getri_with_lwork("d", 200)
    work, _ = sla.lapack.dgetri_lwork(200)
    assert lwork == int(work) > 200
    _blas.getri(lu, piv)
    info = _blas._getri_with_lwork.cache_info()
    assert (info.misses, info.currsize) == (1, 1)


def test_getri_keeps_a_bounded_number_of_workspace_sizes(rng):
    # a program that inverts matrices of ever new orders does not grow the cache without bound
    _blas._getri_with_lwork.cache_clear()
    for n in range(1, 100):
        lu, piv = sla.lu_factor(rng.standard_normal((n, n)) + 3 * np.eye(n))
        assert _blas.getri(lu, piv)[1] == 0
    assert (
        _blas._getri_with_lwork.cache_info().currsize
        == _blas._getri_with_lwork.cache_info().maxsize
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_gemm_accumulate_c_adds_the_product_in_place(rng, dtype):
    A = rng.standard_normal((5, 3)).astype(dtype)
    B = rng.standard_normal((3, 4)).astype(dtype)
    C = rng.standard_normal((5, 4)).astype(dtype)
    A0, B0, expected = A.copy(), B.copy(), C + A @ B
    out = _blas.gemm_accumulate_c(A, B, C)
    assert out is C
    assert C.dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(C, expected, rtol=tol, atol=tol)
    np.testing.assert_array_equal(A, A0)
    np.testing.assert_array_equal(B, B0)


def test_gemm_accumulate_c_writes_back_into_a_strided_c(rng):
    A, B = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    C = rng.standard_normal((4, 4)).T  # Fortran-ordered: scipy copies it
    expected = C + A @ B
    _blas.gemm_accumulate_c(A, B, C)
    np.testing.assert_allclose(C, expected, rtol=1e-13, atol=1e-13)


def test_rows_of_pivots_is_the_permutation_of_getrf(rng):
    A = rng.standard_normal((9, 9))
    lu, piv = sla.lu_factor(A)
    perm = _blas.rows_of_pivots(piv)
    L, U = np.tril(lu, -1) + np.eye(9), np.triu(lu)
    np.testing.assert_allclose(A[perm], L @ U, rtol=1e-13, atol=1e-13)  # P^T A = L U


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("trans", [0, 1, 2])
@pytest.mark.parametrize(("n", "k"), [(1, 1), (6, 3), (7, 11)])
def test_lu_solve_rows_matches_lu_solve(rng, dtype, trans, n, k):
    A = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    B = rng.standard_normal((n, k)) + 1j * rng.standard_normal((n, k))
    if np.dtype(dtype).kind != "c":
        A, B = A.real, B.real
    A, B = A.astype(dtype), B.astype(dtype)
    lu, piv = sla.lu_factor(A)
    B0 = B.copy()
    X = _blas.lu_solve_rows(lu, piv, B, trans)
    assert X.dtype == dtype
    assert X.flags.c_contiguous
    np.testing.assert_array_equal(B, B0)
    expected = sla.lu_solve((lu, piv), B, trans=trans)
    tol = 1e-4 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(X, expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("lower", [True, False])
def test_trmm_c_multiplies_by_one_triangle(rng, dtype, left, lower):
    T = rng.standard_normal((5, 5)).astype(dtype)  # both triangles filled: one is ignored
    X = rng.standard_normal((5, 3) if left else (3, 5)).astype(dtype)
    T0, X0 = T.copy(), X.copy()
    tri = np.tril(T) if lower else np.triu(T)
    R = _blas.trmm_c(T, X, left, lower)
    assert R.dtype == dtype
    assert R.flags.c_contiguous
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(R, tri @ X if left else X @ tri, rtol=tol, atol=tol)
    np.testing.assert_array_equal(T, T0)
    np.testing.assert_array_equal(X, X0)


def test_found_in_review_mixed_dtypes_and_empty_products(rng):
    A = rng.standard_normal((7, 7)) + 1j * rng.standard_normal((7, 7))
    B = rng.standard_normal((7, 3))  # real right-hand side, complex factors
    lu, piv = sla.lu_factor(A)
    for trans in (0, 1, 2):
        np.testing.assert_allclose(
            _blas.lu_solve_rows(lu, piv, B, trans),
            sla.lu_solve((lu, piv), B, trans=trans),
            rtol=1e-11,
            atol=1e-11,
        )
    C = np.zeros((0, 5))
    assert _blas.gemm_accumulate_c(np.ones((0, 4)), np.ones((4, 5)), C) is C
    C = np.ones((3, 5))
    _blas.gemm_accumulate_c(np.ones((3, 0)), np.ones((0, 5)), C)
    np.testing.assert_array_equal(C, 1.0)
    with pytest.raises(ValueError, match="gemm_accumulate_c"):
        _blas.gemm_accumulate_c(np.ones((3, 4)), np.ones((4, 5), np.float32), np.ones((3, 5)))
