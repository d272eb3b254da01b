"""``det`` and ``slogdet`` of stacks from a kept partial-pivoting LU: forward and derivatives.

The forward kernels factor each lane block (:mod:`kernels._smallmat`) as LAPACK ``getf2``
does, ``A = P L U``, and keep the factors in ``kernels.lu.lu_factor_batched`` format, so the
pullback and pushforward need no second factorization:

* ``lu_det_batched(A, tau) -> (lu, piv, d, ok)``: ``d = det(P) prod(diag U)`` as
  ``kernels.determinant_value.det_batched`` computes it (numpy's log form where the product
  over- or underflows), and ``ok`` the pivot test below;
* ``lu_slogdet_batched(A) -> (lu, piv, sign, logabsdet)``, numpy's ``slogdet`` from the same
  factors (a zero pivot gives ``sign = 0``, ``logabsdet = -inf``);
* ``scaled_inverse_adjoint_batched(lu, piv, c) -> c[t] A[t]^-H`` and
  ``inverse_trace_batched(lu, piv, A_dot) -> tr(A[t]^-1 A_dot[t])``.

``A^-1 = U^-1 L^-1 P^T`` is formed as LAPACK ``getri`` forms it: ``L^-1`` first (unit lower,
its zeros skipped), then ``U^-1`` applied to it, about ``4/3 n^3`` operations against ``2 n^3``
for solving the identity; the lane is the innermost loop, and the column permutation ``P^T``
is applied while the result is read out of the lane block.

The det pullback ``det_bar conj(d) A^-H`` equals ``det_bar adj(A)^H`` where the pivots are
nonzero. The computed ``d U^-1`` is accurate wherever no pivot is zero: a triangular inverse
has a small componentwise backward error (Higham, "Accuracy and Stability of Numerical
Algorithms", 2nd ed., SIAM 2002, section 8.1 and 14.2), so each column is that of ``adj(U +
dU)`` with ``|dU| <= c(n) u |U|``, and the factor ``d`` cancels the ``1 / u_kk`` exactly up to
rounding; with the backward-stable LU the result is the adjugate of a nearby matrix, the
guarantee the complete-pivoting kernel (``kernels.determinant``) gives. What breaks is range
and exact zeros: ``0 * inf`` at a zero pivot, ``1 / u`` overflowing, ``d`` under- or
overflowing. ``ok[t]`` is therefore true only where every pivot is finite and the smallest
``|u_kk|`` is at least ``tau`` times the largest, and ``|d|`` is a finite normal number; the
rule sends every other matrix (rank-deficient, nearly so, badly scaled, NaN) to the
complete-pivoting kernel, which places a vanishing pivot last and is exact at rank ``n - 1``.
The rule uses ``tau = sqrt(eps)`` of the dtype (``1.5e-8`` in float64): below it partial
pivoting may have put a near-zero pivot before the last one, and the conservative choice costs
nothing on well-conditioned stacks.
"""

import numpy as np
from numba import types
from numba.extending import overload

from kernels._jit import jit
from kernels._smallmat import (
    _div,
    _lanes,
    _load_inplace,
    _lu_partial_inplace,
    _store_inplace,
)

# The det and slogdet rules take these kernels for stacks up to kernels.crossovers'
# DET_STACK_MAX_N and SLOGDET_STACK_MAX_N.


def _phase(u, a):
    """``u / |u|`` for a nonzero pivot ``u`` (``a = |u|``); for reals ``-1`` or ``1`` (NaN: 1)."""
    return u / a if np.iscomplexobj(u) else (-1.0 if u < 0 else 1.0)


@overload(_phase, inline="always")
def _phase_overload(u, a):
    if isinstance(u, types.Complex):
        return lambda u, a: _div(u, complex(a, 0.0))
    return lambda u, a: -1.0 if u < 0 else 1.0


# --- the inverse of a lane block from its LU -------------------------------------------------


