"""One-matrix pullbacks of ``eigh`` and the square ``svd`` that also decide whether they may be used.

A rule's whole call on one small matrix (``y, pb = rrule(f, A); pb(y_bar)``) spends most of
its time around the arithmetic: the gauge residuals, the tie search, the norms of the
cotangents and the pullback are separate compiled calls and numpy passes on the general path.
Here one compiled call does all of it and returns ``(A_bar, ok)``. ``ok`` is True only when the
general path would return this very ``A_bar`` without raising and without looking further:

* no tie and no NaN among the values (``|w_j - w_i| > tol`` for all pairs; svd: also every
  ``s_i > tol``, no zero singular value), so no rotation gauge, no null-space gauge and no
  in-tie coupling exist;
* the phase residual (complex input; identically 0 for real input) is within
  ``grtol * ||cotangents||_F``, the limit of ``rules.linalg._spectral.raise_if_gauge_dependent``;
  NaN anywhere in the vector cotangents makes it NaN, hence ``ok = False``.

Otherwise ``out`` is unspecified and the rule takes its general path, which words the errors.
The kernels write into output arrays the caller allocates and return at most a bool: compiled
closures (one per order, cached on disk) that box a new array on return failed when a second
order's code was loaded from the cache into the same process ("NRT_adapt_ndarray_to_python:
descr is NULL"), as the loop kernels of ``kernels.eigh`` and ``kernels.svd`` avoid too.
The arithmetic of ``A_bar`` is that of ``kernels.eigh`` / ``kernels.svd``'s loop kernels (the
same inlined helpers in the same order), so both paths give the same bits.

Input contract: C-contiguous ``(n,)`` values and ``(n, n)`` vectors and cotangents of one kernel
dtype (float32, float64, complex128), ``n`` at most ``EIGH_LOOPS_MAX_N`` / ``SVD_LOOPS_MAX_N``;
one compile per order ``n`` (closure constant) and dtype. Inputs are never written.
"""

import functools

import numpy as np

from kernels._jit import jit
from kernels._spectral import (
    _mul_a_b_inplace,
    _mul_a_bh_hermitian_inplace,
    _mul_a_bh_inplace,
    _mul_ah_b_inplace,
    _mul_v_diag_vh_inplace,
    _scale_tol,
)
from kernels.eigh import _pullback_core_inplace as _eigh_core_inplace
from kernels.eigh import _pushforward_core_inplace as _eigh_pushforward_core_inplace
from kernels.svd import _SQUARE
from kernels.svd import _pullback_core_inplace as _svd_core_inplace

__all__ = [
    "eigh_pullback_checked",
    "eigh_pushforward_one",
    "eigvalsh_pullback_one",
    "svd_pullback_checked",
    "svdvals_pullback_one",
]


@functools.cache
def eigh_pullback_checked(n):
    """The kernel ``(w, V, w_bar, V_bar, rtol, grtol, out) -> ok`` for order ``n``: ``out = A_bar``.

    ``A_bar = V (diag(w_bar) + F o skew(V^H V_bar)) V^H`` (``kernels.eigh``); ``ok`` as in the
    module docstring, with ``tol = rtol max|w|`` and the phase residual ``max_i |Im M_ii|``.
    """

    @jit
    def pullback_checked(w, V, w_bar, V_bar, rtol, grtol, out):
        tol = _scale_tol(n, w, rtol)
        if np.isnan(tol):  # NaN values
            return False
        for i in range(n):
            for j in range(i):
                if abs(w[j] - w[i]) <= tol:  # a tie: rotation gauge, in-tie coupling
                    return False
        K = np.empty((n, n), dtype=V.dtype)
        _mul_ah_b_inplace(n, n, n, V, V_bar, K)  # K = V^H V_bar
        phase = 0.0
        norm2 = 0.0
        for i in range(n):
            a = abs(K[i, i].imag) + 0.0 * abs(K[i, i])  # 0 * |d| turns NaN/inf into NaN
            if a > phase or np.isnan(a):
                phase = a
            for j in range(n):
                x = V_bar[i, j]
                norm2 += x.real * x.real + x.imag * x.imag
        if not phase <= grtol * np.sqrt(norm2):  # also NaN
            return False
        _eigh_core_inplace(n, w, w_bar, K, tol, n)
        T = np.empty((n, n), dtype=V.dtype)
        _mul_a_b_inplace(n, n, n, V, K, T)  # T = V K
        _mul_a_bh_hermitian_inplace(n, n, T, V, K, out)  # out = V K V^H (K: scratch)
        return True

    return pullback_checked


