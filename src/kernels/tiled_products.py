"""Register-tiled products of stacks of small real matrices, vectorised by LLVM's SLP pass.

``C[t] = A[t] B[t]`` for C-contiguous real stacks ``A`` (b, m, k) and ``B`` (b, k, n), float64
or float32, and the derivatives of the product built from it::

    C_dot = A_dot B + A B_dot        A_bar = C_bar B^T        B_bar = A^T C_bar

(Giles 2008, the result for the matrix product; ``kernels.products`` has the same formulas for
complex stacks and matrices up to 4 on a side.)

Why these exist. For stacks of small matrices numpy's stacked ``matmul`` calls BLAS gemm once
per matrix, and OpenBLAS's small-matrix gemm is far from the machine's peak: with its Haswell
kernels a 16x16 product took 0.26 us, about 30 GFlop/s on a core that does several times that.
A plain loop kernel in Numba does worse (0.65 us): every store into ``C`` might alias ``A`` or
``B``, so LLVM keeps the loops scalar.

How. Each 4x8 block of ``C`` (a *tile*) is accumulated in 32 local variables over the inner
dimension, the way BLAS micro-kernels hold a block of ``C`` in registers: per step ``p`` the
kernel reads four entries of ``A``'s rows and eight consecutive entries of ``B``'s row ``p``,
and updates the 32 sums. The locals cannot alias anything, and the eight sums of one row are
the same operation on consecutive data, which LLVM's SLP vectorizer turns into vector
instructions (``kernels._jit.jit_slp``; Numba leaves that pass off by default). Rows and
columns left over when ``m`` is not a multiple of 4 or ``n`` of 8 are plain dot products.
Every entry of ``C`` is the sum over ``p`` in order, one rounding per product and per
addition (no fused multiply-add: no ``fastmath``), so NaN and inf propagate as in the formula.
An entry of ``C_dot`` is one such sum over the terms of ``A_dot B`` and then on over those of
``A B_dot`` (the product of ``[A_dot A]`` and ``[B; B_dot]``), within rounding of numpy's
``A_dot @ B + A @ B_dot``.

Measured, float64, one core, in one process (AMD EPYC, numpy's OpenBLAS on its Haswell
kernels): 1000 x (16x16) products 0.12 ms against numpy's 0.27, 4000 x (8x8) 0.07 against 0.27,
200 x (32x32) 0.17 against 0.30. The rules use these kernels for real stacks from
``kernels.crossovers.MATMUL_STACK_MAX_N`` (above it the loop kernels of ``kernels.products``
win) up to ``kernels.crossovers.MATMUL_TILED_MAX_N``.
"""

import numpy as np

from kernels import crossovers
from kernels._alloc import empty_pair_like
from kernels._jit import jit_inline, jit_slp

