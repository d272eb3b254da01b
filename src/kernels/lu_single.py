"""``scipy.linalg.lu`` of one small real matrix, and its derivatives, in one compiled call each.

For a 4x4 matrix the rule's whole call is dominated by fixed costs: every array passed to or
returned from a compiled function costs a few tenths of a microsecond, and each numpy check
(``np.isfinite(A).all()``, the diagonal of ``U``) about a microsecond. These kernels fuse them:

* ``plu_single(A) -> (F, status)``: ``F`` (3, n, n) holds ``P``, ``L``, ``U`` of
  ``scipy.linalg.lu(A)`` (one allocation; the rule hands out ``F[0]``, ``F[1]``, ``F[2]``);
  ``status`` is ``-1`` when ``A`` has an inf or NaN (nothing is factored), else LAPACK
  ``getrf``'s ``info`` (0, or ``k + 1`` for the first exactly zero pivot ``U[k, k]``);
* ``plu_single_pullback(F, L_bar, U_bar) -> A_bar``: the pullback, reading ``perm`` from ``P``
  (the rule calls ``plu_single_into`` and ``plu_single_pullback_into``, which write outputs
  that it allocates: a returned array costs more to box than a passed one);
* ``plu_single_jvp(A, A_dot, permute_l) -> (G, status)``: the forward and the pushforward:
  ``G`` (5, n, n) is ``P, L, U, L_dot, U_dot``, or (4, n, n) ``P L, U, P L_dot, U_dot`` with
  ``permute_l``.

Real dtypes (float32, float64) only: ``P`` then shares ``A``'s dtype (complex inputs go through
:mod:`kernels.lu_unpacked` and :mod:`kernels.lu`). The arithmetic is that of those kernels on a
stack of one (the same helpers; the derivatives' lane-block helpers run on views of the
matrices, a block of one matrix being the matrix), so the results agree bit for bit.
"""

import numpy as np

from kernels._jit import jit
from kernels.lu import _lu_pullback_block_inplace, _lu_pushforward_block_inplace
from kernels.lu_unpacked import _unpack_flat_sized, _unpack_lanes


@jit
def _finite(A):
    """Whether every entry of the matrix ``A`` is finite."""
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            if not np.isfinite(A[i, j]):
                return False
    return True


@jit
def _factor_into(A, buf):
    """Write ``P, L, U`` of ``A`` (n, n) into ``buf[:3 n^2]``; return ``(perm (1, n), info)``."""
    n = A.shape[0]
    nn = n * n
    A3 = A.reshape((1, n, n))
    P = buf[:nn].reshape((1, n, n))
    L = buf[nn : 2 * nn].reshape((1, n, n))
    U = buf[2 * nn : 3 * nn].reshape((1, n, n))
    perm = np.empty((1, n), dtype=np.int32)
    info = np.empty(1, dtype=np.int32)
    if n == 4:
        _unpack_flat_sized(A3, perm, L, U, P, info, True, 4)
    elif n == 3:
        _unpack_flat_sized(A3, perm, L, U, P, info, True, 3)
    elif n == 2:
        _unpack_flat_sized(A3, perm, L, U, P, info, True, 2)
    else:
        _unpack_lanes(A3, perm, L, U, P, info, True)
    return perm, info[0]


@jit
def plu_single_into(A, F):
    """Write ``P, L, U`` of one real square C-contiguous ``A`` into ``F``; return the status.

    ``F`` (3, n, n) C-contiguous of ``A``'s dtype is the output, allocated by the caller: passing
    a new array costs less than boxing a returned one. Nothing is written for a non-finite ``A``.
    """
    n = A.shape[0]
    if A.shape[1] != n or F.shape != (3, n, n):
        raise ValueError("plu_single_into: A (n, n), F (3, n, n)")
    if not _finite(A):
        return -1
    _, info = _factor_into(A, F.reshape(-1))
    return info


def plu_single(A):
    """Return ``(F, status)`` for one real square C-contiguous ``A``; see the module docstring."""
    F = np.empty((3, *A.shape), dtype=A.dtype)
    return F, plu_single_into(A, F)


