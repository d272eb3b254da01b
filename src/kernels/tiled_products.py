"""Register-tiled products of stacks of small real matrices, vectorised by LLVM's SLP pass.

``C[t] = A[t] B[t]`` for C-contiguous real stacks ``A`` (b, m, k) and ``B`` (b, k, n), float64
or float32, and the derivatives of the product built from it::

    C_dot = A_dot B + A B_dot        A_bar = C_bar B^T        B_bar = A^T C_bar

(Giles 2008, the result for the matrix product; ``kernels.products`` has the same formulas for
complex stacks and matrices up to 4 on a side.)

Why these exist. For stacks of small matrices numpy's stacked ``matmul`` calls BLAS gemm once
per matrix, and OpenBLAS's small-matrix gemm is far from the machine's peak: with its Haswell
kernels a 16x16 product took 0.26 us, about 30 GFlop/s on a core that does several times that.
A plain loop kernel in Numba did worse (0.65 us), with scalar instructions only: its sums
run in order (no reassociation without ``fastmath``), and its stores into ``C`` might alias
``A`` or ``B``.

How. Each 4x8 block of ``C`` (a *tile*) is accumulated in 32 local variables over the inner
dimension, the way BLAS micro-kernels hold a block of ``C`` in registers: per step ``p`` the
kernel reads four entries of ``A``'s rows and eight consecutive entries of ``B``'s row ``p``,
and updates the 32 sums. The locals cannot alias anything, and the eight sums of one row are
the same operation on consecutive data, which LLVM's SLP vectorizer turns into vector
instructions (``kernels._jit.jit_tiles``; Numba leaves that pass off by default). On machines
with AVX-512 (:data:`WIDE`) blocks of 4x16 come first, 64 sums in 16 of its 32 vector
registers; then blocks of 4x8 and 4x4. Rows and columns left over when ``m`` or ``n`` is not
a multiple of 4 are plain dot products, several times slower per entry.
Every entry of ``C`` is the sum over ``p`` in order, each term added by a fused multiply-add
where LLVM fuses it (``kernels._jit.jit_tiles``: ``contract``, no other fast-math flag), so NaN
and inf propagate as in the formula.
An entry of ``C_dot`` is one such sum over the terms of ``A_dot B`` and then on over those of
``A B_dot`` (the product of ``[A_dot A]`` and ``[B; B_dot]``), within rounding of numpy's
``A_dot @ B + A @ B_dot``.

Measured in one process against numpy's stacked matmul, one core of an AMD EPYC with AVX-512
(numpy's OpenBLAS on its Haswell kernels): see ``kernels.crossovers.MATMUL_TILED_MAX_N``. The
rules use these kernels for real stacks from ``kernels.crossovers.MATMUL_STACK_MAX_N`` (below,
the loop kernels of ``kernels.products`` win) up to that entry.
"""

import llvmlite.binding
import numba
import numpy as np

from kernels import _blas_core, crossovers
from kernels._alloc import empty_pair_like
from kernels._jit import jit_inline, jit_tiles

__all__ = [
    "fits",
    "inv_pullback_tiled",
    "inv_pushforward_tiled",
    "matmul_nt_tiled",
    "matmul_pullback_tiled",
    "matmul_pushforward_tiled",
    "matmul_scaled_tiled",
    "matmul_tiled",
    "matmul_tn_tiled",
    "matmul_with_pushforward_tiled",
    "scaled_products",
]


def _wide() -> bool:
    """AVX-512 in the features Numba compiles for: the host's, or ``NUMBA_CPU_FEATURES``."""
    if numba.config.CPU_FEATURES is not None:  # an explicit target (a portable cache, say)
        features = numba.config.CPU_FEATURES
    elif numba.config.CPU_NAME not in (None, "host"):
        return False  # a named CPU without features: assume the narrow blocks
    else:
        features = llvmlite.binding.get_host_cpu_features().flatten()
    return "+avx512f" in features.split(",")


