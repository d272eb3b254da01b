import platform

import numba
import numpy as np
import pytest

from kernels import _jit
from kernels.tiled_products import (
    matmul_pullback_tiled,
    matmul_pushforward_tiled,
    matmul_tiled,
    matmul_with_pushforward_tiled,
)

# (m, k, n): whole 4x8 tiles, a 4x4 tile after them (12), edges of every kind (rows and columns
# left over, a side below 4, one entry), and an empty inner dimension
SHAPES = [(8, 8, 8), (16, 16, 16), (12, 12, 12), (4, 20, 16), (5, 7, 9), (3, 5, 2), (1, 1, 1)]
SHAPES += [(13, 3, 11), (8, 0, 8)]
REAL = [np.float64, np.float32]


def rounding_bound(dtype, k, *pairs):
    """Entrywise bound of the rounding of sums of products: ``(k + 1) eps sum |x| |y|``."""
    eps = np.finfo(dtype).eps
    total = sum(np.abs(x).astype(np.float64) @ np.abs(y).astype(np.float64) for x, y in pairs)
    return (k + 1) * eps * total


def exact(X, Y):
    """``X @ Y`` in extended precision (longdouble where numpy has one), as float64."""
    return (X.astype(np.longdouble) @ Y.astype(np.longdouble)).astype(np.float64)


@pytest.fixture
def stacks(rng):
    def stacks(dtype, *shapes):
        return [rng.standard_normal(s).astype(dtype) for s in shapes]

    return stacks


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize(("m", "k", "n"), SHAPES)
def test_each_kernel_matches_the_exact_products(stacks, dtype, m, k, n):
    A, B, A_dot, B_dot, C_bar = stacks(dtype, (3, m, k), (3, k, n), (3, m, k), (3, k, n), (3, m, n))
    copies = [x.copy() for x in (A, B, A_dot, B_dot, C_bar)]
    C = matmul_tiled(A, B)
    C_dot = matmul_pushforward_tiled(A, B, A_dot, B_dot)
    C_w, C_dot_w = matmul_with_pushforward_tiled(A, B, A_dot, B_dot)
    A_bar, B_bar = matmul_pullback_tiled(A, B, C_bar)
    expected = [
        (C, exact(A, B), [(A, B)]),
        (C_dot, exact(A_dot, B) + exact(A, B_dot), [(A_dot, B), (A, B_dot)]),
        (A_bar, exact(C_bar, B.mT), [(C_bar, B.mT)]),
        (B_bar, exact(A.mT, C_bar), [(A.mT, C_bar)]),
    ]
    for got, want, pairs in expected:
        assert got.dtype == dtype
        assert got.flags.c_contiguous
        assert got.shape == want.shape
        bound = rounding_bound(dtype, 2 * k, *pairs)
        assert np.all(np.abs(got - want) <= bound)
    # the fused kernel gives the same bits as the two separate ones
    np.testing.assert_array_equal(C_w, C)
    np.testing.assert_array_equal(C_dot_w, C_dot)
    for x, original in zip((A, B, A_dot, B_dot, C_bar), copies, strict=True):
        np.testing.assert_array_equal(x, original)  # inputs untouched


@pytest.mark.parametrize("dtype", REAL)
def test_each_entry_is_the_sum_over_p_in_order(stacks, dtype):
    """No reassociation: the kernels' sums are bit for bit the plain loop's."""
    A, B = stacks(dtype, (2, 8, 6), (2, 6, 12))
    C = matmul_tiled(A, B)
    loop = np.zeros(C.shape, dtype)
    for p in range(6):
        loop += A[:, :, p, None] * B[:, None, p, :]  # in dtype: one rounding per step
    np.testing.assert_array_equal(C, loop)


@pytest.mark.parametrize(("m", "k", "n"), [(8, 8, 8), (12, 4, 12), (5, 7, 9)])
def test_nan_and_inf_reach_the_entries_they_reach_in_numpy(m, k, n):
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((2, m, k)), rng.standard_normal((2, k, n))
    C_bar = rng.standard_normal((2, m, n))
    A[1, m - 1, k - 1] = np.nan
    B[0, 0, n - 1] = np.inf
    with np.errstate(invalid="ignore"):
        for got, want in [
            (matmul_tiled(A, B), A @ B),
            (matmul_pullback_tiled(A, B, C_bar)[0], C_bar @ B.mT),
            (matmul_pullback_tiled(A, B, C_bar)[1], A.mT @ C_bar),
            (matmul_pushforward_tiled(A, B, A, B), A @ B + A @ B),
        ]:
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            np.testing.assert_array_equal(np.isinf(got), np.isinf(want))


def test_an_empty_stack(stacks):
    A, B = stacks(np.float64, (0, 8, 8), (0, 8, 8))
    assert matmul_tiled(A, B).shape == (0, 8, 8)
    A_bar, B_bar = matmul_pullback_tiled(A, B, A)
    assert A_bar.shape == B_bar.shape == (0, 8, 8)


def test_slp_is_on_for_the_kernels_compilation_only():
    """``jit_slp`` sets Numba's process-wide switch while its kernel compiles, and restores it."""
    seen = []

    def twice(x):
        return 2.0 * x

    dispatcher = numba.njit(twice)
    compile_ = dispatcher.compile
    dispatcher.compile = lambda sig: seen.append(numba.core.config.SLP_VECTORIZE) or compile_(sig)
    before = numba.core.config.SLP_VECTORIZE
    _jit._with_slp(dispatcher)
    assert dispatcher(1.5) == 3.0
    assert seen == [1]
    assert before == numba.core.config.SLP_VECTORIZE
    # an ordinary kernel compiled afterwards does not see it
    seen.clear()
    plain = numba.njit(twice)
    compile_plain = plain.compile
    plain.compile = lambda sig: seen.append(numba.core.config.SLP_VECTORIZE) or compile_plain(sig)
    assert plain(2.0) == 4.0
    assert seen == [before]


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 mnemonics")
def test_the_tiles_are_vectorised(stacks):
    """The claim behind the kernels: packed multiplies (``mulpd``), not scalar ones only."""
    A, B = stacks(np.float64, (2, 8, 8), (2, 8, 8))
    fresh = _jit._with_slp(numba.njit(matmul_tiled.py_func, **_jit._OPTIONS))  # not cached
    np.testing.assert_array_equal(fresh(A, B), matmul_tiled(A, B))
    asm = "\n".join(fresh.inspect_asm().values())
    assert "mulpd" in asm
