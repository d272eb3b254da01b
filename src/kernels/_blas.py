"""Python helpers for the large-matrix variants (``*_blas``, ``*_lapack``) of the kernels.

BLAS works on Fortran-ordered matrices, and scipy's wrappers copy anything else. A C-ordered
``X`` is the Fortran-ordered ``X^T``, so a triangular solve on C-ordered arrays is written for
the transposed problem and runs on ``X.T`` views without copies: ``X U^-H`` becomes
``conj(U)^-1 X^T`` and ``L^-H X`` becomes ``X^T conj(L)^-1``.
"""

import numpy as np
import scipy.linalg


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
