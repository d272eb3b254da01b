"""The Cholesky factorization ``A = L L^H`` of a stack of small matrices, in one compiled call.

``np.linalg.cholesky`` on a stack calls LAPACK ``potrf`` once per matrix; at 4x4 that call costs
more than the arithmetic. ``cholesky_factor_batched`` factors the stack in lane blocks
(:mod:`kernels._smallmat`): the lane ``l`` of a block is the innermost loop, so LLVM vectorises
the square roots and divisions across matrices. Real 4x4 stacks of ``FLAT4_MIN_B`` matrices or
more take the flat lane blocks of :mod:`kernels._cholesky_lanes4` (a constant row stride), with
the same bits and the same ``info``.

The algorithm is LAPACK's unblocked ``potf2`` (the left-looking, dot-product form: column ``j``
is ``(a[:, j] - L[:, :j] L[j, :j]^H) / L[j, j]`` with ``L[j, j] = sqrt(a[j, j] - |L[j, :j]|^2)``),
which is backward stable: ``L L^H = A + E`` with ``|E| <= c(n) u |L| |L^H|`` (Higham, "Accuracy
and Stability of Numerical Algorithms", 2nd ed., SIAM 2002, theorem 10.3), so the factor agrees
with LAPACK's to a few units of rounding times the condition number.

Conventions, as ``np.linalg.cholesky`` (numpy 2.4 with OpenBLAS):

* only the lower triangle of ``A`` is read (``lower=True``), or the upper one (``lower=False``,
  as ``np.linalg.cholesky(A, upper=True)`` and ``scipy.linalg.cholesky``); the imaginary part of
  the diagonal is ignored; the returned ``L`` is lower triangular with zeros above the diagonal
  and a real positive diagonal, and for ``lower=False`` the upper factor is ``L^H``;
* ``info[t] = j + 1`` when the pivot ``a[j, j] - |L[j, :j]|^2`` of matrix ``t`` is ``<= 0`` (not
  positive definite; the caller raises ``LinAlgError``), else 0. The factor of such a matrix
  holds NaN from column ``j`` on;
* NaN is not a failed pivot (comparisons with NaN are false): NaN in gives NaN out, with
  ``info = 0``, as numpy returns NaN without raising.
"""

import numpy as np

from kernels._cholesky_lanes4 import cholesky_factor_flat4
from kernels._flat_lanes import takes_flat4
from kernels._jit import jit, jit_inline
from kernels._smallmat import _lanes

# The rules call this kernel for stacks up to kernels.crossovers' *_FORWARD_STACK_MAX_N.


@jit
def _load_triangle_inplace(A, t0, nb, lower, out):
    """``out[i, j, l] = A[t0 + l, i, j]`` for ``i >= j`` (or ``conj(A[t0 + l, j, i])``)."""
    n = A.shape[1]
    for l in range(nb):
        for i in range(n):
            for j in range(i + 1):
                out[i, j, l] = A[t0 + l, i, j] if lower else A[t0 + l, j, i].conjugate()


@jit
def _store_lower_inplace(src, t0, nb, L):
    """``L[t0 + l]`` = the lower triangle of lane ``l`` of ``src``, zeros above the diagonal."""
    n = L.shape[1]
    zero = L.dtype.type(0)
    for l in range(nb):
        for i in range(n):
            for j in range(i + 1):
                L[t0 + l, i, j] = src[i, j, l]
            for j in range(i + 1, n):
                L[t0 + l, i, j] = zero


@jit_inline
def _cholesky_lanes_inplace(nb, a, d, info, t0, n):
    """Overwrite the lower triangle of the lanes of ``a`` with ``L`` (``potf2``, left-looking).

    ``d`` is real scratch of shape (nl,); ``info[t0 + l]`` receives the failed pivot (1-based).
    ``n`` is ``a.shape[0]``, passed so that a constant reaches the loops (``kernels._jit``).
    """
    for j in range(n):
        for l in range(nb):
            d[l] = a[j, j, l].real
        for k in range(j):
            for l in range(nb):
                x = a[j, k, l]
                d[l] -= x.real * x.real + x.imag * x.imag
        for l in range(nb):
            if d[l] <= 0 and info[t0 + l] == 0:
                info[t0 + l] = j + 1
        for l in range(nb):
            r = np.sqrt(d[l])  # NaN for a negative pivot (error_model="numpy")
            a[j, j, l] = r
            d[l] = 1.0 / r
        for i in range(j + 1, n):
            for k in range(j):
                for l in range(nb):
                    a[i, j, l] -= a[i, k, l] * a[j, k, l].conjugate()
            for l in range(nb):
                a[i, j, l] *= d[l]


# Real 4x4 stacks of at least this many matrices take kernels._cholesky_lanes4 (flat lane blocks,
# the same bits and info). Measured in one process on one core (Intel Xeon, AVX-512), float64,
# flat against the small blocks: 10000 matrices 0.15 against 0.27 ms (float32 0.11 against
# 0.28 ms); 8 matrices 1.20 against 1.35 us; they tie from 1 to 4 matrices.
FLAT4_MIN_B = 8


def cholesky_factor_batched(A, lower):
    """Return ``(L, info)``: ``A[t] = L[t] L[t]^H`` for a stack ``A`` (b, n, n); see the module doc.

    ``lower`` (a Python bool) says which triangle of ``A`` is read. ``L`` (b, n, n) is lower
    triangular in ``A``'s dtype, ``info`` (b,) int32 is 0 or the 1-based failed pivot.
    """
    if takes_flat4(A, FLAT4_MIN_B):
        return cholesky_factor_flat4(A, bool(lower))
    return _factor_lanes(A, lower)


@jit
def _factor_lanes(A, lower):
    """:func:`cholesky_factor_batched` in the lane blocks of :mod:`kernels._smallmat`."""
    b, n, n2 = A.shape
    if n2 != n:
        raise ValueError("cholesky_factor_batched: A must be a stack of square matrices (b, n, n)")
    nl = _lanes(b, n * n)
    L = np.empty_like(A)
    info = np.zeros(b, dtype=np.int32)
    W = np.empty((n, n, nl), dtype=A.dtype)
    d = np.empty(nl, dtype=A.real.dtype)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_triangle_inplace(A, t0, nb, lower, W)
        if n == 4:  # constant sizes let LLVM unroll the loops (see kernels._jit.jit_inline)
            _cholesky_lanes_inplace(nb, W, d, info, t0, 4)
        elif n == 3:
            _cholesky_lanes_inplace(nb, W, d, info, t0, 3)
        elif n == 2:
            _cholesky_lanes_inplace(nb, W, d, info, t0, 2)
        else:
            _cholesky_lanes_inplace(nb, W, d, info, t0, n)
        _store_lower_inplace(W, t0, nb, L)
    return L, info
