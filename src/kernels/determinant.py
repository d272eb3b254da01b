"""Kernels for ``det`` and ``slogdet``: pullbacks and pushforwards, exact at singular matrices.

det. ``d det(A) = tr(adj(A) dA)`` (Jacobi's formula), so with the complex convention
(``dL = Re(conj(det_bar) d det)``)::

    pushforward  det_dot = tr(adj(A) A_dot)
    pullback     A_bar   = det_bar adj(A)^H           (= det_bar conj(det) A^-H if invertible)

The adjugate is a polynomial in ``A`` and stays exact where ``A^-1`` does not exist. With an
LU factorization ``A = P L U``, ``adj(A) = det(P) adj(U) L^-1 P^T``, and for triangular ``U``
with last pivot ``u`` and ``W`` the inverse of ``U`` with ``u`` replaced by ``s != 0``::

    adj(U) = d' W diag(u, ..., u, s),        d' = prod of the other pivots

(``adj`` is affine in ``u``; ``s = u`` gives ``det(U) U^-1``, and ``u = 0`` gives the rank-one
``d' x e_n^T`` with ``U x = 0``, independent of ``s``). This needs only the *other* pivots to
be nonzero, so the small kernels factor with complete pivoting: at rank ``n - 1`` exactly the
last pivot vanishes, and if an earlier pivot is exactly zero the whole trailing block is
zero, the rank is at most ``n - 2`` and ``adj(A) = 0`` exactly. Partial pivoting is not
enough: ``[[0, 1], [0, 0]]`` has rank 1 but two zero pivots. The LAPACK variants reuse the
forward's partial-pivoting LU and fall back to an SVD adjugate in that case.

slogdet, ``(sign, logabsdet)`` with ``det = sign exp(logabsdet)``, ``|sign| = 1``. From
``d log det = tr(A^-1 dA) = d logabsdet + i d theta`` (``sign = e^{i theta}``) and
``d sign = i sign d theta``, with ``z = conj(sign) sign_bar``::

    pushforward  logabsdet_dot = Re tr(A^-1 A_dot),   sign_dot = i sign Im tr(A^-1 A_dot)
    pullback     A_bar = (logabsdet_bar + i Im z) A^-H

For real ``A`` the sign is locally constant (``Im z = 0``, ``sign_dot = 0``). At a singular
``A``, ``logabsdet = -inf`` has no derivative: the kernels return inf/nan, never raise.

References
----------
M. B. Giles, "An extended collection of matrix derivative results for forward and reverse
mode algorithmic differentiation", Oxford NA report 08/01 (2008) (determinant).
J. R. Magnus, H. Neudecker, "Matrix Differential Calculus with Applications in Statistics and
Econometrics", 3rd ed., Wiley (2019) (Jacobi's formula, the adjugate of a rank n-1 matrix).
"""

import numpy as np
from scipy.linalg import lapack

from kernels import crossovers
from kernels._blas import getri, getrs
from kernels._jit import jit
from kernels._lu4 import _factor, _substitute
from kernels._smallmat import (
    _lanes,
    _load_inplace,
    _load_piv_inplace,
    _lower_unit_right_solve_inplace,
    _lu_complete_inplace,
    _lu_solve_inplace,
    _swap_cols_inplace,
    _swap_rows_inplace,
    _upper_solve_inplace,
)

# --- det -----------------------------------------------------------------------------------


