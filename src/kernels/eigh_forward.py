"""Batched Hermitian eigendecomposition of stacks of small matrices: cyclic Jacobi, lane-blocked.

``eigh_batched(A)`` returns ``(w, V)`` with ``A[p] = V[p] diag(w[p]) V[p]^H`` for a stack
``A`` (b, n, n) of float32, float64 or complex128 matrices, as ``np.linalg.eigh(A)`` does, but
in one compiled call instead of one LAPACK call per matrix. Only the lower triangle is read
(``lower=False``: the upper one), and the imaginary part of the diagonal is ignored, as LAPACK
does.

Method: the cyclic-by-rows Jacobi method (C. G. J. Jacobi 1846; G. H. Golub, C. F. Van Loan,
"Matrix Computations", 4th ed., section 8.5, Algorithm 8.5.3, with Rutishauser's stable
formulas for the rotation). For a complex pair ``a_pq = |a_pq| z`` the rotation is the real
one of ``|a_pq|`` after the phase scaling ``diag(1, conj(z))`` of column ``q``. Matrices go in
*lane blocks* (:mod:`kernels._smallmat`): every rotation is computed for a block of up to 32
matrices at once with the matrix index innermost, so LLVM vectorises across matrices. A block
repeats sweeps until, in every matrix, every off-diagonal entry is at most ``eps * n *
max|a_ij|`` (tested before each sweep), or 30 sweeps (NaN never converges, and NaN in gives
NaN out). Why Jacobi and not tridiagonal QR: a Jacobi sweep is the same branch-free arithmetic
for every matrix of a lane block, while implicit QR deflates at a different step in each
matrix, which breaks the vectorisation across matrices. That holds for small matrices only:
from about 10 on a side tridiagonal QR one matrix at a time is faster
(:mod:`kernels.eigh_tridiagonal`, from about 3 on a side for complex128;
``kernels.crossovers.EIGH_JACOBI_STACK_MAX_N``
has the measurements). Jacobi's backward error is ``O(eps ||A||)`` and its eigenvectors are
orthonormal to ``O(n eps)`` (J. Demmel, K. Veselic, "Jacobi's method is more accurate than QR",
SIAM J. Matrix Anal. Appl. 13 (1992) 1204-1245), which the tests compare with LAPACK's.

Output conventions: ``w`` ascending (numpy's order). Each eigenvector is normalised so that
its entry of largest magnitude (the first such, in row order) is real and positive: a
deterministic choice of the sign (real) or phase (complex) that LAPACK leaves arbitrary, as
scikit-learn's ``svd_flip`` does for singular vectors. Within an exactly repeated eigenvalue
the basis is whatever the rotations produced (any orthonormal basis of the eigenspace is as
valid). The eigenvalues agree with LAPACK's to rounding; the eigenvectors agree up to that
gauge, to which the pullbacks of ``kernels.eigh`` are invariant (their gauge residuals are
computed from ``V_bar``, not from ``V``'s gauge).

Input contract: (b, n, n) of float32, float64 or complex128, ``n >= 1`` (other layouts are copied
to C order); the input is never written. One compile per dtype (the order is read from the array).
"""

import numpy as np
from numba import types
from numba.extending import overload

from kernels._jit import jit, jit_inline
from kernels._scaling import unit_scale
from kernels._spectral import shape_error

__all__ = ["eigh_batched", "eigvalsh_batched"]

# The rules call these kernels for stacks up to kernels.crossovers' EIGH_JACOBI_STACK_MAX_N
# (kernels.eigh_tridiagonal above it, up to EIGH_FORWARD_STACK_MAX_N).

_MAX_SWEEPS = 30


@jit
def _load_hermitian_inplace(A, t0, nb, lower, a, scale):
    """``a[i * n + j, l]``: the Hermitian ``A[t0 + l]`` from one triangle, real diagonal, scaled.

    Each matrix is multiplied by a power of two, ``scale[l]``, that brings its largest entry
    into [0.5, 1): exact, and it keeps the squares of :func:`_abs` and of the rotations far
    from over- and underflow. The eigenvalues are divided by it on the way out.
    """
    n = A.shape[1]
    for l in range(nb):
        m = 0.0
        for i in range(n):
            for j in range(i):
                x = abs(A[t0 + l, i, j] if lower else A[t0 + l, j, i])
                m = max(m, x)
            m = max(m, abs(A[t0 + l, i, i].real))  # the diagonal's imaginary part is ignored
        f = unit_scale(m)  # a power of two, finite for a subnormal m
        scale[l] = f
        for i in range(n):
            for j in range(i + 1):
                x = A[t0 + l, i, j] if lower else A[t0 + l, j, i].conjugate()
                a[i * n + j, l] = x.real * f if i == j else x * f  # lower triangle only


