"""Kernels for the pullback and pushforward of the Cholesky factorization ``A = L L^H``.

``L`` is lower triangular with a real positive diagonal (as numpy and LAPACK return it). With
``Phi(X)`` the lower triangle of ``X`` with the real part of its diagonal halved and
``sym(X) = (X + X^H) / 2`` (I. Murray, "Differentiation of the Cholesky decomposition",
arXiv:1602.07527, 2016, section 3)::

    pullback:     A_bar = sym(L^-H Phi(L^H L_bar) L^-1)
    pushforward:  L_dot = L Phi(L^-1 A_dot L^-H)

Complex case: for Hermitian ``A_dot``, ``L^-1 dA L^-H = X + X^H`` with ``X = L^-1 dL`` lower
triangular and ``diag(X)`` real (``diag(L)`` stays real), so ``X = Phi(L^-1 dA L^-H)``. The
adjoint of ``Phi`` for the real inner product ``Re sum conj(a) b`` keeps the strict lower
triangle and the *real part* of the halved diagonal, which gives the pullback above; the
strictly upper part of ``L_bar`` never enters.

Conventions: C-contiguous arrays of one dtype (float64, float32 or complex128), ``L`` and
``L_bar`` (n, n) or stacks (b, n, n); outputs are new arrays of that dtype. ``A_bar`` is
Hermitian (both triangles filled). ``A_dot`` must be Hermitian (the rule symmetrises it);
``L_dot`` has a zero upper triangle. The small kernels are Numba loops; NaN in ``L`` gives NaN
out, and a zero on the diagonal of ``L`` gives inf/NaN, never an exception. The pullback of a
real 4x4 stack of ``FLAT4_MIN_B`` matrices or more runs in the flat lane blocks of
:mod:`kernels._cholesky_lanes4`, with the loops' bits.

Large matrices: ``cholesky_pullback_blocked`` and ``cholesky_pushforward_blocked`` call
level-3 BLAS through scipy (trsm, trmm, gemm via numpy matmul; no explicit inverse). They
overtake the Numba kernels above ``kernels.crossovers.CHOLESKY_PULLBACK_MAX_N`` and
``CHOLESKY_PUSHFORWARD_MAX_N``; at n = 1024 they take about as long as ``np.linalg.cholesky``
itself (bench case ``cholesky.pullback --sizes 1024``). Stacks of large matrices: call the
blocked variant per matrix.
"""

import numpy as np
from scipy.linalg import get_blas_funcs

from kernels._cholesky_lanes4 import cholesky_pullback_flat4
from kernels._flat_lanes import takes_flat4
from kernels._jit import jit, jit_inline
from kernels._triangular import solve_inplace


@jit_inline
def _hermitian_part_inplace(A_bar, t, n):
    """Overwrite ``A_bar[t]`` with its Hermitian part ``(A_bar + A_bar^H) / 2``, exactly Hermitian."""
    for i in range(n):
        for j in range(i):
            s = 0.5 * (A_bar[t, i, j] + np.conj(A_bar[t, j, i]))
            A_bar[t, i, j] = s
            A_bar[t, j, i] = np.conj(s)
        A_bar[t, i, i] = A_bar[t, i, i].real


@jit_inline
def _pullback_inplace(L, L_bar, A_bar, r, t, n):
    """Write ``A_bar[t] = sym(L^-H Phi(L^H L_bar) L^-1)``; ``r`` is scratch of shape (n,)."""
    for i in range(n):
        r[i] = 1.0 / L[t, i, i].real
    # P = Phi(L^H L_bar): row i needs rows k >= i of L_bar, lower triangle only
    for i in range(n):
        for j in range(i + 1):
            s = np.conj(L[t, i, i]) * L_bar[t, i, j]
            for k in range(i + 1, n):
                s += np.conj(L[t, k, i]) * L_bar[t, k, j]
            A_bar[t, i, j] = s
        A_bar[t, i, i] = 0.5 * A_bar[t, i, i].real
    # Q = P L^-1 is lower triangular: Q[i, j] = (P[i, j] - sum_{j<k<=i} Q[i, k] L[k, j]) / L[j, j]
    for i in range(n):
        for j in range(i, -1, -1):
            s = A_bar[t, i, j]
            for k in range(j + 1, i + 1):
                s -= A_bar[t, i, k] * L[t, k, j]
            A_bar[t, i, j] = s * r[j]
        for j in range(i + 1, n):
            A_bar[t, i, j] = 0.0
    # Y = L^-H Q, then A_bar = sym(Y)
    solve_inplace(L, A_bar, t, True, True, True, False)
    _hermitian_part_inplace(A_bar, t, n)


