"""Kernels for the pullback and pushforward of the matrix product ``C = A @ B`` on stacks.

Conventions: C-contiguous ``A`` (b, m, k), ``B`` (b, k, n) and cotangent/tangents of matching
shapes, one dtype among float64, float32, complex128; outputs are new arrays of that dtype.
With the cotangent of a complex ``z`` taken as ``dL/dRe z + i dL/dIm z``::

    A_bar = C_bar B^H        B_bar = A^H C_bar        C_dot = A_dot B + A B_dot

(Giles, "An extended collection of matrix derivative results for forward and reverse mode
algorithmic differentiation", 2008: the result for the matrix product.)

One compiled call loops over the stack. The square sizes 2, 3 and 4 get their own branch with
constant loop bounds, which LLVM unrolls (see ``kernels._jit.jit_inline``); the products compile
with LLVM's SLP vectorizer (``kernels._jit.jit_slp``), which packs the unrolled sums into
vector instructions. Same bits; 10000 x (4x4) float64, in one process on an AMD EPYC: product
with tangent 0.27 -> 0.07 ms, pullback 0.17 -> 0.09 ms; complex128 0.94 -> 0.64 and 0.64 ->
0.57 ms; no size or dtype got slower. Against numpy's
stacked ``matmul`` they win for matrices up to ``kernels.crossovers.MATMUL_STACK_MAX_N`` on a
side and lose beyond (bench case ``matmul.pullback``, ``10000x4``): the rule calls them for such
stacks and numpy's ``matmul`` otherwise, and for a single product. ``matmul_batched`` is the
forward product of such stacks, and ``matmul_with_pushforward_batched`` the product with its
tangent in one pass.
"""

import functools

import numpy as np

from kernels import crossovers
from kernels._alloc import empty_pair_like
from kernels._blas_core import SMALL_GEMM_CORES, numpy_openblas_core
from kernels._jit import jit, jit_inline, jit_slp


@jit_inline
def _pullback_loop_inplace(A, B, C_bar, A_bar, B_bar, m, k, n):
    """Write ``A_bar[t] = C_bar[t] B[t]^H`` and ``B_bar[t] = A[t]^H C_bar[t]`` for every ``t``."""
    zero = A_bar.dtype.type(0)
    for t in range(A.shape[0]):
        for i in range(m):
            for p in range(k):
                s = zero
                for j in range(n):
                    s += C_bar[t, i, j] * np.conj(B[t, p, j])
                A_bar[t, i, p] = s
        for p in range(k):
            for j in range(n):
                s = zero
                for i in range(m):
                    s += np.conj(A[t, i, p]) * C_bar[t, i, j]
                B_bar[t, p, j] = s


@jit_inline
def _pushforward_loop_inplace(A, B, A_dot, B_dot, C_dot, m, k, n):
    """Write ``C_dot[t] = A_dot[t] B[t] + A[t] B_dot[t]`` for every ``t``."""
    zero = C_dot.dtype.type(0)
    for t in range(A.shape[0]):
        for i in range(m):
            for j in range(n):
                s = zero
                for p in range(k):
                    s += A_dot[t, i, p] * B[t, p, j] + A[t, i, p] * B_dot[t, p, j]
                C_dot[t, i, j] = s


@jit_inline
def _product_loop_inplace(A, B, C, C_dot, A_dot, B_dot, tangents, m, k, n):
    """Write ``C[t] = A[t] B[t]`` and, with ``tangents``, ``C_dot[t] = A_dot[t] B[t] + A[t] B_dot[t]``.

    The products sum over ``p`` in order, as numpy's own small-matrix matmul loop does.
    """
    zero = C.dtype.type(0)
    for t in range(A.shape[0]):
        for i in range(m):
            for j in range(n):
                s = zero
                if tangents:  # both sums in one pass over p (a fifth faster at 10000 x 4x4)
                    s_dot = zero
                    for p in range(k):
                        s += A[t, i, p] * B[t, p, j]
                        s_dot += A_dot[t, i, p] * B[t, p, j] + A[t, i, p] * B_dot[t, p, j]
                    C_dot[t, i, j] = s_dot
                else:
                    for p in range(k):
                        s += A[t, i, p] * B[t, p, j]
                C[t, i, j] = s