def _abs(x):
    """Return ``|x|``; for complex ``x`` as ``sqrt(re^2 + im^2)``, which vectorises (``hypot`` does not).

    The squares cannot over- or underflow harmfully: the lane blocks are scaled to a largest
    entry in [0.5, 1) (:func:`_load_hermitian_inplace`).
    """
    return abs(x)


def _split(apq):
    """Return ``(g, z)`` with ``a_pq = g conj(z)``: ``(a_pq, 1)`` for reals, ``(|a_pq|, phase)``."""
    return apq, 1.0


def _phase_mul(y, z):
    """Return ``y z`` for complex ``y``; ``y`` for reals (whose phase is folded into the sign of ``g``)."""
    return y * z


@overload(_abs, inline="always")
def _abs_overload(x):
    if isinstance(x, types.Complex):
        return lambda x: np.sqrt(x.real * x.real + x.imag * x.imag)
    return lambda x: abs(x)


@overload(_split, inline="always")
def _split_overload(apq):
    if isinstance(apq, types.Complex):

        def split_complex(apq):
            g = _abs(apq)
            return g, (apq / g).conjugate() if g > 0 else 1.0 + 0.0j

        return split_complex
    return lambda apq: (apq, 1.0)


@overload(_phase_mul, inline="always")
def _phase_mul_overload(y, z):
    if isinstance(y, types.Complex):
        return lambda y, z: y * z
    return lambda y, z: y


@jit
def _rotate_pair_inplace(a, x_row, y_row, x_conj, y_conj, c, s, z):
    """Apply one rotation to the stored pair ``(A[r, p], A[r, q])`` of every lane.

    ``x_row``/``y_row`` are the rows of ``a`` that hold them; ``*_conj`` says the stored entry is
    the conjugate (it sits in the lower triangle as ``A[p, r]``). Branches on the flags sit
    outside the lane loop (one loop per case), so every lane loop is straight-line.
    """
    nl = a.shape[1]
    for l in range(nl):
        x = a[x_row, l].conjugate() if x_conj else a[x_row, l]
        y = _phase_mul(a[y_row, l].conjugate() if y_conj else a[y_row, l], z[l])
        xn = c[l] * x - s[l] * y
        yn = s[l] * x + c[l] * y
        a[x_row, l] = xn.conjugate() if x_conj else xn
        a[y_row, l] = yn.conjugate() if y_conj else yn