@jit
def _adjugate_block_inplace(nb, a, prow, pcol, sign, scale, Z):
    """Overwrite ``Z`` with ``adj(A)`` of each lane of ``a`` (destroys ``a``; see module doc).

    ``prow``, ``pcol``, ``sign`` are scratch for the pivots; ``scale`` (n, nl) scratch.
    """
    n = a.shape[0]
    if n == 0:  # adj of a 0 x 0 matrix is empty (and a[n - 1, n - 1] below would be out of bounds)
        return
    one = a.dtype.type(1)
    _lu_complete_inplace(nb, a, prow, pcol, sign)
    # column scales of W: d' u for j < n-1 and d' s for j = n-1; then u -> s in U
    for l in range(nb):
        u = a[n - 1, n - 1, l]
        s = u if u != 0 else one
        d = one
        for k in range(n - 1):
            d *= a[k, k, l]
        for j in range(n - 1):
            scale[j, l] = d * u
        scale[n - 1, l] = d * s
        a[n - 1, n - 1, l] = s
        if d == 0:
            # an earlier pivot is exactly zero, so (complete pivoting) the trailing block was
            # zero, rank <= n - 2 and adj(A) = 0: the scales are 0 and unit pivots keep W finite
            for k in range(n):
                if a[k, k, l] == 0:
                    a[k, k, l] = one
    for i in range(n):  # W = U'^-1, solving U' W = I
        for j in range(n):
            for l in range(nb):
                Z[i, j, l] = 1 if i == j else 0
    _upper_solve_inplace(a, nb, Z)
    for i in range(n):  # adj(U) = W diag(scale), times the permutation sign
        for j in range(n):
            for l in range(nb):
                Z[i, j, l] *= scale[j, l] * sign[l]
    # adj(A) = sign Pc adj(U) L^-1 Pr, with Pr = S_{n-1} .. S_0 and Pc = S'_0 .. S'_{n-1}
    _lower_unit_right_solve_inplace(a, nb, Z)
    _swap_cols_inplace(prow, nb, True, Z)
    _swap_rows_inplace(pcol, nb, True, Z)


@jit
def det_pullback_batched(A, det_bar):
    """Return ``A_bar = det_bar adj(A)^H`` (b, n, n); ``A`` (b, n, n), ``det_bar`` (b,).

    Exact (the cofactor matrix) at singular ``A`` of rank ``n - 1``, zero below. Refactors
    ``A`` with complete pivoting, which the adjugate needs (see the module docstring).
    """
    b, n, _ = A.shape
    if A.shape != (b, n, n) or det_bar.shape != (b,):
        raise ValueError("det_pullback_batched: need A (b, n, n) and det_bar (b,)")
    nl = _lanes(b, n * n)
    dt = A.dtype
    A_bar = np.empty((b, n, n), dtype=dt)
    W = np.empty((n, n, nl), dtype=dt)
    Z = np.empty((n, n, nl), dtype=dt)
    scale = np.empty((n, nl), dtype=dt)
    prow = np.empty((n, nl), dtype=np.int32)
    pcol = np.empty((n, nl), dtype=np.int32)
    sign = np.empty(nl, dtype=np.int64)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(A, t0, nb, W)
        _adjugate_block_inplace(nb, W, prow, pcol, sign, scale, Z)
        for l in range(nb):
            g = det_bar[t0 + l]
            for i in range(n):
                for j in range(n):
                    A_bar[t0 + l, i, j] = g * Z[j, i, l].conjugate()
    return A_bar


@jit
def det_pushforward_batched(A, A_dot):
    """Return ``det_dot = tr(adj(A) A_dot)`` (b,); exact at singular ``A`` like the pullback."""
    b, n, _ = A.shape
    if A.shape != (b, n, n) or A_dot.shape != A.shape:
        raise ValueError("det_pushforward_batched: need A and A_dot (b, n, n)")
    nl = _lanes(b, n * n)
    dt = A.dtype
    det_dot = np.empty(b, dtype=dt)
    W = np.empty((n, n, nl), dtype=dt)
    Z = np.empty((n, n, nl), dtype=dt)
    scale = np.empty((n, nl), dtype=dt)
    prow = np.empty((n, nl), dtype=np.int32)
    pcol = np.empty((n, nl), dtype=np.int32)
    sign = np.empty(nl, dtype=np.int64)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(A, t0, nb, W)
        _adjugate_block_inplace(nb, W, prow, pcol, sign, scale, Z)
        for l in range(nb):
            s = dt.type(0)
            for i in range(n):
                for j in range(n):
                    s += Z[i, j, l] * A_dot[t0 + l, j, i]
            det_dot[t0 + l] = s
    return det_dot