@jit_inline
def _row_product_loop_inplace(A, B, C, m, k, n):
    """Write ``C[t] = A[t] B[t]``, each row of ``C`` accumulated over ``p``, contiguous in ``j``.

    With constant bounds LLVM vectorizes the ``j`` loop: 10000 x (4x4) took 124 us against 178
    by dot products, 3x3 58 against 75; at 2x2, or with bounds known only at run time (258
    against 74 us at 3x4), the dot products of :func:`_product_loop_inplace` are faster. Each
    entry sums over ``p`` in the same order, so the bits are the same.
    """
    zero = C.dtype.type(0)
    for t in range(A.shape[0]):
        for i in range(m):
            for j in range(n):
                C[t, i, j] = zero
            for p in range(k):
                a = A[t, i, p]
                for j in range(n):
                    C[t, i, j] += a * B[t, p, j]


@jit_inline
def _product_4x4_inplace(A, B, A_dot, B_dot, C, C_dot):
    """:func:`_product_loop_inplace` with tangents for real 4x4 stacks, ``B[t]`` and ``B_dot[t]`` in locals.

    Read once per matrix into local variables, the entries of ``B`` and ``B_dot`` stay in
    registers: in the loops, every store into ``C`` might alias them (LLVM cannot tell the
    arrays apart), so they were loaded again for each entry. The sums are the loops', term by
    term and in order, so the bits are the same (but for the sign of a zero sum of signed
    zeros: the loops start from +0). 10000 x (4x4), in one process: 0.28 against
    0.34 ms (float64 and float32); complex128 was slower (1.14 against 1.00 ms) and keeps the
    loops.
    """
    for t in range(A.shape[0]):
        b00, b01, b02, b03 = B[t, 0, 0], B[t, 0, 1], B[t, 0, 2], B[t, 0, 3]
        b10, b11, b12, b13 = B[t, 1, 0], B[t, 1, 1], B[t, 1, 2], B[t, 1, 3]
        b20, b21, b22, b23 = B[t, 2, 0], B[t, 2, 1], B[t, 2, 2], B[t, 2, 3]
        b30, b31, b32, b33 = B[t, 3, 0], B[t, 3, 1], B[t, 3, 2], B[t, 3, 3]
        d00, d01, d02, d03 = B_dot[t, 0, 0], B_dot[t, 0, 1], B_dot[t, 0, 2], B_dot[t, 0, 3]
        d10, d11, d12, d13 = B_dot[t, 1, 0], B_dot[t, 1, 1], B_dot[t, 1, 2], B_dot[t, 1, 3]
        d20, d21, d22, d23 = B_dot[t, 2, 0], B_dot[t, 2, 1], B_dot[t, 2, 2], B_dot[t, 2, 3]
        d30, d31, d32, d33 = B_dot[t, 3, 0], B_dot[t, 3, 1], B_dot[t, 3, 2], B_dot[t, 3, 3]
        for i in range(4):
            a0, a1, a2, a3 = A[t, i, 0], A[t, i, 1], A[t, i, 2], A[t, i, 3]
            e0, e1, e2, e3 = A_dot[t, i, 0], A_dot[t, i, 1], A_dot[t, i, 2], A_dot[t, i, 3]
            C[t, i, 0] = a0 * b00 + a1 * b10 + a2 * b20 + a3 * b30
            C[t, i, 1] = a0 * b01 + a1 * b11 + a2 * b21 + a3 * b31
            C[t, i, 2] = a0 * b02 + a1 * b12 + a2 * b22 + a3 * b32
            C[t, i, 3] = a0 * b03 + a1 * b13 + a2 * b23 + a3 * b33
            C_dot[t, i, 0] = (
                (e0 * b00 + a0 * d00)
                + (e1 * b10 + a1 * d10)
                + (e2 * b20 + a2 * d20)
                + (e3 * b30 + a3 * d30)
            )
            C_dot[t, i, 1] = (
                (e0 * b01 + a0 * d01)
                + (e1 * b11 + a1 * d11)
                + (e2 * b21 + a2 * d21)
                + (e3 * b31 + a3 * d31)
            )
            C_dot[t, i, 2] = (
                (e0 * b02 + a0 * d02)
                + (e1 * b12 + a1 * d12)
                + (e2 * b22 + a2 * d22)
                + (e3 * b32 + a3 * d32)
            )
            C_dot[t, i, 3] = (
                (e0 * b03 + a0 * d03)
                + (e1 * b13 + a1 * d13)
                + (e2 * b23 + a2 * d23)
                + (e3 * b33 + a3 * d33)
            )