@jit
def _sweeps_inplace(n, a, v, eps, c, s, z):
    """Diagonalise the Hermitian lane block ``a`` (n * n, nl) by Jacobi rotations, into ``v``.

    Entry ``(i, j)``, ``i >= j``, of lane ``l`` is ``a[i * n + j, l]``; only the lower triangle
    is stored and updated (the Hermitian upper one is its conjugate). Two-dimensional indexing
    vectorises the lane loops, three-dimensional ``a[i, j, l]`` did not (measured 4x slower
    per update). All ``nl`` lanes are processed (idle lanes hold zero matrices). ``v`` is set to
    the identity first; on return ``a`` is diagonal to rounding and ``a_in = v diag(a) v^H``
    lane by lane. ``c``, ``s``, ``z`` (nl,) are scratch. Returns the number of sweeps run.

    A rotation updates columns ``p`` and ``q`` outside the pivot block, then writes the pivot
    block with Rutishauser's formulas ``a_pp - t g``, ``a_qq + t g`` and an exact zero.
    Convergence is tested after each sweep: every ``|a_ij|``, ``i > j``, at most ``thresh``.
    Within a sweep a pair that is at most ``thresh`` in every lane is skipped (a threshold
    strategy, as in H. Rutishauser, "The Jacobi method for real symmetric matrices", Handbook
    for Automatic Computation II, Springer 1971): the last sweeps rotate only what the test
    would reject, so the result meets the same test.
    """
    nl = a.shape[1]
    for i in range(n):
        for j in range(n):
            for l in range(nl):
                v[i * n + j, l] = 1.0 if i == j else 0.0
    thresh = np.empty(nl)
    tiny = np.empty(nl)
    app = np.empty(nl)
    aqq = np.empty(nl)
    for l in range(nl):
        m = 0.0
        for i in range(n):
            for j in range(i + 1):
                x = abs(a[i * n + j, l])
                if x > m or np.isnan(x):
                    m = x
        thresh[l] = eps * n * m
        tiny[l] = thresh[l] * eps  # off-diagonal entries below this are left alone
    for sweep in range(_MAX_SWEEPS):
        busy = 0
        for i in range(1, n):
            for j in range(i):
                for l in range(nl):
                    busy += not abs(a[i * n + j, l]) <= thresh[l]
        if busy == 0:
            return sweep
        for p in range(n - 1):
            for q in range(p + 1, n):
                pp, qq, qp = p * n + p, q * n + q, q * n + p
                need = 0  # a pair already below the threshold in every lane is not rotated
                for l in range(nl):
                    need += not abs(a[qp, l]) <= thresh[l]
                if need == 0:
                    continue
                for l in range(nl):
                    g, zl = _split(a[qp, l].conjugate())  # A_pq = g conj(z), g signed if real
                    ag = abs(g)
                    # t = tan of the rotation angle, the smaller root of t^2 + 2 theta t - 1 = 0
                    # with theta = h / (2 g): t = 2 g sgn(h) / (|h| + sqrt(h^2 + 4 g^2)); one
                    # division and no 1/g. Negligible g (<= eps * thresh) is not rotated.
                    h = a[qq, l].real - a[pp, l].real
                    den = abs(h) + np.sqrt(h * h + 4.0 * ag * ag)
                    rotate = ag > tiny[l]
                    t = 2.0 * g / den if rotate else 0.0 * g
                    t = -t if h < 0 else t
                    cl = 1.0 / np.sqrt(t * t + 1.0)
                    c[l] = cl
                    s[l] = t * cl
                    # the phase only with a rotation: where |A_pq|^2 is subnormal, g is not
                    # accurate and the phase not of modulus 1, and the lane's rows and columns
                    # get it even without a rotation when another lane of the block rotates
                    z[l] = zl if rotate else 1.0 + 0.0 * zl
                    app[l] = a[pp, l].real - t * g
                    aqq[l] = a[qq, l].real + t * g
                for r in range(p):  # A[r, p] = conj(a[p, r]), A[r, q] = conj(a[q, r])
                    _rotate_pair_inplace(a, p * n + r, q * n + r, True, True, c, s, z)
                for r in range(p + 1, q):  # A[r, p] stored, A[r, q] = conj(a[q, r])
                    _rotate_pair_inplace(a, r * n + p, q * n + r, False, True, c, s, z)
                for r in range(q + 1, n):  # both stored
                    _rotate_pair_inplace(a, r * n + p, r * n + q, False, False, c, s, z)
                for r in range(n):  # v <- v J, J = diag(1, z) [[c, s], [-s, c]]
                    rp, rq = r * n + p, r * n + q
                    for l in range(nl):
                        x = v[rp, l]
                        y = _phase_mul(v[rq, l], z[l])
                        v[rp, l] = c[l] * x - s[l] * y
                        v[rq, l] = s[l] * x + c[l] * y
                for l in range(nl):
                    a[pp, l] = app[l]
                    a[qq, l] = aqq[l]
                    a[qp, l] = 0.0
    return _MAX_SWEEPS


# The sweeps at a constant order, a copy inlined where it is called with literal sizes: LLVM then
# unrolls the row loops (kernels._jit, jit_inline), ~20% less time on 10000 x (4x4) float64.
# Real dtypes only: Numba's inliner warns (NumbaIRAssumptionWarning) on the complex rotation.
_sweeps_unrolled = jit_inline(getattr(_sweeps_inplace, "py_func", _sweeps_inplace))


def _sweeps(n, a, v, eps, c, s, z):
    """``_sweeps_inplace``, through its unrolled copy for real 4x4 lane blocks."""
    return _sweeps_inplace(n, a, v, eps, c, s, z)


@overload(_sweeps)
def _sweeps_overload(n, a, v, eps, c, s, z):
    if isinstance(a.dtype, types.Complex):
        return lambda n, a, v, eps, c, s, z: _sweeps_inplace(n, a, v, eps, c, s, z)

    def real(n, a, v, eps, c, s, z):
        if n == 4:
            return _sweeps_unrolled(4, a, v, eps, c, s, z)
        return _sweeps_inplace(n, a, v, eps, c, s, z)

    return real


