"""LU kernels: a batched in-kernel factorization and the pullback/pushforward of ``P L U``.

Forward helpers for stacks of small square matrices (one compiled call, no LAPACK per matrix):

* ``lu_factor_batched(A) -> (lu, piv)`` in ``scipy.linalg.lu_factor`` format per matrix, so
  ``solve``, ``inv``, ``det`` and ``slogdet`` pullbacks reuse the factorization of the forward;
* ``lu_solve_batched(lu, piv, B, trans)``, ``lu_unpack_batched(lu, piv) -> (perm, L, U)``.

Derivatives of ``scipy.linalg.lu(A, p_indices=True)``: ``A = L[perm] @ U`` (``A = P L U``),
``A`` of shape (m, n), ``k = min(m, n)``, ``L`` (m, k) unit lower trapezoidal, ``U`` (k, n)
upper trapezoidal. Square, tall and wide are all supported.

Pushforward (de Hoog, Anderssen & Lukas 2011, eq. 3.6, square case): with
``F = L1^-1 (P^T A_dot)[:k, :k] U1^-1``, ``L1_dot = L1 tril(F, -1)``, ``U1_dot = triu(F) U1``;
the extra block is ``L2_dot = ((P^T A_dot)[k:] - L2 U_dot) U^-1`` (tall) or
``U2_dot = L^-1 ((P^T A_dot)[:, k:] - L_dot U2)`` (wide).

Pullback (the adjoint of the above), with ``L = [L1; L2]`` and ``U = [U1, U2]``::

    M = tril(L^H L_bar, -1) + triu(U_bar U^H) - L2^H L2_bar - U2_bar U2^H      (k x k)
    W = [M, U2_bar] (wide)   or   W = [M; L2_bar] (tall)   or   W = M (square)
    W[:, :k] <- W[:, :k] U1^-H,   W[:k] <- L1^-H W[:k],   A_bar = P W

The square case is ChainRules.jl's ``lu`` rrule,
``A_bar = P L^-H (tril(L^H L_bar, -1) + triu(U_bar U^H)) U^-H``; the rectangular blocks
follow from ``L2 = (P^T A)[k:] U^-1`` (tall) and ``U2 = L^-1 (P^T A)[:, k:]`` (wide).

A singular ``U`` (zero pivot) makes ``U^-1`` undefined: the kernels return inf/nan, and so
does NaN input; they never raise.

References
----------
F. R. de Hoog, R. S. Anderssen, M. A. Lukas, "Differentiation of matrix functionals using
triangular factorization", Math. Comp. 80 (2011), 1585-1600, doi:10.1090/S0025-5718-2011-02451-8.
M. B. Giles, "An extended collection of matrix derivative results for forward and reverse
mode algorithmic differentiation", Oxford NA report 08/01 (2008).
"""

import numpy as np

from kernels._blas import trsm_c_inplace
from kernels._flat_lanes import NL
from kernels._jit import jit, jit_inline
from kernels._lu4 import lu_factor4, lu_solve4
from kernels._smallmat import (
    _div,
    _lanes,
    _load_inplace,
    _load_piv_inplace,
    _lower_unit_adj_solve_inplace,
    _lower_unit_solve_inplace,
    _lu_partial_inplace,
    _lu_solve_inplace,
    _store_inplace,
    _upper_right_adj_solve_inplace,
    _upper_right_solve_inplace,
)

# --- forward helpers -----------------------------------------------------------------------


@jit
def lu_factor_batched(A):
    """Return ``(lu, piv)`` with ``A[i] = P L U`` packed as ``scipy.linalg.lu_factor`` does.

    ``A`` (b, n, n); ``lu`` (b, n, n) of the same dtype; ``piv`` (b, n) int32, 0-based swaps.
    An exactly singular matrix factors with a zero on the diagonal of ``U``, as in LAPACK.
    4x4 matrices are factored one at a time in registers (``kernels._lu4``), the same
    arithmetic as the lane blocks of other orders.
    """
    _, n, n2 = A.shape
    if n2 != n:
        raise ValueError("lu_factor_batched: A must be a stack of square matrices (b, n, n)")
    if n == 4:
        return lu_factor4(A)
    return _lu_factor_lanes(A)


