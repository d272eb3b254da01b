"""``V^H H V`` for the Hermitian part ``H = (A + A^H) / 2`` of a matrix, in half the products.

The pushforwards of ``eigh`` and ``eigvalsh`` read their tangent through its Hermitian part and
form ``C = V^H H V`` (or only its diagonal). With ``T`` the lower triangle of ``A + A^H`` whose
diagonal is ``Re A_ii`` (counted once), ``H = (T + T^H) / 2``, so::

    herm(V^H T V) = V^H H V,          Re diag(V^H T V) = diag(V^H H V).

``T V`` is a triangular product (BLAS ``trmm``, ``n^3`` multiplications) where ``A V`` is a
general one (``gemm``, ``2 n^3``). The callers only read the Hermitian part of ``V^H W`` (the
coupling step symmetrises it) or the real part of its diagonal, so they can take ``W = T V`` in
place of ``A V`` (bench cases ``eigh.pushforward`` and ``eigvalsh.pushforward`` at 256).

Up to ``kernels.crossovers.EIGH_HERMITIAN_GEMM_MAX_N`` on a side the plain product ``A @ V`` is
returned: it satisfies the same two identities, and there the pass that forms ``T`` and one
trmm call per matrix cost more than they save.
"""

import numpy as np
from scipy.linalg import get_blas_funcs

from kernels import _blas_core, crossovers
from kernels._jit import jit


@jit
def lower_of_hermitian_part(A):
    """Return ``T`` (b, n, n): ``T_ij = A_ij + conj(A_ji)`` below the diagonal, ``T_ii = Re A_ii``.

    The strict upper triangle of ``T`` is zero. ``A`` is a C-contiguous stack (b, n, n) of
    float32, float64 or complex128; ``T`` is a new array of its dtype. Then
    ``(T + T^H) / 2`` is the Hermitian part of each ``A``.
    """
    b, n = A.shape[0], A.shape[1]
    T = np.empty_like(A)
    for p in range(b):
        for i in range(n):
            for j in range(i):
                T[p, i, j] = A[p, i, j] + np.conj(A[p, j, i])
            T[p, i, i] = A[p, i, i].real
            for j in range(i + 1, n):
                T[p, i, j] = 0
    return T


def takes_trmm(n, dtype):
    """Whether :func:`hermitian_part_times` takes the triangular product for order ``n``.

    Above ``kernels.crossovers.EIGH_HERMITIAN_GEMM_MAX_N`` for ``dtype`` (float32, float64 and
    complex128; never for other dtypes), or ``EIGH_HERMITIAN_GEMM_SMALL_GEMM_MAX_N`` where numpy's
    OpenBLAS runs an AVX-512 core (``kernels._blas_core.small_gemm_core``).
    """
    table = (
        crossovers.EIGH_HERMITIAN_GEMM_SMALL_GEMM_MAX_N
        if _blas_core.small_gemm_core()
        else crossovers.EIGH_HERMITIAN_GEMM_MAX_N
    )
    limit = table.get(np.dtype(dtype).char)
    return limit is not None and n > limit


def hermitian_part_times(A, V):
    """Return ``W`` (b, n, k) with ``herm(V^H W) = V^H herm(A) V`` and the same real diagonal.

    ``herm(X) = (X + X^H) / 2``. ``A`` (b, n, n) and ``V`` (b, n, k) are stacks; ``W`` is a new
    C-contiguous array of their dtype (``A @ V``'s for mixed dtypes). ``W = T V`` by one
    ``trmm`` per matrix (module docstring) where :func:`takes_trmm` says so, ``W = A V``
    otherwise. ``W`` itself is not ``herm(A) V``; only the two identities hold, to rounding.
    Neither input is modified. Raises ``ValueError`` for shapes that do not match.
    """
    if A.ndim != 3 or V.ndim != 3 or A.shape[1:] != (A.shape[1],) * 2 or V.shape[:2] != A.shape[:2]:
        raise ValueError(
            f"hermitian_part_times: A (b, n, n) and V (b, n, k), got {A.shape} and {V.shape}"
        )
    b, n = A.shape[0], A.shape[1]
    if A.dtype != V.dtype or not takes_trmm(n, A.dtype):  # mixed dtypes: numpy's promotion
        return A @ V
    T = lower_of_hermitian_part(np.ascontiguousarray(A))
    trmm = get_blas_funcs("trmm", (T,))
    # Fortran sees the C-ordered T[p] as T^T (upper) and V[p] as V^T: W^T = V^T T^T, which trmm
    # returns in Fortran order, that is W in C order (no copies in or out)
    if b == 1:
        return trmm(1.0, T[0].T, V[0].T, side=1, lower=0).T[None]
    W = np.empty(V.shape, V.dtype)
    for p in range(b):
        W[p] = trmm(1.0, T[p].T, V[p].T, side=1, lower=0).T
    return W