@functools.cache
def svd_pullback_checked(n):
    """The kernel ``(U, s, Vh, U_bar, s_bar, Vh_bar, rtol, grtol, out) -> ok``, square order ``n``.

    ``A_bar = U X Vh`` with ``X`` of ``kernels.svd`` (no complement terms); ``ok`` as in the module
    docstring, with ``tol = rtol max(s)`` and the phase residual ``max_i |Im(J_ii + K_ii)|``.
    """

    @jit
    def pullback_checked(U, s, Vh, U_bar, s_bar, Vh_bar, rtol, grtol, out):
        tol = _scale_tol(n, s, rtol)
        if np.isnan(tol):  # NaN values
            return False
        for i in range(n):
            if s[i] <= tol:  # a zero singular value: null-space gauge
                return False
            for j in range(i):
                if abs(s[j] - s[i]) <= tol:  # a tie: rotation gauge, in-tie coupling
                    return False
        J = np.empty((n, n), dtype=U.dtype)
        K = np.empty((n, n), dtype=U.dtype)
        _mul_ah_b_inplace(n, n, n, U, U_bar, J)  # J = U^H U_bar
        _mul_a_bh_inplace(n, n, n, Vh, Vh_bar, K)  # K = Vh Vh_bar^H
        phase = 0.0
        norm2 = 0.0
        for i in range(n):
            d = J[i, i] + K[i, i]
            a = abs(J[i, i].imag + K[i, i].imag) + 0.0 * abs(d)  # NaN/inf -> NaN
            if a > phase or np.isnan(a):
                phase = a
            for j in range(n):
                x, y = U_bar[i, j], Vh_bar[i, j]
                norm2 += x.real * x.real + x.imag * x.imag + y.real * y.real + y.imag * y.imag
        if not phase <= grtol * np.sqrt(norm2):  # also NaN
            return False
        s_inv = np.empty(n, dtype=s.dtype)  # unused for square matrices
        _svd_core_inplace(n, _SQUARE, s, s_bar, J, K, tol, s_inv, n)
        T = np.empty((n, n), dtype=U.dtype)
        _mul_a_b_inplace(n, n, n, U, J, T)  # T = U X
        _mul_a_b_inplace(n, n, n, T, Vh, out)  # out = U X Vh
        return True

    return pullback_checked


@functools.cache
def svdvals_pullback_one(m, n):
    """The kernel ``(U, Vh, s_bar, out)``: ``out = U diag(s_bar) Vh``, one ``(m, n)`` matrix (thin).

    Nothing to check (no division, no gauge); the arithmetic of ``kernels.svd.svdvals_pullback``
    with one argument fewer to pass and no stack to build.
    """
    k = min(m, n)

    @jit
    def svdvals_pullback(U, Vh, s_bar, out):
        T = np.empty((m, k), dtype=U.dtype)
        for i in range(m):
            for j in range(k):
                T[i, j] = U[i, j] * s_bar[j]
        _mul_a_b_inplace(m, k, n, T, Vh, out)

    return svdvals_pullback


@functools.cache
def eigvalsh_pullback_one(n):
    """The kernel ``(V, w_bar, out)``: ``out = V diag(w_bar) V^H``, one matrix of order ``n``.

    Nothing to check (no division, no gauge); the arithmetic of ``kernels.eigh.eigvalsh_pullback``
    (lower triangle, mirrored: ``out`` is exactly Hermitian) without the stack, so both give the
    same bits. Up to ``kernels.crossovers.EIGVALSH_LOOPS_MAX_N`` for the dtype.
    """

    @jit
    def eigvalsh_pullback(V, w_bar, out):
        _mul_v_diag_vh_inplace(n, V, w_bar, np.empty((n, n), dtype=V.dtype), out)

    return eigvalsh_pullback


@functools.cache
def eigh_pushforward_one(n):
    """The kernel ``(w, V, A_dot, rtol, w_dot, V_dot)`` for one matrix of order ``n``, into the last two.

    ``w_dot = Re diag(C)``, ``V_dot = V (F o herm(C))``, ``C = V^H A_dot V``: the arithmetic of
    ``kernels.eigh.eigh_pushforward``'s loop kernel, without the stack. Nothing to check.
    """

    @jit
    def pushforward_one(w, V, A_dot, rtol, w_dot, V_dot):
        T = np.empty((n, n), dtype=V.dtype)
        C = np.empty((n, n), dtype=V.dtype)
        _mul_a_b_inplace(n, n, n, A_dot, V, T)  # T = A_dot V
        _mul_ah_b_inplace(n, n, n, V, T, C)  # C = V^H A_dot V
        _eigh_pushforward_core_inplace(n, w, C, w_dot, _scale_tol(n, w, rtol), n)
        _mul_a_b_inplace(n, n, n, V, C, V_dot)

    return pushforward_one
