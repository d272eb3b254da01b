"""The compiled pass behind :func:`kernels.svd.svd_gauge_residual_batched`.

It measures, per matrix, the three components of an SVD cotangent that :mod:`kernels.svd`'s
pullback drops as gauge (``phase``, ``rotation``, ``null``; their definitions are in that
function's docstring). ``J = U^H U_bar`` and ``K = V^H V_bar`` are never formed: the dot products
and complement norms run column by column, ``O(mk + nk)`` per matrix plus ``O(m + n)`` per
degenerate pair. The shape checks and the default ``rtol`` stay with the public entry points in
:mod:`kernels.svd`.
"""

import numpy as np

from kernels._jit import jit, jit_inline
from kernels._spectral import _scale_tol


@jit_inline
def _col_dot(U, i, B, j):
    """Return ``U[:, i]^H B[:, j]``."""
    acc = np.conj(U[0, i]) * B[0, j]
    for r in range(1, U.shape[0]):
        acc += np.conj(U[r, i]) * B[r, j]
    return acc


@jit_inline
def _row_dot(A, i, B, j):
    """Return ``A[i, :] . conj(B[j, :])``."""
    acc = A[i, 0] * np.conj(B[j, 0])
    for r in range(1, A.shape[1]):
        acc += A[i, r] * np.conj(B[j, r])
    return acc


@jit_inline
def _complement_norm(U, B, j):
    """Return ``||(I - U U^H) B[:, j]||`` (``U`` has orthonormal columns)."""
    m, k = U.shape
    c = np.empty(k, dtype=U.dtype)
    for i in range(k):
        c[i] = _col_dot(U, i, B, j)
    acc = 0.0
    for r in range(m):
        x = B[r, j]
        for i in range(k):
            x -= U[r, i] * c[i]
        acc += abs(x) ** 2
    return np.sqrt(acc)


@jit_inline
def _row_complement_norm(Vh, B, j):
    """Return ``||B[j, :] (I - Vh^H Vh)||`` (``Vh`` has orthonormal rows)."""
    k, n = Vh.shape
    c = np.empty(k, dtype=Vh.dtype)
    for i in range(k):
        c[i] = _row_dot(B, j, Vh, i)
    acc = 0.0
    for r in range(n):
        x = B[j, r]
        for i in range(k):
            x -= c[i] * Vh[i, r]
        acc += abs(x) ** 2
    return np.sqrt(acc)


@jit
def _gauge_residual_loops(U, s, Vh, U_bar, Vh_bar, rtol, phase, rotation, null):
    """Per matrix, the three residuals of :func:`kernels.svd.svd_gauge_residual_batched`, in ``O(mk + nk)``."""
    b, m, k = U.shape
    n = Vh.shape[2]
    for p in range(b):
        sp = s[p]
        Up, Ubp, Vhp, Vhbp = U[p], U_bar[p], Vh[p], Vh_bar[p]
        tol = _scale_tol(k, sp, rtol)
        ph = 0.0
        rot = np.nan if np.isnan(tol) else 0.0
        nul = rot
        for i in range(k):
            j_ii = _col_dot(Up, i, Ubp, i)
            k_ii = _row_dot(Vhp, i, Vhbp, i)
            a = abs(j_ii.imag + k_ii.imag) + 0.0 * abs(j_ii + k_ii)  # NaN/inf -> NaN
            if a > ph or np.isnan(a):
                ph = a
            if sp[i] <= tol:
                a = abs(j_ii.imag - k_ii.imag)  # independent phases of u_i and v_i
                if m > k:
                    a = max(a, _complement_norm(Up, Ubp, i))
                if n > k:
                    a = max(a, _row_complement_norm(Vhp, Vhbp, i))
                nul = max(nul, a)
            for j in range(i):
                if abs(sp[j] - sp[i]) <= tol:
                    ja = _col_dot(Up, i, Ubp, j) - np.conj(_col_dot(Up, j, Ubp, i))
                    ka = _row_dot(Vhp, i, Vhbp, j) - np.conj(_row_dot(Vhp, j, Vhbp, i))
                    rot = max(rot, 0.5 * abs(ja + ka))
                    if max(sp[i], sp[j]) <= tol:
                        nul = max(nul, 0.5 * abs(ja - ka))
        phase[p] = ph
        rotation[p] = rot
        null[p] = nul
