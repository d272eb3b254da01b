"""The matrix exponential of a stack of small matrices and its Frechet derivative, compiled.

``expm_forward_batched`` is the scaling-and-squaring Pade algorithm of the rule
:mod:`rules.linalg.expm` (Al-Mohy and Higham 2009): one degree ``m`` for the whole stack, a
scaling ``s[t]`` per matrix, from the same 1-norm bounds; ``expm_frechet_batched`` is the exact
Frechet derivative of that approximant (Al-Mohy and Higham 2009b, Algorithm 6.4), reusing the
intermediates the forward pass keeps. The derivation, the choice of ``m`` and ``s`` and the
references live in the rule; here the same steps run in one compiled call per stack, where the
rule's numpy path makes some 25 calls of about a microsecond each on a 4x4 matrix.

Operands are C-contiguous ``(b, n, n)`` stacks of float64 or complex128 (the rule computes
float32 input in double, as ``scipy.linalg.expm`` does). The kept intermediates, all scaled by
``2^-s[t]`` where the rule's are:

* ``P[t]`` (4, n, n): ``A, A^2, A^4, A^6`` (``A^6`` only for ``m >= 7``);
* ``F[t]`` (k, n, n): ``W, Q`` and, for ``m = 9``, ``A^8``; for ``m = 13``, ``W1, Z1`` too
  (:func:`_slots`), with ``Q = (V - U)^-1``;
* ``S[t, k]``: the matrix squared in step ``k`` (``S[t, 0] = r_m(2^-s A)``), for
  ``k < max(s[t], 1)``.

``Q`` is the inverse from an LU factorization with partial pivoting (LAPACK ``getf2``'s pivot
order); an exactly zero pivot makes ``Q`` all NaN, as the rule's numpy path returns for a
matrix LAPACK calls singular (only reached with NaN or inf input). NaN in gives NaN out.

Numba's cache does not notice edits to the helpers of :mod:`kernels._smallmat`: clear
``src/kernels/__pycache__/*.nbi|*.nbc`` after changing them.
"""

import numpy as np

from kernels._jit import jit
from kernels._smallmat import (
    _lanes,
    _load_inplace,
    _lower_unit_solve_inplace,
    _lu_partial_inplace,
    _mul_nn_inplace,
    _store_inplace,
    _swap_rows_inplace,
    _upper_solve_inplace,
)

__all__ = ["PADE", "THETA", "expm_forward_batched", "expm_frechet_batched"]

# Al-Mohy and Higham 2009, Table 3.1 (THETA below) and the Pade numerators' b_0 .. b_m
# (PADE below), as tuples padded with zeros to one length (one type, chosen at run time):
# module globals are frozen into the compiled code.
_THETA3 = 1.495585217958292e-2
_THETA5 = 2.539398330063230e-1
_THETA7 = 9.504178996162932e-1
_THETA9 = 2.097847961257068e0
_THETA13 = 5.371920351148152e0
_B3 = (120.0, 60.0, 12.0, 1.0) + (0.0,) * 10
_B5 = (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0) + (0.0,) * 8
_B7 = (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0) + (0.0,) * 6
_B9 = (
    17643225600.0,
    8821612800.0,
    2075673600.0,
    302702400.0,
    30270240.0,
    2162160.0,
    110880.0,
    3960.0,
    90.0,
    1.0,
) + (0.0,) * 4
_B13 = (
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
)

THETA = {3: _THETA3, 5: _THETA5, 7: _THETA7, 9: _THETA9, 13: _THETA13}
"""Largest ``eta`` for which ``r_m`` is accurate to double precision (Al-Mohy and Higham 2009,
Table 3.1), by degree ``m``: the table of the rule's numpy path too."""

PADE = {m: b[: m + 1] for m, b in ((3, _B3), (5, _B5), (7, _B7), (9, _B9), (13, _B13))}
"""The ``[m/m]`` Pade numerators' ``b_0 .. b_m`` of ``exp``, by degree ``m`` (unpadded)."""


@jit
def _coefficients(m):
    """Return the Pade numerator's ``b_0 .. b_m`` of degree ``m``, padded with zeros to 14."""
    if m == 3:
        return _B3
    if m == 5:
        return _B5
    if m == 7:
        return _B7
    if m == 9:
        return _B9
    return _B13