def det_pullback(A, det_bar):
    """``det_pullback_batched`` for one (n, n) matrix and a scalar ``det_bar``."""
    return det_pullback_batched(A[None], np.asarray(det_bar, dtype=A.dtype).reshape(1))[0]


def det_pushforward(A, A_dot):
    """``det_pushforward_batched`` for one (n, n) matrix; returns a 0-d array."""
    return det_pushforward_batched(A[None], A_dot[None])[0]


# --- det, large matrices: LAPACK with the forward's LU -----------------------------------------


def inverse_lapack(lu, piv, trans=0):
    """Return ``A^-1`` (``trans=0``) or ``A^-H`` (``trans=2``) from the forward's LU factors.

    ``getri`` (blocked: ``kernels._blas.getri``) up to ``kernels.crossovers.DET_GETRI_MAX_N``,
    ``getrs`` on the identity above.
    """
    n = lu.shape[0]
    if n > crossovers.DET_GETRI_MAX_N:
        return getrs(lu, piv, np.eye(n, dtype=lu.dtype), trans=trans)
    inv = getri(lu, piv)[0]
    return inv.conj().T if trans == 2 else inv


def _lu_det(lu, piv):
    """``det(A) = det(P) prod(diag(U))`` from LU factors in scipy.linalg.lu_factor format."""
    n = lu.shape[0]
    psign = -1.0 if np.count_nonzero(piv != np.arange(n)) % 2 else 1.0
    return psign * np.prod(np.diagonal(lu))


def adjugate_lapack(A, lu, piv):
    """Return ``adj(A)`` for one large matrix from the forward's ``scipy.linalg.lu_factor``.

    No zero pivot: ``det(A) A^-1`` from the forward's factors (``inverse_lapack``). One zero pivot
    ``p``: the rank-one ``det(P) d' x w^T`` with ``U x = 0`` (``x_p = 1``) and
    ``w^T = e_p^T (P L U')^-1`` (``u_pp -> 1``), O(n^2). Two or more zero pivots (partial
    pivoting does not reveal rank): ``adj(A) = det(V^H) det(U_s) V adj(S) U_s^H`` from the SVD
    ``A = U_s S V^H``, ``adj(S) = diag(prod_{k != i} s_k)``.
    """
    n = lu.shape[0]
    d = np.diagonal(lu)
    psign = -1.0 if np.count_nonzero(piv != np.arange(n)) % 2 else 1.0
    zero = np.flatnonzero(d == 0)
    if zero.size == 0:
        inv = inverse_lapack(lu, piv)
        inv *= psign * np.prod(d)
        return inv
    if zero.size == 1:
        p = zero[0]
        lu1 = np.array(lu, order="F")
        lu1[p, p] = 1
        e = np.zeros((n, 1), dtype=lu.dtype)
        e[p] = 1
        trtrs = lapack.get_lapack_funcs("trtrs", (lu,))
        x, _ = trtrs(lu1, e, lower=0)  # U' x = e_p, so U x = 0 with x_p = 1
        w = getrs(lu1, piv, e, trans=1)  # (P L U')^-T e_p
        d_other = np.prod(np.delete(d, p))
        return (psign * d_other) * (x @ w.T)
    u_s, s, vh = np.linalg.svd(A)
    pre = np.concatenate(([1], np.cumprod(s)[:-1]))
    post = np.concatenate((np.cumprod(s[::-1])[::-1][1:], [1]))
    phase = np.linalg.det(vh) * np.linalg.det(u_s)
    return (phase * vh.conj().T * (pre * post)) @ u_s.conj().T


def det_pullback_lapack(A, lu, piv, det_bar):
    """``det_pullback`` for one large matrix, reusing the forward's LU: ``det_bar adj(A)^H``."""
    if np.all(np.diagonal(lu) != 0):  # det_bar conj(det) A^-H, without transposing a copy
        return (det_bar * np.conj(_lu_det(lu, piv))) * inverse_lapack(lu, piv, trans=2)
    return det_bar * adjugate_lapack(A, lu, piv).conj().T


def det_pushforward_lapack(A, lu, piv, A_dot):
    """``det_pushforward`` for one large matrix: ``tr(adj(A) A_dot)`` from the forward's LU."""
    return np.sum(adjugate_lapack(A, lu, piv) * A_dot.T)


