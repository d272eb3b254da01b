"""``scipy.linalg.lu`` for a stack of small square matrices: ``(perm, L, U)`` in one compiled call.

scipy 1.17 factors a stack one matrix at a time behind a Python loop, and unpacking packed
factors with numpy (``kernels.lu.lu_unpack_batched``) costs more than the factorization at 4x4.
``lu_batched`` factors in lane blocks with LAPACK ``getf2``'s partial pivoting (the pivot is the
first entry of largest ``|Re| + |Im|`` in its column, as ``izamax``; an exact zero pivot leaves
its column unscaled; the helpers of :mod:`kernels._smallmat`, shared with
``kernels.lu.lu_factor_batched``) and writes the unpacked factors directly.

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

from kernels._alloc import empty_pair_like
from kernels._jit import jit
from kernels._smallmat import _lanes, _load_inplace, _lu_partial_inplace

# The rules call this kernel for stacks up to kernels.crossovers' *_FORWARD_STACK_MAX_N.


@jit
def lu_batched(A):
    """Return ``(perm, L, U)`` with ``A[t] = L[t][perm[t]] @ U[t]`` for a stack ``A`` (b, n, n).

    ``L`` and ``U`` (b, n, n) in ``A``'s dtype, ``perm`` (b, n) int32; see the module docstring.
    """
    b, n, n2 = A.shape
    if n2 != n:
        raise ValueError("lu_batched: A must be a stack of square matrices (b, n, n)")
    nl = _lanes(b, n * n)
    L, U = empty_pair_like(A, A)  # one allocation (kernels._alloc)
    perm = np.empty((b, n), dtype=np.int32)
    W = np.empty((n, n, nl), dtype=A.dtype)
    P = np.empty((n, nl), dtype=np.int32)
    sign = np.empty(nl, dtype=np.int64)
    order = np.empty(n, dtype=np.int32)
    zero, one = A.dtype.type(0), A.dtype.type(1)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(A, t0, nb, W)
        _lu_partial_inplace(nb, W, P, sign)
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
                p = P[k, l]
                order[k], order[p] = order[p], order[k]
            for i in range(n):
                perm[t, order[i]] = i
    return perm, L, U
