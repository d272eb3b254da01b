"""Leaf helpers for triangular solves and products, shared by the kernel modules.

Every helper acts on matrix ``t`` of C-contiguous stacks and indexes the 3-D arrays directly
(``T[t, i, k]``). Taking a view ``T[t]`` inside a batch loop costs two atomic reference-count
updates per view, which for 4x4 matrices measured more than the arithmetic. A single matrix is
passed as a ``(1, n, n)`` reshape with ``t = 0``.

``op(T)`` is described by two flags, so one loop nest covers scipy's ``trans`` 0/1/2 and the
adjoint solves that pullbacks need::

    trans=False, conj=False:  op(T) = T          (scipy trans=0, "N")
    trans=True,  conj=False:  op(T) = T^T        (scipy trans=1, "T")
    trans=True,  conj=True:   op(T) = T^H        (scipy trans=2, "C")
    trans=False, conj=True:   op(T) = conj(T)    (the adjoint of T^T)

``lower`` names the triangle of ``T`` that is read; the other triangle is never touched. The
helpers are inlined (``jit_inline``), so flags that are literals at the call site fold away.
"""

import numpy as np

from kernels._jit import jit_inline
from kernels._smallmat import _div


@jit_inline
def solve_inplace(T, B, t, lower, trans, conj, unit_diagonal):
    """Overwrite ``B[t]`` (n, m) with ``op(T[t])^-1 B[t]`` by forward or back substitution.

    Row by row: the solved rows ``k`` are subtracted from row ``i`` with the right-hand sides
    innermost, a contiguous loop that vectorises (the same order of subtractions per entry as
    a dot product over ``k``); up to three right-hand sides keep a dot product per entry.
    """
    n = T.shape[1]
    m = B.shape[2]
    forward = lower != trans  # op(T) is lower triangular
    one = B.dtype.type(1)
    if m < 4:  # a few right-hand sides: a dot product per entry, kept in a register
        for step in range(n):
            i = step if forward else n - 1 - step
            lo = 0 if forward else i + 1
            hi = i if forward else n
            r = one
            if not unit_diagonal:
                d = T[t, i, i]
                r = _div(one, np.conj(d) if conj else d)  # inf/NaN at a zero pivot, no raise
            for j in range(m):
                s = B[t, i, j]
                for k in range(lo, hi):
                    tik = T[t, k, i] if trans else T[t, i, k]
                    s -= (np.conj(tik) if conj else tik) * B[t, k, j]
                B[t, i, j] = s * r
        return
    for step in range(n):
        i = step if forward else n - 1 - step
        lo = 0 if forward else i + 1
        hi = i if forward else n
        for k in range(lo, hi):
            tik = T[t, k, i] if trans else T[t, i, k]
            if conj:
                tik = np.conj(tik)
            for j in range(m):
                B[t, i, j] -= tik * B[t, k, j]
        if not unit_diagonal:
            d = T[t, i, i]
            r = _div(one, np.conj(d) if conj else d)  # inf/NaN at a zero pivot, never a raise
            for j in range(m):
                B[t, i, j] *= r


@jit_inline
def triangular_matmul_sub_inplace(T, X, out, t, lower, trans, conj, strict):
    """Overwrite ``out[t]`` with ``out[t] - op(tri(T[t])) X[t]``; ``strict`` drops the diagonal.

    Right-hand sides innermost from four of them on, as in :func:`solve_inplace`.
    """
    n = T.shape[1]
    m = X.shape[2]
    forward = lower != trans  # op(tri(T)) is lower triangular
    for i in range(n):
        lo = 0 if forward else (i + 1 if strict else i)
        hi = (i if strict else i + 1) if forward else n
        if m < 4:
            for j in range(m):
                s = out[t, i, j]
                for k in range(lo, hi):
                    tik = T[t, k, i] if trans else T[t, i, k]
                    s -= (np.conj(tik) if conj else tik) * X[t, k, j]
                out[t, i, j] = s
            continue
        for k in range(lo, hi):
            tik = T[t, k, i] if trans else T[t, i, k]
            if conj:
                tik = np.conj(tik)
            for j in range(m):
                out[t, i, j] -= tik * X[t, k, j]
