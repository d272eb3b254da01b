"""Batched SVD of stacks of small matrices: Golub-Kahan bidiagonalisation and implicit QR.

``svd_bidiagonal_batched(A)`` returns ``(U, s, Vh)`` with ``A[p] = U[p] diag(s[p]) Vh[p]`` for a
stack ``A`` (b, m, n) of float32, float64 or complex128, thin factors (``k = min(m, n)``), in
one compiled call, with the conventions of :func:`kernels.svd_forward.svd_batched` (one-sided
Jacobi): ``s`` real, descending and non-negative, each ``u_j``'s first entry of largest
magnitude real and positive and ``v_j`` given the same phase, NaN or infinity in a matrix gives
NaN in its outputs only, the input never written. A wide matrix (``m < n``) is reduced as its
conjugate transpose, read in place.

Method, one matrix at a time (the path of LAPACK's ``dgesvd`` for small ``n``):

1. Householder bidiagonalisation ``B = U_1^H A V_1``, real even for complex ``A`` (G. H. Golub,
   W. Kahan, "Calculating the singular values and pseudo-inverse of a matrix", SIAM J. Numer.
   Anal. B 2 (1965) 205-224; G. H. Golub, C. F. Van Loan, "Matrix Computations", 4th ed.,
   Algorithm 5.4.2), reflectors as LAPACK's ``zlarfg`` (a real ``beta``) applied as ``zgebd2``
   does.
2. ``U_1^T`` and ``V_1^T`` formed from the reflectors.
3. Implicit Golub-Kahan SVD steps on the unreduced blocks of ``B`` with the Wilkinson shift of
   the trailing 2x2 block of ``B^T B`` (Golub, Van Loan, Algorithms 8.6.1 and 8.6.2), each
   Givens rotation applied to two rows of ``U^T`` or ``V^T``. A superdiagonal entry is set to
   zero once ``|e_i| <= eps (|d_i| + |d_{i+1}|)`` or ``|e_i| <= sqrt(safmin)``, a diagonal one
   once ``|d_i| <= eps ||B||``; a zero on the diagonal splits its row off by a chase of
   rotations (Golub, Van Loan, section 8.6.2), so the steps never divide by it.

Why beside Jacobi: as for :mod:`kernels.eigh_tridiagonal`, the ``O(n^3)`` work is done once
(reduction, forming the factors, the rotations' row updates, all contiguous along a row) where
one-sided Jacobi repeats ``O(n^3)`` sweeps; the crossover is measured in
``kernels.crossovers``. The matrix is scaled by a power of two to a largest entry in [0.5, 1)
first (exact), so no square in a rotation over- or underflows harmfully.

Accuracy: bidiagonalisation and the QR steps are normwise backward stable, ``O(eps ||A||)``,
with orthonormal ``U`` and ``V`` to ``O(n eps)`` (Golub, Van Loan, section 8.6.3); the tests
compare both with LAPACK's on random, graded, ill-conditioned and rank-deficient inputs.
Singular values below ``eps ||A||`` carry absolute, not relative, accuracy (as ``gesvd``'s).

Input contract: (b, m, n) float32, float64 or complex128, ``m, n >= 1`` (other layouts are
copied to C order).
"""

import math

import numpy as np

from kernels._householder import form_qt_inplace, householder, rotation
from kernels._jit import jit
from kernels._scaling import unit_scale
from kernels._spectral import shape_error

__all__ = ["svd_bidiagonal_batched", "svdvals_bidiagonal_batched"]

_MAX_STEPS_PER_VALUE = 30  # as LAPACK's dbdsqr (MAXITR = 6 sweeps of n, counted per value here)


@jit
def _load_scaled_inplace(A, p, transposed, a):
    """Copy ``A[p]`` (or its conjugate transpose) into ``a`` scaled by a power of two.

    Returns the factor, or ``0.0`` if ``A[p]`` holds a non-finite entry.
    """
    rows, cols = a.shape
    m = 0.0
    for i in range(rows):
        for j in range(cols):
            x = A[p, j, i] if transposed else A[p, i, j]
            if not np.isfinite(x):
                return 0.0
            m = max(m, abs(x))
    f = unit_scale(m)
    for i in range(rows):
        for j in range(cols):
            a[i, j] = (np.conj(A[p, j, i]) if transposed else A[p, i, j]) * f
    return f


