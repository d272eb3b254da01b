"""``scipy.linalg.lu`` for a stack of small square matrices: ``(perm, L, U)`` in one compiled call.

scipy 1.17 factors a stack one matrix at a time behind a Python loop, and unpacking packed
factors with numpy (``kernels.lu.lu_unpack_batched``) costs more than the factorization at 4x4.
``lu_batched`` factors in lane blocks with LAPACK ``getf2``'s partial pivoting (the pivot is the
first entry of largest ``|Re| + |Im|`` in its column, as ``izamax``; an exact zero pivot leaves
its column unscaled) and writes the unpacked factors directly; ``plu_batched`` writes
scipy's permutation matrix ``P`` in the same pass. Orders 2 to 4 run on the flat lane blocks of
:mod:`kernels._flat_lanes` (which vectorise across matrices), larger ones on the helpers of
:mod:`kernels._smallmat`, shared with ``kernels.lu.lu_factor_batched``; both give the same
factors bit for bit.

Conventions of ``scipy.linalg.lu(A, p_indices=True)``: ``A[t] = L[t][perm[t]] @ U[t]``, ``L``
unit lower triangular, ``U`` upper triangular, ``perm`` int32. With LAPACK's swaps ``piv``
(row ``k`` exchanged with row ``piv[k]``, in order) the rows of ``P^T A`` are ``A[order]``, where
``order`` is the identity with those swaps applied, and ``perm`` is the inverse of ``order``.
Partial pivoting is backward stable in practice: ``L U = P^T A + E`` with
``|E| <= c(n) u |L| |U|`` (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed.,
SIAM 2002, theorem 9.3), the bound LAPACK's ``getrf`` meets. NaN in gives NaN out; a singular
matrix gives a zero on the diagonal of ``U``, never an exception.
"""

import numpy as np

from kernels._alloc import empty_pair_like, empty_plu_like
from kernels._flat_lanes import (
    NL,
    _load_flat_inplace,
    _lu_flat_inplace,
    _order_flat_inplace,
)
from kernels._jit import jit, jit_inline
from kernels._smallmat import _lanes, _load_inplace, _lu_partial_inplace

# The rules call these kernels for stacks up to kernels.crossovers' *_FORWARD_STACK_MAX_N.


@jit_inline
def _unpack_flat_sized(A, perm, L, U, P, info, with_P, n):
    """``lu_batched``'s outputs for orders 2 to 4 (``n`` a constant), by flat lane blocks."""
    b = A.shape[0]
    W = np.empty(n * n * NL, dtype=A.dtype)
    piv = np.empty(n * NL, dtype=np.int32)
    order = np.empty(n * NL, dtype=np.int32)
    best = np.empty(NL, dtype=P.dtype)  # the real dtype of A
    zero, one = A.dtype.type(0), A.dtype.type(1)
    p0, p1 = P.dtype.type(0), P.dtype.type(1)
    for t0 in range(0, b, NL):
        nb = min(NL, b - t0)
        _load_flat_inplace(A, t0, nb, n, W)
        _lu_flat_inplace(W, piv, best, n, nb)
        _order_flat_inplace(piv, n, nb, order)
        for l in range(nb):
            t = t0 + l
            for i in range(n):
                for j in range(n):
                    w = W[(i * n + j) * NL + l]
                    L[t, i, j] = w if j < i else (one if j == i else zero)
                    U[t, i, j] = w if j >= i else zero
            for i in range(n):  # row order[i] of A is row i of L U: P[order[i], i] = 1
                perm[t, order[i * NL + l]] = i
            info[t] = 0
            for i in range(n - 1, -1, -1):  # the first exactly zero pivot, 1-based (getrf)
                if W[(i * n + i) * NL + l] == 0:
                    info[t] = i + 1
            if with_P:
                for i in range(n):
                    for j in range(n):
                        P[t, i, j] = p0
                for i in range(n):
                    P[t, order[i * NL + l], i] = p1