# --- slogdet -------------------------------------------------------------------------------


@jit
def slogdet_pullback_batched(lu, piv, sign, sign_bar, logabsdet_bar):
    """Return ``A_bar = (logabsdet_bar + i Im(conj(sign) sign_bar)) A^-H`` (b, n, n).

    ``lu`` (b, n, n), ``piv`` (b, n) int32 from the forward's ``lu_factor_batched``; ``sign``,
    ``sign_bar`` (b,) of ``lu``'s dtype; ``logabsdet_bar`` (b,) real.
    """
    b, n, _ = lu.shape
    if (
        lu.shape != (b, n, n)
        or piv.shape != (b, n)
        or sign.shape != (b,)
        or sign_bar.shape != (b,)
        or logabsdet_bar.shape != (b,)
    ):
        raise ValueError("slogdet_pullback_batched: need lu (b, n, n), piv (b, n), the rest (b,)")
    nl = _lanes(b, n * n)
    dt = lu.dtype
    A_bar = np.empty((b, n, n), dtype=dt)
    F = np.empty((n, n, nl), dtype=dt)
    P = np.empty((n, nl), dtype=np.int32)
    Z = np.empty((n, n, nl), dtype=dt)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(lu, t0, nb, F)
        _load_piv_inplace(piv, t0, nb, P)
        for i in range(n):
            for j in range(n):
                for l in range(nb):
                    Z[i, j, l] = 1 if i == j else 0
        _lu_solve_inplace(F, P, 2, nb, Z)  # A^-H with the forward's factors
        for l in range(nb):
            z = sign[t0 + l].conjugate() * sign_bar[t0 + l]
            c = logabsdet_bar[t0 + l] + (z - z.conjugate()) / 2  # l_bar + i Im z
            for i in range(n):
                for j in range(n):
                    A_bar[t0 + l, i, j] = c * Z[i, j, l]
    return A_bar


@jit
def slogdet_pushforward_batched(lu, piv, sign, A_dot):
    """Return ``(sign_dot, logabsdet_dot)``, both (b,), from the forward's ``lu``, ``piv``.

    With ``tau = tr(A^-1 A_dot)``: ``logabsdet_dot = Re tau`` (real dtype) and
    ``sign_dot = i sign Im tau`` (``lu``'s dtype).
    """
    b, n, _ = lu.shape
    if (
        lu.shape != (b, n, n)
        or piv.shape != (b, n)
        or sign.shape != (b,)
        or A_dot.shape != lu.shape
    ):
        raise ValueError(
            "slogdet_pushforward_batched: need lu, A_dot (b, n, n), piv (b, n), sign (b,)"
        )
    nl = _lanes(b, n * n)
    dt = lu.dtype
    sign_dot = np.empty(b, dtype=dt)
    logabsdet_dot = np.empty(b, dtype=lu.real.dtype)
    F = np.empty((n, n, nl), dtype=dt)
    P = np.empty((n, nl), dtype=np.int32)
    Z = np.empty((n, n, nl), dtype=dt)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(lu, t0, nb, F)
        _load_piv_inplace(piv, t0, nb, P)
        _load_inplace(A_dot, t0, nb, Z)
        _lu_solve_inplace(F, P, 0, nb, Z)  # A^-1 A_dot
        for l in range(nb):
            tau = dt.type(0)
            for i in range(n):
                tau += Z[i, i, l]
            logabsdet_dot[t0 + l] = tau.real
            sign_dot[t0 + l] = sign[t0 + l] * (tau - tau.conjugate()) / 2
    return sign_dot, logabsdet_dot


def slogdet_pullback(lu, piv, sign, sign_bar, logabsdet_bar):
    """``slogdet_pullback_batched`` for one matrix; ``sign``, ``sign_bar``, ``logabsdet_bar`` scalars."""
    dt = lu.dtype
    return slogdet_pullback_batched(
        lu[None],
        piv[None],
        np.asarray(sign, dtype=dt).reshape(1),
        np.asarray(sign_bar, dtype=dt).reshape(1),
        np.asarray(logabsdet_bar, dtype=lu.real.dtype).reshape(1),
    )[0]