@jit
def _bidiagonalize_inplace(a, d, e, hu, tu, hv, tv, w, safmin):
    """Reduce ``a`` (m, n), ``m >= n``, to real upper bidiagonal ``(d, e)`` (n), ``B = U_1^H a V_1``.

    Left reflector ``k``: ``H_k = I - tu[k] u u^H``, ``u = hu[k, k:]`` (length m), applied as
    ``H_k^H a``; right reflector ``k``: ``G_k = I - tv[k] v v^H``, ``v = hv[k, k + 1:]`` (length
    n), applied as ``a G_k`` (both zero elsewhere), as LAPACK's ``zgebd2``. ``a`` is overwritten;
    ``w`` (m,) is scratch. Each norm is taken after a power-of-two scaling
    (:func:`kernels._householder.householder`; a vector below ``safmin`` is left alone).
    """
    m, n = a.shape
    for k in range(n):
        # left: zero a[k + 1:, k] and make a[k, k] real
        beta, t, scal = householder(a[k, k], a[k + 1 :, k], safmin)
        for i in range(m):
            hu[k, i] = 0.0
        hu[k, k] = 1.0
        for i in range(k + 1, m):
            hu[k, i] = a[i, k] * scal
        tu[k] = t
        d[k] = beta
        if t != 0.0:  # a[k:, k + 1:] -= conj(t) u (u^H a[k:, k + 1:]), by rows (axpys along j)
            for j in range(k + 1, n):
                w[j] = 0.0
            for i in range(k, m):
                ui = np.conj(hu[k, i])
                for j in range(k + 1, n):
                    w[j] += ui * a[i, j]
            for i in range(k, m):
                f = np.conj(t) * hu[k, i]
                for j in range(k + 1, n):
                    a[i, j] -= f * w[j]
        for i in range(n):
            hv[k, i] = 0.0
        tv[k] = 0.0
        if k >= n - 1:
            continue
        # right: zero a[k, k + 2:] and make a[k, k + 1] real (zlarfg of the conjugated row)
        beta, t, scal = householder(np.conj(a[k, k + 1]), a[k, k + 2 :], safmin)
        hv[k, k + 1] = 1.0
        for j in range(k + 2, n):
            hv[k, j] = np.conj(a[k, j]) * scal
        tv[k] = t
        e[k] = beta
        if t != 0.0:  # a[k + 1:, k + 1:] -= t (a v) v^H, row by row
            for i in range(k + 1, m):
                y = 0.0 * t
                for j in range(k + 1, n):
                    y += a[i, j] * hv[k, j]
                y *= t
                for j in range(k + 1, n):
                    a[i, j] -= y * np.conj(hv[k, j])


@jit
def _rotate_rows_inplace(z, i, j, c, s):
    """``z[i], z[j] = c z[i] + s z[j], c z[j] - s z[i]`` (rows of length n, contiguous)."""
    for col in range(z.shape[1]):
        zi = z[i, col]
        zj = z[j, col]
        z[i, col] = c * zi + s * zj
        z[j, col] = c * zj - s * zi