@jit_inline
def _pushforward_inplace(L, A_dot, L_dot, r, t, n):
    """Write ``L_dot[t] = L Phi(L^-1 A_dot L^-H)``; ``r`` is scratch of shape (n,)."""
    for i in range(n):
        r[i] = 1.0 / L[t, i, i].real
        for j in range(n):
            L_dot[t, i, j] = A_dot[t, i, j]
    # X = L^-1 A_dot (all of it: the lower part of X L^-H needs the full rows of X)
    solve_inplace(L, L_dot, t, True, False, False, False)
    # S = X L^-H, lower triangle only:
    # S[i, j] = (X[i, j] - sum_{k<j} S[i, k] conj(L[j, k])) / L[j, j]
    for i in range(n):
        for j in range(i + 1):
            s = L_dot[t, i, j]
            for k in range(j):
                s -= L_dot[t, i, k] * np.conj(L[t, j, k])
            L_dot[t, i, j] = s * r[j]
        L_dot[t, i, i] = 0.5 * L_dot[t, i, i].real
    # L_dot = L Phi(S), rows from the bottom so that rows k < i still hold Phi(S)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1):
            s = L[t, i, i] * L_dot[t, i, j]
            for k in range(j, i):
                s += L[t, i, k] * L_dot[t, k, j]
            L_dot[t, i, j] = s
        for j in range(i + 1, n):
            L_dot[t, i, j] = 0.0


# The pullback's row form, for orders above 4 (and one matrix of any order). The loops above take a
# dot product per entry, whose additions form one chain of dependent operations; this subtracts
# whole rows instead (an axpy over a contiguous row, which vectorises), in the loops' order of
# operations per entry except for Q = P L^-1, which runs by columns from the right. Measured in
# one process on an AMD EPYC (AVX2), 256,000 entries per stack, float64 (float32), against the
# loops: 1.11x (1.13x) at 8, 1.45x (1.48x) at 16, 2.0x (2.1x) at 32; complex128 1.1x at 16 and
# 32, even at 5 and 8. A row form of the pushforward (V = L^-1 (L^-1 A_dot)^H, the loops' bits)
# tied the loops at 16 and gained 1.1x only at 32, for twice the compile time: not kept. Orders
# compiled as constants (16) gained 1.15x more and tripled the compile time: not kept either.


@jit_inline
def _pullback_rows_inplace(L, L_bar, A_bar, r, t, n):
    """:func:`_pullback_inplace` with row operations (the comment above); same arguments."""
    for i in range(n):
        r[i] = 1.0 / L[t, i, i].real
    # P = Phi(L^H L_bar), row i: sum over k >= i of conj(L[k, i]) L_bar[k, :i + 1]
    for i in range(n):
        c = np.conj(L[t, i, i])
        for j in range(i + 1):
            A_bar[t, i, j] = c * L_bar[t, i, j]
        for k in range(i + 1, n):
            c = np.conj(L[t, k, i])
            for j in range(i + 1):
                A_bar[t, i, j] += c * L_bar[t, k, j]
        A_bar[t, i, i] = 0.5 * A_bar[t, i, i].real
        for j in range(i + 1, n):
            A_bar[t, i, j] = 0.0
    # Q = P L^-1, row i: x L = p by columns from the right, each subtracting a row of L
    for i in range(n):
        for j in range(i, -1, -1):
            x = A_bar[t, i, j] * r[j]
            A_bar[t, i, j] = x
            for m in range(j):
                A_bar[t, i, m] -= x * L[t, j, m]
    # Y = L^-H Q, then A_bar = sym(Y)
    solve_inplace(L, A_bar, t, True, True, True, False)
    _hermitian_part_inplace(A_bar, t, n)


# Real 4x4 stacks of at least this many matrices take kernels._cholesky_lanes4 (flat lane blocks,
# the same bits as the loops). Measured in one process on one core (Intel Xeon, AVX-512), float64,
# flat against loops: 10000 matrices 0.39 against 0.50 ms (float32 0.33 against 0.44 ms); 40
# matrices 2.6 against 2.8 us; 16 matrices 1.57 against 1.43 us (a partly filled block of 32 lanes).
FLAT4_MIN_B = 32


def cholesky_pullback_batched(L, L_bar):
    """Return ``A_bar = sym(L^-H Phi(L^H L_bar) L^-1)`` for stacks ``L``, ``L_bar`` (b, n, n)."""
    if takes_flat4(L, FLAT4_MIN_B):
        return cholesky_pullback_flat4(L, L_bar)
    return _pullback_loops_batched(L, L_bar)