@jit
def _slots(m):
    """Return the number of lane blocks ``F`` keeps per block for degree ``m`` (module doc)."""
    if m == 13:
        return 4  # W1, Z1, W, Q
    if m == 9:
        return 3  # A^8, W, Q
    return 2  # W, Q


# --- lane-block helpers (kernels._smallmat's layout: X[i, j, l], the lane l innermost) ----------


@jit
def _mul_add_inplace(a, b, nb, out):
    """``out <- out + a @ b`` lane by lane."""
    for i in range(out.shape[0]):
        for r in range(a.shape[1]):
            for j in range(out.shape[1]):
                for l in range(nb):
                    out[i, j, l] += a[i, r, l] * b[r, j, l]


@jit
def _norms_inplace(a, t0, nb, work, norms, k):
    """``norms[t0 + l, k] <- ||a_l||_1`` (largest absolute column sum), NaN for a NaN column.

    Column sums lane by lane (``work`` (2, lanes) holds them and the running maxima), so the
    loops vectorise across matrices as the products do.
    """
    n = a.shape[0]
    c, best = work[0], work[1]
    for l in range(nb):
        best[l] = 0.0
    for j in range(n):
        for l in range(nb):
            c[l] = 0.0
        for i in range(n):
            for l in range(nb):
                c[l] += abs(a[i, j, l])
        for l in range(nb):
            v = c[l]
            if v > best[l] or np.isnan(v):  # a NaN maximum stays NaN (v > NaN is False)
                best[l] = v
    for l in range(nb):
        norms[t0 + l, k] = best[l]


@jit
def _nan_max(a, b):
    """``np.maximum(a, b)`` for floats: NaN when either is NaN."""
    if np.isnan(a) or np.isnan(b):
        return np.nan
    return max(a, b)


@jit
def _nan_min(a, b):
    """``np.minimum(a, b)`` for floats: NaN when either is NaN."""
    if np.isnan(a) or np.isnan(b):
        return np.nan
    return min(a, b)


@jit
def _identity_inplace(nb, out):
    """``out <- I`` on the first ``nb`` lanes."""
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            for l in range(nb):
                out[i, j, l] = 1 if i == j else 0


@jit
def _nan_where_singular_inplace(lu, nb, out):
    """``out <- NaN`` on the lanes whose LU ``lu`` has an exactly zero pivot.

    The rule's numpy path returns an all-NaN inverse where LAPACK calls the matrix singular.
    """
    n = lu.shape[0]
    for l in range(nb):
        for k in range(n):
            if lu[k, k, l] == 0:
                for i in range(n):
                    for j in range(n):
                        out[i, j, l] = np.nan
                break


@jit
def _block_smax(s, t0, nb):
    """Return the largest ``s[t0 + l]`` of a lane block."""
    smax = 0
    for l in range(nb):
        smax = max(smax, s[t0 + l])
    return smax


# --- the forward pass ---------------------------------------------------------------------------


@jit
def _powers_inplace(m, t0, nb, A, P):
    """``P <- A, A^2, A^4`` and, for ``m >= 7``, ``A^6``: one lane block of the stack ``A``."""
    _load_inplace(A, t0, nb, P[0])
    _mul_nn_inplace(P[0], P[0], nb, P[1])
    _mul_nn_inplace(P[1], P[1], nb, P[2])
    if m >= 7:
        _mul_nn_inplace(P[2], P[1], nb, P[3])