def slogdet_pushforward(lu, piv, sign, A_dot):
    """``slogdet_pushforward_batched`` for one matrix; returns two 0-d arrays."""
    sign_dot, logabsdet_dot = slogdet_pushforward_batched(
        lu[None], piv[None], np.asarray(sign, dtype=lu.dtype).reshape(1), A_dot[None]
    )
    return sign_dot[0], logabsdet_dot[0]


def slogdet_pullback_lapack(lu, piv, sign, sign_bar, logabsdet_bar):
    """``slogdet_pullback`` for one large matrix: ``A^-H`` from the forward's LU."""
    c = logabsdet_bar
    if np.iscomplexobj(lu):
        c = c + 1j * (np.conj(sign) * sign_bar).imag
    return c * inverse_lapack(lu, piv, trans=2)


def slogdet_pushforward_lapack(lu, piv, sign, A_dot):
    """``slogdet_pushforward`` for one large matrix: ``tr(A^-1 A_dot)`` by ``getrs``."""
    tau = np.trace(getrs(lu, piv, A_dot))
    sign_dot = sign * 1j * tau.imag if np.iscomplexobj(tau) else np.zeros_like(sign)
    return sign_dot, tau.real


@jit
def slogdet_inverse4(A):
    """Return ``(sign, logabsdet, Z)`` of one real 4x4 matrix ``A``, with ``Z = A^-T``.

    ``np.linalg.slogdet(A)`` and the matrix its pullback scales (``A_bar = logabsdet_bar Z``),
    from one LU factorization with partial pivoting in registers (``kernels._lu4``, the
    arithmetic of ``kernels.lu.lu_factor_batched``); ``A`` is float64 or float32, C-contiguous,
    and is not written. ``sign`` and ``logabsdet`` are float64: the row swaps and negative
    pivots give the sign, and ``logabsdet`` sums ``log|u_kk|`` in float64 in the pivots' order
    (numpy's order). An exactly zero pivot gives ``sign = 0``, ``logabsdet = -inf`` and a ``Z``
    of inf/NaN; NaN in gives NaN out. ``Z`` is a new array of ``A``'s dtype.
    """
    p0, p1, p2, r0, r1, r2, r3 = _factor(A.reshape((1, 4, 4)), 0)
    d0, d1, d2, d3 = r0[0], r1[1], r2[2], r3[3]
    if d0 == 0 or d1 == 0 or d2 == 0 or d3 == 0:
        sign, logabsdet = 0.0, -np.inf
    else:
        negative = (p0 != 0) + (p1 != 1) + (p2 != 2)
        negative += (d0 < 0) + (d1 < 0) + (d2 < 0) + (d3 < 0)
        sign = -1.0 if negative % 2 else 1.0
        logabsdet = np.log(abs(np.float64(d0))) + np.log(abs(np.float64(d1)))
        logabsdet += np.log(abs(np.float64(d2)))
        logabsdet += np.log(abs(np.float64(d3)))
    one, zero = A.dtype.type(1), A.dtype.type(0)
    R0, R1, R2, R3 = one / d0, one / d1, one / d2, one / d3
    q = np.arange(4)  # the row swaps as a permutation: row i of P^T I is e_q[i]
    q[0], q[p0] = q[p0], q[0]
    q[1], q[p1] = q[p1], q[1]
    q[2], q[p2] = q[p2], q[2]
    Z = np.empty_like(A)
    for j in range(4):  # column j of A^-1 is row j of Z
        w0, w1, w2, w3 = _substitute(
            one if q[0] == j else zero,
            one if q[1] == j else zero,
            one if q[2] == j else zero,
            one if q[3] == j else zero,
            r0,
            r1,
            r2,
            r3,
            R0,
            R1,
            R2,
            R3,
        )
        Z[j, 0], Z[j, 1], Z[j, 2], Z[j, 3] = w0, w1, w2, w3
    return sign, logabsdet, Z
