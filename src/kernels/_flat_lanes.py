"""Flat lane blocks of a fixed lane count, for stacks of 2x2 to 4x4 matrices.

:mod:`kernels._smallmat` keeps a lane block as ``W[i, j, l]`` of shape ``(rows, cols, nl)`` with
``nl`` chosen at run time. Its row stride is then a run-time value, and LLVM cannot prove that
two rows of the block do not overlap: loops that read one row and write another (a row swap,
an elimination step) are not vectorised across lanes. Here a block is flat, entry ``(i, j)``
of lane ``l`` at ``(i * cols + j) * NL + l`` with the module constant ``NL``, and the order is a
compile-time constant (the helpers are inlined into a branch ``if n == 4: ...(4)``): every
access is the base plus a constant plus ``l``, and the lane loops vectorise. The lane loops run
to ``nb`` (a run-time count): a constant trip count makes LLVM unroll them fully before it
vectorises, and the unrolled code stays scalar (checked with numba 0.68 on AVX-512).

Measured on 10000 x (4x4) float64 (bench case ``lu.pullback``, whole call): the factorization
with unpacking into ``P``, ``L``, ``U`` in :mod:`kernels.lu_unpacked` takes about half the time
of the ``_smallmat`` version. Larger orders keep ``_smallmat`` (the loops are not unrolled, and
the fixed stride wins nothing there).
"""

from kernels._jit import jit_inline
from kernels._smallmat import _abs1, _div

NL = 32
"""Lanes per block: 32 at 4x4 (as ``kernels._smallmat._lanes``)."""


def takes_flat4(X, min_b):
    """Whether the stack ``X`` goes to a flat-lane 4x4 kernel.

    Yes for float32 and float64 stacks (b, 4, 4) with ``b >= min_b``; other dtypes keep the
    general kernels and their errors.
    """
    return X.ndim == 3 and X.shape[0] >= min_b and X.shape[1:] == (4, 4) and X.dtype.char in "fd"


@jit_inline
def _load_flat_inplace(A, t0, nb, n, out):
    """``out[(i * n + j) * NL + l] = A[t0 + l, i, j]`` for the first ``nb`` lanes."""
    for l in range(nb):
        for i in range(n):
            for j in range(n):
                out[(i * n + j) * NL + l] = A[t0 + l, i, j]


@jit_inline
def _lu_flat_inplace(a, piv, best, n, nb):
    """Overwrite the flat block ``a`` with packed ``L, U`` of ``a = P L U`` (partial pivoting).

    The arithmetic and the pivots of ``kernels._smallmat._lu_partial_inplace`` (LAPACK
    ``getf2``: the first entry of largest ``|Re| + |Im|``, an exact zero pivot leaves its
    column unscaled), bit for bit; ``piv[k * NL + l]`` receives the 0-based swap of step ``k``.
    The swaps are selects, not branches, so the lanes vectorise. ``best`` (NL,) is scratch of
    the real dtype.
    """
    for k in range(n):
        for l in range(nb):
            best[l] = _abs1(a[(k * n + k) * NL + l])
            piv[k * NL + l] = k
        for i in range(k + 1, n):  # a NaN never wins (as the comparison in i?amax)
            for l in range(nb):
                v = _abs1(a[(i * n + k) * NL + l])
                c = v > best[l]
                best[l] = v if c else best[l]
                piv[k * NL + l] = i if c else piv[k * NL + l]
        for i in range(k + 1, n):  # swap rows k and piv[k]: at most one i matches
            for j in range(n):
                for l in range(nb):
                    c = piv[k * NL + l] == i
                    x = a[(k * n + j) * NL + l]
                    y = a[(i * n + j) * NL + l]
                    a[(k * n + j) * NL + l] = y if c else x
                    a[(i * n + j) * NL + l] = x if c else y
        for i in range(k + 1, n):
            for l in range(nb):
                p = a[(k * n + k) * NL + l]
                x = a[(i * n + k) * NL + l]
                a[(i * n + k) * NL + l] = _div(x, p) if p != 0 else x
            for j in range(k + 1, n):
                for l in range(nb):
                    a[(i * n + j) * NL + l] -= a[(i * n + k) * NL + l] * a[(k * n + j) * NL + l]


@jit_inline
def _order_flat_inplace(piv, n, nb, order):
    """``order[i * NL + l]``: the row of ``A`` that is row ``i`` of ``P^T A`` (the swaps applied)."""
    for k in range(n):
        for l in range(nb):
            order[k * NL + l] = k
    for k in range(n):
        for i in range(k + 1, n):
            for l in range(nb):
                c = piv[k * NL + l] == i
                x = order[k * NL + l]
                y = order[i * NL + l]
                order[k * NL + l] = y if c else x
                order[i * NL + l] = x if c else y
