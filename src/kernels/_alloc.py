"""Allocation helper for kernels that return two arrays.

``empty_pair_like`` hands out both outputs as views of one allocation. With glibc's default
(dynamic) mmap and trim thresholds, two separate 1.28 MB outputs were given back to the OS on
free and page-faulted in again on every call, which more than doubled the time of a
``10000x4`` matmul pullback (bench case ``matmul.pullback``). One allocation also halves the
malloc calls. The price: keeping one output alive keeps the other's memory alive.
"""

import numpy as np

from kernels._jit import jit_inline


@jit_inline
def empty_pair_like(X, Y):
    """Return uninitialised C-contiguous arrays shaped like ``X`` and ``Y`` (dtype of ``X``)."""
    buf = np.empty(X.size + Y.size, dtype=X.dtype)
    return buf[: X.size].reshape(X.shape), buf[X.size :].reshape(Y.shape)


@jit_inline
def empty_plu_like(A):
    """Return uninitialised ``(P, L, U)`` shaped like ``A``: ``L``, ``U`` of its dtype, ``P`` real.

    One allocation for the three outputs of ``scipy.linalg.lu`` (``kernels.lu_unpacked``), for
    the reason above: with ``P`` apart, ``P``, ``L U`` and the pullback's ``A_bar`` together
    exceeded glibc's trim threshold (twice the largest block freed so far), and every whole
    call of a ``10000x4`` stack page-faulted its 5 MB in again (about 1200 faults, a third of
    the call, bench case ``lu.pullback``). For complex ``A`` the third part is twice the size
    ``P`` needs (``P`` is its first half, viewed as the real dtype).
    """
    buf = np.empty(3 * A.size, dtype=A.dtype)
    L = buf[: A.size].reshape(A.shape)
    U = buf[A.size : 2 * A.size].reshape(A.shape)
    P = buf[2 * A.size :].view(A.real.dtype)[: A.size].reshape(A.shape)
    return P, L, U
