"""The 4x4 LU kernels in registers (``kernels._lu4``) against the lane kernels and LAPACK.

The module claims the lane kernels' arithmetic in the same order: the same bits, for every
pivot order (the stacks below mix all 24), exactly singular matrices and NaN.
"""

import numpy as np
import pytest
import scipy.linalg
from numpy.testing import assert_array_equal

from kernels import _lu4, lu, solve


@pytest.fixture
def stack(rand, dtype):
    """400 random 4x4 matrices: every pivot order, a zero matrix, a zero column and a NaN."""
    A = rand(400, 4, 4)
    A[0] = 0  # every pivot zero
    A[1, :, 2] = 0  # a zero pivot at step 2 or earlier
    A[2, 1, 3] = np.nan
    A[3] = np.eye(4, dtype=dtype)[[3, 0, 2, 1]]  # a permutation: exact pivots 1
    return A


def test_the_stack_has_every_pivot_order(stack):
    _, piv = lu.lu_factor_batched(stack)
    assert len(np.unique(piv, axis=0)) == 24  # 4 * 3 * 2 choices of getrf's swaps


def test_the_factorization_gives_the_lane_kernels_bits(stack):
    copy = stack.copy()
    got, expected = lu.lu_factor_batched(stack), lu._lu_factor_lanes(stack)
    for x, y in zip(got, expected, strict=True):
        assert x.dtype == y.dtype
        assert_array_equal(x, y)
    assert_array_equal(stack, copy)  # inputs untouched


def test_the_factorization_matches_lapack(stack, dtype):
    """Pivots as ``getrf``'s and factors within rounding, for the regular matrices."""
    lu_, piv = lu.lu_factor_batched(stack)
    for t in range(4, len(stack)):
        lu_ref, piv_ref = scipy.linalg.lu_factor(stack[t])
        assert_array_equal(piv[t], piv_ref)
        scale = np.abs(lu_ref).max()
        assert np.abs(lu_[t] - lu_ref).max() <= 100 * np.finfo(dtype).eps * scale


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("trans", [0, 1, 2])
def test_the_solves_give_the_lane_kernels_bits(stack, rand, k, trans):
    lu_, piv = lu.lu_factor_batched(stack)
    B = rand(len(stack), 4, k)
    copies = [x.copy() for x in (lu_, piv, B)]
    got = lu.lu_solve_batched(lu_, piv, B, trans)
    assert got.dtype == B.dtype
    assert_array_equal(got, lu._lu_solve_lanes(lu_, piv, B, trans))
    for x, original in zip((lu_, piv, B), copies, strict=True):
        assert_array_equal(x, original)


@pytest.mark.parametrize("trans", [0, 1, 2])
def test_the_solves_match_lapack(stack, rand, dtype, trans):
    lu_, piv = lu.lu_factor_batched(stack)
    B = rand(len(stack), 4, 2)
    X = lu.lu_solve_batched(lu_, piv, B, trans)
    for t in range(4, len(stack)):
        ref = scipy.linalg.lu_solve((lu_[t], piv[t]), B[t], trans=trans)
        cond = np.linalg.cond(stack[t])
        tol = 50 * np.finfo(dtype).eps * cond * np.abs(ref).max()
        assert np.abs(X[t] - ref).max() <= tol


def test_singular_and_nan_matrices_give_inf_or_nan(stack, rand):
    lu_, piv = lu.lu_factor_batched(stack)
    X = lu.lu_solve_batched(lu_, piv, rand(len(stack), 4, 1), 0)
    assert not np.all(np.isfinite(X[0]))
    assert np.any(np.isnan(X[2]))
    assert np.all(np.isfinite(X[3]))


@pytest.mark.parametrize("k", [1, 3])
def test_the_solve_pullback_gives_the_lane_kernels_bits(stack, rand, k):
    lu_, piv = lu.lu_factor_batched(stack)
    X, X_bar = rand(len(stack), 4, k), rand(len(stack), 4, k)
    got = solve.solve_pullback_batched(lu_, piv, X, X_bar)
    expected = solve._solve_pullback_lanes_batched(lu_, piv, X, X_bar)
    for x, y in zip(got, expected, strict=True):
        assert x.dtype == y.dtype
        assert_array_equal(x, y)


@pytest.mark.parametrize("k", [1, 3])
def test_the_solve_pushforward_solves_the_residual(stack, rand, dtype, k):
    """``A^-1 (B_dot - A_dot X)``: against the residual formed by numpy and solved by LAPACK."""
    lu_, piv = lu.lu_factor_batched(stack)
    X, A_dot, B_dot = rand(len(stack), 4, k), rand(len(stack), 4, 4), rand(len(stack), 4, k)
    got = solve.solve_pushforward_batched(lu_, piv, X, A_dot, B_dot)
    assert got.dtype == dtype
    assert_array_equal(got, _lu4.solve_pushforward4(lu_, piv, X, A_dot, B_dot))
    R = B_dot - A_dot @ X
    for t in range(4, len(stack)):
        ref = scipy.linalg.lu_solve((lu_[t], piv[t]), R[t])
        # the residuals' roundings (of |B_dot| + |A_dot| |X|) through A^-1, and the solve's
        terms = np.abs(B_dot[t]) + np.abs(A_dot[t]) @ np.abs(X[t])
        scale = np.abs(ref).max() + (np.abs(np.linalg.inv(stack[t])) @ terms).max()
        tol = 100 * np.finfo(dtype).eps * np.linalg.cond(stack[t]) * scale
        assert np.abs(got[t] - ref).max() <= tol


@pytest.mark.parametrize("bad", [4, -1, 0])
def test_pivots_outside_getrfs_range_raise(stack, rand, bad):
    """A pivot below its row or past the matrix would index out of bounds: refused by name."""
    lu_, piv = lu.lu_factor_batched(stack)
    piv = piv.copy()
    piv[7, 2] = bad  # row 2 may swap with rows 2 and 3 only
    with pytest.raises(ValueError, match="lu_solve_batched"):
        lu.lu_solve_batched(lu_, piv, rand(len(stack), 4, 1), 0)
