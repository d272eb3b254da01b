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
