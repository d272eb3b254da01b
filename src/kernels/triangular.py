"""Kernels for the pullback and pushforward of ``scipy.linalg.solve_triangular``.

``X = op(T)^-1 B`` with ``op(T)`` = ``T``, ``T^T`` or ``T^H`` for scipy's ``trans`` = 0, 1, 2.
Only the ``lower`` (or upper) triangle of ``T`` is read, without its diagonal when
``unit_diagonal``; cotangents and tangents of ``T`` live on that same set of entries. With
``tri(.)`` the projection onto it and the cotangent of a complex ``z`` taken as
``dL/dRe z + i dL/dIm z``::

    B_bar = op(T)^-H X_bar
    T_bar = tri(G), with G = -B_bar X^H for trans 0, G^T for trans 1, G^H for trans 2
    X_dot = op(T)^-1 (B_dot - op(tri(T_dot)) X)

(M. Giles, "An extended collection of matrix derivative results for forward and reverse mode
algorithmic differentiation", 2008: the result for ``X = A^-1 B``; ``op`` only moves the
transpose.)

Conventions: C-contiguous arrays of one dtype (float64, float32 or complex128); ``T`` (n, n)
or a stack (b, n, n); right-hand sides are matrices (n, k) or stacks (b, n, k). A vector
right-hand side is passed as (n, 1) or (b, n, 1), a free reshape, so that the kernels compile
once per dtype. ``lower`` and ``unit_diagonal`` are Python bools and ``trans`` a Python int.
Outputs are new arrays of the input dtype. A zero on the diagonal of ``T`` gives inf/NaN, never
an exception.

Small systems run as one Numba loop over the stack (``solve_triangular_batched`` is the
forward solve itself). The ``*_blas`` variants (one trsm through scipy) take over for large
systems, where ``n * n * k`` exceeds ``kernels.crossovers.SOLVE_TRIANGULAR_KERNEL_MAX_SIZE``:
the size of the system, not ``n`` alone, decides (a vector right-hand side keeps the Numba
kernel competitive to larger ``n``).
"""

import numpy as np
from scipy.linalg import get_blas_funcs

from kernels._alloc import empty_pair_like
from kernels._jit import jit
from kernels._triangular import copy_matrix, solve_any_inplace, triangular_matmul_sub_inplace


@jit
def solve_triangular_batched(T, B, lower, trans, unit_diagonal):
    """Return ``X = op(T)^-1 B`` on stacks T (b,n,n), B (b,n,k): the forward solve, batched.

    For rules whose forward pass solves many small triangular systems (scipy loops over a
    stack in Python) and for the two triangular solves that apply a Cholesky factorization.
    """
    X = np.empty_like(B)
    for t in range(B.shape[0]):
        copy_matrix(B, X, t)
        solve_any_inplace(T, X, t, lower, trans != 0, trans == 2, unit_diagonal)
    return X


@jit
def solve_triangular_pullback_batched(T, X, X_bar, lower, trans, unit_diagonal):
    """Return ``(T_bar, B_bar)`` for ``X = op(T)^-1 B`` on stacks T (b,n,n), X and X_bar (b,n,k)."""
    b, n, m = X.shape
    if X_bar.shape != X.shape:
        raise ValueError("solve_triangular_pullback_batched: X_bar must have the shape of X")
    T_bar, B_bar = empty_pair_like(T, X)
    zero = T_bar.dtype.type(0)
    for t in range(b):
        copy_matrix(X_bar, B_bar, t)
        # B_bar = op(T)^-H X_bar; op(T)^H is T^H, conj(T), T for trans 0, 1, 2
        solve_any_inplace(T, B_bar, t, lower, trans == 0, trans != 2, unit_diagonal)
        # T_bar[r, c] = -(B_bar X^H)[p, q], (p, q) = (r, c) for trans 0, else (c, r); conj for 2
        for r in range(n):
            for c in range(n):
                inside = (c < r) if lower else (c > r)
                if c == r:
                    inside = not unit_diagonal
                s = zero
                if inside:
                    p, q = (r, c) if trans == 0 else (c, r)
                    for j in range(m):
                        s -= B_bar[t, p, j] * np.conj(X[t, q, j])
                    if trans == 2:
                        s = np.conj(s)
                T_bar[t, r, c] = s
    return T_bar, B_bar


# solve_triangular_pullback_matmul instead of the loops from these sizes on: the product
# -B_bar X^H by numpy's stacked matmul rather than one dot product per entry of the triangle
# (1000 x (16x16), 16 right-hand sides, float64: 1.24 against 1.56 ms in one process).
MATMUL_PULLBACK_MIN_N = 12
MATMUL_PULLBACK_MIN_K = 8


