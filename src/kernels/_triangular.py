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

    Back substitution takes the solved rows from the nearest, so each row waits for the one
    before it. Taking them from the farthest (as forward substitution does) was 6% faster
    here, but the flat-lane Cholesky pullback, which must give the same bits, ran 20-40% slower
    in that order (``kernels._cholesky_lanes4``), so the order stays.

    Flags that are constants at the call site fold away. A kernel whose flags are run-time
    values calls :func:`solve_any_inplace` instead.
    """
    forward = lower != trans  # op(T) is lower triangular
    if B.shape[2] < 4:
        _dots_inplace(T, B, t, trans, conj, unit_diagonal, forward)
    else:
        _rows_inplace(T, B, t, trans, conj, unit_diagonal, forward)


@jit_inline
def solve_any_inplace(T, B, t, lower, trans, conj, unit_diagonal):
    """:func:`solve_inplace` for run-time ``lower`` and ``trans``: the row loops once per direction.

    A run-time direction, in the bounds and the order of every loop, cost the forward solve a
    quarter of its time (1000 x (16x16), 16 right-hand sides, float64: 0.50 against 0.40 ms in
    one process; 10000 x (4x4): 0.31 against 0.21 ms). Only the kernels of
    :mod:`kernels.triangular` take these flags at run time; the others pass constants to
    :func:`solve_inplace`, where they fold away.

    Measured compile times of one triangular kernel, float64: about 0.8 s with one copy of the
    loops, 1.1-1.6 s as here, 3.5 s with a copy per value of both flags. Back substitution two
    rows at a time (each solved row loaded once for both, a further 7% faster at
    1000 x (16x16)) took it to about 4 s.
    """
    if B.shape[2] < 4:
        _dots_inplace(T, B, t, trans, conj, unit_diagonal, lower != trans)
    elif lower != trans:
        _rows_inplace(T, B, t, trans, conj, unit_diagonal, True)
    else:
        _rows_inplace(T, B, t, trans, conj, unit_diagonal, False)


@jit_inline
def _dots_inplace(T, B, t, trans, conj, unit_diagonal, forward):
    """:func:`solve_inplace` for up to three right-hand sides: a dot product per entry."""
    n = T.shape[1]
    m = B.shape[2]
    one = B.dtype.type(1)
    for step in range(n):
        i = step if forward else n - 1 - step
        lo = 0 if forward else i + 1
        hi = i if forward else n
        r = one
        if not unit_diagonal:
            d = T[t, i, i]
            r = _div(one, np.conj(d) if conj else d)  # inf/NaN at a zero pivot, no raise
        for j in range(m):
            s = B[t, i, j]  # kept in a register
            for k in range(lo, hi):
                tik = T[t, k, i] if trans else T[t, i, k]
                s -= (np.conj(tik) if conj else tik) * B[t, k, j]
            B[t, i, j] = s * r


@jit_inline
def _rows_inplace(T, B, t, trans, conj, unit_diagonal, forward):
    """:func:`solve_inplace` for four or more right-hand sides: each row updated whole."""
    n = T.shape[1]
    m = B.shape[2]
    one = B.dtype.type(1)
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
