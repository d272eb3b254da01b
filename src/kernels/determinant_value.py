"""The determinant of a stack of small matrices, ``det(A)``, in one compiled call.

``np.linalg.det`` on a stack calls LAPACK ``getrf`` once per matrix. ``det_batched`` factors
each lane block (:mod:`kernels._smallmat`) with LAPACK ``getf2``'s partial pivoting, ``A = P L
U``, and returns ``det(P) prod(diag U)``, the quantity numpy computes from the same
factorization. numpy evaluates it as ``sign * exp(sum log |u_kk|)``, which never overflows in
between; the direct product is faster and at least as accurate, so it is used unless it over-
or underflows (a non-finite or zero product without a zero pivot), and then the matrix takes
numpy's form. An exactly singular matrix gives exactly 0 (a zero pivot), as numpy; NaN in gives
NaN out. The pullback (``kernels.determinant``) refactors with complete pivoting, which the
adjugate needs, so the forward keeps nothing.
"""

import numpy as np

from kernels._jit import jit
from kernels._smallmat import _lanes, _load_inplace, _lu_partial_inplace

# The det rule takes this kernel wherever its pullback takes the batched adjugate kernel
# (stacks up to kernels.crossovers.DET_STACK_MAX_N).


@jit
def det_batched(A):
    """Return ``det(A[t])`` (b,) for a stack ``A`` (b, n, n), in ``A``'s dtype (module doc)."""
    b, n, n2 = A.shape
    if n2 != n:
        raise ValueError("det_batched: A must be a stack of square matrices (b, n, n)")
    nl = _lanes(b, n * n)
    d = np.empty(b, dtype=A.dtype)
    W = np.empty((n, n, nl), dtype=A.dtype)
    P = np.empty((n, nl), dtype=np.int32)
    sign = np.empty(nl, dtype=np.int64)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(A, t0, nb, W)
        _lu_partial_inplace(nb, W, P, sign)
        for l in range(nb):
            s = A.dtype.type(sign[l])
            for k in range(n):
                s *= W[k, k, l]
            d[t0 + l] = s
        for l in range(nb):
            s = d[t0 + l]
            if (s == 0 or not np.isfinite(s)) and not np.isnan(s):  # a zero pivot, or range
                phase = A.dtype.type(sign[l])
                log = 0.0
                for k in range(n):
                    u = W[k, k, l]
                    if u == 0:
                        log = -np.inf
                        break
                    a = abs(u)
                    phase *= u / a
                    log += np.log(a)
                d[t0 + l] = phase * np.exp(log) if log > -np.inf else 0
    return d