@jit
def _degree(A, nl, scratch, work):
    """Return ``(m, eta5)``: the stack's degree and, for ``m = 13``, each matrix's ``eta_5``.

    From the 1-norms of ``A, A^2, A^4, A^6``, computed here in ``scratch`` and not kept: the
    forward pass computes the powers again once it knows ``m`` and ``s``, so that all it keeps
    is one allocation (``expm_forward_batched``).
    """
    b = A.shape[0]
    norms = np.empty((b, 4))
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(A, t0, nb, scratch[0])
        _mul_nn_inplace(scratch[0], scratch[0], nb, scratch[1])
        _mul_nn_inplace(scratch[1], scratch[1], nb, scratch[2])
        _mul_nn_inplace(scratch[2], scratch[1], nb, scratch[3])
        for k in range(4):
            _norms_inplace(scratch[k], t0, nb, work, norms, k)
    eta5 = np.zeros(b)
    m = 3
    for t in range(b):
        n2, n4 = norms[t, 1], norms[t, 2]
        eta1 = _nan_max(n4**0.25, (n2 * n4) ** (1 / 6))
        if not eta1 <= _THETA3:
            m = 5
            if not eta1 <= _THETA5:
                m = 7
                break
    if m <= 5:
        return m, eta5
    for t in range(b):
        n1, n2, n4, n6 = norms[t, 0], norms[t, 1], norms[t, 2], norms[t, 3]
        d8 = _nan_min(n4**0.25, (n2 * n6) ** 0.125)
        eta3 = _nan_max(n6 ** (1 / 6), d8)
        eta5[t] = _nan_min(_nan_min(eta3, _nan_max(d8, (n4 * n6) ** 0.1)), n1)
        if not eta3 <= _THETA7:
            m = max(m, 9)
            if not eta3 <= _THETA9:
                m = 13
    return m, eta5


@jit
def _pade_inplace(m, bs, s, t0, nb, P, F, scratch):
    """One lane block: scale by ``2^-s``; ``W`` into ``F``, ``V - U`` and ``V + U`` into ``scratch``.

    ``P, F`` are the block's parts (module doc), ``P`` holding the unscaled powers on entry;
    ``scratch[2] <- V - U`` and ``scratch[0] <- V + U``.
    """
    n = P.shape[1]
    V, U, T = scratch[0], scratch[1], scratch[2]
    iw = _slots(m) - 2  # F[iw] = W, F[iw + 1] = Q
    if m == 9:
        _mul_nn_inplace(P[2], P[2], nb, F[0])  # A^8 (m = 9 has s = 0: no scaling)
    if _block_smax(s, t0, nb) > 0:  # A, A^2, A^4, A^6 times scale^1, ^2, ^4, ^6, scale = 2^-s
        for l in range(nb):
            scale = 2.0 ** (-s[t0 + l])
            for k in range(4):
                c = scale ** (1 if k == 0 else 2 * k)
                for i in range(n):
                    for j in range(n):
                        P[k, i, j, l] *= c
    A, A2, A4, A6 = P[0], P[1], P[2], P[3]
    W = F[iw]
    for i in range(n):
        for j in range(n):
            e = 1.0 if i == j else 0.0
            for l in range(nb):
                a2 = A2[i, j, l]
                if m == 13:
                    a4, a6 = A4[i, j, l], A6[i, j, l]
                    F[0, i, j, l] = bs[13] * a6 + bs[11] * a4 + bs[9] * a2  # W1
                    F[1, i, j, l] = bs[12] * a6 + bs[10] * a4 + bs[8] * a2  # Z1
                    W[i, j, l] = bs[7] * a6 + bs[5] * a4 + bs[3] * a2 + bs[1] * e  # W2
                    V[i, j, l] = bs[6] * a6 + bs[4] * a4 + bs[2] * a2 + bs[0] * e  # Z2
                else:
                    w = bs[1] * e + bs[3] * a2
                    v = bs[0] * e + bs[2] * a2
                    if m >= 5:
                        w += bs[5] * A4[i, j, l]
                        v += bs[4] * A4[i, j, l]
                    if m >= 7:
                        w += bs[7] * A6[i, j, l]
                        v += bs[6] * A6[i, j, l]
                    if m == 9:
                        w += bs[9] * F[0, i, j, l]
                        v += bs[8] * F[0, i, j, l]
                    W[i, j, l] = w
                    V[i, j, l] = v
    if m == 13:
        _mul_add_inplace(A6, F[0], nb, W)  # W = A6 W1 + W2
        _mul_add_inplace(A6, F[1], nb, V)  # V = A6 Z1 + Z2
    _mul_nn_inplace(A, W, nb, U)
    for i in range(n):
        for j in range(n):
            for l in range(nb):
                T[i, j, l] = V[i, j, l] - U[i, j, l]
                V[i, j, l] += U[i, j, l]


