import numpy as np
import pytest
import scipy.linalg as sla
from numpy.testing import assert_allclose, assert_array_equal

from kernels._cholesky_lanes4 import cholesky_pullback_flat4
from kernels.cholesky import (
    FLAT4_MIN_B,
    _pullback_loops_batched,
    cholesky_pullback,
    cholesky_pullback_batched,
    cholesky_pullback_blocked,
    cholesky_pushforward,
    cholesky_pushforward_batched,
    cholesky_pushforward_blocked,
)


@pytest.fixture
def spd(rand, dtype):
    """``spd(n)``: a well-conditioned Hermitian positive definite matrix of ``dtype``."""

    def spd(n):
        X = rand(n, n)
        return (X @ X.conj().T + n * np.eye(n)).astype(dtype)

    return spd


@pytest.fixture
def hermitian(rand):
    """``hermitian(n)``: a random Hermitian direction, the only kind cholesky sees."""

    def hermitian(n):
        X = rand(n, n)
        return X + X.conj().T

    return hermitian


def phi(X):
    """Lower triangle of ``X`` with the real part of the diagonal halved."""
    P = np.tril(X)
    np.fill_diagonal(P, 0.5 * np.diagonal(P).real)
    return P


def oracle_pullback(L, L_bar):
    """``sym(L^-H Phi(L^H L_bar) L^-1)`` with scipy's triangular solves, in double precision."""
    L, L_bar = L.astype(complex), L_bar.astype(complex)
    Y = sla.solve_triangular(L, phi(L.conj().T @ L_bar), lower=True, trans=2)
    Z = sla.solve_triangular(L, Y.conj().T, lower=True, trans=2).conj().T
    return 0.5 * (Z + Z.conj().T)


def cholesky_fd(A, A_dot, h=1e-6):
    """Central difference of ``np.linalg.cholesky`` at ``A`` along ``A_dot`` (double precision)."""
    A, A_dot = A.astype(complex), A_dot.astype(complex)
    return (np.linalg.cholesky(A + h * A_dot) - np.linalg.cholesky(A - h * A_dot)) / (2 * h)


# 1-4: the loops (orders compiled as constants in stacks); 5, 16, 17: the pullback's row form
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 16, 17])
def test_pullback_matches_oracle(spd, rand, dtype, tol, n):
    L = np.linalg.cholesky(spd(n))
    L_bar = rand(n, n)
    A_bar = cholesky_pullback(L, L_bar)
    assert A_bar.dtype == dtype
    assert_allclose(A_bar, oracle_pullback(L, L_bar), **tol)
    np.testing.assert_array_equal(A_bar, A_bar.conj().T)  # exactly Hermitian


def test_pullback_ignores_upper_triangle_of_L_bar(spd, rand):
    L = np.linalg.cholesky(spd(4))
    L_bar = rand(4, 4)
    np.testing.assert_array_equal(cholesky_pullback(L, L_bar), cholesky_pullback(L, np.tril(L_bar)))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 16, 17])
def test_pushforward_matches_finite_differences(spd, hermitian, dtype, tol, n):
    A = spd(n)
    A_dot = hermitian(n)
    L_dot = cholesky_pushforward(np.linalg.cholesky(A), A_dot)
    assert L_dot.dtype == dtype
    fd_tol = {"rtol": max(tol["rtol"], 1e-7), "atol": max(tol["atol"], 1e-7)}
    assert_allclose(L_dot, cholesky_fd(A, A_dot), **fd_tol)
    assert not np.triu(L_dot, 1).any()


@pytest.mark.parametrize("n", [1, 3, 4, 6])
def test_dot_product_links_pullback_and_pushforward(spd, rand, hermitian, tol, inner, n):
    L = np.linalg.cholesky(spd(n))
    L_bar, A_dot = rand(n, n), hermitian(n)
    lhs = inner(L_bar, cholesky_pushforward(L, A_dot))
    rhs = inner(cholesky_pullback(L, L_bar), A_dot)
    assert lhs == pytest.approx(rhs, rel=10 * tol["rtol"], abs=10 * tol["atol"])


# the specialised sizes, and the loops and the row form for any size
@pytest.mark.parametrize("n", [2, 3, 4, 5, 16, 17])
def test_batched_equals_per_matrix(spd, rand, hermitian, n):
    L = np.stack([np.linalg.cholesky(spd(n)) for _ in range(3)])
    L_bar = rand(3, n, n)
    A_dot = np.stack([hermitian(n) for _ in range(3)])
    A_bar = cholesky_pullback_batched(L, L_bar)
    L_dot = cholesky_pushforward_batched(L, A_dot)
    for t in range(3):
        assert_allclose(A_bar[t], cholesky_pullback(L[t], L_bar[t]), rtol=1e-6, atol=1e-7)
        assert_allclose(L_dot[t], cholesky_pushforward(L[t], A_dot[t]), rtol=1e-6, atol=1e-7)