@jit
def _inverse_inplace(F, nb, rcp, Z):
    """Overwrite ``Z`` (n, n, nl) with ``U^-1 L^-1`` for ``A = P L U`` packed in ``F``.

    ``A^-1 = U^-1 L^-1 P^T`` is a column permutation of it, which the callers apply as they
    read ``Z`` (:func:`_row_perm`) instead of swapping columns in the block.
    ``rcp`` (nl,) scratch. Not specialised to constant orders: at 10000 x (4x4) an unrolled
    copy measured no faster (interleaved, within 5%) and cost seconds of cold compile per dtype.
    """
    n = F.shape[0]
    for i in range(n):  # Z = L^-1 by rows; row r of L^-1 is zero right of its diagonal
        for j in range(n):
            for l in range(nb):
                Z[i, j, l] = 1 if i == j else 0
        for r in range(i):
            for j in range(r + 1):
                for l in range(nb):
                    Z[i, j, l] -= F[i, r, l] * Z[r, j, l]
    for i in range(n - 1, -1, -1):  # Z <- U^-1 Z, back substitution on rows
        for l in range(nb):
            rcp[l] = _div(1, F[i, i, l])
        for r in range(i + 1, n):
            for j in range(n):
                for l in range(nb):
                    Z[i, j, l] -= F[i, r, l] * Z[r, j, l]
        for j in range(n):
            for l in range(nb):
                Z[i, j, l] *= rcp[l]


@jit
def _row_perm(piv, t, perm):
    """``perm`` (n,) with ``(P^T b)[k] = b[perm[k]]`` for the swaps ``piv[t]`` (``A = P L U``).

    So ``A^-1[i, perm[k]] = (U^-1 L^-1)[i, k]``.
    """
    n = perm.shape[0]
    for k in range(n):
        perm[k] = k
    for k in range(n):
        p = piv[t, k]
        if p != k:
            q = perm[k]
            perm[k] = perm[p]
            perm[p] = q


# --- forward -------------------------------------------------------------------------------


@jit
def _factor_block(A, t0, nb, W, P, sign, lu, piv):
    """Factor lanes ``t0 .. t0 + nb`` of ``A`` into ``W``, ``P``; store them in ``lu``, ``piv``."""
    _load_inplace(A, t0, nb, W)
    _lu_partial_inplace(nb, W, P, sign)
    _store_inplace(W, t0, nb, lu)
    for l in range(nb):
        for k in range(A.shape[1]):
            piv[t0 + l, k] = P[k, l]


def lu_det_batched(A, tau):
    """Return ``(lu, piv, d, ok)`` for a stack ``A`` (b, n, n) (module doc); ``tau`` a float."""
    real = np.finfo(A.dtype)
    return _lu_det_batched(A, float(tau), float(real.tiny), float(real.max))


@jit
def _lu_det_batched(A, tau, tiny, huge):
    """``lu_det_batched`` with the real dtype's smallest normal and largest finite numbers."""
    b, n, n2 = A.shape
    if n2 != n or n == 0:
        raise ValueError("lu_det_batched: A must be a stack of nonempty square matrices")
    nl = _lanes(b, n * n)
    dt = A.dtype
    lu = np.empty_like(A)
    piv = np.empty((b, n), dtype=np.int32)
    d = np.empty(b, dtype=dt)
    ok = np.empty(b, dtype=np.bool_)
    W = np.empty((n, n, nl), dtype=dt)
    P = np.empty((n, nl), dtype=np.int32)
    sign = np.empty(nl, dtype=np.int64)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _factor_block(A, t0, nb, W, P, sign, lu, piv)
        for l in range(nb):
            s = dt.type(sign[l])
            umin = abs(W[0, 0, l])
            umax = umin
            for k in range(n):
                u = W[k, k, l]
                s *= u
                a = abs(u)
                umin = min(umin, a)
                umax = max(umax, a)
            a = abs(s)
            ok[t0 + l] = umin >= tau * umax and umax <= huge and tiny <= a <= huge
            if (s == 0 or not np.isfinite(s)) and not np.isnan(s):  # det_batched's log form
                phase = dt.type(sign[l])
                log = 0.0
                for k in range(n):
                    u = W[k, k, l]
                    if u == 0:
                        log = -np.inf
                        break
                    a = abs(u)
                    phase *= u / a
                    log += np.log(a)
                s = phase * np.exp(log) if log > -np.inf else dt.type(0)
            d[t0 + l] = s
    return lu, piv, d, ok


def lu_slogdet_batched(A):
    """Return ``(lu, piv, sign, logabsdet)`` for a stack ``A`` (b, n, n), numpy's slogdet.

    For real ``A`` the sign counts negative pivots (NaN gives +-1, as numpy); complex ``A``
    takes the product of the pivots' phases. A zero pivot gives ``0`` and ``-inf``.
    ``logabsdet`` is ``log prod |u_kk|`` (one logarithm, error within that of numpy's sum of
    logarithms) where the product is a finite normal number, the sum elsewhere.
    """
    real = np.finfo(A.dtype)
    return _lu_slogdet_batched(A, float(real.tiny), float(real.max))