WIDE = _wide()
"""Whether this CPU has AVX-512, where the kernels use blocks of 4x16 first.

Numba compiles for the host CPU (its cache keeps code per CPU name and features), and reads
this global when it compiles. With AVX2's 16 vector registers the 64 sums of a 4x16 block
would not fit. Measured with and without: 1000 x (16x16) float64 products 0.11 against 0.12
ms, 250 x (32x32) 0.13 against 0.18, 62 x (64x64) 0.44 against 0.65; float32 gains more
(its 4x8 blocks fill half a vector register)."""


@jit_inline
def _sums8(X, Y, i0, j0, xt, c):
    """``c`` plus the 4x8 block at ``(i0, j0)`` of ``X Y`` (``X^T Y`` with ``xt``), summed over ``p``.

    ``c`` holds the 32 sums row by row; they stay in registers (local values, no memory).
    """
    c00, c01, c02, c03, c04, c05, c06, c07 = c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]
    c10, c11, c12, c13, c14, c15, c16, c17 = c[8], c[9], c[10], c[11], c[12], c[13], c[14], c[15]
    c20, c21, c22, c23, c24, c25, c26, c27 = c[16], c[17], c[18], c[19], c[20], c[21], c[22], c[23]
    c30, c31, c32, c33, c34, c35, c36, c37 = c[24], c[25], c[26], c[27], c[28], c[29], c[30], c[31]
    for p in range(Y.shape[0]):
        if xt:  # X^T: the four entries are consecutive in row p of X
            x = X[p, i0 : i0 + 4]
            a0, a1, a2, a3 = x[0], x[1], x[2], x[3]
        else:
            a0, a1, a2, a3 = X[i0, p], X[i0 + 1, p], X[i0 + 2, p], X[i0 + 3, p]
        y = Y[p, j0 : j0 + 8]  # a view: constant offsets below, no index wrap-around to test
        b0, b1, b2, b3, b4, b5, b6, b7 = y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7]
        c00, c01, c02, c03 = c00 + a0 * b0, c01 + a0 * b1, c02 + a0 * b2, c03 + a0 * b3
        c04, c05, c06, c07 = c04 + a0 * b4, c05 + a0 * b5, c06 + a0 * b6, c07 + a0 * b7
        c10, c11, c12, c13 = c10 + a1 * b0, c11 + a1 * b1, c12 + a1 * b2, c13 + a1 * b3
        c14, c15, c16, c17 = c14 + a1 * b4, c15 + a1 * b5, c16 + a1 * b6, c17 + a1 * b7
        c20, c21, c22, c23 = c20 + a2 * b0, c21 + a2 * b1, c22 + a2 * b2, c23 + a2 * b3
        c24, c25, c26, c27 = c24 + a2 * b4, c25 + a2 * b5, c26 + a2 * b6, c27 + a2 * b7
        c30, c31, c32, c33 = c30 + a3 * b0, c31 + a3 * b1, c32 + a3 * b2, c33 + a3 * b3
        c34, c35, c36, c37 = c34 + a3 * b4, c35 + a3 * b5, c36 + a3 * b6, c37 + a3 * b7
    # fmt: off
    return (
        c00, c01, c02, c03, c04, c05, c06, c07, c10, c11, c12, c13, c14, c15, c16, c17,
        c20, c21, c22, c23, c24, c25, c26, c27, c30, c31, c32, c33, c34, c35, c36, c37,
    )
    # fmt: on


@jit_inline
def _sums4(X, Y, i0, j0, xt, c):
    """:func:`_sums8` for a 4x4 block (the columns that are left after the blocks of eight)."""
    c00, c01, c02, c03, c10, c11, c12, c13 = c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]
    c20, c21, c22, c23, c30, c31, c32, c33 = c[8], c[9], c[10], c[11], c[12], c[13], c[14], c[15]
    for p in range(Y.shape[0]):
        if xt:
            x = X[p, i0 : i0 + 4]
            a0, a1, a2, a3 = x[0], x[1], x[2], x[3]
        else:
            a0, a1, a2, a3 = X[i0, p], X[i0 + 1, p], X[i0 + 2, p], X[i0 + 3, p]
        y = Y[p, j0 : j0 + 4]
        b0, b1, b2, b3 = y[0], y[1], y[2], y[3]
        c00, c01, c02, c03 = c00 + a0 * b0, c01 + a0 * b1, c02 + a0 * b2, c03 + a0 * b3
        c10, c11, c12, c13 = c10 + a1 * b0, c11 + a1 * b1, c12 + a1 * b2, c13 + a1 * b3
        c20, c21, c22, c23 = c20 + a2 * b0, c21 + a2 * b1, c22 + a2 * b2, c23 + a2 * b3
        c30, c31, c32, c33 = c30 + a3 * b0, c31 + a3 * b1, c32 + a3 * b2, c33 + a3 * b3
    return (c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33)