def pullback_uses_matmul(n, k):
    """Whether a stack of order ``n`` with ``k`` right-hand sides takes the matmul pullback."""
    return n >= MATMUL_PULLBACK_MIN_N and k >= MATMUL_PULLBACK_MIN_K


@jit
def _adjoint_solve_batched(T, X_bar, lower, trans, unit_diagonal):
    """``op(T)^-H X_bar`` for each matrix of the stacks, as in the pullback's loops."""
    B_bar = np.empty_like(X_bar)
    for t in range(B_bar.shape[0]):
        copy_matrix(X_bar, B_bar, t)
        solve_any_inplace(T, B_bar, t, lower, trans == 0, trans != 2, unit_diagonal)
    return B_bar


@jit
def _minus_triangle_inplace(G, lower, trans, unit_diagonal):
    """Overwrite ``G`` with ``T_bar = -tri(G)``, ``-tri(G^T)`` or ``-tri(G^H)`` (trans 0, 1, 2)."""
    n = G.shape[1]
    zero = G.dtype.type(0)
    for t in range(G.shape[0]):
        if trans != 0:  # transpose in place (conjugated for trans 2)
            for r in range(n):
                for c in range(r + 1):
                    a, b = G[t, r, c], G[t, c, r]
                    G[t, r, c] = np.conj(b) if trans == 2 else b
                    G[t, c, r] = np.conj(a) if trans == 2 else a
        for r in range(n):
            for c in range(n):
                inside = (c < r) if lower else (c > r)
                if c == r:
                    inside = not unit_diagonal
                G[t, r, c] = -G[t, r, c] if inside else zero


def solve_triangular_pullback_matmul(T, X, X_bar, lower, trans, unit_diagonal):
    """:func:`solve_triangular_pullback_batched` with ``B_bar X^H`` by numpy's stacked matmul.

    The same result to rounding (the products are summed in BLAS's order, not the loops');
    faster from ``MATMUL_PULLBACK_MIN_N`` on a side and ``MATMUL_PULLBACK_MIN_K`` right-hand
    sides (:func:`pullback_uses_matmul`).
    """
    B_bar = _adjoint_solve_batched(T, X_bar, lower, trans, unit_diagonal)
    T_bar = np.matmul(B_bar, X.conj().swapaxes(-1, -2) if X.dtype.kind == "c" else X.mT)
    _minus_triangle_inplace(T_bar, lower, trans, unit_diagonal)
    return T_bar, B_bar


@jit
def solve_triangular_pushforward_batched(T, X, T_dot, B_dot, lower, trans, unit_diagonal):
    """Return ``X_dot = op(T)^-1 (B_dot - op(tri(T_dot)) X)`` on stacks T (b,n,n), X (b,n,k)."""
    X_dot = np.empty_like(B_dot)
    for t in range(X.shape[0]):
        copy_matrix(B_dot, X_dot, t)
        triangular_matmul_sub_inplace(
            T_dot, X, X_dot, t, lower, trans != 0, trans == 2, unit_diagonal
        )
        solve_any_inplace(T, X_dot, t, lower, trans != 0, trans == 2, unit_diagonal)
    return X_dot


def solve_triangular_pullback(T, X, X_bar, lower=False, trans=0, unit_diagonal=False):
    """Return ``(T_bar, B_bar)`` for ``X = op(T)^-1 B``, one T (n,n), X and X_bar (n,k)."""
    T_bar, B_bar = solve_triangular_pullback_batched(
        T[None], X[None], X_bar[None], bool(lower), int(trans), bool(unit_diagonal)
    )
    return T_bar[0], B_bar[0]


def solve_triangular_pushforward(T, X, T_dot, B_dot, lower=False, trans=0, unit_diagonal=False):
    """Return ``X_dot = op(T)^-1 (B_dot - op(tri(T_dot)) X)``, one T (n,n), X (n,k)."""
    X_dot = solve_triangular_pushforward_batched(
        T[None], X[None], T_dot[None], B_dot[None], bool(lower), int(trans), bool(unit_diagonal)
    )
    return X_dot[0]