@jit_inline
def _pullback_4x4_inplace(A, B, C_bar, A_bar, B_bar):
    """:func:`_pullback_loop_inplace` for real 4x4 stacks, ``B[t]`` and ``C_bar[t]`` in locals.

    As :func:`_product_4x4_inplace`: the same sums in the same order (``A_bar`` the dots of
    rows of ``C_bar`` with rows of ``B``, ``B_bar`` of columns of ``A`` with columns of
    ``C_bar``), the same bits. 10000 x (4x4), in one process: 0.18 against 0.34 ms (float64
    and float32); complex128 gained nothing (0.70 against 0.69 ms) and keeps the loops.
    """
    for t in range(A.shape[0]):
        b00, b01, b02, b03 = (B[t, 0, 0]), (B[t, 0, 1]), (B[t, 0, 2]), (B[t, 0, 3])
        b10, b11, b12, b13 = (B[t, 1, 0]), (B[t, 1, 1]), (B[t, 1, 2]), (B[t, 1, 3])
        b20, b21, b22, b23 = (B[t, 2, 0]), (B[t, 2, 1]), (B[t, 2, 2]), (B[t, 2, 3])
        b30, b31, b32, b33 = (B[t, 3, 0]), (B[t, 3, 1]), (B[t, 3, 2]), (B[t, 3, 3])
        g00, g01, g02, g03 = C_bar[t, 0, 0], C_bar[t, 0, 1], C_bar[t, 0, 2], C_bar[t, 0, 3]
        g10, g11, g12, g13 = C_bar[t, 1, 0], C_bar[t, 1, 1], C_bar[t, 1, 2], C_bar[t, 1, 3]
        g20, g21, g22, g23 = C_bar[t, 2, 0], C_bar[t, 2, 1], C_bar[t, 2, 2], C_bar[t, 2, 3]
        g30, g31, g32, g33 = C_bar[t, 3, 0], C_bar[t, 3, 1], C_bar[t, 3, 2], C_bar[t, 3, 3]
        A_bar[t, 0, 0] = g00 * b00 + g01 * b01 + g02 * b02 + g03 * b03
        A_bar[t, 0, 1] = g00 * b10 + g01 * b11 + g02 * b12 + g03 * b13
        A_bar[t, 0, 2] = g00 * b20 + g01 * b21 + g02 * b22 + g03 * b23
        A_bar[t, 0, 3] = g00 * b30 + g01 * b31 + g02 * b32 + g03 * b33
        A_bar[t, 1, 0] = g10 * b00 + g11 * b01 + g12 * b02 + g13 * b03
        A_bar[t, 1, 1] = g10 * b10 + g11 * b11 + g12 * b12 + g13 * b13
        A_bar[t, 1, 2] = g10 * b20 + g11 * b21 + g12 * b22 + g13 * b23
        A_bar[t, 1, 3] = g10 * b30 + g11 * b31 + g12 * b32 + g13 * b33
        A_bar[t, 2, 0] = g20 * b00 + g21 * b01 + g22 * b02 + g23 * b03
        A_bar[t, 2, 1] = g20 * b10 + g21 * b11 + g22 * b12 + g23 * b13
        A_bar[t, 2, 2] = g20 * b20 + g21 * b21 + g22 * b22 + g23 * b23
        A_bar[t, 2, 3] = g20 * b30 + g21 * b31 + g22 * b32 + g23 * b33
        A_bar[t, 3, 0] = g30 * b00 + g31 * b01 + g32 * b02 + g33 * b03
        A_bar[t, 3, 1] = g30 * b10 + g31 * b11 + g32 * b12 + g33 * b13
        A_bar[t, 3, 2] = g30 * b20 + g31 * b21 + g32 * b22 + g33 * b23
        A_bar[t, 3, 3] = g30 * b30 + g31 * b31 + g32 * b32 + g33 * b33
        for p in range(4):
            a0, a1, a2, a3 = (A[t, 0, p]), (A[t, 1, p]), (A[t, 2, p]), (A[t, 3, p])
            B_bar[t, p, 0] = a0 * g00 + a1 * g10 + a2 * g20 + a3 * g30
            B_bar[t, p, 1] = a0 * g01 + a1 * g11 + a2 * g21 + a3 * g31
            B_bar[t, p, 2] = a0 * g02 + a1 * g12 + a2 * g22 + a3 * g32
            B_bar[t, p, 3] = a0 * g03 + a1 * g13 + a2 * g23 + a3 * g33