@jit_inline
def _tile8(X, Y, U, W, C, i0, j0, pair, xt):
    """Write the 4x8 block of ``C`` at ``(i0, j0)``: of ``X Y``, or of ``X Y + U W``.

    With ``pair`` the sums run over the ``p`` of ``X Y``, then on over those of ``U W``: the
    product of ``[X U]`` and ``[Y; W]``. ``xt``: ``X`` and ``U`` are read transposed.
    """
    z = C.dtype.type(0)
    zeros = (z, z, z, z, z, z, z, z)
    c = _sums8(X, Y, i0, j0, xt, zeros + zeros + zeros + zeros)
    if pair:
        c = _sums8(U, W, i0, j0, xt, c)
    for r in range(4):  # constant bounds: unrolled, the tuple indices become constants
        row = C[i0 + r, j0 : j0 + 8]
        for j in range(8):
            row[j] = c[8 * r + j]


@jit_inline
def _tile16(X, Y, U, W, C, i0, j0, pair, xt):
    """:func:`_tile8` for the 4x16 block at ``(i0, j0)``, its 64 sums in locals (:data:`WIDE`).

    Written out, not built from :func:`_sums8`'s tuples: 64 sums passed through a tuple
    defeated the vectorizer (the kernels got three times slower).
    """
    z = C.dtype.type(0)
    c00, c01, c02, c03, c04, c05, c06, c07 = z, z, z, z, z, z, z, z
    c08, c09, c0a, c0b, c0c, c0d, c0e, c0f = z, z, z, z, z, z, z, z
    c10, c11, c12, c13, c14, c15, c16, c17 = z, z, z, z, z, z, z, z
    c18, c19, c1a, c1b, c1c, c1d, c1e, c1f = z, z, z, z, z, z, z, z
    c20, c21, c22, c23, c24, c25, c26, c27 = z, z, z, z, z, z, z, z
    c28, c29, c2a, c2b, c2c, c2d, c2e, c2f = z, z, z, z, z, z, z, z
    c30, c31, c32, c33, c34, c35, c36, c37 = z, z, z, z, z, z, z, z
    c38, c39, c3a, c3b, c3c, c3d, c3e, c3f = z, z, z, z, z, z, z, z
    for p in range(Y.shape[0]):
        if xt:
            x = X[p, i0 : i0 + 4]
            a0, a1, a2, a3 = x[0], x[1], x[2], x[3]
        else:
            a0, a1, a2, a3 = X[i0, p], X[i0 + 1, p], X[i0 + 2, p], X[i0 + 3, p]
        y = Y[p, j0 : j0 + 16]
        b0, b1, b2, b3, b4, b5, b6, b7 = y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7]
        b8, b9, ba, bb, bc, bd, be, bf = y[8], y[9], y[10], y[11], y[12], y[13], y[14], y[15]
        c00, c01, c02, c03 = c00 + a0 * b0, c01 + a0 * b1, c02 + a0 * b2, c03 + a0 * b3
        c04, c05, c06, c07 = c04 + a0 * b4, c05 + a0 * b5, c06 + a0 * b6, c07 + a0 * b7
        c08, c09, c0a, c0b = c08 + a0 * b8, c09 + a0 * b9, c0a + a0 * ba, c0b + a0 * bb
        c0c, c0d, c0e, c0f = c0c + a0 * bc, c0d + a0 * bd, c0e + a0 * be, c0f + a0 * bf
        c10, c11, c12, c13 = c10 + a1 * b0, c11 + a1 * b1, c12 + a1 * b2, c13 + a1 * b3
        c14, c15, c16, c17 = c14 + a1 * b4, c15 + a1 * b5, c16 + a1 * b6, c17 + a1 * b7
        c18, c19, c1a, c1b = c18 + a1 * b8, c19 + a1 * b9, c1a + a1 * ba, c1b + a1 * bb
        c1c, c1d, c1e, c1f = c1c + a1 * bc, c1d + a1 * bd, c1e + a1 * be, c1f + a1 * bf
        c20, c21, c22, c23 = c20 + a2 * b0, c21 + a2 * b1, c22 + a2 * b2, c23 + a2 * b3
        c24, c25, c26, c27 = c24 + a2 * b4, c25 + a2 * b5, c26 + a2 * b6, c27 + a2 * b7
        c28, c29, c2a, c2b = c28 + a2 * b8, c29 + a2 * b9, c2a + a2 * ba, c2b + a2 * bb
        c2c, c2d, c2e, c2f = c2c + a2 * bc, c2d + a2 * bd, c2e + a2 * be, c2f + a2 * bf
        c30, c31, c32, c33 = c30 + a3 * b0, c31 + a3 * b1, c32 + a3 * b2, c33 + a3 * b3
        c34, c35, c36, c37 = c34 + a3 * b4, c35 + a3 * b5, c36 + a3 * b6, c37 + a3 * b7
        c38, c39, c3a, c3b = c38 + a3 * b8, c39 + a3 * b9, c3a + a3 * ba, c3b + a3 * bb
        c3c, c3d, c3e, c3f = c3c + a3 * bc, c3d + a3 * bd, c3e + a3 * be, c3f + a3 * bf
    if pair:  # on over the p of U W, into the same sums
        for p in range(W.shape[0]):
            if xt:
                x = U[p, i0 : i0 + 4]
                a0, a1, a2, a3 = x[0], x[1], x[2], x[3]
            else:
                a0, a1, a2, a3 = U[i0, p], U[i0 + 1, p], U[i0 + 2, p], U[i0 + 3, p]
            y = W[p, j0 : j0 + 16]
            b0, b1, b2, b3, b4, b5, b6, b7 = y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7]
            b8, b9, ba, bb, bc, bd, be, bf = y[8], y[9], y[10], y[11], y[12], y[13], y[14], y[15]
            c00, c01, c02, c03 = c00 + a0 * b0, c01 + a0 * b1, c02 + a0 * b2, c03 + a0 * b3
            c04, c05, c06, c07 = c04 + a0 * b4, c05 + a0 * b5, c06 + a0 * b6, c07 + a0 * b7
            c08, c09, c0a, c0b = c08 + a0 * b8, c09 + a0 * b9, c0a + a0 * ba, c0b + a0 * bb
            c0c, c0d, c0e, c0f = c0c + a0 * bc, c0d + a0 * bd, c0e + a0 * be, c0f + a0 * bf
            c10, c11, c12, c13 = c10 + a1 * b0, c11 + a1 * b1, c12 + a1 * b2, c13 + a1 * b3
            c14, c15, c16, c17 = c14 + a1 * b4, c15 + a1 * b5, c16 + a1 * b6, c17 + a1 * b7
            c18, c19, c1a, c1b = c18 + a1 * b8, c19 + a1 * b9, c1a + a1 * ba, c1b + a1 * bb
            c1c, c1d, c1e, c1f = c1c + a1 * bc, c1d + a1 * bd, c1e + a1 * be, c1f + a1 * bf
            c20, c21, c22, c23 = c20 + a2 * b0, c21 + a2 * b1, c22 + a2 * b2, c23 + a2 * b3
            c24, c25, c26, c27 = c24 + a2 * b4, c25 + a2 * b5, c26 + a2 * b6, c27 + a2 * b7
            c28, c29, c2a, c2b = c28 + a2 * b8, c29 + a2 * b9, c2a + a2 * ba, c2b + a2 * bb
            c2c, c2d, c2e, c2f = c2c + a2 * bc, c2d + a2 * bd, c2e + a2 * be, c2f + a2 * bf
            c30, c31, c32, c33 = c30 + a3 * b0, c31 + a3 * b1, c32 + a3 * b2, c33 + a3 * b3
            c34, c35, c36, c37 = c34 + a3 * b4, c35 + a3 * b5, c36 + a3 * b6, c37 + a3 * b7
            c38, c39, c3a, c3b = c38 + a3 * b8, c39 + a3 * b9, c3a + a3 * ba, c3b + a3 * bb
            c3c, c3d, c3e, c3f = c3c + a3 * bc, c3d + a3 * bd, c3e + a3 * be, c3f + a3 * bf
    row = C[i0 + 0, j0 : j0 + 16]
    row[0], row[1], row[2], row[3] = c00, c01, c02, c03
    row[4], row[5], row[6], row[7] = c04, c05, c06, c07
    row[8], row[9], row[10], row[11] = c08, c09, c0a, c0b
    row[12], row[13], row[14], row[15] = c0c, c0d, c0e, c0f
    row = C[i0 + 1, j0 : j0 + 16]
    row[0], row[1], row[2], row[3] = c10, c11, c12, c13
    row[4], row[5], row[6], row[7] = c14, c15, c16, c17
    row[8], row[9], row[10], row[11] = c18, c19, c1a, c1b
    row[12], row[13], row[14], row[15] = c1c, c1d, c1e, c1f
    row = C[i0 + 2, j0 : j0 + 16]
    row[0], row[1], row[2], row[3] = c20, c21, c22, c23
    row[4], row[5], row[6], row[7] = c24, c25, c26, c27
    row[8], row[9], row[10], row[11] = c28, c29, c2a, c2b
    row[12], row[13], row[14], row[15] = c2c, c2d, c2e, c2f
    row = C[i0 + 3, j0 : j0 + 16]
    row[0], row[1], row[2], row[3] = c30, c31, c32, c33
    row[4], row[5], row[6], row[7] = c34, c35, c36, c37
    row[8], row[9], row[10], row[11] = c38, c39, c3a, c3b
    row[12], row[13], row[14], row[15] = c3c, c3d, c3e, c3f


