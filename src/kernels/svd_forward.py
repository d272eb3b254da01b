"""Batched thin SVD of stacks of small matrices: one-sided (Hestenes) Jacobi, lane-blocked.

``svd_batched(A)`` returns ``(U, s, Vh)`` with ``A[p] = U[p] diag(s[p]) Vh[p]`` for a stack
``A`` (b, m, n) of float32, float64 or complex128 matrices: ``U`` (b, m, k), ``s`` (b, k)
descending, ``Vh`` (b, k, n), ``k = min(m, n)``, as ``np.linalg.svd(A, full_matrices=False)``,
in one compiled call instead of one LAPACK call per matrix.

Method: one-sided Jacobi (M. R. Hestenes, "Inversion of matrices by biorthogonalization and
related results", J. SIAM 6 (1958) 51-90; J. Demmel, K. Veselic, "Jacobi's method is more
accurate than QR", SIAM J. Matrix Anal. Appl. 13 (1992) 1204-1245; Z. Drmac, K. Veselic,
"New fast and accurate Jacobi SVD algorithm", SIAM J. Matrix Anal. Appl. 29 (2008)). The
columns of ``G = A`` (``G = A^H`` when ``m < n``) are rotated pairwise until every pair is
orthogonal to ``|g_p^H g_q| <= m eps ||g_p|| ||g_q||``; the rotation of a pair is the Jacobi
rotation of the 2x2 Gram matrix ``[[|g_p|^2, g_p^H g_q], [., |g_q|^2]]`` (the formulas of
:mod:`kernels.eigh_forward`), accumulated into ``V``. Then ``s_j = ||g_j||`` and
``u_j = g_j / s_j``. The Gram matrix itself is never formed, so small singular values keep their
relative accuracy (forming ``A^H A`` and calling eigh would square the condition number: with
``s_min / s_max = 1e-12`` in float64 the small singular values and their vectors would be lost;
see the tests). As in :mod:`kernels.eigh_forward`, matrices go in lane blocks of up to 32 with
the matrix index innermost, each matrix scaled by a power of two to a largest entry in
[0.5, 1), at most 30 sweeps (NaN never converges; NaN in gives NaN out). The orthogonality
test is taken on squares, ``|g_p^H g_q|^2 > (m eps)^2 ||g_p||^2 ||g_q||^2``, which answers as
the unsquared one while the right side is a normal number; a pair where it is not (columns near
``1e-130`` of the largest entry in float64, ``1e-17`` in float32) takes its rotation from the
2x2 Gram matrix scaled by a power of two, instead of the 0/0 its unscaled formulas would give.

Zero singular values: a column that is exactly zero (after the scaling, below ``1e-140``; in
float32 below ``2^-60``, where its squares would underflow) has no direction: it is not rotated,
and its ``u_j`` is completed to an orthonormal set by Gram-Schmidt on the unit vectors, so ``U``
has orthonormal columns at any rank. Its singular value is its norm, below that bound times the
largest entry.

Output conventions: ``s`` descending (numpy's order). Each left singular vector is normalised so
that its entry of largest magnitude (the first such, in row order) is real and positive, and the
matching right singular vector gets the same phase, so ``u_j s_j v_j^H`` is unchanged: a
deterministic choice of the common sign (real) or phase (complex) of each pair, which LAPACK
leaves arbitrary (scikit-learn's ``svd_flip`` makes the same choice). Inside a repeated singular
value the basis is whatever the rotations produced. The pullbacks of ``kernels.svd`` measure the
gauge components of the cotangents, not of this choice, so they accept these factors as they
accept LAPACK's.

Input contract: (b, m, n) float32, float64 or complex128, ``m, n >= 1`` (other layouts are
copied to C order); the input is never written. One compile per dtype.
"""

import numpy as np
from numba import types
from numba.extending import overload

from kernels._jit import jit, jit_inline
from kernels._scaling import unit_scale
from kernels._spectral import shape_error
from kernels._svd_store import _abs2, _scratch, _store_inplace, _zero_column
from kernels.eigh_forward import _phase_mul, _split

__all__ = ["svd_batched", "svdvals_batched"]

# The rules call these kernels for stacks whose smaller side is at most kernels.crossovers'
# SVD_JACOBI_STACK_MAX_N (kernels.svd_bidiagonal above it), up to SVD_FORWARD_STACK_MAX_N.

_MAX_SWEEPS = 30


