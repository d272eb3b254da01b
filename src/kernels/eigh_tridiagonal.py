"""Batched Hermitian eigendecomposition by tridiagonal reduction and implicit QR.

``eigh_tridiagonal_batched(A)`` returns ``(w, V)`` with ``A[p] = V[p] diag(w[p]) V[p]^H`` for a
stack ``A`` (b, n, n) of float32, float64 or complex128, in one compiled call, as
:func:`kernels.eigh_forward.eigh_batched` does by Jacobi rotations, with the same output
conventions: ``w`` ascending, each eigenvector's first entry of largest magnitude real and
positive, only one triangle read (the imaginary part of the diagonal ignored, as LAPACK does),
NaN in gives NaN out, the input never written.

Method, one matrix at a time (the textbook path LAPACK's ``dsyev``/``zheev`` also take for
small ``n``):

1. Householder reduction to a real tridiagonal ``T = Q^H A Q`` (G. H. Golub, C. F. Van Loan,
   "Matrix Computations", 4th ed., Algorithm 8.3.1), with LAPACK's reflectors (``zlarfg``:
   ``H = I - tau v v^H``, ``v[0] = 1``, ``beta = -sign(Re alpha) ||(alpha, x)||`` real, so a
   complex ``tau`` also turns the last subdiagonal entry real) and the Hermitian rank-2 update
   of ``zhetd2``.
2. ``Z = Q^T`` formed from the reflectors.
3. Implicit symmetric QR steps with the Wilkinson shift on the unreduced blocks of ``T``
   (Golub, Van Loan, Algorithms 8.3.2 and 8.3.3), each real Givens rotation also applied to two
   rows of ``Z``, so that the rows of ``Z`` end as the eigenvectors (``V = Z^T``). An
   off-diagonal entry is set to zero once ``|e_i| <= eps (|d_i| + |d_{i+1}|)`` or
   ``|e_i| <= sqrt(safmin)`` (its square would be subnormal; LAPACK's ``dsteqr`` adds ``safmin``
   to its test for the same reason).

Why it exists beside Jacobi: above about 10 on a side (3 for complex128) a Jacobi sweep costs
``O(n^3)`` and several sweeps are needed, while here the ``O(n^3)`` work is done once (the
reduction and the rotations' row updates, which are contiguous and vectorise along the row),
and the QR steps themselves are ``O(n)`` real scalar work each. The rules choose between the
two, and LAPACK, by ``kernels.crossovers`` (measured). The matrix is scaled by a power of two so
that its largest entry lies in [0.5, 1), as in the Jacobi kernel: exact, and it keeps the
squares in the rotations far from over- and underflow.

Accuracy: Householder reduction and QR iteration are normwise backward stable, backward error
``O(eps ||A||)``, and the eigenvectors are orthonormal to ``O(n eps)`` (Golub, Van Loan,
section 8.3.6; J. Demmel, "Applied Numerical Linear Algebra", SIAM 1997, section 5.3), which
the tests compare with LAPACK's on random, graded, ill-conditioned, rank-deficient, clustered
and repeated spectra.

Input contract: (b, n, n) float32, float64 or complex128, ``n >= 1`` (other layouts are copied
to C order). One compile per dtype; the order is read from the array.
"""

import math

import numpy as np

from kernels._householder import form_qt_inplace, householder, rotation
from kernels._jit import jit
from kernels._scaling import unit_scale
from kernels.eigh_forward import _check  # the same input contract as the Jacobi kernel

__all__ = ["eigh_tridiagonal_batched", "eigvalsh_tridiagonal_batched"]

# QR steps allowed per eigenvalue before a matrix counts as not converged (LAPACK's dsteqr
# allows 30); only non-finite arithmetic gets near it.
_MAX_STEPS_PER_VALUE = 30


@jit
def _load_scaled_inplace(A, p, lower, a):
    """Fill ``a`` (n, n) with the Hermitian ``A[p]`` from one triangle, scaled by a power of two.

    The diagonal keeps its real part (LAPACK ignores the imaginary one). Returns the scale
    factor, or ``0.0`` if the triangle read holds a non-finite entry.
    """
    n = A.shape[1]
    m = 0.0
    for i in range(n):
        for j in range(i):
            x = A[p, i, j] if lower else A[p, j, i]
            if not np.isfinite(x):
                return 0.0
            m = max(m, abs(x))
        x = A[p, i, i].real
        if not np.isfinite(x):
            return 0.0
        m = max(m, abs(x))
    f = unit_scale(m)
    for i in range(n):
        for j in range(i):
            x = (A[p, i, j] if lower else np.conj(A[p, j, i])) * f
            a[i, j] = x
            a[j, i] = np.conj(x)
        a[i, i] = A[p, i, i].real * f
    return f