@jit_inline
def _tile4(X, Y, U, W, C, i0, j0, pair, xt):
    """:func:`_tile8` for the 4x4 block at ``(i0, j0)``."""
    z = C.dtype.type(0)
    zeros = (z, z, z, z)
    c = _sums4(X, Y, i0, j0, xt, zeros + zeros + zeros + zeros)
    if pair:
        c = _sums4(U, W, i0, j0, xt, c)
    for r in range(4):
        row = C[i0 + r, j0 : j0 + 4]
        for j in range(4):
            row[j] = c[4 * r + j]


@jit_inline
def _product_inplace(X, Y, U, W, C, pair, xt):
    """Write ``C = X Y`` (2-D), or ``X Y + U W`` with ``pair``; ``X^T``, ``U^T`` with ``xt``.

    Blocks of 4 rows by 16 (:data:`WIDE`), 8, then 4 columns; the entries left over when a side
    of ``C`` is not a multiple of 4 are plain dot products, several times slower per entry.
    (Copying the operands into zero-padded scratch matrices instead made the kernels large
    enough that LLVM vectorised the tiles far less: a product with its tangent, 4000 x (8x8),
    took three times as long; so did calling the tiles as separate compiled functions.)
    """
    m, n = C.shape[0], C.shape[1]
    m4, n8 = m - m % 4, n - n % 8
    n4 = n - n % 4
    n16 = n - n % 16 if WIDE else 0
    for i0 in range(0, m4, 4):
        for j0 in range(0, n16, 16):
            _tile16(X, Y, U, W, C, i0, j0, pair, xt)
        for j0 in range(n16, n8, 8):
            _tile8(X, Y, U, W, C, i0, j0, pair, xt)
        if n4 > n8:
            _tile4(X, Y, U, W, C, i0, n8, pair, xt)
    zero = C.dtype.type(0)
    for i in range(m):  # the edges: columns from n4 in every row, all columns of rows from m4
        for j in range(n4 if i < m4 else 0, n):
            s = zero
            for p in range(Y.shape[0]):
                s += (X[p, i] if xt else X[i, p]) * Y[p, j]
            if pair:
                for p in range(W.shape[0]):
                    s += (U[p, i] if xt else U[i, p]) * W[p, j]
            C[i, j] = s


