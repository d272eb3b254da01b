import warnings

import numpy as np
import pytest
import scipy.linalg
from numpy.testing import assert_allclose, assert_array_equal

from kernels.lu import (
    _lu_pullback_lanes,
    lu_factor_batched,
    lu_pullback,
    lu_pullback_batched,
    lu_pullback_blas,
    lu_pushforward,
    lu_pushforward_batched,
    lu_pushforward_blas,
    lu_solve_batched,
    lu_unpack_batched,
)

DTYPES = [np.float64, np.float32, np.complex128]
SHAPES = [(4, 4), (5, 3), (3, 5), (1, 1), (1, 3), (3, 1)]


def rand(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return np.ascontiguousarray(x, dtype=dtype)


def inner(a, b):
    """Real inner product Re tr(a^H b), the pairing of the complex convention."""
    return np.real(np.vdot(a, b))


def rtol(dtype):
    return 2e-3 if dtype == np.float32 else 1e-9


def lu_c(A):
    """``scipy.linalg.lu(A, p_indices=True)`` normalised as a rule hands it over.

    C-ordered factors and an int32 ``perm`` (scipy returns int64 for 1x1 input, int32 else).
    """
    perm, L, U = scipy.linalg.lu(A, p_indices=True)
    return perm.astype(np.int32), np.ascontiguousarray(L), np.ascontiguousarray(U)


# --- forward helpers -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 4])
def test_lu_factor_batched_matches_scipy(rng, dtype, n):
    A = rand(rng, (3, n, n), dtype)
    lu, piv = lu_factor_batched(A)
    assert lu.dtype == dtype
    assert piv.dtype == np.int32
    for i in range(3):
        lu_ref, piv_ref = scipy.linalg.lu_factor(A[i])
        assert_array_equal(piv[i], piv_ref)
        assert_allclose(lu[i], lu_ref, rtol=rtol(dtype), atol=rtol(dtype))


def test_lu_factor_batched_complex_pivots_like_lapack():
    # |3| > |2 + 2j| but LAPACK pivots on |Re| + |Im|: 3 < 4
    A = np.array([[[3, 1], [2 + 2j, 5]]], dtype=np.complex128)
    lu, piv = lu_factor_batched(A)
    lu_ref, piv_ref = scipy.linalg.lu_factor(A[0])
    assert_array_equal(piv[0], piv_ref)
    assert piv[0, 0] == 1
    assert_allclose(lu[0], lu_ref, rtol=1e-15)


def test_lu_factor_batched_singular_keeps_zero_pivot():
    A = np.array([[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], [[0.0, 1.0, 0.0]] * 3])
    lu, piv = lu_factor_batched(A)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        for i in range(2):
            lu_ref, piv_ref = scipy.linalg.lu_factor(A[i])
            assert_array_equal(piv[i], piv_ref)
            assert_allclose(lu[i], lu_ref, atol=1e-15)
    assert np.all(np.isfinite(lu))
    assert lu[0, 2, 2] == 0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trans", [0, 1, 2])
@pytest.mark.parametrize(("n", "k"), [(4, 2), (13, 9)])  # lane blocks; rows (8-byte dtypes)
def test_lu_solve_batched(rng, dtype, trans, n, k):
    # well conditioned, with its rows shuffled so that partial pivoting swaps them back; made
    # C-contiguous (the shuffle's copy is not), as the rules pass it: the kernels compile per
    # layout, and a non-contiguous stack has its own test below
    A = (rand(rng, (3, n, n), dtype) + n * np.eye(n, dtype=dtype))[:, rng.permutation(n)]
    A = np.ascontiguousarray(A)
    B = rand(rng, (3, n, k), dtype)
    B_in = B.copy()
    lu, piv = lu_factor_batched(A)
    assert (piv != np.arange(n)).any()  # row swaps to undo
    op = {0: A, 1: A.swapaxes(1, 2), 2: A.conj().swapaxes(1, 2)}[trans]
    X = lu_solve_batched(lu, piv, B, trans)
    assert X.dtype == dtype
    assert_allclose(X, np.linalg.solve(op, B), rtol=rtol(dtype))
    assert_array_equal(B, B_in)


def test_lu_factor_batched_takes_a_stack_of_any_layout(rng):
    """A transposed (non-contiguous) stack factors as its contiguous copy does, bit for bit."""
    A = rand(rng, (3, 5, 5), np.float64).swapaxes(1, 2)
    assert not A.flags.c_contiguous
    for got, want in zip(lu_factor_batched(A), lu_factor_batched(A.copy()), strict=True):
        assert_array_equal(got, want)


def test_lu_unpack_batched_matches_scipy(rng):
    A = rand(rng, (5, 4, 4), np.float64)
    perm, L, U = lu_unpack_batched(*lu_factor_batched(A))
    assert perm.dtype == np.int32
    for i in range(5):
        perm_ref, L_ref, U_ref = scipy.linalg.lu(A[i], p_indices=True)
        assert_array_equal(perm[i], perm_ref)
        assert_allclose(L[i], L_ref, atol=1e-14)
        assert_allclose(U[i], U_ref, atol=1e-14)


# --- derivatives ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape", SHAPES)
def test_lu_pushforward_matches_finite_differences(rng, dtype, shape):
    A, A_dot = rand(rng, shape, dtype), rand(rng, shape, dtype)
    perm, L, U = lu_c(A)
    L_dot, U_dot = lu_pushforward(L, U, perm, A_dot)
    h = 1e-6
    perm_p, L_p, U_p = scipy.linalg.lu(A + h * A_dot, p_indices=True)
    perm_m, L_m, U_m = scipy.linalg.lu(A - h * A_dot, p_indices=True)
    assert_array_equal(perm_p, perm)
    assert_array_equal(perm_m, perm)
    assert_allclose(L_dot, (L_p - L_m) / (2 * h), rtol=1e-6, atol=1e-7)
    assert_allclose(U_dot, (U_p - U_m) / (2 * h), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_lu_pullback_is_adjoint_of_pushforward(rng, dtype, shape):
    A, A_dot = rand(rng, shape, dtype), rand(rng, shape, dtype)
    perm, L, U = lu_c(A)
    L_bar, U_bar = rand(rng, L.shape, dtype), rand(rng, U.shape, dtype)
    A_bar = lu_pullback(L, U, perm, L_bar, U_bar)
    L_dot, U_dot = lu_pushforward(L, U, perm, A_dot)
    assert A_bar.dtype == L_dot.dtype == U_dot.dtype == dtype
    lhs = inner(A_bar, A_dot)
    rhs = inner(L_bar, L_dot) + inner(U_bar, U_dot)
    assert_allclose(lhs, rhs, rtol=rtol(dtype) * 10, atol=rtol(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_lu_pullback_matches_square_formula(rng, dtype):
    # ChainRules.jl / de Hoog et al.: A_bar = P L^-H (tril(L^H L_bar, -1) + triu(U_bar U^H)) U^-H
    A = rand(rng, (4, 4), dtype)
    perm, L, U = lu_c(A)
    L_bar, U_bar = rand(rng, L.shape, dtype), rand(rng, U.shape, dtype)
    M = np.tril(L.conj().T @ L_bar, -1) + np.triu(U_bar @ U.conj().T)
    expected = (np.linalg.inv(L).conj().T @ M @ np.linalg.inv(U).conj().T)[perm]
    assert_allclose(lu_pullback(L, U, perm, L_bar, U_bar), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_lu_blas_variants_match_kernels(rng, dtype, shape):
    A, A_dot = rand(rng, shape, dtype), rand(rng, shape, dtype)
    perm, L, U = lu_c(A)
    L_bar, U_bar = rand(rng, L.shape, dtype), rand(rng, U.shape, dtype)
    tol = {"rtol": rtol(dtype) * 10, "atol": rtol(dtype) * 10}
    A_bar = lu_pullback_blas(L, U, perm, L_bar, U_bar)
    assert A_bar.dtype == dtype
    assert_allclose(A_bar, lu_pullback(L, U, perm, L_bar, U_bar), **tol)
    for got, want in zip(
        lu_pushforward_blas(L, U, perm, A_dot), lu_pushforward(L, U, perm, A_dot), strict=True
    ):
        assert got.dtype == dtype
        assert_allclose(got, want, **tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_batched_equals_per_matrix_and_inputs_unchanged(rng, dtype):
    b, m, n = 37, 4, 3  # more than one lane block, and a partial last block
    A, A_dot = rand(rng, (b, m, n), dtype), rand(rng, (b, m, n), dtype)
    factors = [lu_c(a) for a in A]
    perm = np.stack([f[0] for f in factors])
    L = np.stack([f[1] for f in factors])
    U = np.stack([f[2] for f in factors])
    L_bar, U_bar = rand(rng, L.shape, dtype), rand(rng, U.shape, dtype)
    inputs = (L, U, perm, L_bar, U_bar, A_dot)
    copies = [x.copy() for x in inputs]
    A_bar = lu_pullback_batched(L, U, perm, L_bar, U_bar)
    L_dot, U_dot = lu_pushforward_batched(L, U, perm, A_dot)
    for i in range(b):
        assert_array_equal(A_bar[i], lu_pullback(L[i], U[i], perm[i], L_bar[i], U_bar[i]))
        L_dot_i, U_dot_i = lu_pushforward(L[i], U[i], perm[i], A_dot[i])
        assert_array_equal(L_dot[i], L_dot_i)
        assert_array_equal(U_dot[i], U_dot_i)
    for x, c in zip(inputs, copies, strict=True):
        assert_array_equal(x, c)


@pytest.mark.jit_only
@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_nan_in_nan_out(rng, dtype):
    A = rand(rng, (4, 4), dtype)
    perm, L, U = lu_c(A)
    L_bar, U_bar = rand(rng, L.shape, dtype), rand(rng, U.shape, dtype)
    U_bar[1, 2] = np.nan
    assert np.isnan(lu_pullback(L, U, perm, L_bar, U_bar)).any()
    A_dot = rand(rng, (4, 4), dtype)
    A_dot[0, 0] = np.nan
    assert all(np.isnan(x).any() for x in lu_pushforward(L, U, perm, A_dot))
    lu, _ = lu_factor_batched(np.full((2, 3, 3), np.nan, dtype=dtype))
    assert np.isnan(lu).all()


@pytest.mark.jit_only
@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_singular_gives_inf_or_nan_not_an_exception(rng, dtype):
    A = np.array([[1, 2, 3], [2, 4, 6], [1, 0, 1]], dtype=dtype)
    perm, L, U = lu_unpack_batched(*lu_factor_batched(A[None]))
    assert U[0, 2, 2] == 0
    A_bar = lu_pullback_batched(L, U, perm, rand(rng, L.shape, dtype), rand(rng, U.shape, dtype))
    assert not np.isfinite(A_bar).all()


@pytest.mark.parametrize("shape", [(0, 3, 3), (2, 0, 0)])
def test_lu_empty_stacks_and_matrices(shape):
    A = np.zeros(shape)
    lu, piv = lu_factor_batched(A)
    assert lu.shape == shape
    assert piv.shape == shape[:2]
    assert lu_solve_batched(lu, piv, A, 2).shape == shape
    perm = np.zeros(shape[:2], dtype=np.int32)
    assert lu_pullback_batched(A, A, perm, A, A).shape == shape
    assert [x.shape for x in lu_pushforward_batched(A, A, perm, A)] == [shape, shape]


def test_lu_kernels_reject_mismatched_shapes():
    A, perm = np.zeros((2, 3, 3)), np.zeros((2, 3), dtype=np.int32)
    with pytest.raises(ValueError, match="lu_factor_batched"):
        lu_factor_batched(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match="lu_solve_batched"):
        lu_solve_batched(A, perm, A, 3)
    with pytest.raises(ValueError, match="lu_pullback_batched"):
        lu_pullback_batched(A, A, perm, A, np.zeros((2, 3, 2)))
    with pytest.raises(ValueError, match="lu_pushforward_batched"):
        lu_pushforward_batched(A, A, perm[:1], A)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [2, 3, 4])
def test_lu_pullback_flat_blocks_equal_lane_blocks_and_formula(rng, dtype, n):
    """Square 2x2-4x4 stacks take the flat lane blocks: the lane-block kernel's result, bit for
    bit, over two blocks and a partial one, and the square formula; NaN stays in its matrix."""
    b = 70
    A = rand(rng, (b, n, n), dtype)
    perm, L, U = (np.stack(x) for x in zip(*(lu_c(a) for a in A), strict=True))
    L_bar, U_bar = rand(rng, (b, n, n), dtype), rand(rng, (b, n, n), dtype)
    U_bar[5, 0, 0] = np.nan
    A_bar = lu_pullback_batched(L, U, perm, L_bar, U_bar)
    lanes = np.empty_like(A_bar)
    _lu_pullback_lanes(L, U, perm, L_bar, U_bar, lanes)
    assert_array_equal(A_bar, lanes)
    assert A_bar.dtype == dtype
    assert np.isnan(A_bar[5]).any()
    assert np.isfinite(np.delete(A_bar, 5, axis=0)).all()
    for t in (0, 33, b - 1):  # not matrix 5
        M = np.tril(L[t].conj().T @ L_bar[t], -1) + np.triu(U_bar[t] @ U[t].conj().T)
        X = np.linalg.solve(L[t].conj().T, np.linalg.solve(U[t], M.conj().T).conj().T)
        assert_allclose(A_bar[t], X[perm[t]], rtol=rtol(dtype), atol=rtol(dtype))
