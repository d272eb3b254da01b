"""Kernels for the pullback and pushforward of the matrix product ``C = A @ B`` on stacks.

Conventions: C-contiguous ``A`` (b, m, k), ``B`` (b, k, n) and cotangent/tangents of matching
shapes, one dtype among float64, float32, complex128; outputs are new arrays of that dtype.
With the cotangent of a complex ``z`` taken as ``dL/dRe z + i dL/dIm z``::

    A_bar = C_bar B^H        B_bar = A^H C_bar        C_dot = A_dot B + A B_dot

(Giles, "An extended collection of matrix derivative results for forward and reverse mode
algorithmic differentiation", 2008: the result for the matrix product.)

One compiled call loops over the stack. The square sizes 2, 3 and 4 get their own branch with
constant loop bounds, which LLVM unrolls (see ``kernels._jit.jit_inline``). Against numpy's
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
from kernels._blas_core import numpy_openblas_core
from kernels._jit import jit, jit_inline


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
def _products_inplace(A, B, C, C_dot, A_dot, B_dot, tangents):
    """:func:`_product_loop_inplace` with constant bounds for square 2x2 to 4x4 stacks."""
    m, k = A.shape[1], A.shape[2]
    n = B.shape[2]
    if not tangents and m == k and k == n and n == 4:
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


@jit
def matmul_batched(A, B):
    """Return ``C = A B`` for stacks A (b,m,k), B (b,k,n): the forward product of the rules."""
    C = np.empty((A.shape[0], A.shape[1], B.shape[2]), dtype=A.dtype)
    _products_inplace(A, B, C, C, A, B, False)
    return C


@jit
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


@jit
def matmul_pullback_batched(A, B, C_bar):
    """Return ``(A_bar, B_bar) = (C_bar B^H, A^H C_bar)`` for stacks A (b,m,k), B (b,k,n)."""
    m, k = A.shape[1], A.shape[2]
    n = B.shape[2]
    A_bar, B_bar = empty_pair_like(A, B)
    if m == k and k == n and n == 4:
        _pullback_loop_inplace(A, B, C_bar, A_bar, B_bar, 4, 4, 4)
    elif m == k and k == n and n == 3:
        _pullback_loop_inplace(A, B, C_bar, A_bar, B_bar, 3, 3, 3)
    elif m == k and k == n and n == 2:
        _pullback_loop_inplace(A, B, C_bar, A_bar, B_bar, 2, 2, 2)
    else:
        _pullback_loop_inplace(A, B, C_bar, A_bar, B_bar, m, k, n)
    return A_bar, B_bar


@jit
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


SMALL_GEMM_CORES = frozenset({"skylakex", "cooperlake", "sapphirerapids"})
"""OpenBLAS cores whose small-matrix ``gemm`` runs a transposed right operand at reduced speed.

OpenBLAS enables its small-matrix ``gemm`` kernels for these AVX-512 cores (``SMALL_MATRIX_OPT``;
the wheels' build maps Cooper Lake and Sapphire Rapids to ``SkylakeX``). Measured on one
machine, numpy's stacked ``C @ B.mT``, float64, in one process, core forced for the measurement:
``SkylakeX`` 1000 x (16x16) 0.27 ms against 0.19 ms by a C-ordered copy of ``B.mT``, 4000 x
(8x8) 0.33 against 0.23 ms; ``Haswell`` and ``Zen`` 0.28 against 0.35 ms and 0.29 against
0.38 ms (the copy loses: their transposed product is as fast as the plain one).
"""


@functools.cache
def adjoint_copy_pays() -> bool:
    """Whether :func:`adjoint_operand` copies: numpy's OpenBLAS runs one of :data:`SMALL_GEMM_CORES`."""
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