@jit
def _store_sorted_inplace(n, a, v, scale, t0, nb, w, V, vectors):
    """Write the eigenvalues ascending into ``w[t0 + l]`` and the normalised eigenvectors into ``V``."""
    order = np.empty(n, dtype=np.intp)
    for l in range(nb):
        for i in range(n):  # insertion sort of the diagonal; NaN stays where it is
            order[i] = i
            k = i
            while k > 0 and a[order[k - 1] * (n + 1), l].real > a[i * (n + 1), l].real:
                order[k] = order[k - 1]
                k -= 1
            order[k] = i
        for j in range(n):
            w[t0 + l, j] = a[order[j] * (n + 1), l].real / scale[l]
        if not vectors:
            continue
        for j in range(n):
            col = order[j]
            best = -1.0
            imax = 0
            for i in range(n):
                x = abs(v[i * n + col, l])
                if x > best:
                    best = x
                    imax = i
            ph = v[imax * n + col, l].conjugate() / best if best > 0 else 1.0
            for i in range(n):
                V[t0 + l, i, j] = v[i * n + col, l] * ph
            if best > 0:
                V[t0 + l, imax, j] = best  # exactly real, not |v| plus a rounding imaginary part


@jit
def _eigh_kernel(A, lower, vectors, eps, w, V):
    """Eigenvalues into ``w`` and (``vectors``) eigenvectors into ``V``; returns the sweeps."""
    b, n, _ = A.shape
    # no more lanes than matrices: a stack of one (a single matrix) sweeps one lane, not 31
    # idle ones besides (4x faster at 8x8)
    nl = max(1, min(b, 32, 4096 // (n * n)))
    a = np.zeros((n * n, nl), dtype=A.dtype)
    v = np.empty((n * n, nl), dtype=A.dtype)
    scale = np.ones(nl)
    c = np.empty(nl, dtype=w.dtype)  # the real dtype of A
    s = np.empty(nl, dtype=w.dtype)
    z = np.empty(nl, dtype=A.dtype)
    sweeps = 0
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        if nb < nl:  # the last block: idle lanes hold zero matrices (no rotations)
            a[:] = 0
        _load_hermitian_inplace(A, t0, nb, lower, a, scale)
        swept = _sweeps(n, a, v, eps, c, s, z)
        sweeps = max(sweeps, swept)
        _store_sorted_inplace(n, a, v, scale, t0, nb, w, V, vectors)
    return sweeps


def _check(name, A):
    """Return ``A`` as a C-contiguous stack of a kernel dtype, or raise naming ``name``."""
    if A.ndim != 3 or A.shape[1] != A.shape[2] or A.shape[1] == 0:
        raise shape_error(f"{name}: A (b, n, n) with n >= 1", A=A)
    if A.dtype not in (np.float32, np.float64, np.complex128):
        raise ValueError(f"{name}: A must be float32, float64 or complex128, got {A.dtype}")
    return np.ascontiguousarray(A)


def eigh_batched(A, *, lower=True):
    """Return ``(w, V)``: ascending eigenvalues (b, n) and eigenvectors (b, n, n) of each ``A[p]``.

    Cyclic Jacobi on lane blocks (module docstring); ``w`` real of ``A``'s precision, ``V`` of
    ``A``'s dtype with each column's largest-magnitude entry real and positive. ``lower``
    chooses the triangle that is read, as ``UPLO`` of ``np.linalg.eigh``.
    """
    A = _check("eigh_batched", A)
    b, n, _ = A.shape
    real = np.float32 if A.dtype == np.float32 else np.float64
    w = np.empty((b, n), dtype=real)
    V = np.empty((b, n, n), dtype=A.dtype)
    _eigh_kernel(A, bool(lower), True, float(np.finfo(real).eps), w, V)
    return w, V


def eigvalsh_batched(A, *, lower=True):
    """Return the ascending eigenvalues (b, n) of each Hermitian ``A[p]``; see :func:`eigh_batched`."""
    A = _check("eigvalsh_batched", A)
    b, n, _ = A.shape
    real = np.float32 if A.dtype == np.float32 else np.float64
    w = np.empty((b, n), dtype=real)
    V = np.empty((0, n, n), dtype=A.dtype)
    _eigh_kernel(A, bool(lower), False, float(np.finfo(real).eps), w, V)
    return w