@jit_inline
def _transpose_into(X, out):
    """Write ``out = X^T`` (2-D)."""
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            out[j, i] = X[i, j]


@jit_inline
def _check_product(A, B):
    """Raise ``ValueError`` unless ``A`` (b, m, k) and ``B`` (b, k, n) fit (no bounds checks)."""
    if B.shape[0] != A.shape[0] or B.shape[1] != A.shape[2]:
        raise ValueError("tiled matmul: A (b, m, k) and B (b, k, n) do not fit")


@jit_inline
def _check_tangents(A, B, A_dot, B_dot):
    """Raise ``ValueError`` unless the tangents are shaped as their operands."""
    if A_dot.shape != A.shape or B_dot.shape != B.shape:
        raise ValueError("tiled matmul: A_dot and B_dot must be shaped as A and B")


@jit_tiles
def matmul_tiled(A, B):
    """Return ``C = A B`` for real C-contiguous stacks ``A`` (b, m, k), ``B`` (b, k, n)."""
    _check_product(A, B)
    C = np.empty((A.shape[0], A.shape[1], B.shape[2]), dtype=A.dtype)
    for t in range(A.shape[0]):
        _product_inplace(A[t], B[t], A[t], B[t], C[t], False, False)
    return C


@jit_tiles
def matmul_pushforward_tiled(A, B, A_dot, B_dot):
    """Return ``C_dot = A_dot B + A B_dot`` for real C-contiguous stacks shaped as the operands."""
    _check_product(A, B)
    _check_tangents(A, B, A_dot, B_dot)
    C_dot = np.empty((A.shape[0], A.shape[1], B.shape[2]), dtype=A.dtype)
    for t in range(A.shape[0]):
        _product_inplace(A_dot[t], B[t], A[t], B_dot[t], C_dot[t], True, False)
    return C_dot