@jit
def _lu_factor_lanes(A):
    """:func:`lu_factor_batched` on lane blocks, for any order (the tests compare 4x4 with it)."""
    b, n, _ = A.shape
    nl = _lanes(b, n * n)
    lu = np.empty_like(A)
    piv = np.empty((b, n), dtype=np.int32)
    W = np.empty((n, n, nl), dtype=A.dtype)
    P = np.empty((n, nl), dtype=np.int32)
    sign = np.empty(nl, dtype=np.int64)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(A, t0, nb, W)
        _lu_partial_inplace(nb, W, P, sign)
        _store_inplace(W, t0, nb, lu)
        for l in range(nb):
            for k in range(n):
                piv[t0 + l, k] = P[k, l]
    return lu, piv


# lu_solve_batched: one matrix at a time with the right-hand sides along contiguous rows
# (_lu_solve_rows) from these sizes on, for 8-byte dtypes; lane blocks otherwise. A/B on 1000
# matrices, one thread, trans 0 and 2: float64 16x16 with 16 right-hand sides 1.0 against 1.3 ms,
# 12 with 12 0.57 against 0.69 ms, complex128 16 with 16 4.6 against 5.5 ms; lanes stay ahead
# with one right-hand side (0.35 against 0.56 ms at 16) and for float32 with trans 0.
_ROWS_MIN_N = 12
_ROWS_MIN_K = 8


@jit
def _lu_solve_rows(lu, piv, B, trans):
    """:func:`lu_solve_batched` one matrix at a time: each update is an axpy along a row of ``B``."""
    b, n, k = B.shape
    X = np.empty_like(B)
    w = np.empty((n, k), dtype=B.dtype)
    conj = trans == 2
    for t in range(b):
        F = lu[t]
        for i in range(n):
            for j in range(k):
                w[i, j] = B[t, i, j]
        if trans == 0:
            for i in range(n):  # P^T b, the swaps in order
                p = piv[t, i]
                if p != i:
                    for j in range(k):
                        w[i, j], w[p, j] = w[p, j], w[i, j]
            for i in range(n):  # L y = P^T b, unit diagonal
                for r in range(i):
                    c = F[i, r]
                    for j in range(k):
                        w[i, j] -= c * w[r, j]
            for i in range(n - 1, -1, -1):  # U x = y
                for r in range(i + 1, n):
                    c = F[i, r]
                    for j in range(k):
                        w[i, j] -= c * w[r, j]
                rcp = 1.0 / F[i, i]
                for j in range(k):
                    w[i, j] *= rcp
        else:
            for i in range(n):  # op(U) y = b: forward substitution
                for r in range(i):
                    c = np.conj(F[r, i]) if conj else F[r, i]
                    for j in range(k):
                        w[i, j] -= c * w[r, j]
                rcp = 1.0 / (np.conj(F[i, i]) if conj else F[i, i])
                for j in range(k):
                    w[i, j] *= rcp
            for i in range(n - 1, -1, -1):  # op(L) z = y: back substitution, unit diagonal
                for r in range(i + 1, n):
                    c = np.conj(F[r, i]) if conj else F[r, i]
                    for j in range(k):
                        w[i, j] -= c * w[r, j]
            for s in range(n):  # P z, the swaps in reverse order
                i = n - 1 - s
                p = piv[t, i]
                if p != i:
                    for j in range(k):
                        w[i, j], w[p, j] = w[p, j], w[i, j]
        for i in range(n):
            for j in range(k):
                X[t, i, j] = w[i, j]
    return X


@jit
def lu_solve_batched(lu, piv, B, trans):
    """Return ``X[i] = op(A[i])^-1 B[i]`` from ``lu_factor_batched`` output; B (b, n, k).

    ``trans`` as in ``scipy.linalg.lu_solve``: 0 for ``A``, 1 for ``A^T``, 2 for ``A^H``.
    4x4 matrices are solved one at a time in registers (``kernels._lu4``), the same arithmetic
    as the lane blocks of other orders.
    """
    b, n, k = B.shape
    if lu.shape != (b, n, n) or piv.shape != (b, n) or trans < 0 or trans > 2:
        raise ValueError("lu_solve_batched: need lu (b, n, n), piv (b, n), B (b, n, k), trans 0-2")
    if n == 4:
        return lu_solve4(lu, piv, B, trans)
    if n >= _ROWS_MIN_N and k >= _ROWS_MIN_K and B.itemsize >= 8:
        return _lu_solve_rows(lu, piv, B, trans)
    return _lu_solve_lanes(lu, piv, B, trans)