__all__ = [
    "fits",
    "matmul_nt_tiled",
    "matmul_pullback_tiled",
    "matmul_pushforward_tiled",
    "matmul_tiled",
    "matmul_tn_tiled",
    "matmul_with_pushforward_tiled",
]


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

    Blocks of 4 rows by 8 columns, then by 4 columns; the entries left over when a side of
    ``C`` is not a multiple of 4 are plain dot products, several times slower per entry.
    (Copying the operands into zero-padded scratch matrices instead made the kernels large
    enough that LLVM vectorised the tiles far less: a product with its tangent, 4000 x (8x8),
    took three times as long; so did calling the tiles as separate compiled functions.)
    """
    m, n = C.shape[0], C.shape[1]
    m4, n8 = m - m % 4, n - n % 8
    n4 = n - n % 4
    for i0 in range(0, m4, 4):
        for j0 in range(0, n8, 8):
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


@jit_slp
def matmul_tiled(A, B):
    """Return ``C = A B`` for real C-contiguous stacks ``A`` (b, m, k), ``B`` (b, k, n)."""
    C = np.empty((A.shape[0], A.shape[1], B.shape[2]), dtype=A.dtype)
    for t in range(A.shape[0]):
        _product_inplace(A[t], B[t], A[t], B[t], C[t], False, False)
    return C


@jit_slp
def matmul_pushforward_tiled(A, B, A_dot, B_dot):
    """Return ``C_dot = A_dot B + A B_dot`` for real C-contiguous stacks shaped as the operands."""
    C_dot = np.empty((A.shape[0], A.shape[1], B.shape[2]), dtype=A.dtype)
    for t in range(A.shape[0]):
        _product_inplace(A_dot[t], B[t], A[t], B_dot[t], C_dot[t], True, False)
    return C_dot


@jit_slp
def matmul_with_pushforward_tiled(A, B, A_dot, B_dot):
    """Return ``(C, C_dot) = (A B, A_dot B + A B_dot)``; both views of one allocation."""
    shape = (A.shape[0], A.shape[1], B.shape[2])
    size = shape[0] * shape[1] * shape[2]
    buf = np.empty(2 * size, dtype=A.dtype)
    C, C_dot = buf[:size].reshape(shape), buf[size:].reshape(shape)
    for t in range(A.shape[0]):
        _product_inplace(A[t], B[t], A[t], B[t], C[t], False, False)
        _product_inplace(A_dot[t], B[t], A[t], B_dot[t], C_dot[t], True, False)
    return C, C_dot


@jit_slp
def matmul_pullback_tiled(A, B, C_bar):
    """Return ``(A_bar, B_bar) = (C_bar B^T, A^T C_bar)`` for real C-contiguous stacks.

    The tiles read their right operand by rows: each matrix's ``B^T`` is copied into a scratch
    matrix first; ``A^T C_bar`` reads ``A`` transposed as its left operand, which needs no copy.
    """
    A_bar, B_bar = empty_pair_like(A, B)
    Bt = np.empty((B.shape[2], B.shape[1]), dtype=A.dtype)
    for t in range(A.shape[0]):
        _transpose_into(B[t], Bt)
        _product_inplace(C_bar[t], Bt, C_bar[t], Bt, A_bar[t], False, False)
        _product_inplace(A[t], C_bar[t], A[t], C_bar[t], B_bar[t], False, True)
    return A_bar, B_bar


@jit_slp
def matmul_nt_tiled(X, Y):
    """Return ``X[t] Y[t]^T`` for real C-contiguous stacks ``X`` (b, m, k), ``Y`` (b, n, k)."""
    C = np.empty((X.shape[0], X.shape[1], Y.shape[1]), dtype=X.dtype)
    Yt = np.empty((Y.shape[2], Y.shape[1]), dtype=X.dtype)
    for t in range(X.shape[0]):
        _transpose_into(Y[t], Yt)
        _product_inplace(X[t], Yt, X[t], Yt, C[t], False, False)
    return C


@jit_slp
def matmul_tn_tiled(X, Y):
    """Return ``X[t]^T Y[t]`` for real C-contiguous stacks ``X`` (b, k, m), ``Y`` (b, k, n)."""
    C = np.empty((X.shape[0], X.shape[2], Y.shape[2]), dtype=X.dtype)
    for t in range(X.shape[0]):
        _product_inplace(X[t], Y[t], X[t], Y[t], C[t], False, True)
    return C


def fits(sides, *stacks):
    """Whether these kernels take a product of ``stacks`` whose ``(m, k, n)`` are ``sides``.

    The stacks: 3-D ndarrays of one dtype with an entry in
    ``kernels.crossovers.MATMUL_TILED_MAX_N`` (float64, float32), C-contiguous, aligned and
    writable (Numba compiles read-only arrays as another type). The sides: multiples of 4,
    the largest above ``kernels.crossovers.MATMUL_STACK_MAX_N`` (where the loop kernels of
    ``kernels.products`` win) and up to that entry. A plain Python function, for the callers'
    choice of path.
    """
    first = stacks[0]
    if type(first) is not np.ndarray:
        return False
    limit = crossovers.MATMUL_TILED_MAX_N.get(first.dtype.char)
    if limit is None:
        return False
    for x in stacks:
        if type(x) is not np.ndarray or x.ndim != 3 or x.dtype != first.dtype:
            return False
        if not x.flags.carray:
            return False
    largest = max(sides)
    return all(side % 4 == 0 for side in sides) and crossovers.MATMUL_STACK_MAX_N < largest <= limit