@jit
def _squares_inplace(s, t0, nb, S):
    """Return the block's largest ``s``; ``S[k + 1] <- S[k]^2`` on lanes where ``s > k``.

    Lanes with ``s <= k`` keep their matrix in step ``k``, so ``S[k]`` holds ``R_min(k, s)``
    and ``S[smax]`` the result.
    """
    n = S.shape[1]
    smax = _block_smax(s, t0, nb)
    for k in range(smax):
        _mul_nn_inplace(S[k], S[k], nb, S[k + 1])
        for l in range(nb):
            if s[t0 + l] <= k:
                for i in range(n):
                    for j in range(n):
                        S[k + 1, i, j, l] = S[k, i, j, l]
    return smax


@jit
def expm_forward_batched(A):
    """Return ``(X, m, s, P, F, S)``: ``X[t] = r_m(2^-s[t] A[t])^(2^s[t])`` and the kept parts.

    ``P, F, S`` are lane blocks ``(blocks, k, n, n, lanes)`` (:mod:`kernels._smallmat`), the
    input of :func:`expm_frechet_batched`; for one matrix (``b = 1``) there is one lane, so
    ``P[0, k, :, :, 0]`` is the matrix itself.
    """
    b, n = A.shape[0], A.shape[1]
    nl = _lanes(b, n * n)
    nblk = (b + nl - 1) // nl
    scratch = np.empty((4, n, n, nl), dtype=A.dtype)
    m, eta5 = _degree(A, nl, scratch, np.empty((2, nl)))
    s = np.zeros(b, dtype=np.int64)
    if m == 13:
        for t in range(b):
            e = np.ceil(np.log2(eta5[t] / _THETA13))
            if np.isfinite(e) and e > 0:
                s[t] = int(e)
    smax = 0
    for t in range(b):
        smax = max(smax, s[t])
    # P, F and S in one allocation: as separate arrays, glibc gave the memory of a 10000x4 stack
    # back to the OS on free and page-faulted it in again on every call (kernels._alloc), which
    # took two thirds of the forward pass
    block = n * n * nl
    sizes = (nblk * 4 * block, nblk * _slots(m) * block, nblk * (smax + 1) * block)
    buf = np.empty(sizes[0] + sizes[1] + sizes[2], dtype=A.dtype)
    P = buf[: sizes[0]].reshape((nblk, 4, n, n, nl))
    F = buf[sizes[0] : sizes[0] + sizes[1]].reshape((nblk, _slots(m), n, n, nl))
    S = buf[sizes[0] + sizes[1] :].reshape((nblk, smax + 1, n, n, nl))
    X = np.empty_like(A)
    piv = np.empty((n, nl), dtype=np.int32)
    sign = np.empty(nl, dtype=np.int64)
    bs = _coefficients(m)
    for blk in range(nblk):
        t0 = blk * nl
        nb = min(nl, b - t0)
        Pb, Fb, Sb = P[blk], F[blk], S[blk]
        _powers_inplace(m, t0, nb, A, Pb)
        _pade_inplace(m, bs, s, t0, nb, Pb, Fb, scratch)
        # Q = (V - U)^-1 (kernels.inverse's steps; helpers called from here, not from a helper:
        # each level of calls compiles its callees' code again), R_0 = Q (V + U), the squares
        T, Q = scratch[2], Fb[_slots(m) - 1]
        _lu_partial_inplace(nb, T, piv, sign)
        _identity_inplace(nb, Q)
        _swap_rows_inplace(piv, nb, False, Q)  # P^T I
        _lower_unit_solve_inplace(T, nb, Q)
        _upper_solve_inplace(T, nb, Q)
        _nan_where_singular_inplace(T, nb, Q)
        _mul_nn_inplace(Q, scratch[0], nb, Sb[0])
        last = _squares_inplace(s, t0, nb, Sb)
        _store_inplace(Sb[last], t0, nb, X)
    return X, m, s, P, F, S


# --- the Frechet derivative ---------------------------------------------------------------------