@jit
def _lu_solve_lanes(lu, piv, B, trans):
    """:func:`lu_solve_batched` on lane blocks, for any order (the tests compare 4x4 with it)."""
    b, n, k = B.shape
    nl = _lanes(b, n * max(n, k))
    X = np.empty_like(B)
    F = np.empty((n, n, nl), dtype=lu.dtype)
    P = np.empty((n, nl), dtype=np.int32)
    W = np.empty((n, k, nl), dtype=B.dtype)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(lu, t0, nb, F)
        _load_piv_inplace(piv, t0, nb, P)
        _load_inplace(B, t0, nb, W)
        _lu_solve_inplace(F, P, trans, nb, W)
        _store_inplace(W, t0, nb, X)
    return X


def lu_unpack_batched(lu, piv):
    """Return ``(perm, L, U)`` of ``scipy.linalg.lu(A, p_indices=True)`` from packed factors.

    ``lu`` (b, n, n), ``piv`` (b, n): ``A[i] = L[i][perm[i]] @ U[i]``; ``perm`` is int32.
    Plain numpy (vectorised over the stack), nothing to compile.
    """
    b, n, _ = lu.shape
    L = np.tril(lu, -1)
    idx = np.arange(n)
    L[:, idx, idx] = 1
    U = np.triu(lu)
    # rows of P^T A are A's rows in the order ``order``; perm is the inverse permutation
    order = np.broadcast_to(idx, (b, n)).copy()
    rows = np.arange(b)
    for k in range(n):
        p = piv[:, k]
        a, c = order[rows, k].copy(), order[rows, p].copy()
        order[rows, k], order[rows, p] = c, a
    perm = np.empty((b, n), dtype=np.int32)
    perm[rows[:, None], order] = idx
    return perm, L, U


# --- pullback ------------------------------------------------------------------------------


@jit
def _lu_pullback_block_inplace(L, U, L_bar, U_bar, nb, W):
    """Write ``P^T A_bar`` of a lane block into ``W`` (see the module docstring)."""
    m, k, _ = L.shape
    n = U.shape[1]
    for i in range(k):
        for j in range(k):
            if i > j:  # tril(L1^H L1_bar, -1) - U2_bar U2^H, with L[i, i] = 1
                for l in range(nb):
                    W[i, j, l] = L_bar[i, j, l]
                for r in range(i + 1, k):
                    for l in range(nb):
                        W[i, j, l] += L[r, i, l].conjugate() * L_bar[r, j, l]
                for r in range(k, n):
                    for l in range(nb):
                        W[i, j, l] -= U_bar[i, r, l] * U[j, r, l].conjugate()
            else:  # triu(U1_bar U1^H) - L2^H L2_bar
                for l in range(nb):
                    W[i, j, l] = 0
                for r in range(j, k):
                    for l in range(nb):
                        W[i, j, l] += U_bar[i, r, l] * U[j, r, l].conjugate()
                for r in range(k, m):
                    for l in range(nb):
                        W[i, j, l] -= L[r, i, l].conjugate() * L_bar[r, j, l]
    for i in range(k, m):  # tall: L2_bar
        for j in range(n):
            for l in range(nb):
                W[i, j, l] = L_bar[i, j, l]
    for i in range(k):  # wide: U2_bar
        for j in range(k, n):
            for l in range(nb):
                W[i, j, l] = U_bar[i, j, l]
    _upper_right_adj_solve_inplace(U, nb, W)  # first k columns: W U1^-H
    _lower_unit_adj_solve_inplace(L, nb, W)  # first k rows: L1^-H W


