"""The QR pullback of a stack of real 4x4 matrices in flat lane blocks (:mod:`kernels._flat_lanes`).

``A_bar = (Q_bar + Q copyltu(M)) R^-T`` with ``M = R R_bar^T - Q_bar^T Q`` (:mod:`kernels.qr`),
for ``NL`` matrices at a time, entry ``(i, j)`` of lane ``l`` at ``(i * 4 + j) * NL + l``: every
lane loop reads and writes the base plus a constant plus ``l`` (the layout with which
:mod:`kernels._flat_lanes` made the LU kernels faster than :mod:`kernels._smallmat`'s blocks,
whose lane count and order are run-time values). The lane loop is the innermost loop of every
step: with the sums over ``r`` written inside it instead, this kernel was slower than the small
blocks (1.26 against 0.95 ms on 10000 x (4x4) float64). Measured: ``kernels.qr``'s
``FLAT4_PULLBACK_MIN_B``.

Only the upper triangles of ``R`` and ``R_bar`` are read, as in the lane kernel (loading the
whole matrices cost 0.81 against 0.72 ms on 10000 x (4x4) float64).

Same numbers, bit for bit, as ``kernels.qr._qr_pullback_lanes``: each entry is computed by the
same operations in the same order (sums from zero, in the order of ``r``; the triangular solve
by columns from the last, multiplying by the reciprocal of the diagonal entry).
"""

import numpy as np

from kernels._flat_lanes import NL, _load_flat_inplace
from kernels._jit import jit
from kernels._smallmat import _div

_N = 4


@jit
def qr_pullback_flat4(Q, R, Q_bar, R_bar):
    """Return ``A_bar`` (b, 4, 4) for real stacks ``Q``, ``R``, ``Q_bar``, ``R_bar`` (b, 4, 4)."""
    b = Q.shape[0]
    dt = Q.dtype
    A_bar = np.empty((b, _N, _N), dtype=dt)
    Qw, Rw = np.empty(16 * NL, dtype=dt), np.empty(16 * NL, dtype=dt)
    Qb, Rb = np.empty(16 * NL, dtype=dt), np.empty(16 * NL, dtype=dt)
    K, B = np.empty(16 * NL, dtype=dt), np.empty(16 * NL, dtype=dt)
    rcp = np.empty(NL, dtype=dt)
    for t0 in range(0, b, NL):
        nb = min(NL, b - t0)
        _load_flat_inplace(Q, t0, nb, _N, Qw)
        _load_flat_inplace(Q_bar, t0, nb, _N, Qb)
        for l in range(nb):  # upper triangles: the strict lower ones never enter
            for i in range(_N):
                for j in range(i, _N):
                    Rw[(i * _N + j) * NL + l] = R[t0 + l, i, j]
                    Rb[(i * _N + j) * NL + l] = R_bar[t0 + l, i, j]
        for i in range(_N):  # lower triangle of M = R R_bar^T - Q_bar^T Q
            for j in range(i + 1):
                o = (i * _N + j) * NL
                for l in range(nb):
                    K[o + l] = 0
                for r in range(i, _N):
                    x, y = (i * _N + r) * NL, (j * _N + r) * NL
                    for l in range(nb):
                        K[o + l] += Rw[x + l] * Rb[y + l]
                for r in range(_N):
                    x, y = (r * _N + i) * NL, (r * _N + j) * NL
                    for l in range(nb):
                        K[o + l] -= Qb[x + l] * Qw[y + l]
        for i in range(_N):  # copyltu: symmetric from the strict lower triangle
            for j in range(i + 1, _N):
                o, x = (i * _N + j) * NL, (j * _N + i) * NL
                for l in range(nb):
                    K[o + l] = K[x + l]
        for i in range(_N):  # B = Q_bar + Q K
            for j in range(_N):
                o = (i * _N + j) * NL
                for l in range(nb):
                    B[o + l] = Qb[o + l]
                for r in range(_N):
                    x, y = (i * _N + r) * NL, (r * _N + j) * NL
                    for l in range(nb):
                        B[o + l] += Qw[x + l] * K[y + l]
        for j in range(_N - 1, -1, -1):  # B R^-T, by columns from the last
            d = (j * _N + j) * NL
            for l in range(nb):
                rcp[l] = _div(1, Rw[d + l])
            for i in range(_N):
                o = (i * _N + j) * NL
                for r in range(j + 1, _N):
                    x, y = (i * _N + r) * NL, (j * _N + r) * NL
                    for l in range(nb):
                        B[o + l] -= B[x + l] * Rw[y + l]
                for l in range(nb):
                    B[o + l] *= rcp[l]
        for l in range(nb):
            for i in range(_N):
                for j in range(_N):
                    A_bar[t0 + l, i, j] = B[(i * _N + j) * NL + l]
    return A_bar