@jit
def _pullback_loops_batched(L, L_bar):
    """:func:`cholesky_pullback_batched` by the loop kernels, one matrix at a time."""
    b, n = L.shape[0], L.shape[1]
    A_bar = np.empty_like(L)
    r = np.empty(n, dtype=L.real.dtype)
    if n == 4:  # constant sizes let LLVM unroll the loops (see kernels._jit.jit_inline)
        for t in range(b):
            _pullback_inplace(L, L_bar, A_bar, r, t, 4)
    elif n == 3:
        for t in range(b):
            _pullback_inplace(L, L_bar, A_bar, r, t, 3)
    elif n == 2:
        for t in range(b):
            _pullback_inplace(L, L_bar, A_bar, r, t, 2)
    else:  # rows (the comment above)
        for t in range(b):
            _pullback_rows_inplace(L, L_bar, A_bar, r, t, n)
    return A_bar


@jit
def cholesky_pushforward_batched(L, A_dot):
    """Return ``L_dot = L Phi(L^-1 A_dot L^-H)`` for stacks ``L``, ``A_dot`` (b, n, n)."""
    b, n = L.shape[0], L.shape[1]
    L_dot = np.empty_like(L)
    r = np.empty(n, dtype=L.real.dtype)
    if n == 4:  # constant sizes let LLVM unroll the loops (see kernels._jit.jit_inline)
        for t in range(b):
            _pushforward_inplace(L, A_dot, L_dot, r, t, 4)
    elif n == 3:
        for t in range(b):
            _pushforward_inplace(L, A_dot, L_dot, r, t, 3)
    elif n == 2:
        for t in range(b):
            _pushforward_inplace(L, A_dot, L_dot, r, t, 2)
    else:
        for t in range(b):
            _pushforward_inplace(L, A_dot, L_dot, r, t, n)
    return L_dot


@jit
def cholesky_pullback(L, L_bar):
    """Return ``A_bar = sym(L^-H Phi(L^H L_bar) L^-1)`` for one ``L``, ``L_bar`` (n, n)."""
    n = L.shape[0]
    A_bar = np.empty_like(L)
    r = np.empty(n, dtype=L.real.dtype)
    L3, L_bar3, A_bar3 = L.reshape((1, n, n)), L_bar.reshape((1, n, n)), A_bar.reshape((1, n, n))
    _pullback_rows_inplace(L3, L_bar3, A_bar3, r, 0, n)  # one compiled form (compile time)
    return A_bar


@jit
def cholesky_pushforward(L, A_dot):
    """Return ``L_dot = L Phi(L^-1 A_dot L^-H)`` for one ``L``, ``A_dot`` (n, n)."""
    n = L.shape[0]
    L_dot = np.empty_like(L)
    r = np.empty(n, dtype=L.real.dtype)
    shape = (1, n, n)
    _pushforward_inplace(L.reshape(shape), A_dot.reshape(shape), L_dot.reshape(shape), r, 0, n)
    return L_dot


def _pullback_unblocked_blas(D, D_bar):
    """Return ``sym(D^-H Phi(D^H D_bar) D^-1)`` for one block with one trmm and two trsm."""
    trmm, trsm = get_blas_funcs(("trmm", "trsm"), (D,))
    P = np.tril(trmm(1.0, D, D_bar, lower=1, trans_a=2))  # Phi(D^H D_bar), then halve diag
    np.fill_diagonal(P, 0.5 * np.diagonal(P).real)
    Y = trsm(1.0, D, P, lower=1, trans_a=2, overwrite_b=1)  # D^-H P
    Z = trsm(1.0, D, Y, side=1, lower=1, overwrite_b=1)  # D^-H P D^-1
    return 0.5 * (Z + Z.conj().T)


def _pushforward_unblocked_blas(D, S_dot):
    """Return ``D Phi(D^-1 S_dot D^-H)`` for one block with two trsm and one trmm."""
    trmm, trsm = get_blas_funcs(("trmm", "trsm"), (D,))
    X = trsm(1.0, D, S_dot, lower=1)  # D^-1 S_dot
    Y = np.tril(trsm(1.0, D, X, side=1, lower=1, trans_a=2, overwrite_b=1))  # X D^-H
    np.fill_diagonal(Y, 0.5 * np.diagonal(Y).real)
    return trmm(1.0, D, Y, lower=1, overwrite_b=1)  # D Phi(Y)