def test_blocked_equals_unblocked(spd, rand, hermitian, tol):
    n = 70
    L = np.linalg.cholesky(spd(n))
    L_bar, A_dot = rand(n, n), hermitian(n)
    A_bar = cholesky_pullback(L, L_bar)
    L_dot = cholesky_pushforward(L, A_dot)
    block_tol = {"rtol": 10 * tol["rtol"], "atol": 10 * tol["atol"]}
    for block in (16, 64, 100):  # several blocks with a ragged last one, and a single block
        A_bar_blocked = cholesky_pullback_blocked(L, L_bar, block=block)
        assert A_bar_blocked.dtype == A_bar.dtype
        assert_allclose(A_bar_blocked, A_bar, **block_tol)
        assert_allclose(cholesky_pushforward_blocked(L, A_dot, block=block), L_dot, **block_tol)


def test_inputs_not_mutated(spd, rand, hermitian):
    L = np.linalg.cholesky(spd(4))
    L_bar, A_dot = rand(4, 4), hermitian(4)
    Ls, L_bars, A_dots = np.stack([L, L]), np.stack([L_bar, L_bar]), np.stack([A_dot, A_dot])
    args = (L, L_bar, A_dot, Ls, L_bars, A_dots)
    copies = [x.copy() for x in args]
    cholesky_pullback(L, L_bar)
    cholesky_pushforward(L, A_dot)
    cholesky_pullback_batched(Ls, L_bars)
    cholesky_pushforward_batched(Ls, A_dots)
    cholesky_pullback_blocked(L, L_bar, block=2)
    cholesky_pushforward_blocked(L, A_dot, block=2)
    for x, x0 in zip(args, copies, strict=True):
        np.testing.assert_array_equal(x, x0)


@pytest.mark.jit_only
def test_nan_in_gives_nan_out(spd, rand, hermitian):
    L = np.linalg.cholesky(spd(4))
    L_bar, A_dot = rand(4, 4), hermitian(4)
    L[2, 1] = np.nan
    assert np.isnan(cholesky_pullback(L, L_bar)).any()
    assert np.isnan(cholesky_pushforward(L, A_dot)).any()
    assert np.isnan(cholesky_pullback_blocked(L, L_bar, block=2)).any()
    assert np.isnan(cholesky_pushforward_blocked(L, A_dot, block=2)).any()
    good = np.linalg.cholesky(spd(4))
    A_bar = cholesky_pullback_batched(np.stack([good, L]), np.stack([L_bar, L_bar]))
    assert np.isfinite(A_bar[0]).all()
    assert np.isnan(A_bar[1]).any()


@pytest.mark.jit_only
def test_zero_pivot_gives_non_finite_not_an_error(spd, rand, hermitian):
    L = np.linalg.cholesky(spd(3))
    L[1, 1] = 0.0
    assert not np.isfinite(cholesky_pullback(L, rand(3, 3))).all()
    assert not np.isfinite(cholesky_pushforward(L, hermitian(3))).all()


@pytest.mark.jit_only
@pytest.mark.parametrize("real", [np.float64, np.float32])
@pytest.mark.parametrize("b", [FLAT4_MIN_B, 70])  # one block, and a partial last one
def test_flat_lane_pullback_gives_the_loops_bits(rng, real, b):
    """Real 4x4 stacks: ``kernels._cholesky_lanes4`` and the loop kernel agree bit for bit, also
    with a zero on the diagonal of ``L`` (inf, NaN), NaN and inf in the inputs, and junk in the
    strict upper triangles of ``L`` and ``L_bar``, which never enter."""
    X = rng.standard_normal((b, 4, 4))
    L = np.linalg.cholesky(X @ X.mT + 4 * np.eye(4)).astype(real)
    L_bar = rng.standard_normal((b, 4, 4)).astype(real)
    L[::3, 2, 2] = 0
    L[1::5, 3, 1] = np.nan
    L_bar[2::7, 2, 0] = np.inf
    L += np.triu(rng.standard_normal((b, 4, 4)), 1).astype(real)
    copies = [L.copy(), L_bar.copy()]
    with np.errstate(all="ignore"):
        got = cholesky_pullback_flat4(L, L_bar)
        want = _pullback_loops_batched(L, L_bar)
        routed = cholesky_pullback_batched(L, L_bar)
    assert got.dtype == real
    assert_array_equal(got, want)  # NaN where NaN
    assert_array_equal(np.signbit(got), np.signbit(want))
    assert not np.isfinite(want[::3]).all(axis=(1, 2)).any()
    assert_array_equal(routed, want)
    for x, original in zip((L, L_bar), copies, strict=True):
        assert_array_equal(x, original)
    junk = np.triu(np.full((4, 4), np.nan, real), 1)  # L_bar's strict upper triangle never enters
    with np.errstate(all="ignore"):
        assert_array_equal(cholesky_pullback_flat4(L, L_bar + junk), want)