def _trsm(T, B, lower, op, unit_diagonal):
    """Return ``op(T)^-1 B`` (C-contiguous, shape of ``B``) for ``op`` in "N", "T", "C", "conj".

    One BLAS trsm. BLAS is column-major, so the C-ordered ``T`` goes in as ``T.T`` (a Fortran
    view, no copy) with the triangle flipped. A matrix ``B`` is solved from the right in the
    transposed problem, ``X^T = B^T op(T)^-T``, where ``B.T`` and the result are Fortran views
    of C-ordered arrays, so nothing is copied; a vector is solved from the left (faster in
    OpenBLAS for one column). Only ``conj(T)`` from the right, or ``T^H`` from the left, of a
    complex ``T`` copies ``T``.
    """
    trsm = get_blas_funcs("trsm", (T, B))
    B2 = B.reshape(len(B), -1)
    complex_T = np.iscomplexobj(T)
    if B2.shape[1] > 1:
        if op == "conj" and complex_T:  # X^T = B^T T^-H: T as stored, conjugate-transposed
            X = trsm(1.0, T, B2.T, side=1, lower=lower, trans_a=2, diag=unit_diagonal)
        else:  # op(T)^T is T^T, T, conj(T): T.T as it is, transposed, conjugate-transposed
            trans_a = {"N": 0, "T": 1, "C": 2, "conj": 0}[op]
            X = trsm(1.0, T.T, B2.T, side=1, lower=not lower, trans_a=trans_a, diag=unit_diagonal)
        return X.T.reshape(B.shape)
    if op == "C" and complex_T:
        X = trsm(1.0, T, B2, lower=lower, trans_a=2, diag=unit_diagonal)
    else:
        trans_a = {"N": 1, "T": 0, "C": 0, "conj": 2}[op]
        X = trsm(1.0, T.T, B2, lower=not lower, trans_a=trans_a, diag=unit_diagonal)
    return np.ascontiguousarray(X).reshape(B.shape)


def _trmm(T, X, lower, op, unit_diagonal):
    """Return ``op(tri(T)) X`` (C-contiguous, shape of ``X``) for ``op`` in "N", "T", "C".

    One BLAS trmm, which reads only the triangle: half the flops of ``tril`` and gemm, and no
    copy of ``T``. In column-major terms it forms ``X^T op(T)^T`` from the Fortran views
    ``X.T`` and ``T.T``; a unit diagonal (taken as ones by BLAS) is then subtracted out.
    """
    trmm = get_blas_funcs("trmm", (T, X))
    X2 = X.reshape(len(X), -1)
    trans_a = {"N": 0, "T": 1, "C": 2}[op]
    Y = trmm(1.0, T.T, X2.T, side=1, lower=not lower, trans_a=trans_a, diag=unit_diagonal).T
    if unit_diagonal:
        Y = Y - X2
    return np.ascontiguousarray(Y).reshape(X.shape)


def _tri(G, lower, unit_diagonal):
    """Return the triangle of ``G`` that ``solve_triangular`` reads (a new array)."""
    k = -1 if unit_diagonal else 0
    return np.tril(G, k) if lower else np.triu(G, -k)


def solve_triangular_blas(T, B, lower=False, trans=0, unit_diagonal=False):
    """Return ``op(T)^-1 B`` for one ``T`` (n, n) and ``B`` (n,) or (n, k), C-ordered, by one trsm.

    The forward solve for large n. ``B`` is not overwritten. scipy's ``solve_triangular`` calls
    LAPACK ``trtrs`` on a Fortran copy of a C-ordered ``B``; here a C-ordered ``B`` is solved
    in place in a copy as the transposed problem from the right (:func:`_trsm`), which OpenBLAS
    runs faster: n = k = 256 float64, one process, 0.33 against 0.45 ms. Like BLAS, no test
    for a zero on the diagonal (it gives inf/NaN): the caller raises for it.
    """
    return _trsm(T, B, lower, "NTC"[trans], unit_diagonal)


def solve_triangular_pullback_blas(T, X, X_bar, lower=False, trans=0, unit_diagonal=False):
    """Return ``(T_bar, B_bar)`` for ``X = op(T)^-1 B`` with one trsm and one gemm (large n).

    Same contract as :func:`solve_triangular_pullback`; ``X`` and ``X_bar`` may also be vectors.
    """
    B_bar = _trsm(T, X_bar, lower, ("C", "conj", "N")[trans], unit_diagonal)
    n = len(X)
    X2 = X.reshape(n, -1)
    G = B_bar.reshape(n, -1) @ (X2.conj() if np.iscomplexobj(X2) else X2).T  # -op(T)'s cotangent
    G = (G, G.T, G.conj().T)[trans]
    T_bar = _tri(G, lower, unit_diagonal)
    return np.negative(T_bar, out=T_bar), B_bar


def solve_triangular_pushforward_blas(
    T, X, T_dot, B_dot, lower=False, trans=0, unit_diagonal=False
):
    """Return ``X_dot = op(T)^-1 (B_dot - op(tri(T_dot)) X)`` with one trmm and one trsm.

    Same contract as :func:`solve_triangular_pushforward`; ``X`` and ``B_dot`` may be vectors.
    """
    op = "NTC"[trans]
    return _trsm(T, B_dot - _trmm(T_dot, X, lower, op, unit_diagonal), lower, op, unit_diagonal)