@jit
def _lu_slogdet_batched(A, tiny, huge):
    """``lu_slogdet_batched`` with the real dtype's smallest normal and largest finite numbers."""
    b, n, n2 = A.shape
    if n2 != n or n == 0:
        raise ValueError("lu_slogdet_batched: A must be a stack of nonempty square matrices")
    nl = _lanes(b, n * n)
    dt = A.dtype
    lu = np.empty_like(A)
    piv = np.empty((b, n), dtype=np.int32)
    sign = np.empty(b, dtype=dt)
    logabsdet = np.empty(b, dtype=A.real.dtype)
    W = np.empty((n, n, nl), dtype=dt)
    P = np.empty((n, nl), dtype=np.int32)
    psign = np.empty(nl, dtype=np.int64)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _factor_block(A, t0, nb, W, P, psign, lu, piv)
        for l in range(nb):
            phase = dt.type(psign[l])
            prod = 1.0
            zero = False
            for k in range(n):
                u = W[k, k, l]
                a = abs(u)
                if a == 0:
                    zero = True
                else:
                    phase *= _phase(u, a)
                prod *= a
            if tiny <= prod <= huge:  # one logarithm; a sum of n where out of range
                log = np.log(prod)
            else:
                log = 0.0
                for k in range(n):
                    a = abs(W[k, k, l])
                    log += np.log(a) if a != 0 else 0.0
            if zero:
                sign[t0 + l] = 0
                logabsdet[t0 + l] = -np.inf
            else:
                sign[t0 + l] = phase
                logabsdet[t0 + l] = log
    return lu, piv, sign, logabsdet


# --- derivatives ---------------------------------------------------------------------------


@jit
def scaled_inverse_adjoint_batched(lu, piv, c):
    """Return ``c[t] A[t]^-H`` (b, n, n) from ``lu_factor_batched`` factors; ``c`` (b,).

    A zero pivot gives inf/NaN in its matrix (the rules replace or expect that), never a raise.
    """
    b, n, _ = lu.shape
    if lu.shape != (b, n, n) or piv.shape != (b, n) or c.shape != (b,):
        raise ValueError("scaled_inverse_adjoint_batched: need lu (b, n, n), piv (b, n), c (b,)")
    nl = _lanes(b, n * n)
    dt = lu.dtype
    out = np.empty((b, n, n), dtype=dt)
    F = np.empty((n, n, nl), dtype=dt)
    Z = np.empty((n, n, nl), dtype=dt)
    rcp = np.empty(nl, dtype=dt)
    perm = np.empty(n, dtype=np.int64)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(lu, t0, nb, F)
        _inverse_inplace(F, nb, rcp, Z)
        for l in range(nb):
            g = c[t0 + l]
            _row_perm(piv, t0 + l, perm)
            for k in range(n):  # out[perm[k], i] = g conj(A^-1[i, perm[k]])
                p = perm[k]
                for i in range(n):
                    out[t0 + l, p, i] = g * Z[i, k, l].conjugate()
    return out


@jit
def inverse_trace_batched(lu, piv, A_dot):
    """Return ``tr(A[t]^-1 A_dot[t])`` (b,) in ``lu``'s dtype from ``lu_factor_batched`` factors."""
    b, n, _ = lu.shape
    if lu.shape != (b, n, n) or piv.shape != (b, n) or A_dot.shape != lu.shape:
        raise ValueError("inverse_trace_batched: need lu, A_dot (b, n, n), piv (b, n)")
    nl = _lanes(b, n * n)
    dt = lu.dtype
    tau = np.empty(b, dtype=dt)
    F = np.empty((n, n, nl), dtype=dt)
    Z = np.empty((n, n, nl), dtype=dt)
    rcp = np.empty(nl, dtype=dt)
    perm = np.empty(n, dtype=np.int64)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(lu, t0, nb, F)
        _inverse_inplace(F, nb, rcp, Z)
        for l in range(nb):
            _row_perm(piv, t0 + l, perm)
            s = dt.type(0)
            for k in range(n):  # sum_ik A^-1[i, perm[k]] A_dot[perm[k], i]
                p = perm[k]
                for i in range(n):
                    s += Z[i, k, l] * A_dot[t0 + l, p, i]
            tau[t0 + l] = s
    return tau