@jit_inline
def _lu_pullback_flat_sized(L, U, perm, L_bar, U_bar, A_bar, n):
    """``lu_pullback_batched`` for square orders 2 to 4 (``n`` a constant), flat lane blocks.

    One block ``w`` holds, per lane, the packed factors ``F = tril(L, -1) + triu(U)``, the
    packed cotangents ``G = tril(L_bar, -1) + triu(U_bar)`` (the only entries the formula
    reads) and the reciprocal pivots: every access is ``w`` plus a constant plus the lane
    (:mod:`kernels._flat_lanes`). The same operations in the same order as
    ``_lu_pullback_block_inplace``, so the same result bit for bit.
    """
    b = L.shape[0]
    nn = n * n
    w = np.empty((2 * nn + n) * NL, dtype=L.dtype)
    for t0 in range(0, b, NL):
        nb = min(NL, b - t0)
        for l in range(nb):
            t = t0 + l
            for i in range(n):
                for j in range(n):
                    lower = i > j
                    w[(i * n + j) * NL + l] = L[t, i, j] if lower else U[t, i, j]
                    w[(nn + i * n + j) * NL + l] = L_bar[t, i, j] if lower else U_bar[t, i, j]
        # G <- tril(L^H L_bar, -1) + triu(U_bar U^H), in place: row i reads rows below it
        # (lower part) and its own columns from j on (upper part), both still unchanged
        for i in range(n):
            for j in range(n):
                g = (nn + i * n + j) * NL
                if i > j:
                    for r in range(i + 1, n):
                        for l in range(nb):
                            w[g + l] += (
                                w[(r * n + i) * NL + l].conjugate() * w[(nn + r * n + j) * NL + l]
                            )
                else:
                    for l in range(nb):
                        w[g + l] = (
                            w[(nn + i * n + j) * NL + l] * w[(j * n + j) * NL + l].conjugate()
                        )
                    for r in range(j + 1, n):
                        for l in range(nb):
                            w[g + l] += (
                                w[(nn + i * n + r) * NL + l] * w[(j * n + r) * NL + l].conjugate()
                            )
        for j in range(n):
            for l in range(nb):
                w[(2 * nn + j) * NL + l] = _div(1, w[(j * n + j) * NL + l].conjugate())
        for j in range(n - 1, -1, -1):  # G <- G U^-H
            for i in range(n):
                g = (nn + i * n + j) * NL
                for r in range(j + 1, n):
                    for l in range(nb):
                        w[g + l] -= (
                            w[(nn + i * n + r) * NL + l] * w[(j * n + r) * NL + l].conjugate()
                        )
                for l in range(nb):
                    w[g + l] *= w[(2 * nn + j) * NL + l]
        for i in range(n - 2, -1, -1):  # G <- L^-H G
            for r in range(i + 1, n):
                for j in range(n):
                    for l in range(nb):
                        w[(nn + i * n + j) * NL + l] -= (
                            w[(r * n + i) * NL + l].conjugate() * w[(nn + r * n + j) * NL + l]
                        )
        for l in range(nb):  # A_bar = P G
            t = t0 + l
            for i in range(n):
                r = perm[t, i]
                for j in range(n):
                    A_bar[t, i, j] = w[(nn + r * n + j) * NL + l]


@jit_inline
def _lu_pullback_lanes(L, U, perm, L_bar, U_bar, A_bar):
    """``lu_pullback_batched`` for any shape, by ``kernels._smallmat``'s lane blocks."""
    b, m, k = L.shape
    n = U.shape[2]
    nl = _lanes(b, m * n)
    dt = L.dtype
    Lw, Lb = np.empty((m, k, nl), dtype=dt), np.empty((m, k, nl), dtype=dt)
    Uw, Ub = np.empty((k, n, nl), dtype=dt), np.empty((k, n, nl), dtype=dt)
    W = np.empty((m, n, nl), dtype=dt)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(L, t0, nb, Lw)
        _load_inplace(U, t0, nb, Uw)
        _load_inplace(L_bar, t0, nb, Lb)
        _load_inplace(U_bar, t0, nb, Ub)
        _lu_pullback_block_inplace(Lw, Uw, Lb, Ub, nb, W)
        for l in range(nb):  # A_bar = P W
            for i in range(m):
                r = perm[t0 + l, i]
                for j in range(n):
                    A_bar[t0 + l, i, j] = W[r, j, l]


@jit
def lu_pullback_batched(L, U, perm, L_bar, U_bar):
    """Return ``A_bar`` (b, m, n) for ``A[i] = L[i][perm[i]] @ U[i]``; see the module docstring.

    ``L``, ``L_bar`` (b, m, k); ``U``, ``U_bar`` (b, k, n); ``perm`` (b, m) int32.
    """
    b, m, k = L.shape
    n = U.shape[2]
    if (
        k != min(m, n)
        or U.shape != (b, k, n)
        or perm.shape != (b, m)
        or L_bar.shape != L.shape
        or U_bar.shape != U.shape
    ):
        raise ValueError(
            "lu_pullback_batched: need L, L_bar (b, m, k), U, U_bar (b, k, n), perm (b, m)"
        )
    A_bar = np.empty((b, m, n), dtype=L.dtype)
    if m == n == 4:
        _lu_pullback_flat_sized(L, U, perm, L_bar, U_bar, A_bar, 4)
    elif m == n == 3:
        _lu_pullback_flat_sized(L, U, perm, L_bar, U_bar, A_bar, 3)
    elif m == n == 2:
        _lu_pullback_flat_sized(L, U, perm, L_bar, U_bar, A_bar, 2)
    else:
        _lu_pullback_lanes(L, U, perm, L_bar, U_bar, A_bar)
    return A_bar