@jit_tiles
def matmul_with_pushforward_tiled(A, B, A_dot, B_dot):
    """Return ``(C, C_dot) = (A B, A_dot B + A B_dot)``; both views of one allocation."""
    _check_product(A, B)
    _check_tangents(A, B, A_dot, B_dot)
    shape = (A.shape[0], A.shape[1], B.shape[2])
    size = shape[0] * shape[1] * shape[2]
    buf = np.empty(2 * size, dtype=A.dtype)
    C, C_dot = buf[:size].reshape(shape), buf[size:].reshape(shape)
    for t in range(A.shape[0]):
        _product_inplace(A[t], B[t], A[t], B[t], C[t], False, False)
        _product_inplace(A_dot[t], B[t], A[t], B_dot[t], C_dot[t], True, False)
    return C, C_dot


@jit_tiles
def matmul_pullback_tiled(A, B, C_bar):
    """Return ``(A_bar, B_bar) = (C_bar B^T, A^T C_bar)`` for real C-contiguous stacks.

    The tiles read their right operand by rows: each matrix's ``B^T`` is copied into a scratch
    matrix first; ``A^T C_bar`` reads ``A`` transposed as its left operand, which needs no copy.
    Both outputs are views of one allocation (``kernels._alloc.empty_pair_like``).
    """
    _check_product(A, B)
    if C_bar.shape != (A.shape[0], A.shape[1], B.shape[2]):
        raise ValueError(
            "matmul_pullback_tiled: C_bar must be (b, m, n) for A (b, m, k), B (b, k, n)"
        )
    A_bar, B_bar = empty_pair_like(A, B)
    Bt = np.empty((B.shape[2], B.shape[1]), dtype=A.dtype)
    for t in range(A.shape[0]):
        _transpose_into(B[t], Bt)
        _product_inplace(C_bar[t], Bt, C_bar[t], Bt, A_bar[t], False, False)
        _product_inplace(A[t], C_bar[t], A[t], C_bar[t], B_bar[t], False, True)
    return A_bar, B_bar


