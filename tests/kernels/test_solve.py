import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from kernels import tiled_products
from kernels.lu import lu_factor_batched
from kernels.solve import (
    inv_pullback,
    inv_pullback_batched,
    inv_pullback_blas,
    inv_pushforward,
    inv_pushforward_batched,
    inv_pushforward_blas,
    solve_pullback_batched,
    solve_pushforward_batched,
)

DTYPES = [np.float64, np.float32, np.complex128]


def rand(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return np.ascontiguousarray(x, dtype=dtype)


def well_conditioned(rng, n, dtype):
    return rand(rng, (n, n), dtype) + 3 * np.eye(n, dtype=dtype)


def inner(a, b):
    """Real inner product Re tr(a^H b), the pairing of the complex convention."""
    return np.real(np.vdot(a, b))


def rtol(dtype):
    return 2e-4 if dtype == np.float32 else 1e-10


def H(x):
    return x.conj().swapaxes(-1, -2)


def solve_pullback(lu, piv, X, X_bar):
    """The batched pullback kernel on a stack of one matrix."""
    A_bar, B_bar = solve_pullback_batched(lu[None], piv[None], X[None], X_bar[None])
    return A_bar[0], B_bar[0]


def solve_pushforward(lu, piv, X, A_dot, B_dot):
    """The batched pushforward kernel on a stack of one matrix."""
    return solve_pushforward_batched(lu[None], piv[None], X[None], A_dot[None], B_dot[None])[0]


def factor(A):
    """The forward factorization of a single matrix, as the small-matrix rule computes it."""
    lu, piv = lu_factor_batched(A[None])
    return lu[0], piv[0]


# --- solve ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("n", "k"), [(4, 4), (3, 1), (5, 2), (1, 1)])
def test_solve_pullback_matches_formula(rng, dtype, n, k):
    A, X_bar = well_conditioned(rng, n, dtype), rand(rng, (n, k), dtype)
    X = np.linalg.solve(A, rand(rng, (n, k), dtype))
    A_bar, B_bar = solve_pullback(*factor(A), X, X_bar)
    B_ref = np.linalg.solve(H(A), X_bar)
    assert A_bar.dtype == B_bar.dtype == dtype
    assert_allclose(B_bar, B_ref, rtol=rtol(dtype), atol=rtol(dtype))
    assert_allclose(A_bar, -B_ref @ H(X), rtol=rtol(dtype), atol=rtol(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_solve_vector_rhs_as_column(rng, dtype):
    # a vector b of shape (n,) is passed as the view b.reshape(n, 1)
    A, b, x_bar = well_conditioned(rng, 4, dtype), rand(rng, 4, dtype), rand(rng, 4, dtype)
    x = np.linalg.solve(A, b)
    A_bar, b_bar = solve_pullback(*factor(A), x.reshape(4, 1), x_bar.reshape(4, 1))
    b_ref = np.linalg.solve(H(A), x_bar)
    assert_allclose(b_bar[:, 0], b_ref, rtol=1e-12)
    assert_allclose(A_bar, -np.outer(b_ref, x.conj()), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_solve_pushforward_matches_finite_differences(rng, dtype):
    A, B = well_conditioned(rng, 4, dtype), rand(rng, (4, 3), dtype)
    A_dot, B_dot = rand(rng, (4, 4), dtype), rand(rng, (4, 3), dtype)
    X = np.linalg.solve(A, B)
    h = 1e-6
    fd = (
        np.linalg.solve(A + h * A_dot, B + h * B_dot)
        - np.linalg.solve(A - h * A_dot, B - h * B_dot)
    ) / (2 * h)
    assert_allclose(solve_pushforward(*factor(A), X, A_dot, B_dot), fd, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_pullback_is_adjoint_of_pushforward(rng, dtype):
    A, B = well_conditioned(rng, 4, dtype), rand(rng, (4, 3), dtype)
    A_dot, B_dot, X_bar = (
        rand(rng, (4, 4), dtype),
        rand(rng, (4, 3), dtype),
        rand(rng, (4, 3), dtype),
    )
    lu, piv = factor(A)
    X = np.linalg.solve(A, B)
    A_bar, B_bar = solve_pullback(lu, piv, X, X_bar)
    X_dot = solve_pushforward(lu, piv, X, A_dot, B_dot)
    assert X_dot.dtype == dtype
    lhs = inner(A_bar, A_dot) + inner(B_bar, B_dot)
    assert_allclose(lhs, inner(X_bar, X_dot), rtol=rtol(dtype) * 10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_batched_equals_per_matrix_and_inputs_unchanged(rng, dtype):
    b, n, k = 37, 4, 2
    A = rand(rng, (b, n, n), dtype) + 3 * np.eye(n, dtype=dtype)
    lu, piv = lu_factor_batched(A)
    X, X_bar = rand(rng, (b, n, k), dtype), rand(rng, (b, n, k), dtype)
    A_dot, B_dot = rand(rng, (b, n, n), dtype), rand(rng, (b, n, k), dtype)
    inputs = (lu, piv, X, X_bar, A_dot, B_dot)
    copies = [x.copy() for x in inputs]
    A_bar, B_bar = solve_pullback_batched(lu, piv, X, X_bar)
    X_dot = solve_pushforward_batched(lu, piv, X, A_dot, B_dot)
    for i in range(b):
        A_bar_i, B_bar_i = solve_pullback(lu[i], piv[i], X[i], X_bar[i])
        assert_array_equal(A_bar[i], A_bar_i)
        assert_array_equal(B_bar[i], B_bar_i)
        assert_array_equal(X_dot[i], solve_pushforward(lu[i], piv[i], X[i], A_dot[i], B_dot[i]))
    for x, c in zip(inputs, copies, strict=True):
        assert_array_equal(x, c)


@pytest.mark.jit_only
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("n", "k"), [(2, 1), (4, 4), (11, 3), (12, 1), (16, 16), (13, 5), (12, 8), (14, 7)]
)
def test_solve_kernels_on_lanes_and_on_rows_match_numpy(rng, dtype, n, k):
    """Both ways of each kernel against numpy's solve and products, on a stack; the inputs stay
    unchanged. Pullback: lane blocks below 12 on a side or 8 right-hand sides, numpy's matmul
    from there; pushforward: lane blocks below 4 right-hand sides, rows from there."""
    A = np.stack([well_conditioned(rng, n, dtype) for _ in range(7)])
    X, X_bar, B_dot = (rand(rng, (7, n, k), dtype) for _ in range(3))
    A_dot = rand(rng, (7, n, n), dtype)
    lu, piv = lu_factor_batched(A)
    inputs = [x.copy() for x in (lu, piv, X, X_bar, A_dot, B_dot)]
    A_bar, B_bar = solve_pullback_batched(lu, piv, X, X_bar)
    X_dot = solve_pushforward_batched(lu, piv, X, A_dot, B_dot)
    B_ref = np.linalg.solve(H(A), X_bar)
    assert_allclose(B_bar, B_ref, rtol=rtol(dtype), atol=rtol(dtype))
    assert_allclose(A_bar, -B_ref @ H(X), rtol=rtol(dtype), atol=rtol(dtype))
    assert_allclose(
        X_dot, np.linalg.solve(A, B_dot - A_dot @ X), rtol=rtol(dtype), atol=rtol(dtype)
    )
    for got in (A_bar, B_bar, X_dot):
        assert got.dtype == dtype
        assert got.flags.c_contiguous
    for x, x0 in zip((lu, piv, X, X_bar, A_dot, B_dot), inputs, strict=True):
        assert_array_equal(x, x0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_singular_gives_inf_or_nan_not_an_exception(rng, dtype):
    # the rule raises LinAlgError itself; the kernel divides by the zero pivot
    A = np.array([[1, 2, 3], [2, 4, 6], [1, 0, 1]], dtype=dtype)
    lu, piv = factor(A)
    assert lu[2, 2] == 0
    X = rand(rng, (3, 1), dtype)
    A_bar, B_bar = solve_pullback(lu, piv, X, rand(rng, (3, 1), dtype))
    assert not np.isfinite(B_bar).all()
    assert not np.isfinite(A_bar).all()
    X_dot = solve_pushforward(lu, piv, X, rand(rng, (3, 3), dtype), rand(rng, (3, 1), dtype))
    assert not np.isfinite(X_dot).all()


@pytest.mark.jit_only
@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_nan_in_nan_out(rng, dtype):
    A = np.full((3, 3), np.nan, dtype=dtype)
    lu, piv = factor(A)
    A_bar, B_bar = solve_pullback(lu, piv, rand(rng, (3, 2), dtype), rand(rng, (3, 2), dtype))
    assert np.isnan(A_bar).all()
    assert np.isnan(B_bar).all()
    lu, piv = factor(well_conditioned(rng, 3, dtype))
    X_bar = rand(rng, (3, 2), dtype)
    X_bar[1, 0] = np.nan
    A_bar, B_bar = solve_pullback(lu, piv, rand(rng, (3, 2), dtype), X_bar)
    assert np.isnan(B_bar[:, 0]).all()
    assert np.isfinite(B_bar[:, 1]).all()


# --- inv -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 4, 5])
def test_inv_pullback_and_pushforward_match_formulas(rng, dtype, n):
    Y = np.ascontiguousarray(np.linalg.inv(well_conditioned(rng, n, dtype)))
    Y_bar, A_dot = rand(rng, (n, n), dtype), rand(rng, (n, n), dtype)
    tol = {"rtol": rtol(dtype), "atol": rtol(dtype)}
    A_bar, Y_dot = inv_pullback(Y, Y_bar), inv_pushforward(Y, A_dot)
    assert A_bar.dtype == Y_dot.dtype == dtype
    assert_allclose(A_bar, -H(Y) @ Y_bar @ H(Y), **tol)
    assert_allclose(Y_dot, -Y @ A_dot @ Y, **tol)
    assert_allclose(inv_pullback_blas(Y, Y_bar), A_bar, **tol)
    assert_allclose(inv_pushforward_blas(Y, A_dot), Y_dot, **tol)
    assert_allclose(inner(A_bar, A_dot), inner(Y_bar, Y_dot), rtol=rtol(dtype) * 10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [8, 12, 6])
def test_inv_blas_paths_of_stacks_multiply_by_tiles_where_they_fit(rng, dtype, n, monkeypatch):
    """Real stacks with sides in fours take kernels.tiled_products; the same numbers as BLAS."""
    from kernels import _blas_core

    monkeypatch.setattr(_blas_core, "small_gemm_core", lambda: False)  # the general table
    Y = np.stack([np.linalg.inv(well_conditioned(rng, n, dtype)) for _ in range(3)])
    Y_bar, A_dot = rand(rng, (3, n, n), dtype), rand(rng, (3, n, n), dtype)
    calls = []
    for name in ("inv_pullback_tiled", "inv_pushforward_tiled"):
        original = getattr(tiled_products, name)
        monkeypatch.setattr(
            tiled_products, name, lambda *a, f=original, name=name: calls.append(name) or f(*a)
        )
    A_bar, Y_dot = inv_pullback_blas(Y, Y_bar), inv_pushforward_blas(Y, A_dot)
    fits = tiled_products.fits((n, n, n), Y, Y_bar)
    assert fits == (dtype != np.complex128 and n % 4 == 0)  # n = 8, 12: within every limit
    expected = ["inv_pullback_tiled", "inv_pushforward_tiled"]
    assert calls == (expected if fits else [])
    tol = {"rtol": rtol(dtype), "atol": rtol(dtype)}
    assert A_bar.dtype == Y_dot.dtype == dtype
    assert_allclose(A_bar, -H(Y) @ Y_bar @ H(Y), **tol)
    assert_allclose(Y_dot, -Y @ A_dot @ Y, **tol)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_inv_pushforward_matches_finite_differences(rng, dtype):
    A, A_dot = well_conditioned(rng, 4, dtype), rand(rng, (4, 4), dtype)
    h = 1e-6
    fd = (np.linalg.inv(A + h * A_dot) - np.linalg.inv(A - h * A_dot)) / (2 * h)
    Y = np.ascontiguousarray(np.linalg.inv(A))
    assert_allclose(inv_pushforward(Y, A_dot), fd, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("dtype", DTYPES)
def test_inv_batched_equals_per_matrix_and_inputs_unchanged(rng, dtype):
    Y, Y_bar, A_dot = (rand(rng, (37, 3, 3), dtype) for _ in range(3))
    copies = [x.copy() for x in (Y, Y_bar, A_dot)]
    A_bar = inv_pullback_batched(Y, Y_bar)
    Y_dot = inv_pushforward_batched(Y, A_dot)
    for i in range(37):
        assert_array_equal(A_bar[i], inv_pullback(Y[i], Y_bar[i]))
        assert_array_equal(Y_dot[i], inv_pushforward(Y[i], A_dot[i]))
    for x, c in zip((Y, Y_bar, A_dot), copies, strict=True):
        assert_array_equal(x, c)


@pytest.mark.jit_only
def test_inv_nan_in_nan_out(rng):
    Y = rand(rng, (3, 3), np.float64)
    Y[0, 0] = np.nan
    assert np.isnan(inv_pullback(Y, rand(rng, (3, 3), np.float64))).any()
    assert np.isnan(inv_pushforward(Y, rand(rng, (3, 3), np.float64))).any()


@pytest.mark.parametrize("shape", [(0, 3, 3), (2, 0, 0)])
def test_solve_and_inv_empty_stacks_and_matrices(shape):
    A = np.zeros(shape)
    piv = np.zeros(shape[:2], dtype=np.int32)
    assert [x.shape for x in solve_pullback_batched(A, piv, A, A)] == [shape, shape]
    assert solve_pushforward_batched(A, piv, A, A, A).shape == shape
    assert inv_pullback_batched(A, A).shape == shape
    assert inv_pushforward_batched(A, A).shape == shape


def test_solve_and_inv_kernels_reject_mismatched_shapes():
    A, piv, X = np.zeros((2, 3, 3)), np.zeros((2, 3), dtype=np.int32), np.zeros((2, 3, 1))
    with pytest.raises(ValueError, match="solve_pullback_batched"):
        solve_pullback_batched(A, piv, X, np.zeros((2, 3, 2)))
    with pytest.raises(ValueError, match="solve_pushforward_batched"):
        solve_pushforward_batched(A, piv, X, A, np.zeros((2, 2, 1)))
    with pytest.raises(ValueError, match="inv_pullback_batched"):
        inv_pullback_batched(A, np.zeros((1, 3, 3)))
    with pytest.raises(ValueError, match="inv_pushforward_batched"):
        inv_pushforward_batched(np.zeros((2, 3, 2)), np.zeros((2, 3, 2)))


def _chain_in_order(Y, M, adjoint):
    """``-Y^H M Y^H`` (``adjoint``) or ``-Y M Y`` in Python: every sum from zero, terms in order."""
    b, n, _ = Y.shape
    out = np.empty_like(Y)
    for t in range(b):
        y = Y[t].conj().T if adjoint else Y[t]
        S = [
            [sum((M[t, i, r] * y[r, j] for r in range(n)), Y.dtype.type(0)) for j in range(n)]
            for i in range(n)
        ]
        for i in range(n):
            for j in range(n):
                out[t, i, j] = -sum((y[i, r] * S[r][j] for r in range(n)), Y.dtype.type(0))
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_inv_derivatives_of_4x4_stacks_sum_in_order(rng, dtype):
    """The 4x4 kernels (one matrix at a time) keep the lane kernels' sums: the same bits as
    the products summed from zero in order of their terms."""
    Y, M = rand(rng, (20, 4, 4), dtype), rand(rng, (20, 4, 4), dtype)
    copies = Y.copy(), M.copy()
    assert_array_equal(inv_pullback_batched(Y, M), _chain_in_order(Y, M, True))
    assert_array_equal(inv_pushforward_batched(Y, M), _chain_in_order(Y, M, False))
    assert_array_equal(Y, copies[0])
    assert_array_equal(M, copies[1])