@jit
def _frechet_inplace(m, bs, s, t0, nb, P, F, S, E, M, L):
    """``L <- L(A, E)`` on one lane block (``E`` scaled already): Algorithm 6.4, step by step."""
    n = E.shape[0]
    A, A2, A4, A6 = P[0], P[1], P[2], P[3]
    M2, M4, M6, Lw, Lv, Lu, T = M[0], M[1], M[2], M[3], M[4], M[5], M[6]
    iw = _slots(m) - 2
    _mul_nn_inplace(A, E, nb, M2)  # M_k = L_{x^k}(A, E)
    _mul_add_inplace(E, A, nb, M2)
    if m >= 5:
        _mul_nn_inplace(A2, M2, nb, M4)
        _mul_add_inplace(M2, A2, nb, M4)
    if m >= 7:
        _mul_nn_inplace(A4, M2, nb, M6)
        _mul_add_inplace(M4, A2, nb, M6)
    if m == 9:
        _mul_nn_inplace(A4, M4, nb, T)  # M_8
        _mul_add_inplace(M4, A4, nb, T)
    for i in range(n):
        for j in range(n):
            for l in range(nb):
                m2 = M2[i, j, l]
                if m == 13:
                    m4, m6 = M4[i, j, l], M6[i, j, l]
                    L[i, j, l] = bs[13] * m6 + bs[11] * m4 + bs[9] * m2  # L of W1
                    T[i, j, l] = bs[12] * m6 + bs[10] * m4 + bs[8] * m2  # L of Z1
                    Lw[i, j, l] = bs[7] * m6 + bs[5] * m4 + bs[3] * m2  # L of W2
                    Lv[i, j, l] = bs[6] * m6 + bs[4] * m4 + bs[2] * m2  # L of Z2
                else:
                    w = bs[3] * m2
                    v = bs[2] * m2
                    if m >= 5:
                        w += bs[5] * M4[i, j, l]
                        v += bs[4] * M4[i, j, l]
                    if m >= 7:
                        w += bs[7] * M6[i, j, l]
                        v += bs[6] * M6[i, j, l]
                    if m == 9:
                        w += bs[9] * T[i, j, l]
                        v += bs[8] * T[i, j, l]
                    Lw[i, j, l] = w
                    Lv[i, j, l] = v
    if m == 13:
        _mul_add_inplace(A6, L, nb, Lw)  # L of W = A6 W1 + W2
        _mul_add_inplace(M6, F[0], nb, Lw)
        _mul_add_inplace(A6, T, nb, Lv)  # L of V = A6 Z1 + Z2
        _mul_add_inplace(M6, F[1], nb, Lv)
    _mul_nn_inplace(A, Lw, nb, Lu)  # L of U = A W
    _mul_add_inplace(E, F[iw], nb, Lu)
    # R = Q (V + U) with Q = (V - U)^-1:  L_R = Q (L_U + L_V + (L_U - L_V) R)
    for i in range(n):
        for j in range(n):
            for l in range(nb):
                T[i, j, l] = Lu[i, j, l] + Lv[i, j, l]
                Lw[i, j, l] = Lu[i, j, l] - Lv[i, j, l]
    _mul_add_inplace(Lw, S[0], nb, T)
    _mul_nn_inplace(F[iw + 1], T, nb, L)
    for k in range(_block_smax(s, t0, nb)):  # L of R^2 where s > k
        _mul_nn_inplace(S[k], L, nb, T)
        _mul_add_inplace(L, S[k], nb, T)
        for i in range(n):
            for j in range(n):
                for l in range(nb):
                    if s[t0 + l] > k:
                        L[i, j, l] = T[i, j, l]


@jit
def expm_frechet_batched(m, s, P, F, S, E, adjoint):
    """Return ``L(A[t], E[t])``, or ``L(A[t], E[t]^H)^H`` when ``adjoint`` (the pullback)."""
    b, n = E.shape[0], E.shape[1]
    nl = P.shape[4]
    out = np.empty_like(E)
    M = np.empty((7, n, n, nl), dtype=P.dtype)
    Eb = np.empty((n, n, nl), dtype=P.dtype)
    L = np.empty((n, n, nl), dtype=P.dtype)
    bs = _coefficients(m)
    for blk in range(P.shape[0]):
        t0 = blk * nl
        nb = min(nl, b - t0)
        for l in range(nb):
            c = 2.0 ** (-s[t0 + l])
            for i in range(n):
                for j in range(n):
                    Eb[i, j, l] = (E[t0 + l, j, i].conjugate() if adjoint else E[t0 + l, i, j]) * c
        _frechet_inplace(m, bs, s, t0, nb, P[blk], F[blk], S[blk], Eb, M, L)
        for l in range(nb):
            for i in range(n):
                for j in range(n):
                    out[t0 + l, i, j] = L[j, i, l].conjugate() if adjoint else L[i, j, l]
    return out