@jit
def _tridiagonalize_inplace(a, d, e, hv, tau, p, w, safmin):
    """Reduce the Hermitian ``a`` (n, n) to ``T = Q^H a Q``: real diagonal ``d``, off-diagonal ``e``.

    Reflector ``k`` is ``H_k = I - tau[k] v v^H`` with ``v = hv[k, k + 1:]`` (``v[0] = 1``), acting
    on rows and columns ``k + 1 ..`` as ``H_k^H a H_k`` (LAPACK's ``zhetd2``, with ``zlarfg``'s
    reflectors: a complex ``tau`` also makes the last subdiagonal entry real). ``a`` is
    overwritten; ``p`` and ``w`` (n,) are scratch. The column's norm is taken after scaling it by
    :func:`kernels._householder.householder` (a column below ``safmin`` is left alone).
    """
    n = a.shape[0]
    for k in range(n - 1):
        d[k] = a[k, k].real
        for i in range(n):
            hv[k, i] = 0.0
        beta, t, scal = householder(a[k + 1, k], a[k + 2 :, k], safmin)
        tau[k] = t
        e[k] = beta
        if t == 0.0:  # already tridiagonal and real here (or negligible): H = I
            continue
        hv[k, k + 1] = 1.0
        for i in range(k + 2, n):
            hv[k, i] = a[i, k] * scal
        # p = tau A22 v, by columns (an axpy per column: vectorises without reassociation)
        for i in range(k + 1, n):
            p[i] = 0.0
        for j in range(k + 1, n):
            vj = t * hv[k, j]
            for i in range(k + 1, n):
                p[i] += np.conj(a[j, i]) * vj  # a Hermitian: A22[i, j] = conj(a[j, i])
        # w = p - (tau / 2) (p^H v) v
        pv = 0.0 * t
        for i in range(k + 1, n):
            pv += np.conj(p[i]) * hv[k, i]
        h = 0.5 * t * pv
        for i in range(k + 1, n):
            w[i] = p[i] - h * hv[k, i]
        # A22 <- A22 - v w^H - w v^H, both triangles (rows stay contiguous for the next p)
        for i in range(k + 1, n):
            vi = hv[k, i]
            wi = w[i]
            for j in range(k + 1, n):
                a[i, j] -= vi * np.conj(w[j]) + wi * np.conj(hv[k, j])
    d[n - 1] = a[n - 1, n - 1].real
    tau[n - 1] = 0.0  # no reflector k = n - 1 (:func:`form_qt_inplace` reads up to it)


@jit
def _small(e, d, i, eps, floor):
    """Whether ``e[i]`` is negligible beside its diagonal neighbours, or below ``floor``.

    ``floor = sqrt(safmin)``: against ``||T||`` about 1 such an entry is far below rounding, and
    its square, which the rotations would form, is subnormal (LAPACK's ``dsteqr`` adds
    ``safmin`` to its test on ``e_i^2`` for the same reason).
    """
    return abs(e[i]) <= eps * (abs(d[i]) + abs(d[i + 1])) or abs(e[i]) <= floor


@jit
def _qr_iterate_inplace(d, e, z, eps, safmin, vectors):
    """Diagonalise the tridiagonal ``(d, e)`` by implicit Wilkinson-shifted QR steps.

    Each rotation of rows ``k, k + 1`` of ``T`` is applied to rows ``k, k + 1`` of ``z`` too
    (``vectors``). Returns ``False`` if some block did not converge in the allowed steps.
    """
    n = d.shape[0]
    hi = n - 1
    steps = 0
    limit = _MAX_STEPS_PER_VALUE * n
    floor = math.sqrt(safmin)
    while hi > 0:
        if _small(e, d, hi - 1, eps, floor):
            e[hi - 1] = 0.0
            hi -= 1
            continue
        lo = hi - 1
        while lo > 0 and not _small(e, d, lo - 1, eps, floor):
            lo -= 1
        if lo > 0:
            e[lo - 1] = 0.0
        steps += 1
        if steps > limit:
            return False
        # Wilkinson shift: the eigenvalue of the trailing 2x2 block nearer its last entry
        dd = 0.5 * (d[hi - 1] - d[hi])
        b = e[hi - 1]
        r = math.hypot(dd, b)
        mu = d[hi] - b * (b / (dd + (r if dd >= 0.0 else -r)))
        x = d[lo] - mu
        y = e[lo]
        for k in range(lo, hi):
            c, s, r = rotation(x, y, safmin)  # [[c, s], [-s, c]] [x, y]^T = [r, 0]^T
            if k > lo:
                e[k - 1] = r
            a0, b0, c0 = d[k], e[k], d[k + 1]
            cs = c * s
            d[k] = c * c * a0 + 2.0 * cs * b0 + s * s * c0
            d[k + 1] = s * s * a0 - 2.0 * cs * b0 + c * c * c0
            e[k] = cs * (c0 - a0) + (c * c - s * s) * b0
            if k + 1 < hi:
                x = e[k]
                y = s * e[k + 1]  # the bulge at (k + 2, k)
                e[k + 1] = c * e[k + 1]
            if vectors:
                for j in range(n):
                    zk = z[k, j]
                    zl = z[k + 1, j]
                    z[k, j] = c * zk + s * zl
                    z[k + 1, j] = c * zl - s * zk
    return True