def cholesky_pullback_blocked(L, L_bar, block=64):
    """Return ``A_bar = sym(L^-H Phi(L^H L_bar) L^-1)`` for one large ``L`` with level-3 BLAS.

    Reverse mode through the right-looking blocked factorization, in the manner of the blocked
    algorithms of Murray (2016), section 4 (which run through the left-looking DPOTRF). For
    each block column ``j:k`` (last first), with ``D = L[j:k, j:k]``, ``C = L[k:, j:k]`` and
    ``G`` the finished Hermitian cotangent of the trailing matrix ``A[k:, k:]``::

        C_bar -= 2 G C                       (trailing update S -= C C^H)
        M = C_bar D^-1                       (C = S_C D^-H)
        D_bar -= M^H C
        A_bar[k:, j:k] = M / 2, A_bar[j:k, k:] = M^H / 2
        A_bar[j:k, j:k] = sym(D^-H Phi(D^H D_bar) D^-1)

    The trailing cotangent is only read, never updated, so the one large product per block is
    a plain gemm on a strided view (no copy). About ``2 n^3 / 3`` flops, twice the
    factorization; ``block`` 64 to 128 measured best at n = 1024.

    Parameters
    ----------
    L : ndarray, shape (n, n)
        Lower Cholesky factor (C-contiguous; float32, float64 or complex128).
    L_bar : ndarray, shape (n, n)
        Cotangent of ``L``; its strictly upper triangle is ignored.
    block : int
        Block size.

    Returns
    -------
    ndarray, shape (n, n)
        The Hermitian cotangent ``A_bar`` (new array, dtype of ``L``).
    """
    n = L.shape[0]
    trsm = get_blas_funcs("trsm", (L,))
    A_bar = np.array(L_bar, copy=True)
    for j in reversed(range(0, n, block)):
        k = min(j + block, n)
        D = L[j:k, j:k]
        D_bar = A_bar[j:k, j:k]
        if k < n:
            C = L[k:, j:k]
            C_bar = A_bar[k:, j:k] - 2.0 * (A_bar[k:, k:] @ C)
            M = trsm(1.0, D, C_bar, side=1, lower=1, overwrite_b=1)  # C_bar D^-1
            D_bar = D_bar - M.conj().T @ C
            A_bar[k:, j:k] = 0.5 * M
            A_bar[j:k, k:] = A_bar[k:, j:k].conj().T
        A_bar[j:k, j:k] = _pullback_unblocked_blas(D, D_bar)
    return A_bar


def cholesky_pushforward_blocked(L, A_dot, block=64):
    """Return ``L_dot = L Phi(L^-1 A_dot L^-H)`` for one large ``L`` with level-3 BLAS.

    Forward mode through the left-looking blocked factorization (Murray 2016, section 4). For
    each block column ``j:k`` (first first), with ``R = L[j:k, :j]``, ``B = L[k:, :j]``, their
    tangents ``R_dot``, ``B_dot`` (already computed) and ``C = L[k:, j:k]``::

        S_dot = A_dot[j:k, j:k] - R_dot R^H - R R_dot^H
        D_dot = D Phi(D^-1 S_dot D^-H)
        C_dot = (A_dot[k:, j:k] - B_dot R^H - B R_dot^H - C D_dot^H) D^-H      (trsm)

    Earlier panels are only read, so the large products are gemms on strided views and each
    step writes one panel. About ``2 n^3 / 3`` flops, against ``3 n^3`` for
    ``L Phi(L^-1 A_dot L^-H)`` with full-size trsm and trmm.

    Parameters
    ----------
    L : ndarray, shape (n, n)
        Lower Cholesky factor (C-contiguous; float32, float64 or complex128).
    A_dot : ndarray, shape (n, n)
        Hermitian tangent of ``A``; only its lower triangle is read.
    block : int
        Block size.

    Returns
    -------
    ndarray, shape (n, n)
        ``L_dot``, lower triangular (new array, dtype of ``L``).
    """
    n = L.shape[0]
    trsm = get_blas_funcs("trsm", (L,))
    L_dot = np.zeros_like(L)
    for j in range(0, n, block):
        k = min(j + block, n)
        D = L[j:k, j:k]
        R_h = L[j:k, :j].conj().T
        R_dot = L_dot[j:k, :j]
        E = R_dot @ R_h
        S_dot = A_dot[j:k, j:k] - E - E.conj().T
        D_dot = _pushforward_unblocked_blas(D, np.tril(S_dot) + np.tril(S_dot, -1).conj().T)
        L_dot[j:k, j:k] = D_dot
        if k < n:
            C = L[k:, j:k]
            R_dot_h = R_dot.conj().T
            S_C = A_dot[k:, j:k] - L_dot[k:, :j] @ R_h - L[k:, :j] @ R_dot_h - C @ D_dot.conj().T
            L_dot[k:, j:k] = trsm(1.0, D, S_C, side=1, lower=1, trans_a=2, overwrite_b=1)
    return L_dot