@jit
def plu_single_pullback_into(F, L_bar, U_bar, A_bar):
    """Write ``A_bar`` (n, n) for ``F = (P, L, U)`` and ndarray cotangents into ``A_bar``.

    ``A_bar`` is the output, allocated by the caller (as for ``plu_single_into``). A lane block
    of one matrix, ``X[i, j, 0]``, is the C-ordered matrix itself: the block helper of
    ``kernels.lu`` runs on views, with no loads; it writes only its output ``W``.
    """
    n = F.shape[1]
    if F.shape != (3, n, n) or L_bar.shape != (n, n) or U_bar.shape != (n, n):
        raise ValueError("plu_single_pullback: need F (3, n, n), L_bar and U_bar (n, n)")
    if A_bar.shape != (n, n):
        raise ValueError("plu_single_pullback: need A_bar (n, n)")
    nn = n * n
    perm = np.zeros(n, dtype=np.int32)
    for i in range(n):  # P[i, perm[i]] = 1
        for j in range(n):
            if F[0, i, j] != 0:
                perm[i] = j
    flat = F.reshape(-1)  # F is C-contiguous: views, no copies
    W = np.empty((n, n, 1), dtype=F.dtype)
    _lu_pullback_block_inplace(
        flat[nn : 2 * nn].reshape((n, n, 1)),
        flat[2 * nn :].reshape((n, n, 1)),
        L_bar.reshape((n, n, 1)),
        U_bar.reshape((n, n, 1)),
        1,
        W,
    )
    for i in range(n):  # A_bar = P W
        for j in range(n):
            A_bar[i, j] = W[perm[i], j, 0]


def plu_single_pullback(F, L_bar, U_bar):
    """Return ``A_bar`` (n, n) for ``F = (P, L, U)`` from ``plu_single`` and ndarray cotangents."""
    A_bar = np.empty(F.shape[1:], dtype=F.dtype)
    plu_single_pullback_into(F, L_bar, U_bar, A_bar)
    return A_bar


@jit
def plu_single_jvp(A, A_dot, permute_l):
    """Return ``(G, status)``: the factors and their tangents; see the module docstring."""
    n = A.shape[0]
    if A.shape[1] != n or A_dot.shape != A.shape:
        raise ValueError("plu_single_jvp: A and A_dot must be square, of one shape")
    nn = n * n
    buf = np.empty(5 * nn, dtype=A.dtype)  # P, L, U, L_dot, U_dot
    parts = 4 if permute_l else 5
    if not _finite(A):
        return buf[: parts * nn].reshape((parts, n, n)), -1
    perm, info = _factor_into(A, buf)
    if info != 0:
        return buf[: parts * nn].reshape((parts, n, n)), info
    L = buf[nn : 2 * nn].reshape((n, n, 1))  # lane blocks of one matrix: views
    U = buf[2 * nn : 3 * nn].reshape((n, n, 1))
    L_dot = buf[3 * nn : 4 * nn].reshape((n, n, 1))
    U_dot = buf[4 * nn :].reshape((n, n, 1))
    X = np.empty((n, n, 1), dtype=A.dtype)  # P^T A_dot
    for i in range(n):
        r = perm[0, i]
        for j in range(n):
            X[r, j, 0] = A_dot[i, j]
    scratch = np.empty((n, n, 1), dtype=A.dtype)
    _lu_pushforward_block_inplace(L, U, X, 1, scratch, L_dot, U_dot)
    if not permute_l:
        return buf.reshape((5, n, n)), 0
    out = np.empty(4 * nn, dtype=A.dtype)  # P L, U, P L_dot, U_dot
    for i in range(n):
        r = perm[0, i]
        for j in range(n):
            out[i * n + j] = L[r, j, 0]
            out[nn + i * n + j] = U[i, j, 0]
            out[2 * nn + i * n + j] = L_dot[r, j, 0]
            out[3 * nn + i * n + j] = U_dot[i, j, 0]
    return out.reshape((4, n, n)), 0
