"""The inverse of a stack of small matrices, ``Y = A^-1``, in one compiled call.

``np.linalg.inv`` on a stack calls LAPACK ``gesv`` on the identity once per matrix. Here each
lane block (:mod:`kernels._smallmat`; 4x4 matrices one at a time in registers, ``kernels._lu4``,
with the same arithmetic) is factored ``A = P L U`` with LAPACK ``getf2``'s partial pivoting
and the identity is solved with the factors (``P^T``, then ``L^-1``, then ``U^-1``), as
``gesv`` does, so the result carries ``gesv``'s error bound: each column ``x`` of ``Y`` solves
``(A + E) x = e_j`` with ``|E| <= c(n) u |L| |U|`` (Higham, "Accuracy and Stability of
Numerical Algorithms", 2nd ed., SIAM 2002, sections 9.3 and 14.3), and the residual
``|A Y - I|`` is within a small multiple of LAPACK's.

``info[t]`` is LAPACK ``getrf``'s: 0, or ``k + 1`` for the first exactly zero pivot ``U[k, k]``
of matrix ``t`` (the caller raises ``LinAlgError``, as numpy raises "Singular matrix"); the rows
of ``Y`` of such a matrix hold inf/NaN. NaN is not a zero pivot: NaN in gives NaN out.
"""

import numpy as np

from kernels._jit import jit
from kernels._lu4 import inv4
from kernels._smallmat import (
    _lanes,
    _load_inplace,
    _lower_unit_solve_inplace,
    _lu_partial_inplace,
    _store_inplace,
    _swap_rows_inplace,
    _upper_solve_inplace,
)

# The rules call this kernel for stacks up to kernels.crossovers' *_FORWARD_STACK_MAX_N.


@jit
def inv_batched(A):
    """Return ``(Y, info)``: ``Y[t] = A[t]^-1`` (b, n, n) and ``info`` (b,) int32 (module doc)."""
    _, n, n2 = A.shape
    if n2 != n:
        raise ValueError("inv_batched: A must be a stack of square matrices (b, n, n)")
    if n == 4:
        return inv4(A)  # one matrix at a time in registers, the same bits
    return _inv_lanes(A)


@jit
def _inv_lanes(A):
    """:func:`inv_batched` on lane blocks, for any order (the tests compare 4x4 with it)."""
    b, n, _ = A.shape
    nl = _lanes(b, n * n)
    Y = np.empty_like(A)
    info = np.zeros(b, dtype=np.int32)
    W = np.empty((n, n, nl), dtype=A.dtype)
    Z = np.empty((n, n, nl), dtype=A.dtype)
    P = np.empty((n, nl), dtype=np.int32)
    sign = np.empty(nl, dtype=np.int64)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(A, t0, nb, W)
        _lu_partial_inplace(nb, W, P, sign)
        for l in range(nb):
            for k in range(n):
                if W[k, k, l] == 0:
                    info[t0 + l] = k + 1
                    break
        for i in range(n):
            for j in range(n):
                for l in range(nb):
                    Z[i, j, l] = 1 if i == j else 0
        _swap_rows_inplace(P, nb, False, Z)  # P^T I
        _lower_unit_solve_inplace(W, nb, Z)
        _upper_solve_inplace(W, nb, Z)
        _store_inplace(Z, t0, nb, Y)
    return Y, info