def lu_pullback(L, U, perm, L_bar, U_bar):
    """Return ``A_bar`` (m, n) for one ``A = L[perm] @ U``: ``lu_pullback_batched`` on a stack of 1."""
    return lu_pullback_batched(L[None], U[None], perm[None], L_bar[None], U_bar[None])[0]


# --- pushforward ---------------------------------------------------------------------------


@jit
def _lu_pushforward_block_inplace(L, U, X, nb, F, L_dot, U_dot):
    """Write ``L_dot``, ``U_dot`` of a lane block given ``X = P^T A_dot``; ``F`` is scratch."""
    m, k, _ = L.shape
    n = U.shape[1]
    for i in range(k):
        for j in range(k):
            for l in range(nb):
                F[i, j, l] = X[i, j, l]
    _lower_unit_solve_inplace(L, nb, F)
    _upper_right_solve_inplace(U, nb, F)  # F = L1^-1 X11 U1^-1
    for i in range(k):
        for j in range(k):
            if i > j:  # L1 tril(F, -1), unit diagonal of L1
                for l in range(nb):
                    L_dot[i, j, l] = F[i, j, l]
                for r in range(j + 1, i):
                    for l in range(nb):
                        L_dot[i, j, l] += L[i, r, l] * F[r, j, l]
            else:
                for l in range(nb):
                    L_dot[i, j, l] = 0
    for i in range(k):
        for j in range(k):
            for l in range(nb):
                U_dot[i, j, l] = 0
            for r in range(i, j + 1):  # triu(F) U1
                for l in range(nb):
                    U_dot[i, j, l] += F[i, r, l] * U[r, j, l]
    for i in range(k, m):  # tall: L2_dot = (X2 - L2 U_dot) U^-1
        for j in range(k):
            for l in range(nb):
                L_dot[i, j, l] = X[i, j, l]
            for r in range(j + 1):
                for l in range(nb):
                    L_dot[i, j, l] -= L[i, r, l] * U_dot[r, j, l]
            for r in range(j):
                for l in range(nb):
                    L_dot[i, j, l] -= L_dot[i, r, l] * U[r, j, l]
            for l in range(nb):
                L_dot[i, j, l] = _div(L_dot[i, j, l], U[j, j, l])
    for i in range(k):  # wide: U2_dot = L^-1 (X2 - L_dot U2)
        for j in range(k, n):
            for l in range(nb):
                U_dot[i, j, l] = X[i, j, l]
            for r in range(i):
                for l in range(nb):
                    U_dot[i, j, l] -= L_dot[i, r, l] * U[r, j, l] + L[i, r, l] * U_dot[r, j, l]


@jit
def lu_pushforward_batched(L, U, perm, A_dot):
    """Return ``(L_dot, U_dot)`` for ``A[i] = L[i][perm[i]] @ U[i]``; see the module docstring.

    ``L`` (b, m, k), ``U`` (b, k, n), ``perm`` (b, m) int32, ``A_dot`` (b, m, n).
    """
    b, m, k = L.shape
    n = U.shape[2]
    if k != min(m, n) or U.shape != (b, k, n) or perm.shape != (b, m) or A_dot.shape != (b, m, n):
        raise ValueError(
            "lu_pushforward_batched: need L (b, m, k), U (b, k, n), perm (b, m), A_dot (b, m, n)"
        )
    nl = _lanes(b, m * n)
    dt = L.dtype
    L_dot = np.empty((b, m, k), dtype=dt)
    U_dot = np.empty((b, k, n), dtype=dt)
    Lw, Ld = np.empty((m, k, nl), dtype=dt), np.empty((m, k, nl), dtype=dt)
    Uw, Ud = np.empty((k, n, nl), dtype=dt), np.empty((k, n, nl), dtype=dt)
    X = np.empty((m, n, nl), dtype=dt)
    F = np.empty((k, k, nl), dtype=dt)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(L, t0, nb, Lw)
        _load_inplace(U, t0, nb, Uw)
        for l in range(nb):  # X = P^T A_dot
            for i in range(m):
                r = perm[t0 + l, i]
                for j in range(n):
                    X[r, j, l] = A_dot[t0 + l, i, j]
        _lu_pushforward_block_inplace(Lw, Uw, X, nb, F, Ld, Ud)
        _store_inplace(Ld, t0, nb, L_dot)
        _store_inplace(Ud, t0, nb, U_dot)
    return L_dot, U_dot


