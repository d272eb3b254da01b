"""Householder reflectors and Givens rotations for the tridiagonal and bidiagonal kernels.

Shared by :mod:`kernels.eigh_tridiagonal` and :mod:`kernels.svd_bidiagonal`. The matrices
reach these helpers scaled to a largest entry in [0.5, 1) (:func:`kernels._scaling.unit_scale`),
but a column or row being reduced can still be tiny: its norm is then computed after a second
power-of-two scaling (as LAPACK's ``dlarfg``/``zlarfg`` rescale), and a rotation of tiny
entries takes ``hypot``, so that no square lands in the subnormal range and loses digits.
Numba's cache does not see edits here from the kernels that inline these helpers: clear
``src/kernels/__pycache__`` after changing them.
"""

import math

import numpy as np

from kernels._jit import jit


@jit
def abs2(x):
    """``|x|^2``, as ``re^2 + im^2`` (no square root; a real ``x`` has ``im = 0``)."""
    return x.real * x.real + x.imag * x.imag


@jit
def reflector_scale(amax, safmin):
    """The power of two that brings ``amax`` (the largest ``|alpha|``, ``|x_i|``) into [0.5, 1).

    ``0.0`` when ``amax`` is below ``safmin``: against a matrix scaled to norm about 1 such a
    vector is far below rounding, and the caller leaves it alone (``H = I``).
    """
    if not amax >= safmin:
        return 0.0
    return math.ldexp(1.0, -math.frexp(amax)[1])


@jit
def reflector(alpha, xs2, sf):
    """``(beta, tau, scal)`` of LAPACK's ``zlarfg`` for the vector ``[alpha, x]``.

    ``xs2 = ||sf x||^2`` and ``sf`` from :func:`reflector_scale` (``0.0``: negligible vector).
    ``H = I - tau v v^H``, ``v = [1, x * scal]``, has ``H^H [alpha, x] = [beta, 0, ...]`` with
    ``beta`` real; ``tau = 0`` (``H = I``, ``beta = Re alpha``) when ``x`` is zero and ``alpha``
    real, or when the whole vector is negligible (its imaginary part then dropped).
    """
    if sf == 0.0 or (xs2 == 0.0 and alpha.imag == 0.0):
        return alpha.real, 0.0 * alpha, 0.0 * alpha
    a = alpha * sf
    beta = -math.copysign(math.sqrt(abs2(a) + xs2), a.real)
    return beta / sf, (beta - a) / beta, sf / (a - beta)


@jit
def householder(alpha, x, safmin):
    """:func:`reflector` of ``[alpha, x]`` (``x`` a 1-D view), its norm taken after scaling.

    The scale is :func:`reflector_scale` of the largest ``|alpha|``, ``|x_i|``; only ``|x_i|``
    is read, so a caller reducing a row may pass the row for its conjugate.
    """
    amax = abs(alpha)
    for i in range(x.shape[0]):
        amax = max(amax, abs(x[i]))
    sf = reflector_scale(amax, safmin)
    xs2 = 0.0
    for i in range(x.shape[0]):
        xs2 += abs2(x[i] * sf)
    return reflector(alpha, xs2, sf)


@jit
def rotation(x, y, safmin):
    """``(c, s, r)`` with ``[[c, s], [-s, c]] [x, y]^T = [r, 0]^T``.

    ``sqrt(x^2 + y^2)`` (``hypot`` is a libm call on the critical path of a QR chase, about 2x
    slower there), and ``hypot`` only when that sum falls below ``safmin``, where the squares
    would have lost digits. The scaled matrices cannot overflow it.
    """
    r2 = x * x + y * y
    r = math.sqrt(r2) if r2 >= safmin else math.hypot(x, y)
    if r == 0.0:
        return 1.0, 0.0, 0.0
    rinv = 1.0 / r
    return x * rinv, y * rinv, r


@jit
def form_qt_inplace(hv, tau, z, u, offset):
    """``z = Q^T = H_{r-1}^T ... H_0^T`` (``Q = H_0 ... H_{r-1}``) from ``r`` reflectors.

    Reflector ``k`` is ``I - tau[k] v v^H`` with ``v = hv[k, k + offset:]`` (``offset`` 1 for the
    tridiagonal reduction, 0 and 1 for the left and right ones of a bidiagonal reduction), so
    ``H_k^T = I - tau[k] conj(v) v^T``; a zero ``tau[k]`` is the identity. ``z`` (n, n) may have
    more rows than ``hv`` has reflectors (the left factor of a tall bidiagonal reduction).
    ``u`` (n,) is scratch.
    """
    n = z.shape[0]
    for i in range(n):
        for j in range(n):
            z[i, j] = 1.0 if i == j else 0.0
    for k in range(min(hv.shape[0], n)):
        t = tau[k]
        if t == 0.0:
            continue
        for j in range(n):
            u[j] = 0.0
        for i in range(k + offset, n):  # u = v^T z
            vi = hv[k, i]
            for j in range(n):
                u[j] += vi * z[i, j]
        for i in range(k + offset, n):  # z <- z - tau conj(v) u
            f = t * np.conj(hv[k, i])
            for j in range(n):
                z[i, j] -= f * u[j]
