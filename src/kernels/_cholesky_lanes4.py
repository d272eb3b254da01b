"""The Cholesky factorization and its pullback for stacks of real 4x4 matrices, in flat lane blocks.

The layout of :mod:`kernels._flat_lanes`: ``NL`` matrices at a time, entry ``(i, j)`` of lane
``l`` at ``(i * 4 + j) * NL + l``, so that every lane loop reads and writes the base plus a
constant plus ``l`` and vectorises without run-time overlap checks (the blocks of
:mod:`kernels._smallmat` have a run-time lane count, hence a run-time row stride). The lane loop
is the innermost loop of every step.

Same numbers, bit for bit, as the kernels they stand in for: each entry is computed by the same
operations in the same order.

* :func:`cholesky_factor_flat4` as ``kernels.cholesky_factor.cholesky_factor_batched`` (LAPACK's
  left-looking ``potf2``), ``info`` included. For a real ``x``, that kernel's
  ``x.real * x.real + x.imag * x.imag`` is ``x * x + 0.0``, which is ``x * x``: a square is never
  ``-0.0``.
* :func:`cholesky_pullback_flat4` as ``kernels.cholesky``'s loop kernel at order 4:
  ``P = Phi(L^T L_bar)`` by dot products from the diagonal term, ``Q = P L^-1`` by columns from
  the right of each row, ``L^-T Q`` by rows from the last (the right-hand sides innermost, as
  ``kernels._triangular.solve_inplace`` with four of them), then the symmetric part.

Only the lower triangles of ``L`` and ``L_bar`` are read, as in the loops (loading the whole
matrices cost 0.44 against 0.39 ms on 10000 x (4x4) float64). Measured: the ``FLAT4_MIN_B`` of
:mod:`kernels.cholesky_factor` and :mod:`kernels.cholesky`.
"""

import numpy as np

from kernels._flat_lanes import NL
from kernels._jit import jit

_N = 4


@jit
def cholesky_factor_flat4(A, lower):
    """Return ``(L, info)`` for a real stack ``A`` (b, 4, 4), as ``cholesky_factor_batched``."""
    b = A.shape[0]
    dt = A.dtype
    L = np.empty((b, _N, _N), dtype=dt)
    info = np.zeros(b, dtype=np.int32)
    a = np.empty(16 * NL, dtype=dt)
    d = np.empty(NL, dtype=dt)
    fail = np.empty(NL, dtype=np.int32)
    for t0 in range(0, b, NL):
        nb = min(NL, b - t0)
        for l in range(nb):  # the triangle that is read, as the lower one
            for i in range(_N):
                for j in range(i + 1):
                    a[(i * _N + j) * NL + l] = A[t0 + l, i, j] if lower else A[t0 + l, j, i]
        for l in range(nb):
            fail[l] = 0
        for j in range(_N):
            o = (j * _N + j) * NL
            for l in range(nb):
                d[l] = a[o + l]
            for k in range(j):
                x = (j * _N + k) * NL
                for l in range(nb):
                    d[l] -= a[x + l] * a[x + l]
            for l in range(nb):  # the first failed pivot, as a select
                c = d[l] <= 0 and fail[l] == 0
                fail[l] = j + 1 if c else fail[l]
            for l in range(nb):
                r = np.sqrt(d[l])  # NaN for a negative pivot (error_model="numpy")
                a[o + l] = r
                d[l] = 1.0 / r
            for i in range(j + 1, _N):
                y = (i * _N + j) * NL
                for k in range(j):
                    x, z = (i * _N + k) * NL, (j * _N + k) * NL
                    for l in range(nb):
                        a[y + l] -= a[x + l] * a[z + l]
                for l in range(nb):
                    a[y + l] *= d[l]
        for l in range(nb):
            info[t0 + l] = fail[l]
            for i in range(_N):
                for j in range(i + 1):
                    L[t0 + l, i, j] = a[(i * _N + j) * NL + l]
                for j in range(i + 1, _N):
                    L[t0 + l, i, j] = 0
    return L, info


@jit
def cholesky_pullback_flat4(L, L_bar):
    """``A_bar = sym(L^-T Phi(L^T L_bar) L^-1)`` for real stacks ``L``, ``L_bar`` (b, 4, 4)."""
    b = L.shape[0]
    dt = L.dtype
    A_bar = np.empty((b, _N, _N), dtype=dt)
    Lw, G, W = np.empty(16 * NL, dtype=dt), np.empty(16 * NL, dtype=dt), np.empty(16 * NL, dtype=dt)
    r = np.empty(_N * NL, dtype=dt)
    for t0 in range(0, b, NL):
        nb = min(NL, b - t0)
        for l in range(nb):  # lower triangles: the strict upper ones never enter
            for i in range(_N):
                for j in range(i + 1):
                    Lw[(i * _N + j) * NL + l] = L[t0 + l, i, j]
                    G[(i * _N + j) * NL + l] = L_bar[t0 + l, i, j]
        for i in range(_N):
            o = (i * _N + i) * NL
            for l in range(nb):
                r[i * NL + l] = 1.0 / Lw[o + l]
        for i in range(_N):  # P = Phi(L^T L_bar), lower triangle: sum over k >= i from k = i
            for j in range(i + 1):
                o, x, y = (i * _N + j) * NL, (i * _N + i) * NL, (i * _N + j) * NL
                for l in range(nb):
                    W[o + l] = Lw[x + l] * G[y + l]
                for k in range(i + 1, _N):
                    x, y = (k * _N + i) * NL, (k * _N + j) * NL
                    for l in range(nb):
                        W[o + l] += Lw[x + l] * G[y + l]
            o = (i * _N + i) * NL
            for l in range(nb):
                W[o + l] = 0.5 * W[o + l]
        for i in range(_N):  # Q = P L^-1, lower triangular, row i by columns from the right
            for j in range(i, -1, -1):
                o = (i * _N + j) * NL
                for k in range(j + 1, i + 1):
                    x, y = (i * _N + k) * NL, (k * _N + j) * NL
                    for l in range(nb):
                        W[o + l] -= W[x + l] * Lw[y + l]
                for l in range(nb):
                    W[o + l] = W[o + l] * r[j * NL + l]
            for j in range(i + 1, _N):
                o = (i * _N + j) * NL
                for l in range(nb):
                    W[o + l] = 0
        for i in range(_N - 1, -1, -1):  # L^-T Q: rows from the last, right-hand sides inner
            for k in range(i + 1, _N):
                y = (k * _N + i) * NL
                for j in range(_N):
                    o, x = (i * _N + j) * NL, (k * _N + j) * NL
                    for l in range(nb):
                        W[o + l] -= Lw[y + l] * W[x + l]
            for j in range(_N):
                o = (i * _N + j) * NL
                for l in range(nb):
                    W[o + l] *= r[i * NL + l]
        for l in range(nb):  # the symmetric part, both triangles
            for i in range(_N):
                A_bar[t0 + l, i, i] = W[(i * _N + i) * NL + l]
                for j in range(i):
                    s = 0.5 * (W[(i * _N + j) * NL + l] + W[(j * _N + i) * NL + l])
                    A_bar[t0 + l, i, j] = s
                    A_bar[t0 + l, j, i] = s
    return A_bar