@jit_inline
def _products_inplace(A, B, C, C_dot, A_dot, B_dot, tangents):
    """:func:`_product_loop_inplace` with constant bounds for square 2x2 to 4x4 stacks."""
    m, k = A.shape[1], A.shape[2]
    n = B.shape[2]
    if tangents and m == k and k == n and n == 4 and not np.iscomplexobj(A):
        _product_4x4_inplace(A, B, A_dot, B_dot, C, C_dot)
    elif not tangents and m == k and k == n and n == 4:
        _row_product_loop_inplace(A, B, C, 4, 4, 4)
    elif not tangents and m == k and k == n and n == 3:
        _row_product_loop_inplace(A, B, C, 3, 3, 3)
    elif m == k and k == n and n == 4:
        _product_loop_inplace(A, B, C, C_dot, A_dot, B_dot, tangents, 4, 4, 4)
    elif m == k and k == n and n == 3:
        _product_loop_inplace(A, B, C, C_dot, A_dot, B_dot, tangents, 3, 3, 3)
    elif m == k and k == n and n == 2:
        _product_loop_inplace(A, B, C, C_dot, A_dot, B_dot, tangents, 2, 2, 2)
    else:
        _product_loop_inplace(A, B, C, C_dot, A_dot, B_dot, tangents, m, k, n)


@jit_slp
def matmul_batched(A, B):
    """Return ``C = A B`` for stacks A (b,m,k), B (b,k,n): the forward product of the rules."""
    C = np.empty((A.shape[0], A.shape[1], B.shape[2]), dtype=A.dtype)
    _products_inplace(A, B, C, C, A, B, False)
    return C


@jit_slp
def matmul_with_pushforward_batched(A, B, A_dot, B_dot):
    """Return ``(C, C_dot) = (A B, A_dot B + A B_dot)`` for stacks A (b,m,k), B (b,k,n).

    One pass over the operands instead of a product and then :func:`matmul_pushforward_batched`;
    both outputs are views of one allocation (``kernels._alloc``).
    """
    shape = (A.shape[0], A.shape[1], B.shape[2])
    size = shape[0] * shape[1] * shape[2]
    buf = np.empty(2 * size, dtype=A.dtype)
    C, C_dot = buf[:size].reshape(shape), buf[size:].reshape(shape)
    _products_inplace(A, B, C, C_dot, A_dot, B_dot, True)
    return C, C_dot


@jit_slp
def matmul_pullback_batched(A, B, C_bar):
    """Return ``(A_bar, B_bar) = (C_bar B^H, A^H C_bar)`` for stacks A (b,m,k), B (b,k,n)."""
    m, k = A.shape[1], A.shape[2]
    n = B.shape[2]
    A_bar, B_bar = empty_pair_like(A, B)
    if m == k and k == n and n == 4 and not np.iscomplexobj(A):
        _pullback_4x4_inplace(A, B, C_bar, A_bar, B_bar)
    elif m == k and k == n and n == 4:
        _pullback_loop_inplace(A, B, C_bar, A_bar, B_bar, 4, 4, 4)
    elif m == k and k == n and n == 3:
        _pullback_loop_inplace(A, B, C_bar, A_bar, B_bar, 3, 3, 3)
    elif m == k and k == n and n == 2:
        _pullback_loop_inplace(A, B, C_bar, A_bar, B_bar, 2, 2, 2)
    else:
        _pullback_loop_inplace(A, B, C_bar, A_bar, B_bar, m, k, n)
    return A_bar, B_bar