@jit
def _load_inplace(A, t0, nb, wide, g, scale):
    """``g[i * N + j, l] = G[i, j]`` with ``G = A[t0 + l]`` (``A^H`` if ``wide``), scaled.

    ``scale[l]`` is the power of two that brings the largest entry into [0.5, 1).
    """
    m, n = A.shape[1], A.shape[2]
    for l in range(nb):
        mx = 0.0
        for i in range(m):
            for j in range(n):
                mx = max(mx, abs(A[t0 + l, i, j]))
        f = unit_scale(mx)  # a power of two, finite for a subnormal mx
        scale[l] = f
        for i in range(m):
            for j in range(n):
                if wide:
                    g[j * m + i, l] = A[t0 + l, i, j].conjugate() * f
                else:
                    g[i * n + j, l] = A[t0 + l, i, j] * f


def _smallest_normal(x):
    """The smallest positive normal number of ``x``'s float type."""
    return np.finfo(type(x)).tiny


@overload(_smallest_normal, inline="always")
def _smallest_normal_overload(x):
    tiny = float(np.finfo(np.float32 if x.bitwidth == 32 else np.float64).tiny)
    return lambda x: tiny


@jit_inline
def _rotation_inplace(a, b, gg, zl, c, s, z, l, rotate):
    """Set lane ``l``'s rotation ``c[l], s[l], z[l]`` (the identity unless ``rotate``).

    The Jacobi rotation of the Gram matrix ``[[a, gg conj(zl)], [., b]]`` (the formulas of
    :mod:`kernels.eigh_forward`); ``gg`` is real, signed for real input.
    """
    ag = abs(gg)
    h = b - a
    den = abs(h) + np.sqrt(h * h + 4.0 * ag * ag)
    t = 2.0 * gg / den if rotate else 0.0 * gg
    t = -t if h < 0 else t
    cl = 1.0 / np.sqrt(t * t + 1.0)
    c[l] = cl
    s[l] = t * cl
    # the phase only with a rotation: where |gam|^2 is subnormal, |gg| is not accurate and the
    # phase not of modulus 1, and a lane that does not rotate still gets it applied when
    # another lane of its block rotates (a landed bug: complex128 results then depended on
    # the neighbours, off by 0.5% with a column near 1e-160 of the largest entry)
    z[l] = zl if rotate else 1.0 + 0.0 * zl


@jit
def _scaled_rotation_inplace(a, b, x, tol, c, s, z, l):
    """Lane ``l``'s rotation of ``[[a, x], [conj(x), b]]``, scaled by a power of two first.

    ``|x f|`` and the squares of the rotation are then in the normal range where ``|x|``
    itself may underflow. Returns whether it rotates (``|x| > tol sqrt(a b)``). A function of
    its own, not inlined: Numba's inliner warns on two inlined complex rotations in one body.
    """
    f = unit_scale(np.float64(max(a, b, abs(x.real), abs(x.imag))))
    gg, zl = _split(x * f)
    a, b = a * f, b * f
    rotate = abs(gg) > tol * np.sqrt(a) * np.sqrt(b)
    _rotation_inplace(a, b, gg, zl, c, s, z, l, rotate)
    return rotate


@jit
def _tiny_rotations_inplace(alpha, beta, gam, c, s, z, tol, tiny_ab, floor2):
    """The rotations of a pair where some lane's norm product may underflow; how many rotate.

    A lane with ``alpha beta < tiny_ab`` and ``gam != 0`` would underflow in the unscaled
    formulas, in a product of norms, a square in the rotation or ``|gam|`` itself (to a NaN
    rotation, 0/0, for two columns near 1e-130 in float64): its 2x2 Gram matrix is scaled by a
    power of two first, which leaves the rotation unchanged. The other lanes take the formulas
    of :func:`_sweeps_inplace`, so their results do not depend on a tiny lane beside them.
    A lane whose ``min(alpha, beta)`` is below ``floor2`` (a zero column) is not rotated.
    """
    nrot = 0
    tol2 = tol * tol
    for l in range(alpha.shape[0]):
        x = gam[l]
        live = min(alpha[l], beta[l]) >= floor2
        if alpha[l] * beta[l] < tiny_ab and x != 0 and live:
            rotate = _scaled_rotation_inplace(alpha[l], beta[l], x, tol, c, s, z, l)
        else:
            gg, zl = _split(x)
            rotate = (gg * gg > tol2 * (alpha[l] * beta[l])) & live
            _rotation_inplace(alpha[l], beta[l], gg, zl, c, s, z, l, rotate)
        nrot += rotate
    return nrot