def lu_pushforward(L, U, perm, A_dot):
    """Return ``(L_dot, U_dot)`` for one matrix: ``lu_pushforward_batched`` on a stack of 1."""
    L_dot, U_dot = lu_pushforward_batched(L[None], U[None], perm[None], A_dot[None])
    return L_dot[0], U_dot[0]


# --- large matrices: BLAS level 3 ------------------------------------------------------------
# Triangular solves run copy-free on C-ordered arrays (kernels._blas); products use numpy's
# ``@``: OpenBLAS ``trmm`` measured slower than ``gemm`` here (at n = 512).


def lu_pullback_blas(L, U, perm, L_bar, U_bar):
    """``lu_pullback`` for one large (m, n) matrix: BLAS-3 products and triangular solves.

    Same inputs and result as ``lu_pullback``. Reuses the forward's ``L``, ``U``: no
    refactorization, no inverse.
    """
    m, k = L.shape
    n = U.shape[1]
    dt = np.result_type(L, U, L_bar, U_bar)
    L1, U1 = np.ascontiguousarray(L[:k], dt), np.ascontiguousarray(U[:, :k], dt)
    # M = tril(L1^H L1_bar - U2_bar U2^H, -1) + triu(U1_bar U1^H - L2^H L2_bar)
    G = L1.conj().T @ L_bar[:k]
    H = U_bar[:, :k] @ U1.conj().T
    if n > k:
        G -= U_bar[:, k:] @ U[:, k:].conj().T
    if m > k:
        H -= L[k:].conj().T @ L_bar[k:]
    W = np.empty((m, n), dtype=dt)
    np.copyto(W[:k, :k], np.where(np.tri(k, k, -1, dtype=bool), G, H))
    if m > k:
        W[k:] = L_bar[k:]
    W[:k, k:] = U_bar[:, k:]
    Wk = W if n == k else np.ascontiguousarray(W[:, :k])
    trsm_c_inplace(U1, Wk, left=False, lower=False, trans=2, unit=False)  # W U1^-H
    if n > k:
        W[:, :k] = Wk
    trsm_c_inplace(L1, W[:k], left=True, lower=True, trans=2, unit=True)  # L1^-H W
    return W[perm]


def lu_pushforward_blas(L, U, perm, A_dot):
    """``lu_pushforward`` for one large (m, n) matrix: BLAS-3 products and triangular solves."""
    m, k = L.shape
    n = U.shape[1]
    dt = np.result_type(L, U, A_dot)
    L1, U1 = np.ascontiguousarray(L[:k], dt), np.ascontiguousarray(U[:, :k], dt)
    X = np.empty((m, n), dtype=dt)
    X[perm] = A_dot  # X = P^T A_dot
    F = np.ascontiguousarray(X[:k, :k])
    trsm_c_inplace(L1, F, left=True, lower=True, trans=0, unit=True)
    trsm_c_inplace(U1, F, left=False, lower=False, trans=0, unit=False)
    L_dot = np.empty((m, k), dtype=dt)
    U_dot = np.empty((k, n), dtype=dt)
    L_dot[:k] = L1 @ np.tril(F, -1)
    U_dot[:, :k] = np.triu(F) @ U1
    if m > k:  # L2_dot = (X2 - L2 U_dot) U^-1
        L2_dot = X[k:] - L[k:] @ U_dot
        trsm_c_inplace(U1, L2_dot, left=False, lower=False, trans=0, unit=False)
        L_dot[k:] = L2_dot
    if n > k:  # U2_dot = L^-1 (X2 - L_dot U2)
        U2_dot = X[:, k:] - L_dot @ U[:, k:]
        trsm_c_inplace(L1, U2_dot, left=True, lower=True, trans=0, unit=True)
        U_dot[:, k:] = U2_dot
    return L_dot, U_dot
