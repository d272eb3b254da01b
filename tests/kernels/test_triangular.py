import itertools

import numpy as np
import pytest
import scipy.linalg as sla
from numpy.testing import assert_allclose

from kernels.triangular import (
    MATMUL_PULLBACK_MIN_K,
    MATMUL_PULLBACK_MIN_N,
    pullback_uses_matmul,
    solve_triangular_batched,
    solve_triangular_pullback,
    solve_triangular_pullback_batched,
    solve_triangular_pullback_blas,
    solve_triangular_pullback_matmul,
    solve_triangular_pushforward,
    solve_triangular_pushforward_batched,
    solve_triangular_pushforward_blas,
)

# every (lower, trans, unit_diagonal), flags as Python bool/int: one compilation per dtype
FLAGS = list(itertools.product([True, False], [0, 1, 2], [False, True]))
FLAG_IDS = [f"{'lower' if lo else 'upper'}-trans{tr}{'-unit' if u else ''}" for lo, tr, u in FLAGS]


def scipy_solve(T, B, lower, trans, unit_diagonal):
    return sla.solve_triangular(T, B, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


def tri(G, lower, unit_diagonal):
    """The entries of ``G`` that ``solve_triangular`` reads."""
    k = -1 if unit_diagonal else 0
    return np.tril(G, k) if lower else np.triu(G, -k)


def op(T, lower, trans, unit_diagonal):
    """``op(T)`` as the dense matrix that ``solve_triangular`` uses."""
    M = tri(T, lower, unit_diagonal).astype(complex)
    if unit_diagonal:
        np.fill_diagonal(M, 1.0)
    return (M, M.T, M.conj().T)[trans]


def oracle_pullback(T, X, X_bar, lower, trans, unit_diagonal):
    """``B_bar = op(T)^-H X_bar`` with a dense solve, ``T_bar = tri(-B_bar X^H)`` mapped by op."""
    B_bar = np.linalg.solve(op(T, lower, trans, unit_diagonal).conj().T, X_bar)
    G = -B_bar @ X.astype(complex).conj().T
    return tri((G, G.T, G.conj().T)[trans], lower, unit_diagonal), B_bar


@pytest.fixture
def system(rand, dtype):
    """``system(n, k, lower, trans, unit)``: ``T`` with a safe diagonal, ``X = op(T)^-1 B``."""

    def system(n, k, lower, trans, unit_diagonal):
        T = rand(n, n) + (3 * np.eye(n)).astype(dtype)
        X = scipy_solve(T, rand(n, k), lower, trans, unit_diagonal).astype(dtype)
        return T, X

    return system


@pytest.mark.parametrize(("lower", "trans", "unit_diagonal"), FLAGS, ids=FLAG_IDS)
def test_pullback_matches_oracle(system, rand, dtype, tol, lower, trans, unit_diagonal):
    flags = (lower, trans, unit_diagonal)
    T, X = system(4, 2, *flags)
    X_bar = rand(4, 2)
    T_ref, B_ref = oracle_pullback(T, X, X_bar, *flags)
    for pullback in (solve_triangular_pullback, solve_triangular_pullback_blas):
        T_bar, B_bar = pullback(T, X, X_bar, *flags)
        assert T_bar.dtype == dtype
        assert B_bar.dtype == dtype
        assert_allclose(T_bar, T_ref, **tol)
        assert_allclose(B_bar, B_ref, **tol)


@pytest.mark.parametrize(("lower", "trans", "unit_diagonal"), FLAGS, ids=FLAG_IDS)
def test_matmul_pullback_matches_oracle_and_loops(
    system, rand, dtype, tol, lower, trans, unit_diagonal
):
    """The stacked-matmul pullback (large enough stacks) against the oracle and the loops."""
    flags = (lower, trans, unit_diagonal)
    n, k = MATMUL_PULLBACK_MIN_N + 1, MATMUL_PULLBACK_MIN_K + 1
    assert pullback_uses_matmul(n, k)
    assert not pullback_uses_matmul(n - 2, k)
    assert not pullback_uses_matmul(n, k - 2)
    T, X = map(np.stack, zip(*(system(n, k, *flags) for _ in range(2)), strict=True))
    X_bar = rand(2, n, k)
    inputs = [x.copy() for x in (T, X, X_bar)]
    T_bar, B_bar = solve_triangular_pullback_matmul(T, X, X_bar, *flags)
    for x, x0 in zip((T, X, X_bar), inputs, strict=True):
        np.testing.assert_array_equal(x, x0)
    T_loop, B_loop = solve_triangular_pullback_batched(T, X, X_bar, *flags)
    np.testing.assert_array_equal(B_bar, B_loop)  # the same solve
    for t in range(2):
        T_ref, B_ref = oracle_pullback(T[t], X[t], X_bar[t], *flags)
        assert_allclose(T_bar[t], T_ref, **tol)
        assert_allclose(B_bar[t], B_ref, **tol)
    assert T_bar.dtype == dtype
    assert_allclose(T_bar, T_loop, **tol)
    np.testing.assert_array_equal(T_bar == 0, T_loop == 0)  # the same triangle


@pytest.mark.parametrize(("lower", "trans", "unit_diagonal"), FLAGS, ids=FLAG_IDS)
def test_pushforward_matches_finite_differences_and_pullback(
    system, rand, dtype, tol, inner, lower, trans, unit_diagonal
):
    flags = (lower, trans, unit_diagonal)
    T, X = system(3, 2, *flags)
    T_dot, B_dot = rand(3, 3), rand(3, 2)
    T64, Td64, Bd64 = (x.astype(complex) for x in (T, T_dot, B_dot))
    B64 = op(T, *flags) @ X.astype(complex)  # so that X solves the system exactly
    h = 1e-6
    fd = (
        scipy_solve(T64 + h * Td64, B64 + h * Bd64, *flags)
        - scipy_solve(T64 - h * Td64, B64 - h * Bd64, *flags)
    ) / (2 * h)
    fd_tol = {"rtol": max(tol["rtol"], 1e-7), "atol": max(tol["atol"], 1e-7)}
    X_bar = rand(3, 2)
    T_bar, B_bar = solve_triangular_pullback(T, X, X_bar, *flags)
    for pushforward in (solve_triangular_pushforward, solve_triangular_pushforward_blas):
        X_dot = pushforward(T, X, T_dot, B_dot, *flags)
        assert X_dot.dtype == dtype
        assert_allclose(X_dot, fd, **fd_tol)
        lhs = inner(X_bar, X_dot)
        rhs = inner(T_bar, T_dot) + inner(B_bar, B_dot)
        assert lhs == pytest.approx(rhs, rel=10 * tol["rtol"], abs=10 * tol["atol"])


def test_batched_equals_per_matrix(system, rand):
    flags = (False, 2, False)
    T, X = map(np.stack, zip(*(system(3, 2, *flags) for _ in range(3)), strict=True))
    X_bar, T_dot, B_dot = rand(3, 3, 2), rand(3, 3, 3), rand(3, 3, 2)
    T_bar, B_bar = solve_triangular_pullback_batched(T, X, X_bar, *flags)
    X_dot = solve_triangular_pushforward_batched(T, X, T_dot, B_dot, *flags)
    for t in range(3):
        T_t, B_t = solve_triangular_pullback(T[t], X[t], X_bar[t], *flags)
        np.testing.assert_array_equal(T_bar[t], T_t)
        np.testing.assert_array_equal(B_bar[t], B_t)
        X_t = solve_triangular_pushforward(T[t], X[t], T_dot[t], B_dot[t], *flags)
        np.testing.assert_array_equal(X_dot[t], X_t)


@pytest.mark.parametrize(
    ("lower", "trans", "unit"), [(True, 0, False), (False, 2, False), (False, 1, True)]
)
@pytest.mark.parametrize("k", [3, 6])  # the kernels' two loop orders (k < 4 and k >= 4)
def test_blas_equals_numba_at_larger_n(rand, dtype, tol, lower, trans, unit, k):
    # small off-diagonal entries: a unit triangle of O(1) entries is exponentially ill-conditioned
    T = 0.1 * rand(40, 40) + (3 * np.eye(40)).astype(dtype)
    X = scipy_solve(T, rand(40, k), lower, trans, unit).astype(dtype)
    X_bar, T_dot, B_dot = rand(40, k), rand(40, 40), rand(40, k)
    flags = (lower, trans, unit)
    for got, want in zip(
        solve_triangular_pullback_blas(T, X, X_bar, *flags),
        solve_triangular_pullback(T, X, X_bar, *flags),
        strict=True,
    ):
        assert_allclose(got, want, **tol)
    assert_allclose(
        solve_triangular_pushforward_blas(T, X, T_dot, B_dot, *flags),
        solve_triangular_pushforward(T, X, T_dot, B_dot, *flags),
        **tol,
    )


def test_blas_variants_take_vectors(system, rand, tol):
    T, X = system(5, 1, True, 1, False)
    x, x_bar, T_dot, b_dot = X[:, 0], rand(5), rand(5, 5), rand(5)
    T_bar, b_bar = solve_triangular_pullback_blas(T, x, x_bar, True, 1)
    T_ref, B_ref = solve_triangular_pullback(T, X, x_bar[:, None], True, 1)
    assert b_bar.shape == (5,)
    assert_allclose(T_bar, T_ref, **tol)
    assert_allclose(b_bar, B_ref[:, 0], **tol)
    x_dot = solve_triangular_pushforward_blas(T, x, T_dot, b_dot, True, 1)
    assert x_dot.shape == (5,)
    assert_allclose(
        x_dot, solve_triangular_pushforward(T, X, T_dot, b_dot[:, None], True, 1)[:, 0], **tol
    )


def test_inputs_not_mutated(system, rand):
    T, X = system(4, 2, True, 0, False)
    X_bar, T_dot, B_dot = rand(4, 2), rand(4, 4), rand(4, 2)
    args = (T, X, X_bar, T_dot, B_dot)
    copies = [a.copy() for a in args]
    for pullback in (solve_triangular_pullback, solve_triangular_pullback_blas):
        pullback(T, X, X_bar, True, 0, False)
    for pushforward in (solve_triangular_pushforward, solve_triangular_pushforward_blas):
        pushforward(T, X, T_dot, B_dot, True, 0, False)
    for a, a0 in zip(args, copies, strict=True):
        np.testing.assert_array_equal(a, a0)


@pytest.mark.jit_only
def test_nan_in_gives_nan_out(system, rand):
    T, X = system(4, 2, True, 0, False)
    X_bar = rand(4, 2)
    T[2, 1] = np.nan
    T_bar, B_bar = solve_triangular_pullback(T, X, X_bar, True, 0, False)
    assert np.isnan(B_bar).any()
    assert np.isnan(T_bar).any()
    assert np.isnan(solve_triangular_pushforward(T, X, T, X, True, 0, False)).any()
    T[2, 1] = 0.0
    T[3, 3] = 0.0  # a singular T: inf/NaN, no exception
    assert not np.isfinite(solve_triangular_pullback(T, X, X_bar, True, 0, False)[1]).all()


@pytest.mark.parametrize(("lower", "trans", "unit_diagonal"), FLAGS, ids=FLAG_IDS)
@pytest.mark.parametrize("k", [2, 5])  # the two loop orders of the kernel (k < 4, k >= 4)
def test_forward_solve_matches_scipy(rand, dtype, tol, lower, trans, unit_diagonal, k):
    T = rand(3, 4, 4) + (3 * np.eye(4)).astype(dtype)
    B = rand(3, 4, k)
    before = T.copy(), B.copy()
    X = solve_triangular_batched(T, B, lower, trans, unit_diagonal)
    assert X.dtype == dtype
    for t in range(3):
        assert_allclose(X[t], scipy_solve(T[t], B[t], lower, trans, unit_diagonal), **tol)
    assert_allclose(T, before[0], rtol=0, atol=0)
    assert_allclose(B, before[1], rtol=0, atol=0)


@pytest.mark.parametrize(("lower", "trans", "unit_diagonal"), FLAGS, ids=FLAG_IDS)
@pytest.mark.parametrize("n", [1, 6])
def test_loop_orders_give_the_same_bits(rand, dtype, lower, trans, unit_diagonal, n):
    """Six right-hand sides at once (rows updated whole) and one at a time (a dot product each).

    Both subtract the solved rows in the same order and scale by the same reciprocal, so every
    entry comes out bit for bit the same.
    """
    T = 0.3 * rand(2, n, n) + (3 * np.eye(n)).astype(dtype)
    B = rand(2, n, 6)
    X = solve_triangular_batched(T, B, lower, trans, unit_diagonal)
    for j in range(6):
        column = np.ascontiguousarray(B[:, :, j : j + 1])
        x = solve_triangular_batched(T, column, lower, trans, unit_diagonal)
        np.testing.assert_array_equal(X[:, :, j : j + 1], x)


def test_pullback_refuses_a_cotangent_of_another_shape(system, rand):
    """The loop pullback copies ``X_bar`` into a result shaped like ``X``: a mismatch raises."""
    T, X = map(np.stack, zip(*(system(4, 2, True, 0, False) for _ in range(2)), strict=True))
    with pytest.raises(ValueError, match="X_bar must have the shape of X"):
        solve_triangular_pullback_batched(T, X, rand(2, 4, 3), True, 0, False)