@jit
def _sweeps_inplace(M, N, g, v, vectors, tol, alpha, beta, gam, c, s, z):
    """Orthogonalise the columns of the lane block ``g`` (M * N, nl) pairwise; ``V`` into ``v``.

    ``v`` (N * N, nl) starts as the identity (when ``vectors``). A pair is rotated where
    ``|g_p^H g_q| > tol ||g_p|| ||g_q||`` and neither column is below the zero-column norm; a
    pair no lane needs is skipped. Returns the sweeps.
    """
    nl = g.shape[1]
    tol2 = tol * tol
    # From tiny_ab up, tol^2 ab is normal and so is every |gam|^2 that could reach it: the
    # squared test gives the unsquared one's answer.
    # A pair with a column below the zero-column norm is not rotated: that column's direction
    # is completed at the end, and its squares may have underflowed (which had left such a
    # pair rotating for all 30 sweeps, only an exact zero passing the test). Such a pair has
    # alpha beta < floor2 M N (a squared column norm of the scaled matrix is below M N), so
    # tiny_ab from there up sends it to _tiny_rotations_inplace, which checks it.
    floor2 = _zero_column(g[0, 0].real) ** 2
    tiny_ab = max(4.0 * _smallest_normal(alpha[0]) / tol2, floor2 * M * N)
    if vectors:
        for i in range(N):
            for j in range(N):
                for l in range(nl):
                    v[i * N + j, l] = 1.0 if i == j else 0.0
    for sweep in range(_MAX_SWEEPS):
        busy = 0
        for p in range(N - 1):
            for q in range(p + 1, N):
                for l in range(nl):
                    alpha[l] = 0.0
                    beta[l] = 0.0
                    gam[l] = 0.0
                for i in range(M):
                    ip, iq = i * N + p, i * N + q
                    for l in range(nl):
                        x = g[ip, l]
                        y = g[iq, l]
                        alpha[l] += _abs2(x)
                        beta[l] += _abs2(y)
                        gam[l] += x.conjugate() * y
                # first the test |g_p^H g_q| > tol sqrt(ab), squared (no square root), and
                # the rotations only if a lane needs one: near convergence none does
                nrot = 0
                tiny = False
                for l in range(nl):
                    ab = alpha[l] * beta[l]
                    nrot += _abs2(gam[l]) > tol2 * ab
                    tiny |= (ab < tiny_ab) & (gam[l] != 0)  # a zero gam never rotates
                if nrot == 0 and not tiny:
                    continue
                nrot = 0
                if tiny:  # rare: a separate loop, so that the common one stays vectorised
                    nrot = _tiny_rotations_inplace(alpha, beta, gam, c, s, z, tol, tiny_ab, floor2)
                else:
                    for l in range(nl):
                        gg, zl = _split(gam[l])  # g_p^H g_q = gg conj(z), gg signed if real
                        rotate = gg * gg > tol2 * (alpha[l] * beta[l])
                        _rotation_inplace(alpha[l], beta[l], gg, zl, c, s, z, l, rotate)
                        nrot += rotate
                if nrot == 0:
                    continue
                busy += nrot
                for i in range(M):
                    ip, iq = i * N + p, i * N + q
                    for l in range(nl):
                        x = g[ip, l]
                        y = _phase_mul(g[iq, l], z[l])
                        g[ip, l] = c[l] * x - s[l] * y
                        g[iq, l] = s[l] * x + c[l] * y
                if vectors:
                    for i in range(N):
                        ip, iq = i * N + p, i * N + q
                        for l in range(nl):
                            x = v[ip, l]
                            y = _phase_mul(v[iq, l], z[l])
                            v[ip, l] = c[l] * x - s[l] * y
                            v[iq, l] = s[l] * x + c[l] * y
        if busy == 0:
            return sweep + 1
    return _MAX_SWEEPS


# The sweeps at a constant order, a copy inlined where it is called with literal sizes: LLVM then
# unrolls the row loops (kernels._jit, jit_inline), ~20% less time on 10000 x (4x4) float64.
# Real dtypes only: Numba's inliner warns (NumbaIRAssumptionWarning) on the complex rotation.
_sweeps_unrolled = jit_inline(getattr(_sweeps_inplace, "py_func", _sweeps_inplace))


