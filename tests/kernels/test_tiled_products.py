import functools
import platform
import re
from fractions import Fraction

import numba
import numpy as np
import pytest

from kernels import _jit, tiled_products
from kernels.tiled_products import (
    fits,
    matmul_nt_tiled,
    matmul_pullback_tiled,
    matmul_pushforward_tiled,
    matmul_tiled,
    matmul_tn_tiled,
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
    NT = matmul_nt_tiled(A, np.ascontiguousarray(B.mT))  # A (B^T)^T
    TN = matmul_tn_tiled(np.ascontiguousarray(A.mT), B)  # (A^T)^T B
    expected = [
        (NT, exact(A, B), [(A, B)]),
        (TN, exact(A, B), [(A, B)]),
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


def _rounded(exact, dtype):
    """``exact`` (a Fraction) rounded to the nearest ``dtype`` value, ties to even."""
    near = dtype(float(exact))  # within one step of the nearest: look at the neighbours
    candidates = [np.nextafter(near, dtype(-np.inf)), near, np.nextafter(near, dtype(np.inf))]
    distance = [abs(Fraction(float(c)) - exact) for c in candidates]
    best = min(distance)
    ties = [c for c, d in zip(candidates, distance, strict=True) if d == best]
    return min(ties, key=lambda c: int(np.frexp(c)[0] * 2**30) % 2)  # the even one on a tie


def _fused_sums_in_order(A, B):
    """``sum_p A[:, i, p] B[:, p, j]`` in order, each step one fused multiply-add (one rounding).

    Exact rational arithmetic per step (``fractions``), then rounded to the dtype: the
    reference for kernels that LLVM compiled with fused multiply-adds.
    """
    dtype = A.dtype.type
    C = np.zeros((A.shape[0], A.shape[1], B.shape[2]), A.dtype)
    for t, i, j in np.ndindex(C.shape):
        s = dtype(0)
        for p in range(A.shape[2]):
            s = _rounded(
                Fraction(float(A[t, i, p])) * Fraction(float(B[t, p, j])) + Fraction(float(s)),
                dtype,
            )
        C[t, i, j] = s
    return C


@functools.cache
def _fresh_matmul_tiled():
    """:func:`matmul_tiled` compiled afresh for float64 stacks, with the kernel's options, and its
    assembly: Numba cannot show the code of a kernel loaded from its cache. Compiled once per
    process (about as long as the kernel itself), for the tests that read its instructions."""
    fresh = _jit._with_slp(numba.njit(matmul_tiled.py_func, **_jit._TILE_OPTIONS))
    fresh(*[np.ones((1, 8, 8))] * 2)
    return fresh, "\n".join(fresh.inspect_asm().values())


def _fuses():
    """Whether :func:`matmul_tiled`'s code holds fused multiply-adds (x86 mnemonics)."""
    return "vfmadd" in _fresh_matmul_tiled()[1]


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("sides", [(8, 6, 12), (5, 6, 9), (4, 6, 32)])
def test_each_entry_is_the_sum_over_p_in_order(stacks, dtype, sides):
    """No reassociation: the sums of the tiles and of the edges are bit for bit the loop's.

    Each step rounds once where the code fuses the multiply-add (``contract``), twice where it
    does not (a machine without FMA instructions).
    """
    m, k, n = sides
    A, B = stacks(dtype, (2, m, k), (2, k, n))
    C = matmul_tiled(A, B)
    if platform.machine() in ("x86_64", "AMD64") and _fuses():
        np.testing.assert_array_equal(C, _fused_sums_in_order(A, B))
        return
    loop = np.zeros(C.shape, dtype)
    for p in range(k):
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


def test_blocks_of_16_and_of_8_give_the_same_bits(stacks, monkeypatch):
    """The AVX-512 blocks (WIDE) and the narrow ones sum each entry over p in the same order.

    The kernels as compiled here against copies compiled with the other setting of ``WIDE``
    (which Numba reads when it compiles): pair tiles (the pushforward) and transposed ones
    (``X^T Y``), edges included. The two smallest kernels that hold them: each copy is a cold
    compilation.
    """
    monkeypatch.setattr(tiled_products, "WIDE", not tiled_products.WIDE)
    for kernel in (matmul_pushforward_tiled, matmul_tn_tiled):
        other = _jit._with_slp(numba.njit(kernel.py_func, **_jit._TILE_OPTIONS))
        for m, k, n in [(16, 8, 32), (8, 5, 28), (13, 16, 17)]:
            A, B, A_dot, B_dot = stacks(np.float64, (2, m, k), (2, k, n), (2, m, k), (2, k, n))
            args = (
                (A, B, A_dot, B_dot) if kernel is matmul_pushforward_tiled else (A_dot.mT.copy(), B)
            )
            np.testing.assert_array_equal(other(*args), kernel(*args))


def test_mismatched_shapes_raise(stacks):
    """No bounds checks inside: the kernels check that their operands fit."""
    A, B, B1 = stacks(np.float64, (3, 8, 8), (3, 8, 8), (1, 8, 8))
    with pytest.raises(ValueError, match="do not fit"):
        matmul_tiled(A, B1)
    with pytest.raises(ValueError, match="do not fit"):
        matmul_tiled(A, np.ascontiguousarray(B[:, :4]))
    with pytest.raises(ValueError, match="shaped as"):
        matmul_pushforward_tiled(A, B, A, B1)
    with pytest.raises(ValueError, match="C_bar"):
        matmul_pullback_tiled(A, B, B1)
    with pytest.raises(ValueError, match="do not fit"):
        matmul_nt_tiled(A, B1)
    with pytest.raises(ValueError, match="do not fit"):
        matmul_tn_tiled(A, B1)


def test_fits_by_kind_on_the_small_gemm_cores(stacks, monkeypatch):
    """Where numpy's OpenBLAS runs a small-gemm core, each kind has its own limit."""
    from kernels import _blas_core, crossovers

    monkeypatch.setattr(_blas_core, "small_gemm_core", lambda: True)
    A8, A16 = stacks(np.float64, (2, 8, 8), (2, 16, 16))
    table = crossovers.MATMUL_TILED_SMALL_GEMM_MAX_N
    for kind, limits in table.items():
        assert fits((8, 8, 8), A8, A8, kind=kind) is (limits["d"] >= 8)
        assert fits((16, 16, 16), A16, A16, kind=kind) is (limits["d"] >= 16)
    monkeypatch.setattr(_blas_core, "small_gemm_core", lambda: False)
    assert all(fits((16, 16, 16), A16, A16, kind=kind) for kind in table)


def test_fits(stacks, monkeypatch):
    from kernels import _blas_core

    monkeypatch.setattr(_blas_core, "small_gemm_core", lambda: False)  # the general table
    A = stacks(np.float64, (3, 8, 8))[0]
    assert fits((8, 8, 8), A, A)
    assert not fits((8, 8, 6), A, A)  # a side not in fours
    assert not fits((4, 4, 4), A, A)  # the loop kernels' sizes
    assert not fits((8, 8, 8), A.astype(">f8"), A.astype(">f8"))  # Numba takes native only
    assert not fits((8, 8, 8), A.astype(np.complex128), A.astype(np.complex128))
    assert not fits((8, 8, 8), A, np.asfortranarray(A))
    read_only = A.copy()
    read_only.flags.writeable = False
    assert not fits((8, 8, 8), A, read_only)
    assert not fits((8, 8, 8), A, A.astype(np.float32))
    assert not fits((8, 8, 8), A[0], A[0])  # stacks only


def test_an_empty_stack(stacks):
    A, B = stacks(np.float64, (0, 8, 8), (0, 8, 8))
    assert matmul_tiled(A, B).shape == (0, 8, 8)
    A_bar, B_bar = matmul_pullback_tiled(A, B, A)
    assert A_bar.shape == B_bar.shape == (0, 8, 8)
    assert tiled_products.inv_pullback_tiled(A, B).shape == (0, 8, 8)
    assert tiled_products.inv_pushforward_tiled(A, B).shape == (0, 8, 8)


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


def test_slp_survives_a_change_of_numba_environment_variables(monkeypatch):
    """Numba's compiler reloads its configuration when a NUMBA_* variable changed, which would
    reset the flag mid-compilation; ``jit_slp`` reloads it before setting the flag."""
    seen = []

    def passes(*args, **kwargs):
        seen.append(numba.core.config.SLP_VECTORIZE)
        return original(*args, **kwargs)

    codegen = numba.core.codegen.CPUCodegen
    original = codegen._module_pass_manager
    monkeypatch.setattr(codegen, "_module_pass_manager", lambda self, **kw: passes(self, **kw))
    monkeypatch.setenv("NUMBA_DEBUG_CACHE", "0")  # changed since Numba last read the environment
    dispatcher = _jit._with_slp(numba.njit(lambda x: 3.0 * x))
    assert dispatcher(1.0) == 3.0
    assert seen
    assert all(seen)  # every pipeline built during the compilation had SLP on


def test_slp_code_has_its_own_cache_keys(stacks):
    assert isinstance(matmul_tiled._cache, _jit._SlpCache)
    A = stacks(np.float64, (1, 8, 8))[0]
    matmul_tiled(A, A)
    codegen = matmul_tiled.targetctx.codegen()
    sig = matmul_tiled.signatures[0]
    plain = _jit._FallbackCache(matmul_tiled.py_func)
    assert matmul_tiled._cache._index_key(sig, codegen) != plain._index_key(sig, codegen)
    unfused = _jit._SlpCache(matmul_tiled.py_func)  # SLP without contract (jit_slp)
    assert matmul_tiled._cache._index_key(sig, codegen) != unfused._index_key(sig, codegen)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 mnemonics")
def test_the_tiles_are_vectorised(stacks):
    """The claim behind the kernels: packed multiplies (``mulpd``, ``vfmadd231pd``), not scalar ones only."""
    A, B = stacks(np.float64, (2, 8, 8), (2, 8, 8))
    fresh, asm = _fresh_matmul_tiled()  # not cached: compiled here, with the kernel's options
    np.testing.assert_array_equal(fresh(A, B), matmul_tiled(A, B))
    assert re.search(r"\b(v?mulpd|vfn?m(add|sub)\d+pd)\b", asm)  # packed: plain or fused


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize(("m", "k", "n"), SHAPES)
def test_the_scaled_product_matches_the_formula(stacks, dtype, m, k, n):
    """``matmul_scaled_tiled(X, d, Y)`` is ``(X * d) @ Y`` within the rounding of its sums."""
    X, Y, d = stacks(dtype, (3, m, k), (3, k, n), (3, k))
    copies = [x.copy() for x in (X, Y, d)]
    got = tiled_products.matmul_scaled_tiled(X, d, Y)
    XD = X * d[:, None, :]
    assert got.dtype == dtype
    assert got.flags.c_contiguous
    assert np.all(np.abs(got - exact(XD, Y)) <= rounding_bound(dtype, 2 * k, (XD, Y)))
    np.testing.assert_allclose(tiled_products.scaled_products(X, d, Y), got, rtol=1e-5)
    for x, original in zip((X, Y, d), copies, strict=True):
        np.testing.assert_array_equal(x, original)
    with pytest.raises(ValueError, match="matmul_scaled_tiled"):
        tiled_products.matmul_scaled_tiled(X, np.ones((3, k + 1), dtype), Y)


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("n", [1, 3, 4, 8, 12, 16, 20])
def test_the_inverse_derivatives_match_their_products(stacks, dtype, n):
    """``inv_pullback_tiled`` is ``-Y^T Y_bar Y^T``, ``inv_pushforward_tiled`` ``-Y A_dot Y``.

    Each within the rounding of two sums of products (the first product is rounded before the
    second: the bound is that of the exact first product's magnitudes, doubled).
    """
    Y, Y_bar, A_dot = stacks(dtype, (3, n, n), (3, n, n), (3, n, n))
    copies = [x.copy() for x in (Y, Y_bar, A_dot)]
    Yt = np.ascontiguousarray(Y.mT)
    A_bar = tiled_products.inv_pullback_tiled(Y, Y_bar)
    Y_dot = tiled_products.inv_pushforward_tiled(Y, A_dot)
    for got, X, M, Z in ((A_bar, Yt, Y_bar, Yt), (Y_dot, Y, A_dot, Y)):
        assert got.dtype == dtype
        assert got.flags.c_contiguous
        MZ = np.abs(M).astype(np.float64) @ np.abs(Z)
        bound = 2 * rounding_bound(dtype, 2 * n, (X, MZ))
        assert np.all(np.abs(got + exact(X, exact(M, Z))) <= bound)
    for x, original in zip((Y, Y_bar, A_dot), copies, strict=True):
        np.testing.assert_array_equal(x, original)
    for f in (tiled_products.inv_pullback_tiled, tiled_products.inv_pushforward_tiled):
        with pytest.raises(ValueError, match=f.__name__):
            f(Y, np.ones((3, n, n + 1) if n > 1 else (2, 1, 1), dtype))
        with pytest.raises(ValueError, match=f.__name__):
            f(np.ones((3, n, n + 1), dtype), np.ones((3, n, n + 1), dtype))