@jit_inline
def _unpack_lanes(A, perm, L, U, P, info, with_P):
    """``lu_batched``'s outputs for any order, by ``kernels._smallmat``'s lane blocks."""
    b, n, _ = A.shape
    nl = _lanes(b, n * n)
    W = np.empty((n, n, nl), dtype=A.dtype)
    piv = np.empty((n, nl), dtype=np.int32)
    sign = np.empty(nl, dtype=np.int64)
    order = np.empty(n, dtype=np.int32)
    zero, one = A.dtype.type(0), A.dtype.type(1)
    p0, p1 = P.dtype.type(0), P.dtype.type(1)
    Pf = P.reshape(-1)
    for q in range(Pf.size):  # one contiguous run: vector stores (at 4x4, per lane is faster)
        Pf[q] = p0
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(A, t0, nb, W)
        _lu_partial_inplace(nb, W, piv, sign)
        for l in range(nb):
            t = t0 + l
            for i in range(n):
                for j in range(i):
                    L[t, i, j] = W[i, j, l]
                    U[t, i, j] = zero
                L[t, i, i] = one
                U[t, i, i] = W[i, i, l]
                for j in range(i + 1, n):
                    L[t, i, j] = zero
                    U[t, i, j] = W[i, j, l]
            for k in range(n):
                order[k] = k
            for k in range(n):  # the swaps in the order getf2 made them
                p = piv[k, l]
                order[k], order[p] = order[p], order[k]
            for i in range(n):
                perm[t, order[i]] = i
            info[t] = 0
            for i in range(n - 1, -1, -1):
                if W[i, i, l] == 0:
                    info[t] = i + 1
            if with_P:  # zeros written before the loop
                for i in range(n):
                    P[t, order[i], i] = p1


@jit_inline
def _unpack(A, with_P):
    """``(P, perm, L, U, info)``; ``P`` is empty, shape (0, n, n), unless ``with_P``."""
    b, n, n2 = A.shape
    if n2 != n:
        raise ValueError("lu_batched: A must be a stack of square matrices (b, n, n)")
    if with_P:
        P, L, U = empty_plu_like(A)  # one allocation (kernels._alloc)
    else:
        L, U = empty_pair_like(A, A)
        P = np.empty((0, n, n), dtype=A.real.dtype)
    perm = np.empty((b, n), dtype=np.int32)
    info = np.empty(b, dtype=np.int32)
    if n == 4:
        _unpack_flat_sized(A, perm, L, U, P, info, with_P, 4)
    elif n == 3:
        _unpack_flat_sized(A, perm, L, U, P, info, with_P, 3)
    elif n == 2:
        _unpack_flat_sized(A, perm, L, U, P, info, with_P, 2)
    else:  # n == 1 and n > 4
        _unpack_lanes(A, perm, L, U, P, info, with_P)
    return P, perm, L, U, info


@jit
def lu_batched(A):
    """Return ``(perm, L, U)`` with ``A[t] = L[t][perm[t]] @ U[t]`` for a stack ``A`` (b, n, n).

    ``L`` and ``U`` (b, n, n) in ``A``'s dtype, ``perm`` (b, n) int32; see the module docstring.
    """
    _, perm, L, U, _ = _unpack(A, False)
    return perm, L, U


@jit
def plu_batched(A):
    """Return ``(P, perm, L, U, info)``: ``lu_batched``, ``P`` of ``scipy.linalg.lu(A)``, ``info``.

    ``P`` (b, n, n) in the real dtype of ``A`` (scipy's for ``n >= 2``), ``P[t, i, perm[t, i]] =
    1``, written in the same pass. ``info`` (b,) int32 is LAPACK ``getrf``'s: 0, or ``k + 1`` for
    the first exactly zero pivot ``U[t, k, k]`` (the rules' zero-pivot policy starts from it).
    """
    return _unpack(A, True)