def _sweeps(M, N, g, v, vectors, tol, alpha, beta, gam, c, s, z):
    """``_sweeps_inplace``, through its unrolled copy for real 4x4 lane blocks."""
    return _sweeps_inplace(M, N, g, v, vectors, tol, alpha, beta, gam, c, s, z)


@overload(_sweeps)
def _sweeps_overload(M, N, g, v, vectors, tol, alpha, beta, gam, c, s, z):
    if isinstance(g.dtype, types.Complex):
        return lambda M, N, g, v, vectors, tol, alpha, beta, gam, c, s, z: _sweeps_inplace(
            M, N, g, v, vectors, tol, alpha, beta, gam, c, s, z
        )

    def real(M, N, g, v, vectors, tol, alpha, beta, gam, c, s, z):
        if M == 4 and N == 4:
            return _sweeps_unrolled(4, 4, g, v, vectors, tol, alpha, beta, gam, c, s, z)
        return _sweeps_inplace(M, N, g, v, vectors, tol, alpha, beta, gam, c, s, z)

    return real


@jit
def _svd_kernel(A, vectors, eps, U, sv, Vh):
    """The factors of every matrix of ``A`` into ``U``, ``sv``, ``Vh``; returns the sweeps."""
    b, m, n = A.shape
    wide = m < n
    M, N = (n, m) if wide else (m, n)
    # no more lanes than matrices: a stack of one (a single matrix) sweeps one lane, not 31
    # idle ones besides (4x faster at 8x8)
    nl = max(1, min(b, 32, 4096 // (M * N)))
    g = np.zeros((M * N, nl), dtype=A.dtype)
    v = np.empty((N * N, nl), dtype=A.dtype)
    scale = np.ones(nl)
    alpha = np.empty(nl, dtype=sv.dtype)
    beta = np.empty(nl, dtype=sv.dtype)
    gam = np.empty(nl, dtype=A.dtype)
    c = np.empty(nl, dtype=sv.dtype)
    s = np.empty(nl, dtype=sv.dtype)
    z = np.empty(nl, dtype=A.dtype)
    scratch = _scratch(M, N, nl, g, vectors)
    tol = eps * M
    sweeps = 0
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        if nb < nl:  # the last block: idle lanes hold zero matrices (never rotated)
            g[:] = 0
        _load_inplace(A, t0, nb, wide, g, scale)
        swept = _sweeps(M, N, g, v, vectors, tol, alpha, beta, gam, c, s, z)
        sweeps = max(sweeps, swept)
        _store_inplace(M, N, g, v, scale, t0, nb, wide, vectors, U, sv, Vh, scratch)
    return sweeps


def _check(name, A):
    """Return ``A`` as a C-contiguous stack of a kernel dtype, or raise naming ``name``."""
    if A.ndim != 3 or 0 in A.shape[1:]:
        raise shape_error(f"{name}: A (b, m, n) with m, n >= 1", A=A)
    if A.dtype not in (np.float32, np.float64, np.complex128):
        raise ValueError(f"{name}: A must be float32, float64 or complex128, got {A.dtype}")
    return np.ascontiguousarray(A)


def _real(A):
    return np.float32 if A.dtype == np.float32 else np.float64


def svd_batched(A):
    """Return the thin SVD ``(U (b, m, k), s (b, k), Vh (b, k, n))`` of each ``A[p]``.

    One-sided Jacobi on lane blocks (module docstring); ``s`` descending, real of ``A``'s
    precision; ``U`` and ``Vh`` of ``A``'s dtype, each column of ``U`` with its largest-magnitude
    entry real and positive (the matching row of ``Vh`` adjusted to keep ``A``).
    """
    A = _check("svd_batched", A)
    b, m, n = A.shape
    k = min(m, n)
    U = np.empty((b, m, k), dtype=A.dtype)
    s = np.empty((b, k), dtype=_real(A))
    Vh = np.empty((b, k, n), dtype=A.dtype)
    _svd_kernel(A, True, float(np.finfo(s.dtype).eps), U, s, Vh)
    return U, s, Vh


def svdvals_batched(A):
    """Return the singular values (b, k), descending, of each ``A[p]``; see :func:`svd_batched`."""
    A = _check("svdvals_batched", A)
    b, m, n = A.shape
    s = np.empty((b, min(m, n)), dtype=_real(A))
    empty = np.empty((0, 1, 1), dtype=A.dtype)
    _svd_kernel(A, False, float(np.finfo(s.dtype).eps), empty, s, empty)
    return s
