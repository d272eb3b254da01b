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

    The solved rows are subtracted from the farthest to the nearest (``k`` ascending in forward
    substitution, descending in back substitution), so the row solved last enters last: the
    work on row ``i`` starts while the row before it is still being finished. Back
    substitution with the nearest row first waited for each row in turn (1000 x (16x16), 16
    right-hand sides, float64, one process: 0.70 against 0.66 ms). The same order in both
    loop forms gives the same bits whatever the number of right-hand sides.
    """
    if lower != trans:  # op(T) is lower triangular: the direction as a constant in each copy
        _substitute_inplace(T, B, t, trans, conj, unit_diagonal, True)
    else:
        _substitute_inplace(T, B, t, trans, conj, unit_diagonal, False)


@jit_inline
def _substitute_inplace(T, B, t, trans, conj, unit_diagonal, forward):
    """:func:`solve_inplace` for ``forward`` (substitution from the first row) passed as a constant.

    A run-time direction, in the bounds and the order of every loop, cost the forward solve a
    quarter of its time (1000 x (16x16), 16 right-hand sides, float64: 0.50 against 0.40 ms in
    one process; 10000 x (4x4): 0.31 against 0.21 ms).
    """
    n = T.shape[1]
    m = B.shape[2]
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
                for q in range(hi - lo):
                    k = lo + q if forward else hi - 1 - q  # the farthest solved row first
                    tik = T[t, k, i] if trans else T[t, i, k]
                    s -= (np.conj(tik) if conj else tik) * B[t, k, j]
                B[t, i, j] = s * r
        return
    if forward:
        for i in range(n):
            _subtract_rows_inplace(T, B, t, i, 0, i, trans, conj, forward)
            _scale_row_inplace(T, B, t, i, conj, unit_diagonal)
        return
    # Back substitution, two rows at a time: rows i and i - 1 take the rows solved before them
    # together (each loaded once, two independent chains of updates), then row i - 1 takes row i
    # last: the same operations per entry as one row at a time. 1000 x (16x16), 16 right-hand
    # sides, float64: 0.51 against 0.58 ms in one process; 10000 x (4x4): 0.24 against 0.32.
    i = n - 1
    while i >= 1:
        p = i - 1
        for q in range(n - 1 - i):
            k = n - 1 - q  # the farthest solved row first
            a = T[t, k, i] if trans else T[t, i, k]
            b = T[t, k, p] if trans else T[t, p, k]
            if conj:
                a, b = np.conj(a), np.conj(b)
            for j in range(m):
                x = B[t, k, j]
                B[t, i, j] -= a * x
                B[t, p, j] -= b * x
        _scale_row_inplace(T, B, t, i, conj, unit_diagonal)
        _subtract_rows_inplace(T, B, t, p, i, i + 1, trans, conj, forward)
        _scale_row_inplace(T, B, t, p, conj, unit_diagonal)
        i -= 2
    if i == 0:
        _subtract_rows_inplace(T, B, t, 0, 1, n, trans, conj, forward)
        _scale_row_inplace(T, B, t, 0, conj, unit_diagonal)


@jit_inline
def _subtract_rows_inplace(T, B, t, i, lo, hi, trans, conj, forward):
    """``B[t, i] -= op(T)[i, k] B[t, k]`` for ``k`` in ``[lo, hi)``, the farthest from ``i`` first."""
    for q in range(hi - lo):
        k = lo + q if forward else hi - 1 - q
        tik = T[t, k, i] if trans else T[t, i, k]
        if conj:
            tik = np.conj(tik)
        for j in range(B.shape[2]):
            B[t, i, j] -= tik * B[t, k, j]


@jit_inline
def _scale_row_inplace(T, B, t, i, conj, unit_diagonal):
    """``B[t, i] /= op(T)[i, i]`` as a product with its reciprocal; nothing for a unit diagonal."""
    if not unit_diagonal:
        d = T[t, i, i]
        r = _div(B.dtype.type(1), np.conj(d) if conj else d)  # inf/NaN at a zero pivot, no raise
        for j in range(B.shape[2]):
            B[t, i, j] *= r


@jit_inline
def copy_matrix(src, dst, t):
    """``dst[t] = src[t]``, for a batch loop that copies each matrix just before it works on it.

    The copy is then still in the first-level cache when the solve reads it back; a copy of
    the whole stack first (``B.copy()``) had left the stack's first matrices far behind:
    1000 x (16x16), 16 right-hand sides, float64, forward substitution, 0.40 against 0.46 ms.
    """
    for i in range(src.shape[1]):
        for j in range(src.shape[2]):
            dst[t, i, j] = src[t, i, j]


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
