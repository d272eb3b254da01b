"""Python helpers for the large-matrix variants (``*_blas``, ``*_lapack``) of the kernels.

BLAS works on Fortran-ordered matrices, and scipy's wrappers copy anything else. A C-ordered
``X`` is the Fortran-ordered ``X^T``, so a triangular solve on C-ordered arrays is written for
the transposed problem and runs on ``X.T`` views without copies: ``X U^-H`` becomes
``conj(U)^-1 X^T`` and ``L^-H X`` becomes ``X^T conj(L)^-1``.
"""

import functools

import numpy as np
import scipy.linalg

from kernels._jit import jit


def trsm_c_inplace(T, X, left, lower, trans, unit):
    """Overwrite C-ordered ``X`` with ``op(T)^-1 X`` (``left``) or ``X op(T)^-1``.

    ``lower`` describes ``T``; ``trans`` is 0 (``T``) or 2 (``T^H``); ``unit`` a unit diagonal.
    """
    trsm = scipy.linalg.blas.get_blas_funcs("trsm", (X,))
    # (op(T)^-1 X)^T = X^T op'(T^T)^-1, where T^T is the Fortran view T.T (the other triangle)
    # and op' transposes without conjugating: trans 0 -> 0, trans 2 -> 2 on T.T gives conj(T).
    Y = trsm(
        1.0,
        T.T,
        X.T,
        side=1 if left else 0,
        lower=0 if lower else 1,
        trans_a=trans,
        diag=1 if unit else 0,
        overwrite_b=1,
    )
    if not np.may_share_memory(Y, X):
        X[...] = Y.T


def getrs(lu, piv, B, trans=0):
    """``op(A)^-1 B`` from ``scipy.linalg.lu_factor``'s ``(lu, piv)``: ``trans`` 0, 1 or 2 (``A^H``).

    LAPACK ``getrs`` through scipy's wrapper, without ``scipy.linalg.lu_solve``'s argument
    handling, which dominates at small n. ``B`` is not
    overwritten (the wrapper copies it); the result is Fortran-ordered, as ``lu_solve``'s.
    """
    solve = scipy.linalg.lapack.get_lapack_funcs("getrs", (lu, B))
    X, info = solve(lu, piv, B, trans=trans)
    if info != 0:  # only for invalid arguments, which the callers rule out
        raise ValueError(f"LAPACK getrs: illegal value in argument {-info}")
    return X


@functools.lru_cache(maxsize=64)
def _getri_with_lwork(char, n):
    """Scipy's ``getri`` wrapper for dtype ``char`` and the workspace it asks for at order ``n``.

    Cached per (dtype, order), for the 64 pairs used last: a program that inverts matrices of
    ever new orders does not grow the cache without bound.
    """
    function, query = scipy.linalg.lapack.get_lapack_funcs(
        ("getri", "getri_lwork"), dtype=np.dtype(char)
    )
    work, _ = query(n)
    return function, max(n, 1, int(np.real(work)))


def getri(lu, piv, overwrite_lu=False):
    """``A^-1`` from LAPACK ``getrf``'s ``(lu, piv)`` by ``getri``, with its optimal workspace.

    scipy's wrapper defaults to the minimal workspace ``lwork = n``, with which ``getri`` runs
    its unblocked algorithm: at n = 256 that took 2.1 ms against 0.93 ms with the workspace
    ``getri_lwork`` asks for (``n`` times LAPACK's block size), and 117 ms against 36 ms at
    1024, where it had fallen behind ``getrs`` on the identity (51 ms). The size is looked up
    once per dtype and order (:func:`_getri_with_lwork`). Returns ``(inv, info)`` as the
    wrapper does. The arguments go by position (``lu, piv, lwork, overwrite_lu``): f2py's
    keyword parsing took 0.2 of the 0.8 us of a 4x4 call.
    """
    function, lwork = _getri_with_lwork(lu.dtype.char, lu.shape[0])
    return function(lu, piv, lwork, 1 if overwrite_lu else 0)


