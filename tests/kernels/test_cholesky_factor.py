import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from kernels._cholesky_lanes4 import cholesky_factor_flat4
from kernels.cholesky_factor import FLAT4_MIN_B, _factor_lanes, cholesky_factor_batched


def backward_error(A, L):
    """``max_t ||L L^H - A||_F / ||A||_F`` over the stack, computed in double precision."""
    A, L = A.astype(complex), L.astype(complex)
    R = L @ L.conj().mT - A
    return float(np.max(np.linalg.norm(R, axis=(1, 2)) / np.linalg.norm(A, axis=(1, 2))))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 16])
def test_backward_error_within_10x_lapack(families, dtype, n):
    eps = np.finfo(dtype).eps
    for name, A in families(n, 40, spd=True).items():
        try:
            L_ref = np.linalg.cholesky(A)  # LAPACK potrf per matrix
        except np.linalg.LinAlgError:
            continue  # a numerically indefinite rank-deficient stack (compared in the next test)
        L, info = cholesky_factor_batched(A, True)
        assert L.dtype == dtype
        assert info.dtype == np.int32
        assert_array_equal(info, 0, err_msg=name)
        assert_array_equal(np.triu(L, 1), 0)
        assert np.all(np.diagonal(L, axis1=1, axis2=2).real > 0)
        lapack = max(backward_error(A, L_ref), eps)
        assert backward_error(A, L) <= 10 * lapack, name
        if name == "random":  # well conditioned: the factors themselves agree
            assert_allclose(L, L_ref, rtol=100 * eps, atol=100 * eps * np.abs(L_ref).max())


def test_rank_deficient_fails_where_lapack_fails(families, dtype):
    """A Gram matrix of rank n - 1: per matrix, either both factor (then accurately) or both fail."""
    A = families(4, 200, spd=True)["rank"]
    L, info = cholesky_factor_batched(A, True)
    eps = np.finfo(dtype).eps
    for t in range(len(A)):
        try:
            L_ref = np.linalg.cholesky(A[t])
        except np.linalg.LinAlgError:
            continue  # LAPACK's last pivot rounded to <= 0; ours may round either way
        if info[t] == 0:
            assert backward_error(A[t : t + 1], L[t : t + 1]) <= 10 * max(
                backward_error(A[t : t + 1], L_ref[None]), eps
            )


def test_upper_reads_the_upper_triangle(rng, dtype):
    X = rng.standard_normal((5, 4, 4))
    A = (X @ X.mT + 4 * np.eye(4)).astype(dtype)
    B = np.triu(A) + np.tril(rng.standard_normal((5, 4, 4)), -1).astype(dtype)  # junk below
    L, info = cholesky_factor_batched(np.ascontiguousarray(B), False)
    assert_array_equal(info, 0)
    eps = np.finfo(dtype).eps
    assert_allclose(L.conj().mT, np.linalg.cholesky(A, upper=True), atol=100 * eps * 10)


def test_not_positive_definite_sets_info_of_that_matrix_only(dtype):
    A = np.stack([np.eye(3), np.diag([1.0, -1.0, 1.0]), np.diag([1.0, 1.0, 0.0])]).astype(dtype)
    _, info = cholesky_factor_batched(A, True)
    assert_array_equal(info, [0, 2, 3])  # LAPACK's 1-based failed pivot


@pytest.mark.jit_only
def test_nan_in_nan_out_without_failure(dtype):
    A = np.stack([np.eye(3), np.full((3, 3), np.nan)]).astype(dtype)
    A_before = A.copy()
    L, info = cholesky_factor_batched(A, True)
    assert_array_equal(info, 0)  # numpy returns NaN for NaN input, it does not raise
    assert_array_equal(L[0], np.eye(3))
    lower = np.tri(3, dtype=bool)
    assert np.isnan(L[1][lower]).all()
    assert not L[1][~lower].any()
    assert_array_equal(A, A_before)  # input unchanged


def test_empty_stacks_and_shape_errors(dtype):
    L, info = cholesky_factor_batched(np.zeros((0, 3, 3), dtype), True)
    assert L.shape == (0, 3, 3)
    assert info.shape == (0,)
    L, info = cholesky_factor_batched(np.zeros((2, 0, 0), dtype), True)
    assert L.shape == (2, 0, 0)
    with pytest.raises(ValueError, match="cholesky_factor_batched"):
        cholesky_factor_batched(np.zeros((2, 3, 4), dtype), True)


@pytest.mark.jit_only
@pytest.mark.parametrize("real", [np.float64, np.float32])
@pytest.mark.parametrize("b", [FLAT4_MIN_B, 70])  # one block, and a partial last one
def test_flat_lanes_give_the_lane_blocks_bits_and_info(rng, real, b):
    """Real 4x4 stacks: ``kernels._cholesky_lanes4`` and the small lane blocks agree bit for bit,
    ``info`` included: indefinite matrices (a negative and a zero pivot), NaN and inf in the
    input, and junk in the triangle that is not read."""
    X = rng.standard_normal((b, 4, 4))
    A = (X @ X.mT + 4 * np.eye(4)).astype(real)
    A[0::6] *= -1  # the first pivot is negative: info 1
    A[1::6, 3, :] = A[1::6, :, 3] = 0  # the last pivot is exactly 0: info 4
    A[2::6, 2, 1] = A[2::6, 1, 2] = np.nan
    A[3::6, 3, 0] = A[3::6, 0, 3] = np.inf
    junk = rng.standard_normal((b, 4, 4)).astype(real)
    for lower, B in ((True, A + np.triu(junk, 1)), (False, A + np.tril(junk, -1))):
        B_before = B.copy()
        with np.errstate(all="ignore"):
            got, got_info = cholesky_factor_flat4(B, lower)
            want, want_info = _factor_lanes(B, lower)
            routed, routed_info = cholesky_factor_batched(B, lower)
        assert got.dtype == real
        assert_array_equal(got, want)  # NaN where NaN
        assert_array_equal(np.signbit(got), np.signbit(want))
        assert_array_equal(got_info, want_info)
        assert_array_equal(want_info[0::6], 1)
        assert_array_equal(want_info[1::6], 4)
        assert np.isnan(want[2::6]).any(axis=(1, 2)).all()
        assert_array_equal(routed, want)
        assert_array_equal(routed_info, want_info)
        assert_array_equal(B, B_before)