@jit
def _qr_iterate_inplace(d, e, ut, vt, eps, safmin, vectors):
    """Diagonalise the upper bidiagonal ``(d, e)``; rotations also applied to rows of ``ut``, ``vt``.

    ``B = conj(ut) a vt^T`` holds throughout (``ut``, ``vt``: ``U^T``, ``V^T`` of ``a = U B V^H``).
    A superdiagonal entry is negligible beside its diagonal neighbours or below
    ``sqrt(safmin)`` (far below rounding against ``||B||`` about 1, and its square subnormal).
    Returns ``False`` if a block did not converge.
    """
    n = d.shape[0]
    bnorm = 0.0
    for i in range(n):
        bnorm = max(bnorm, abs(d[i]) + (abs(e[i]) if i < n - 1 else 0.0))
    tiny = eps * bnorm
    floor = math.sqrt(safmin)
    hi = n - 1
    steps = 0
    limit = _MAX_STEPS_PER_VALUE * n
    while hi > 0:
        if abs(e[hi - 1]) <= eps * (abs(d[hi - 1]) + abs(d[hi])) or abs(e[hi - 1]) <= floor:
            e[hi - 1] = 0.0
            hi -= 1
            continue
        lo = hi - 1
        while lo > 0 and not (
            abs(e[lo - 1]) <= eps * (abs(d[lo - 1]) + abs(d[lo])) or abs(e[lo - 1]) <= floor
        ):
            lo -= 1
        if lo > 0:
            e[lo - 1] = 0.0
        steps += 1
        if steps > limit:
            return False
        # a negligible diagonal entry: chase its row's (or, at the bottom, its column's)
        # superdiagonal entry out with rotations, which splits the block
        split = -1
        for i in range(lo, hi + 1):
            if abs(d[i]) <= tiny:
                d[i] = 0.0
                split = i
                break
        if split >= 0 and split < hi:
            i = split
            f = e[i]
            e[i] = 0.0
            for j in range(i + 1, hi + 1):  # rows i and j: zero the bulge f at (i, j)
                c, s, r = rotation(d[j], f, safmin)
                d[j] = r
                if j < hi:
                    f = -s * e[j]
                    e[j] = c * e[j]
                if vectors:
                    _rotate_rows_inplace(ut, j, i, c, s)
            continue
        if split == hi:
            f = e[hi - 1]
            e[hi - 1] = 0.0
            for j in range(hi - 1, lo - 1, -1):  # columns j and hi: zero the bulge f at (j, hi)
                c, s, r = rotation(d[j], f, safmin)
                d[j] = r
                if j > lo:
                    f = -s * e[j - 1]
                    e[j - 1] = c * e[j - 1]
                if vectors:
                    _rotate_rows_inplace(vt, j, hi, c, s)
            continue
        # Wilkinson shift: the eigenvalue of the trailing 2x2 of B^T B nearer its last entry
        dm, em, dl = d[hi - 1], e[hi - 1], d[hi]
        t11 = dm * dm + (e[hi - 2] * e[hi - 2] if hi - 1 > lo else 0.0)
        t12 = dm * em
        t22 = dl * dl + em * em
        h = 0.5 * (t11 - t22)
        rr = math.sqrt(h * h + t12 * t12)
        mu = t22 - t12 * (t12 / (h + (rr if h >= 0.0 else -rr))) if rr > 0.0 else t22
        y = d[lo] * d[lo] - mu
        z = d[lo] * e[lo]
        for k in range(lo, hi):
            # columns k, k + 1: [y, z] -> [r, 0]
            c, s, r = rotation(y, z, safmin)
            if k > lo:
                e[k - 1] = r
            dk, ek, dk1 = d[k], e[k], d[k + 1]
            d[k] = c * dk + s * ek
            e[k] = c * ek - s * dk
            z = s * dk1  # the bulge at (k + 1, k)
            d[k + 1] = c * dk1
            if vectors:
                _rotate_rows_inplace(vt, k, k + 1, c, s)
            # rows k, k + 1: [d_k, bulge] -> [r, 0]
            c, s, r = rotation(d[k], z, safmin)
            d[k] = r
            ek, dk1 = e[k], d[k + 1]
            e[k] = c * ek + s * dk1
            d[k + 1] = c * dk1 - s * ek
            if k + 1 < hi:
                y = e[k]
                z = s * e[k + 1]  # the bulge at (k, k + 2)
                e[k + 1] = c * e[k + 1]
            if vectors:
                _rotate_rows_inplace(ut, k, k + 1, c, s)
    return True


@jit
def _store_sorted_inplace(d, ut, vt, f, p, U, s, Vh, vectors, transposed, order):
    """``s[p]`` descending; ``U[p][:, j]``, ``Vh[p][j]`` from the rows of ``ut``, ``vt``, gauge-fixed.

    ``ut = U^T`` and ``vt = V^T`` of ``a = U B V^H``, so ``u_j = ut[j]`` and ``Vh[j] = conj(vt[j])``.
    ``transposed``: ``a = A[p]^H``, so the roles swap. The final ``u_j``'s first largest-magnitude
    entry is made real and positive, ``v_j`` gets the same phase, and the sign of a negative
    ``d_j`` goes to ``v_j``.
    """
    n = d.shape[0]
    for i in range(n):  # insertion sort by |d|, descending
        k = i
        while k > 0 and abs(d[order[k - 1]]) < abs(d[i]):
            order[k] = order[k - 1]
            k -= 1
        order[k] = i
    for j in range(n):
        s[p, j] = abs(d[order[j]]) / f
    if not vectors:
        return
    mu, mv = U.shape[1], Vh.shape[2]
    for j in range(n):
        row = order[j]
        best = -1.0
        imax = 0
        for i in range(mu):
            x = abs(vt[row, i] if transposed else ut[row, i])
            if x > best:
                best = x
                imax = i
        top = vt[row, imax] if transposed else ut[row, imax]
        ph = np.conj(top) / best if best > 0 else 1.0 + 0.0 * top
        sign = -1.0 if d[row] < 0 else 1.0  # s_j = |d_j|: a negative d_j's sign goes to v_j
        for i in range(mu):
            U[p, i, j] = (vt[row, i] if transposed else ut[row, i]) * ph
        if best > 0:
            U[p, imax, j] = best  # exactly real, not |u| plus a rounding imaginary part
        for i in range(mv):
            Vh[p, j, i] = np.conj((ut[row, i] if transposed else vt[row, i]) * ph) * sign