def gemm_accumulate_c(A, B, C):
    """``C += A @ B`` in place for C-ordered 2-D ``A``, ``B`` and ``C`` of one BLAS dtype.

    ``ValueError`` when the dtypes differ (BLAS would compute in ``C``'s and drop the rest).

    One gemm with ``beta = 1``: the product is added as it is formed, with no temporary and no
    separate pass over ``C``. In Fortran's view the C-ordered arrays are the transposes, so this
    is ``C^T += B^T A^T`` on ``.T`` views (no copies). Returns ``C``.
    """
    if A.dtype != C.dtype or B.dtype != C.dtype:
        raise ValueError(
            f"gemm_accumulate_c: A, B and C of one dtype, got {A.dtype}, {B.dtype}, {C.dtype}"
        )
    if C.size == 0 or A.shape[1] == 0:  # nothing to add (scipy refuses an empty C)
        return C
    gemm = scipy.linalg.blas.get_blas_funcs("gemm", (C,))
    out = gemm(1.0, B.T, A.T, beta=1.0, c=C.T, overwrite_c=1)
    if not np.may_share_memory(out, C):  # scipy copied C (it was not C-ordered): write back
        C[...] = out.T
    return C


@jit
def rows_of_pivots(piv):
    """The row order ``perm`` with ``(P^T B) = B[perm]`` for LAPACK ``getrf``'s 0-based ``piv``.

    ``getrf`` swaps row ``i`` with row ``piv[i]`` for ``i = 0, 1, ...`` in turn (``A = P L U``).
    """
    n = piv.shape[0]
    perm = np.arange(n)
    for i in range(n):
        j = piv[i]
        if j != i:
            perm[i], perm[j] = perm[j], perm[i]
    return perm


def lu_solve_rows(lu, piv, B, trans=0):
    """``op(A)^-1 B`` from ``getrf``'s ``(lu, piv)`` for a 2-D ``B``; the result is C-ordered.

    ``trans`` 0 (``A``), 1 (``A^T``) or 2 (``A^H``). ``getrs`` wants ``B`` in Fortran order, so
    a C-ordered ``B`` is copied with a transposition, and ``X`` comes back in Fortran order
    (numpy's ``solve`` returns C order). Here the system is solved for ``X^T``, whose Fortran view
    is the C-ordered ``X``: with ``A = P L U``::

        trans 0:  X^T = (P^T B)^T L^-T U^-T          rows of B gathered, two right-side trsm
        trans 1:  X^T = B^T U^-1 L^-1 P^T            two right-side trsm, rows scattered
        trans 2:  X   = conj of trans 1 on conj(B)

    The same operations as ``getrs`` on the transposed problem, in a different order, so equal
    to rounding, not bit for bit. ``B`` is not modified. Where it beats ``getrs``:
    ``kernels.crossovers.SOLVE_GETRS_MAX_N`` (bench case ``solve.pullback``).
    """
    perm = rows_of_pivots(piv)
    trsm = scipy.linalg.blas.get_blas_funcs("trsm", (lu, B))
    if trans == 0:
        W = B[perm].T  # (P^T B)^T, a Fortran view of the gathered rows
        W = trsm(1.0, lu, W, side=1, lower=1, trans_a=1, diag=1, overwrite_b=1)
        return trsm(1.0, lu, W, side=1, lower=0, trans_a=1, overwrite_b=1).T
    conjugate = trans == 2 and (lu.dtype.kind == "c" or B.dtype.kind == "c")
    W = (B.conj() if conjugate else np.array(B, order="C")).T
    W = trsm(1.0, lu, W, side=1, lower=0, overwrite_b=1)  # B^T U^-1
    W = trsm(1.0, lu, W, side=1, lower=1, diag=1, overwrite_b=1).T  # ... L^-1, C-ordered
    X = np.empty_like(W)
    X[perm] = W  # P Y: row i of Y goes to row perm[i]
    if conjugate:
        np.conjugate(X, out=X)
    return X


def trmm_c(T, X, left, lower):
    """``T @ X`` (``left``) or ``X @ T`` for a triangular ``T``, as a new C-ordered array.

    ``lower`` names the triangle of ``T`` that is read (the other one is taken as zero and never
    read). One BLAS ``trmm``, half the multiplications of ``gemm``. ``T`` and ``X`` are
    C-ordered 2-D arrays of one dtype; in Fortran's view they are ``T^T`` and ``X^T``, so
    ``(T X)^T = X^T T^T`` runs as a right-side product and ``(X T)^T = T^T X^T`` as a left-side
    one, with the triangle flipped. Neither input is modified.
    """
    trmm = scipy.linalg.blas.get_blas_funcs("trmm", (T, X))
    out = trmm(1.0, T.T, X.T, side=1 if left else 0, lower=0 if lower else 1)
    return out.T
