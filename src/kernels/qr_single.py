"""``np.linalg.qr`` of one small square matrix, and its derivatives, in one compiled call each.

As :mod:`kernels.lu_single` for LU: at 4x4 the rule's whole call is mostly fixed costs (arrays
passed to and returned from compiled code, numpy's checks), so each step is one call:

* ``qr_single(A) -> (F, status)``: ``F`` (2, n, n) holds ``Q`` and ``R`` of
  ``np.linalg.qr(A)`` (one allocation); ``status`` is 0, or ``j + 1`` for the first exact zero
  ``R[j, j]`` (a rank-deficient ``A``, where the rules raise);
* ``qr_single_pullback(F, Q_bar, R_bar) -> A_bar`` (the rule calls ``qr_single_into`` and
  ``qr_single_pullback_into``, which write outputs that it allocates: a returned array costs
  more to box than a passed one);
* ``qr_single_jvp(A, A_dot) -> (G, status)``: ``G`` (4, n, n) is ``Q, R, Q_dot, R_dot``.

float32, float64 and complex128, C-contiguous. The factorization is ``kernels.qr_forward``'s,
the derivatives ``kernels.qr``'s lane-block helpers on a block of one matrix: the same bits as
those kernels.
"""

import numpy as np

from kernels._jit import jit
from kernels.qr import _qr_pullback_block_inplace, _qr_pushforward_block_inplace
from kernels.qr_forward import _qr_kernel


@jit
def _factor_into(A, buf):
    """Write ``Q``, ``R`` of ``A`` (n, n) into ``buf[:2 n^2]``; return the status."""
    n = A.shape[0]
    nn = n * n
    Q = buf[:nn].reshape((1, n, n))
    R = buf[nn : 2 * nn].reshape((1, n, n))
    H = np.empty((0, 1, 1), dtype=A.dtype)
    T = np.empty((0, 1), dtype=A.dtype)
    _qr_kernel(A.reshape((1, n, n)), n, n, False, Q, R, H, T)
    for j in range(n):
        if R[0, j, j] == 0:
            return j + 1
    return 0


@jit
def qr_single_into(A, F):
    """Write ``Q``, ``R`` of one square C-contiguous ``A`` into ``F``; return the status.

    ``F`` (2, n, n) C-contiguous of ``A``'s dtype is the output, allocated by the caller: passing
    a new array costs less than boxing a returned one.
    """
    n = A.shape[0]
    if A.shape[1] != n or n == 0 or F.shape != (2, n, n):
        raise ValueError("qr_single_into: A (n, n) not empty, F (2, n, n)")
    return _factor_into(A, F.reshape(-1))


def qr_single(A):
    """Return ``(F, status)`` for one square C-contiguous ``A``; see the module docstring."""
    F = np.empty((2, *A.shape), dtype=A.dtype)
    return F, qr_single_into(A, F)


@jit
def qr_single_pullback_into(F, Q_bar, R_bar, A_bar):
    """Write ``A_bar`` (n, n) for ``F = (Q, R)`` and ndarray cotangents into ``A_bar``.

    ``A_bar`` is the output, allocated by the caller (as for ``qr_single_into``). A lane block
    of one matrix, ``X[i, j, 0]``, is the C-ordered matrix itself: the block helper of
    ``kernels.qr.qr_pullback_batched`` runs on views, with no loads (which cost more than the
    arithmetic at 4x4); it writes only its scratch ``K`` and its output, ``A_bar``.
    """
    n = F.shape[1]
    if F.shape != (2, n, n) or Q_bar.shape != (n, n) or R_bar.shape != (n, n):
        raise ValueError("qr_single_pullback: need F (2, n, n), Q_bar and R_bar (n, n)")
    if A_bar.shape != (n, n):
        raise ValueError("qr_single_pullback: need A_bar (n, n)")
    flat = F.reshape(-1)  # F is C-contiguous: views, no copies
    Q = flat[: n * n].reshape((n, n, 1))
    R = flat[n * n :].reshape((n, n, 1))
    K = np.empty((n, n, 1), dtype=F.dtype)
    B = A_bar.reshape((n, n, 1))
    _qr_pullback_block_inplace(Q, R, Q_bar.reshape((n, n, 1)), R_bar.reshape((n, n, 1)), 1, K, B)


def qr_single_pullback(F, Q_bar, R_bar):
    """Return ``A_bar`` (n, n) for ``F = (Q, R)`` from ``qr_single`` and ndarray cotangents."""
    A_bar = np.empty(F.shape[1:], dtype=F.dtype)
    qr_single_pullback_into(F, Q_bar, R_bar, A_bar)
    return A_bar


@jit
def qr_single_jvp(A, A_dot):
    """Return ``(G, status)``: the factors and their tangents; see the module docstring."""
    n = A.shape[0]
    if A.shape[1] != n or n == 0 or A_dot.shape != A.shape:
        raise ValueError("qr_single_jvp: A and A_dot must be square, of one shape, not empty")
    nn = n * n
    buf = np.empty(4 * nn, dtype=A.dtype)  # Q, R, Q_dot, R_dot
    status = _factor_into(A, buf)
    if status == 0:  # lane blocks of one matrix are views (qr_single_pullback)
        D = A_dot.copy().reshape((n, n, 1))  # overwritten by the block helper
        C = np.empty((n, n, 1), dtype=A.dtype)
        T = np.empty((n, n, 1), dtype=A.dtype)
        _qr_pushforward_block_inplace(
            buf[:nn].reshape((n, n, 1)),
            buf[nn : 2 * nn].reshape((n, n, 1)),
            D,
            1,
            C,
            T,
            buf[2 * nn : 3 * nn].reshape((n, n, 1)),
            buf[3 * nn :].reshape((n, n, 1)),
        )
    return buf.reshape((4, n, n)), status