@jit
def _svd_bidiagonal_kernel(A, vectors, eps, safmin, U, s, Vh):
    """Singular values into ``s`` and (``vectors``) vectors into ``U``, ``Vh``; one matrix at a time.

    A wide ``A[p]`` is reduced as its conjugate transpose (read in place, no copy).
    """
    b, m0, n0 = A.shape
    transposed = m0 < n0
    m, n = (n0, m0) if transposed else (m0, n0)  # m >= n
    dt = A.dtype
    a = np.empty((m, n), dtype=dt)
    ut = np.empty((m, m), dtype=dt)
    vt = np.empty((n, n), dtype=dt)
    hu = np.empty((n, m), dtype=dt)
    hv = np.empty((n, n), dtype=dt)
    tu = np.empty(n, dtype=dt)
    tv = np.empty(n, dtype=dt)
    d = np.empty(n, dtype=s.dtype)  # B is real
    e = np.zeros(n, dtype=s.dtype)
    w = np.empty(m, dtype=dt)
    order = np.empty(n, dtype=np.intp)
    for q in range(b):
        f = _load_scaled_inplace(A, q, transposed, a)
        ok = f > 0.0
        if ok:
            _bidiagonalize_inplace(a, d, e, hu, tu, hv, tv, w, safmin)
            if vectors:
                form_qt_inplace(hu, tu, ut, w, 0)
                form_qt_inplace(hv, tv, vt, w, 1)
            ok = _qr_iterate_inplace(d, e, ut, vt, eps, safmin, vectors)
        if not ok:
            for j in range(n):
                s[q, j] = np.nan
            if vectors:
                U[q] = np.nan
                Vh[q] = np.nan
            continue
        _store_sorted_inplace(d, ut, vt, f, q, U, s, Vh, vectors, transposed, order)


def _check(name, A):
    """Return ``A`` as a C-contiguous stack (b, m, n) of a kernel dtype, or raise naming ``name``."""
    if A.ndim != 3 or A.shape[1] == 0 or A.shape[2] == 0:
        raise shape_error(f"{name}: A (b, m, n) with m, n >= 1", A=A)
    if A.dtype not in (np.float32, np.float64, np.complex128):
        raise ValueError(f"{name}: A must be float32, float64 or complex128, got {A.dtype}")
    return np.ascontiguousarray(A)


def svd_bidiagonal_batched(A):
    """Return ``(U, s, Vh)`` of each ``A[p]`` (m, n): ``U`` (b, m, k), ``s`` (b, k), ``Vh`` (b, k, n).

    ``k = min(m, n)``; as ``np.linalg.svd(A, full_matrices=False)`` up to the sign of each pair
    ``(u_j, v_j)``, which is fixed here: ``u_j``'s first entry of largest magnitude is positive
    (module docstring). ``s`` descending.
    """
    A = _check("svd_bidiagonal_batched", A)
    b, m, n = A.shape
    k = min(m, n)
    U = np.empty((b, m, k), dtype=A.dtype)
    Vh = np.empty((b, k, n), dtype=A.dtype)
    s = np.empty((b, k), dtype=np.finfo(A.dtype).dtype)
    fi = np.finfo(A.dtype)
    _svd_bidiagonal_kernel(A, True, float(fi.eps), float(fi.tiny), U, s, Vh)
    return U, s, Vh


def svdvals_bidiagonal_batched(A):
    """Return the singular values (b, min(m, n)), descending, of each ``A[p]``; no vectors formed."""
    A = _check("svdvals_bidiagonal_batched", A)
    b, m, n = A.shape
    s = np.empty((b, min(m, n)), dtype=np.finfo(A.dtype).dtype)
    empty = np.empty((0, m, min(m, n)), dtype=A.dtype)
    empty_h = np.empty((0, min(m, n), n), dtype=A.dtype)
    fi = np.finfo(A.dtype)
    _svd_bidiagonal_kernel(A, False, float(fi.eps), float(fi.tiny), empty, s, empty_h)
    return s