@jit_tiles
def matmul_scaled_tiled(X, d, Y):
    """Return ``X[t] diag(d[t]) Y[t]`` for real C-contiguous stacks ``X`` (b, m, k), ``d`` (b, k), ``Y`` (b, k, n).

    Each ``X[t] diag(d[t])`` is formed in a scratch matrix that stays in cache, then multiplied
    by the tiles: the same roundings as ``(X * d[:, None, :]) @ Y`` up to the order of the sums,
    without writing and reading back the scaled stack, a pass over memory as large as ``X``
    (the pullback of the singular values, ``U diag(s_bar) V^T``).
    """
    if Y.shape[0] != X.shape[0] or Y.shape[1] != X.shape[2] or d.shape != (X.shape[0], X.shape[2]):
        raise ValueError("matmul_scaled_tiled: X (b, m, k), d (b, k) and Y (b, k, n) do not fit")
    C = np.empty((X.shape[0], X.shape[1], Y.shape[2]), dtype=X.dtype)
    XD = np.empty((X.shape[1], X.shape[2]), dtype=X.dtype)
    for t in range(X.shape[0]):
        for i in range(X.shape[1]):
            for p in range(X.shape[2]):
                XD[i, p] = X[t, i, p] * d[t, p]
        _product_inplace(XD, Y[t], XD, Y[t], C[t], False, False)
    return C


@jit_inline
def _minus_y_m_y(Y, M, adjoint):
    """``-Y[t]^T M[t] Y[t]^T`` with ``adjoint``, else ``-Y[t] M[t] Y[t]``, for (b, n, n) stacks.

    Per matrix: ``W = -Y^T`` (or ``-Y``) into a scratch matrix, ``S = M W`` into another, then
    ``Y^T S`` (the tiles read ``Y`` transposed as their left operand) or ``Y S``. Both scratch
    matrices stay in cache, so the stacks are read once and the result written once; two
    separate products write and read back ``S``, a pass over memory as large as the stack,
    and negating the result takes a third.
    """
    n = Y.shape[1]
    out = np.empty(Y.shape, dtype=Y.dtype)
    W = np.empty((n, n), dtype=Y.dtype)
    S = np.empty((n, n), dtype=Y.dtype)
    for t in range(Y.shape[0]):
        for i in range(n):
            for j in range(n):
                if adjoint:
                    W[j, i] = -Y[t, i, j]
                else:
                    W[i, j] = -Y[t, i, j]
        _product_inplace(M[t], W, M[t], W, S, False, False)
        _product_inplace(Y[t], S, Y[t], S, out[t], False, adjoint)
    return out


@jit_tiles
def inv_pullback_tiled(Y, Y_bar):
    """Return ``-Y[t]^T Y_bar[t] Y[t]^T`` for real C-contiguous stacks ``Y``, ``Y_bar`` (b, n, n).

    The pullback of ``Y = inv(A)`` (Giles 2008), both products of a matrix in one pass over
    the stacks.
    """
    if Y.shape[1] != Y.shape[2] or Y_bar.shape != Y.shape:
        raise ValueError("inv_pullback_tiled: need Y and Y_bar (b, n, n)")
    return _minus_y_m_y(Y, Y_bar, True)


@jit_tiles
def inv_pushforward_tiled(Y, A_dot):
    """Return ``-Y[t] A_dot[t] Y[t]`` for real C-contiguous stacks ``Y``, ``A_dot`` (b, n, n).

    The pushforward of ``Y = inv(A)``, both products of a matrix in one pass over the stacks.
    """
    if Y.shape[1] != Y.shape[2] or A_dot.shape != Y.shape:
        raise ValueError("inv_pushforward_tiled: need Y and A_dot (b, n, n)")
    return _minus_y_m_y(Y, A_dot, False)