@jit
def _store_sorted_inplace(d, z, f, p, w, V, vectors, order):
    """Eigenvalues ascending into ``w[p]``; eigenvector ``j`` into ``V[p, :, j]``, phase-fixed."""
    n = d.shape[0]
    for i in range(n):  # insertion sort
        k = i
        while k > 0 and d[order[k - 1]] > d[i]:
            order[k] = order[k - 1]
            k -= 1
        order[k] = i
    for j in range(n):
        w[p, j] = d[order[j]] / f
    if not vectors:
        return
    for j in range(n):
        row = order[j]
        best = -1.0
        imax = 0
        for i in range(n):
            x = abs(z[row, i])
            if x > best:
                best = x
                imax = i
        ph = np.conj(z[row, imax]) / best if best > 0 else 1.0 + 0.0 * z[row, imax]
        for i in range(n):
            V[p, i, j] = z[row, i] * ph
        if best > 0:
            V[p, imax, j] = best  # exactly real, not |z| plus a rounding imaginary part


@jit
def _eigh_tridiagonal_kernel(A, lower, vectors, eps, safmin, w, V):
    """Eigenvalues into ``w`` and (``vectors``) eigenvectors into ``V``; one matrix at a time."""
    b, n, _ = A.shape
    dt = A.dtype
    a = np.empty((n, n), dtype=dt)
    z = np.empty((n, n), dtype=dt)
    hv = np.empty((n, n), dtype=dt)
    tau = np.empty(n, dtype=dt)
    d = np.empty(n, dtype=w.dtype)  # T is real
    e = np.zeros(n, dtype=w.dtype)
    p = np.empty(n, dtype=dt)
    u = np.empty(n, dtype=dt)
    order = np.empty(n, dtype=np.intp)
    for q in range(b):
        f = _load_scaled_inplace(A, q, lower, a)
        ok = f > 0.0
        if ok:
            _tridiagonalize_inplace(a, d, e, hv, tau, p, u, safmin)
            if vectors:
                form_qt_inplace(hv, tau, z, u, 1)
            ok = _qr_iterate_inplace(d, e, z, eps, safmin, vectors)
        if not ok:  # NaN or infinity in the triangle read, or no convergence
            for j in range(n):
                w[q, j] = np.nan
            if vectors:
                V[q] = np.nan
            continue
        _store_sorted_inplace(d, z, f, q, w, V, vectors, order)


def eigh_tridiagonal_batched(A, *, lower=True):
    """Return ``(w, V)``: ascending eigenvalues (b, n) and eigenvectors (b, n, n) of each ``A[p]``.

    Householder tridiagonalisation and implicit QR (module docstring); ``w`` real of ``A``'s
    precision, ``V`` of ``A``'s dtype, each column with its first largest-magnitude entry real
    and positive. ``lower`` chooses the triangle that is read, as ``UPLO`` of ``np.linalg.eigh``.
    """
    A = _check("eigh_tridiagonal_batched", A)
    b, n, _ = A.shape
    real = np.finfo(A.dtype).dtype
    w = np.empty((b, n), dtype=real)
    V = np.empty((b, n, n), dtype=A.dtype)
    fi = np.finfo(real)
    _eigh_tridiagonal_kernel(A, bool(lower), True, float(fi.eps), float(fi.tiny), w, V)
    return w, V


def eigvalsh_tridiagonal_batched(A, *, lower=True):
    """Return the ascending eigenvalues (b, n) of each Hermitian ``A[p]``; no eigenvectors formed."""
    A = _check("eigvalsh_tridiagonal_batched", A)
    b, n, _ = A.shape
    real = np.finfo(A.dtype).dtype
    w = np.empty((b, n), dtype=real)
    V = np.empty((0, n, n), dtype=A.dtype)
    fi = np.finfo(real)
    _eigh_tridiagonal_kernel(A, bool(lower), False, float(fi.eps), float(fi.tiny), w, V)
    return w