@jit_slp
def matmul_pushforward_batched(A, B, A_dot, B_dot):
    """Return ``C_dot = A_dot B + A B_dot`` for stacks A (b,m,k), B (b,k,n)."""
    m, k = A.shape[1], A.shape[2]
    n = B.shape[2]
    C_dot = np.empty((A.shape[0], m, n), dtype=A.dtype)
    if m == k and k == n and n == 4:
        _pushforward_loop_inplace(A, B, A_dot, B_dot, C_dot, 4, 4, 4)
    elif m == k and k == n and n == 3:
        _pushforward_loop_inplace(A, B, A_dot, B_dot, C_dot, 3, 3, 3)
    elif m == k and k == n and n == 2:
        _pushforward_loop_inplace(A, B, A_dot, B_dot, C_dot, 2, 2, 2)
    else:
        _pushforward_loop_inplace(A, B, A_dot, B_dot, C_dot, m, k, n)
    return C_dot


@jit
def adjoint_batched(X):
    """Return ``X[t]^H`` for every ``t`` of a stack ``X`` (b, m, n), as a new C-ordered (b, n, m).

    What the pullback of a product of stacks multiplies by in place of the view ``X.mT`` where
    :func:`adjoint_operand` finds that the copy pays.
    """
    b, m, n = X.shape
    out = np.empty((b, n, m), dtype=X.dtype)
    for t in range(b):
        for j in range(n):
            for i in range(m):
                out[t, j, i] = np.conj(X[t, i, j])
    return out


@functools.cache
def adjoint_copy_pays() -> bool:
    """Whether :func:`adjoint_operand` copies: numpy's OpenBLAS runs one of ``SMALL_GEMM_CORES``.

    (``kernels._blas_core.SMALL_GEMM_CORES``.) Measured on one machine, numpy's stacked
    ``C @ B.mT``, float64, in one process, core forced for the measurement: ``SkylakeX`` 1000 x
    (16x16) 0.27 ms against 0.19 ms by a C-ordered copy of ``B.mT``, 4000 x (8x8) 0.33 against
    0.23 ms; ``Haswell`` and ``Zen`` 0.28 against 0.35 ms and 0.29 against 0.38 ms (the copy
    loses: their transposed product is as fast as the plain one).
    """
    return numpy_openblas_core() in SMALL_GEMM_CORES


def adjoint_operand(X):
    """``X^H`` (over the last two axes) to multiply by with numpy's matmul: a copy or a view.

    A C-ordered copy (:func:`adjoint_batched`) for a real C-ordered stack (``ndim >= 3``) of
    matrices at most ``kernels.crossovers.MATMUL_ADJOINT_COPY_MAX_N`` on a side, when numpy's
    OpenBLAS runs a core whose small-matrix ``gemm`` is slow with a transposed operand on the
    right (:func:`adjoint_copy_pays`). Otherwise the view ``X.mT`` (real) or ``X.conj().mT``
    (complex, where the copy gained nothing). Either way the product's value is the same up to
    rounding.
    """
    if (
        X.ndim >= 3
        and X.size > 0
        and X.flags.c_contiguous
        and max(X.shape[-2:]) <= crossovers.MATMUL_ADJOINT_COPY_MAX_N
        and X.dtype in (np.float32, np.float64)
        and adjoint_copy_pays()
    ):
        m, n = X.shape[-2:]
        return adjoint_batched(X.reshape(-1, m, n)).reshape(*X.shape[:-2], n, m)
    return X.mT if X.dtype.kind != "c" else X.conj().mT