def scaled_products(X, d, Y):
    """``X[t] diag(d[t]) Y[t]`` for stacks ``X`` (b, m, k), ``d`` (b, k), ``Y`` (b, k, n).

    :func:`matmul_scaled_tiled` where :func:`fits` takes the stacks (``kind="scaled"``),
    ``(X * d[:, None, :]) @ Y`` otherwise (any dtype, numpy's broadcasting).
    """
    if (
        fits((X.shape[-2], X.shape[-1], Y.shape[-1]), X, Y, kind="scaled")
        and type(d) is np.ndarray
        and d.dtype == X.dtype
        and d.flags.carray
    ):
        return matmul_scaled_tiled(X, d, Y)
    return (X * d[..., None, :]) @ Y


@jit_tiles
def matmul_nt_tiled(X, Y):
    """Return ``X[t] Y[t]^T`` for real C-contiguous stacks ``X`` (b, m, k), ``Y`` (b, n, k)."""
    if Y.shape[0] != X.shape[0] or Y.shape[2] != X.shape[2]:
        raise ValueError("matmul_nt_tiled: X (b, m, k) and Y (b, n, k) do not fit")
    C = np.empty((X.shape[0], X.shape[1], Y.shape[1]), dtype=X.dtype)
    Yt = np.empty((Y.shape[2], Y.shape[1]), dtype=X.dtype)
    for t in range(X.shape[0]):
        _transpose_into(Y[t], Yt)
        _product_inplace(X[t], Yt, X[t], Yt, C[t], False, False)
    return C


@jit_tiles
def matmul_tn_tiled(X, Y):
    """Return ``X[t]^T Y[t]`` for real C-contiguous stacks ``X`` (b, k, m), ``Y`` (b, k, n)."""
    if Y.shape[0] != X.shape[0] or Y.shape[1] != X.shape[1]:
        raise ValueError("matmul_tn_tiled: X (b, k, m) and Y (b, k, n) do not fit")
    C = np.empty((X.shape[0], X.shape[2], Y.shape[2]), dtype=X.dtype)
    for t in range(X.shape[0]):
        _product_inplace(X[t], Y[t], X[t], Y[t], C[t], False, True)
    return C


_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def fits(sides, *stacks, kind="product"):
    """Whether these kernels take a product of ``stacks`` whose ``(m, k, n)`` are ``sides``.

    The stacks: 3-D ndarrays of one dtype with an entry in
    ``kernels.crossovers.MATMUL_TILED_MAX_N`` (``MATMUL_TILED_NARROW_MAX_N`` without
    :data:`WIDE`; float64, float32), C-contiguous, aligned and
    writable (Numba compiles read-only arrays as another type). The sides: multiples of 4,
    the largest above ``kernels.crossovers.MATMUL_STACK_MAX_N`` (where the loop kernels of
    ``kernels.products`` win) and up to that entry. ``kind`` names what is computed, for the
    crossover where numpy's OpenBLAS runs a small-matrix ``gemm`` core
    (``kernels._blas_core.small_gemm_core``, ``kernels.crossovers.MATMUL_TILED_SMALL_GEMM_MAX_N``):
    ``"product"`` (:func:`matmul_tiled`, :func:`matmul_nt_tiled`, :func:`matmul_tn_tiled`),
    ``"pullback"``, ``"pushforward"`` (with or without the product), ``"scaled"``
    (:func:`matmul_scaled_tiled`), ``"inv_pullback"`` or ``"inv_pushforward"``
    (:func:`inv_pullback_tiled`, :func:`inv_pushforward_tiled`). A plain Python function, for the callers' choice of path;
    the kernels themselves check that the shapes of their operands fit.
    """
    first = stacks[0]
    if type(first) is not np.ndarray or first.dtype not in _DTYPES:  # native byte order only
        return False
    if _blas_core.small_gemm_core():
        limits = crossovers.MATMUL_TILED_SMALL_GEMM_MAX_N[kind]
    else:
        limits = crossovers.MATMUL_TILED_MAX_N if WIDE else crossovers.MATMUL_TILED_NARROW_MAX_N
    limit = limits.get(first.dtype.char)
    if limit is None:
        return False
    for x in stacks:
        if type(x) is not np.ndarray or x.ndim != 3 or x.dtype != first.dtype:
            return False
        if not x.flags.carray:
            return False
    largest = max(sides)
    return all(side % 4 == 0 for side in sides) and crossovers.MATMUL_STACK_MAX_N < largest <= limit
