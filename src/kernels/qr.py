"""QR kernels: pullback and pushforward of the reduced ``A = Q R`` (``numpy.linalg.qr``).

``A`` (m, n), ``k = min(m, n)``, ``Q`` (m, k) with orthonormal columns, ``R`` (k, n) upper
trapezoidal with a *real* diagonal, as LAPACK ``geqrf`` produces (also for complex input); the
real diagonal is the gauge that makes the derivative unique. Tall, square and wide (m < n) are
supported; ``mode="complete"`` with m > n is not (its extra columns of ``Q`` are not
determined by ``A``).

Square and tall (m >= n). With ``C = Q^H A_dot R^-1``, ``Omega = Q^H Q_dot`` is
skew-Hermitian and ``R_dot R^-1`` upper triangular with a real diagonal, which splits ``C``::

    Omega = tril(C, -1) - tril(C, -1)^H + i Im diag(C)
    pushforward  R_dot = (C - Omega) R,   Q_dot = A_dot R^-1 - Q (C - Omega)
    pullback     M = R R_bar^H - Q_bar^H Q,   A_bar = (Q_bar + Q copyltu(M)) R^-H

with ``copyltu(M) = tril(M, -1) + tril(M, -1)^H + Re diag(M)`` (Hermitian). For real input
this is Walter & Lehmann's formula (also Seeger et al. 2017, Liao et al. 2019). For complex
input the real part on the diagonal comes from the real-diagonal gauge: ``Omega``'s diagonal
is imaginary and ``R_dot R^-1``'s is real (derived as above; the tests check it against
central differences of ``numpy.linalg.qr``). ``R^-H`` is a triangular solve.

Wide (m < n): ``A = [X, Y]``, ``R = [R1, R2]``, ``X = Q R1`` is a square QR and
``R2 = Q^H Y`` (Liao et al. 2019; Roberts & Roberts 2020)::

    pushforward  (Q_dot, R1_dot) from X_dot as above,   R2_dot = Q^H Y_dot - Omega R2
    pullback     M = R1 R1_bar^H - R2_bar R2^H - Q_bar^H Q
                 X_bar = (Q_bar + Q (copyltu(M) + R2 R2_bar^H)) R1^-H,   Y_bar = Q R2_bar

(the square pullback applied to ``Q_bar + Y R2_bar^H``, simplified with ``Y = Q R2``).

A rank-deficient ``A`` has a zero on the diagonal of ``R``: the kernels return inf/nan there,
never raise; NaN in gives NaN out.

References
----------
S. F. Walter, L. Lehmann, "Algorithmic differentiation of linear algebra functions with
application in optimum experimental design (extended version)", arXiv:1001.1654 (2010).
M. Seeger, A. Hetzel, Z. Dai, E. Meissner, N. D. Lawrence, "Auto-differentiating linear
algebra", arXiv:1710.08717 (2017).
H.-J. Liao, J.-G. Liu, L. Wang, T. Xiang, "Differentiable programming tensor networks",
Phys. Rev. X 9, 031041 (2019), arXiv:1903.09650.
D. A. Roberts, L. R. Roberts, "QR and LQ decomposition matrix backpropagation algorithms for
square, wide, and deep - real or complex - matrices and their software implementation",
arXiv:2009.10071 (2020).
"""

import numpy as np

from kernels._blas import trmm_c, trsm_c_inplace
from kernels._flat_lanes import takes_flat4
from kernels._jit import jit
from kernels._qr_lanes4 import qr_pullback_flat4
from kernels._smallmat import (
    _lanes,
    _load_inplace,
    _mul_hn_inplace,
    _store_inplace,
    _upper_right_adj_solve_inplace,
    _upper_right_solve_inplace,
)
from kernels._triangular import solve_inplace

# --- pullback ------------------------------------------------------------------------------


@jit
def _qr_pullback_block_inplace(Q, R, Q_bar, R_bar, nb, K, B):
    """Write ``A_bar`` of a lane block into ``B`` (m, n, nl); ``K`` (k, k, nl) is scratch."""
    m, k, _ = Q.shape
    n = R.shape[1]
    for i in range(k):  # lower triangle of M = R1 R1_bar^H - R2_bar R2^H - Q_bar^H Q
        for j in range(i + 1):
            for l in range(nb):
                K[i, j, l] = 0
            for r in range(i, k):
                for l in range(nb):
                    K[i, j, l] += R[i, r, l] * R_bar[j, r, l].conjugate()
            for r in range(k, n):
                for l in range(nb):
                    K[i, j, l] -= R_bar[i, r, l] * R[j, r, l].conjugate()
            for r in range(m):
                for l in range(nb):
                    K[i, j, l] -= Q_bar[r, i, l].conjugate() * Q[r, j, l]
    for i in range(k):  # copyltu: Hermitian from the strict lower triangle, real diagonal
        for l in range(nb):
            K[i, i, l] = K[i, i, l].real
        for j in range(i + 1, k):
            for l in range(nb):
                K[i, j, l] = K[j, i, l].conjugate()
    for i in range(k):  # wide: + R2 R2_bar^H
        for j in range(k):
            for r in range(k, n):
                for l in range(nb):
                    K[i, j, l] += R[i, r, l] * R_bar[j, r, l].conjugate()
    for i in range(m):  # B = Q_bar + Q K (first k columns), Q R2_bar (the rest)
        for j in range(k):
            for l in range(nb):
                B[i, j, l] = Q_bar[i, j, l]
            for r in range(k):
                for l in range(nb):
                    B[i, j, l] += Q[i, r, l] * K[r, j, l]
        for j in range(k, n):
            for l in range(nb):
                B[i, j, l] = 0
            for r in range(k):
                for l in range(nb):
                    B[i, j, l] += Q[i, r, l] * R_bar[r, j, l]
    _upper_right_adj_solve_inplace(R, nb, B)  # first k columns: B R1^-H


# qr_pullback_batched: square stacks from this order on take the stacked path
# (_qr_pullback_stacked: numpy's stacked matmul for the three products, compiled passes for the
# rest), smaller or non-square ones the lane blocks. 1000 x (16x16) float64, interleaved in one
# process: 2.19 against 2.97 ms.
STACKED_PULLBACK_MIN_N = 12

# Real 4x4 stacks of at least this many matrices take kernels._qr_lanes4 (flat lane blocks, the
# same bits): 10000 x (4x4), one process, one core: float64 0.84 against 0.96 ms, float32 0.79
# against 0.85 ms (0.72 and 0.62 ms since the flat kernel reads only R's and R_bar's upper
# triangles). A single matrix keeps the small blocks (the flat ones allocate 32 lanes).
FLAT4_PULLBACK_MIN_B = 8


@jit
def _copyltu_stack_inplace(M):
    """Overwrite each ``M[t]`` with ``copyltu(M[t])``: Hermitian from its strict lower triangle."""
    b, k, _ = M.shape
    for t in range(b):
        for i in range(k):
            M[t, i, i] = M[t, i, i].real
            for j in range(i + 1, k):
                M[t, i, j] = np.conj(M[t, j, i])


@jit
def _upper_solve_adjoint(R, C):
    """Return ``(R[t]^-1 C[t])^H`` for each ``t``; ``C`` is overwritten with ``R^-1 C``.

    Back substitution along the contiguous rows of ``C`` (:func:`kernels._triangular.solve_inplace`),
    then one conjugate-transposed copy per matrix.
    """
    b, k, m = C.shape
    A = np.empty((b, m, k), dtype=C.dtype)
    for t in range(b):
        solve_inplace(R, C, t, False, False, False, False)
        for i in range(k):
            for j in range(m):
                A[t, j, i] = np.conj(C[t, i, j])
    return A


def _adjoint(X):
    """``X^H`` of a stack, a view for real dtypes."""
    return X.conj().swapaxes(-1, -2) if X.dtype.kind == "c" else X.mT


def _qr_pullback_stacked(Q, R, Q_bar, R_bar):
    """The square pullback of the module docstring on a stack, as ``A_bar^H``'s triangular solve.

    ``M = R R_bar^H - Q_bar^H Q``, ``K = copyltu(M)``; ``A_bar = (Q_bar + Q K) R^-H`` is
    ``(R^-1 (K Q^H + Q_bar^H))^H`` (``K`` is Hermitian), whose solve runs along contiguous rows.
    """
    M = np.matmul(R, _adjoint(R_bar))
    M -= np.matmul(_adjoint(Q_bar), Q)
    _copyltu_stack_inplace(M)
    C = np.matmul(M, _adjoint(Q))
    C += _adjoint(Q_bar)
    return _upper_solve_adjoint(R, C)


def qr_pullback_batched(Q, R, Q_bar, R_bar):
    """Return ``A_bar`` (b, m, n) for ``A[i] = Q[i] R[i]``; see the module docstring.

    ``Q``, ``Q_bar`` (b, m, k); ``R``, ``R_bar`` (b, k, n); ``k = min(m, n)``. Needs only the
    forward's ``Q`` and ``R``.
    """
    b, m, k = Q.shape
    n = R.shape[2]
    if k != min(m, n) or R.shape != (b, k, n) or Q_bar.shape != Q.shape or R_bar.shape != R.shape:
        raise ValueError(
            "qr_pullback_batched: need Q, Q_bar (b, m, k), R, R_bar (b, k, n), k = min(m, n)"
        )
    if m == n >= STACKED_PULLBACK_MIN_N and b > 1:  # one matrix: numpy's calls cost more
        return _qr_pullback_stacked(Q, R, Q_bar, R_bar)
    if n == 4 and takes_flat4(Q, FLAT4_PULLBACK_MIN_B):  # the same bits
        return qr_pullback_flat4(Q, R, Q_bar, R_bar)
    return _qr_pullback_lanes(Q, R, Q_bar, R_bar)


@jit
def _qr_pullback_lanes(Q, R, Q_bar, R_bar):
    """:func:`qr_pullback_batched` on lane blocks, in one compiled call."""
    b, m, k = Q.shape
    n = R.shape[2]
    nl = _lanes(b, m * n)
    dt = Q.dtype
    A_bar = np.empty((b, m, n), dtype=dt)
    Qw, Qb = np.empty((m, k, nl), dtype=dt), np.empty((m, k, nl), dtype=dt)
    Rw, Rb = np.empty((k, n, nl), dtype=dt), np.empty((k, n, nl), dtype=dt)
    K = np.empty((k, k, nl), dtype=dt)
    B = np.empty((m, n, nl), dtype=dt)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(Q, t0, nb, Qw)
        _load_inplace(R, t0, nb, Rw)
        _load_inplace(Q_bar, t0, nb, Qb)
        _load_inplace(R_bar, t0, nb, Rb)
        _qr_pullback_block_inplace(Qw, Rw, Qb, Rb, nb, K, B)
        _store_inplace(B, t0, nb, A_bar)
    return A_bar


def qr_pullback(Q, R, Q_bar, R_bar):
    """``qr_pullback_batched`` for one matrix: Q (m, k), R (k, n)."""
    return qr_pullback_batched(Q[None], R[None], Q_bar[None], R_bar[None])[0]


# --- pushforward ---------------------------------------------------------------------------


@jit
def _qr_pushforward_block_inplace(Q, R, D, nb, C, T, Q_dot, R_dot):
    """Write ``Q_dot``, ``R_dot`` of a lane block; ``D`` holds ``A_dot`` and is overwritten."""
    m, k, _ = Q.shape
    n = R.shape[1]
    _upper_right_solve_inplace(R, nb, D)  # first k columns: A_dot R1^-1
    _mul_hn_inplace(Q, D, nb, C)  # C = Q^H A_dot R1^-1
    for i in range(k):  # T = C - Omega: upper, real diagonal
        for j in range(k):
            for l in range(nb):
                if i < j:
                    T[i, j, l] = C[i, j, l] + C[j, i, l].conjugate()
                elif i == j:
                    T[i, j, l] = C[i, i, l].real
                else:
                    T[i, j, l] = 0
    for i in range(k):
        for j in range(k):  # R1_dot = T R1
            for l in range(nb):
                R_dot[i, j, l] = 0
            for r in range(i, j + 1):
                for l in range(nb):
                    R_dot[i, j, l] += T[i, r, l] * R[r, j, l]
        for j in range(k, n):  # wide: R2_dot = Q^H Y_dot - (C - T) R2
            for l in range(nb):
                R_dot[i, j, l] = 0
            for r in range(m):
                for l in range(nb):
                    R_dot[i, j, l] += Q[r, i, l].conjugate() * D[r, j, l]
            for r in range(k):
                for l in range(nb):
                    R_dot[i, j, l] -= (C[i, r, l] - T[i, r, l]) * R[r, j, l]
    for i in range(m):  # Q_dot = A_dot R1^-1 - Q T
        for j in range(k):
            for l in range(nb):
                Q_dot[i, j, l] = D[i, j, l]
            for r in range(j + 1):
                for l in range(nb):
                    Q_dot[i, j, l] -= Q[i, r, l] * T[r, j, l]


@jit
def qr_pushforward_batched(Q, R, A_dot):
    """Return ``(Q_dot, R_dot)`` for ``A[i] = Q[i] R[i]``; see the module docstring.

    ``Q`` (b, m, k), ``R`` (b, k, n), ``A_dot`` (b, m, n).
    """
    b, m, k = Q.shape
    n = R.shape[2]
    if k != min(m, n) or R.shape != (b, k, n) or A_dot.shape != (b, m, n):
        raise ValueError("qr_pushforward_batched: need Q (b, m, k), R (b, k, n), A_dot (b, m, n)")
    nl = _lanes(b, m * n)
    dt = Q.dtype
    Q_dot = np.empty((b, m, k), dtype=dt)
    R_dot = np.empty((b, k, n), dtype=dt)
    Qw, Qd = np.empty((m, k, nl), dtype=dt), np.empty((m, k, nl), dtype=dt)
    Rw, Rd = np.empty((k, n, nl), dtype=dt), np.empty((k, n, nl), dtype=dt)
    C, T = np.empty((k, k, nl), dtype=dt), np.empty((k, k, nl), dtype=dt)
    D = np.empty((m, n, nl), dtype=dt)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(Q, t0, nb, Qw)
        _load_inplace(R, t0, nb, Rw)
        _load_inplace(A_dot, t0, nb, D)
        _qr_pushforward_block_inplace(Qw, Rw, D, nb, C, T, Qd, Rd)
        _store_inplace(Qd, t0, nb, Q_dot)
        _store_inplace(Rd, t0, nb, R_dot)
    return Q_dot, R_dot


def qr_pushforward(Q, R, A_dot):
    """``qr_pushforward_batched`` for one matrix: Q (m, k), R (k, n), A_dot (m, n)."""
    Q_dot, R_dot = qr_pushforward_batched(Q[None], R[None], A_dot[None])
    return Q_dot[0], R_dot[0]


# --- large matrices: BLAS level 3 ------------------------------------------------------------


def _copyltu(M):
    """Return ``tril(M, -1) + tril(M, -1)^H + Re diag(M)``."""
    K = np.where(np.tri(*M.shape, -1, dtype=bool), M, M.conj().T)
    idx = np.arange(M.shape[0])
    K[idx, idx] = M[idx, idx].real
    return K


def qr_pullback_blas(Q, R, Q_bar, R_bar):
    """``qr_pullback`` for one large matrix: BLAS-3 products and one triangular solve."""
    k = Q.shape[1]
    dt = np.result_type(Q, R, Q_bar, R_bar)
    R1, R2 = np.ascontiguousarray(R[:, :k], dt), R[:, k:]
    M = R1 @ R_bar[:, :k].conj().T
    M -= Q_bar.conj().T @ Q
    if R2.shape[1]:
        M -= R_bar[:, k:] @ R2.conj().T
    K = _copyltu(M)
    if R2.shape[1]:
        K += R2 @ R_bar[:, k:].conj().T
    B = Q @ K
    B += Q_bar
    trsm_c_inplace(R1, B, left=False, lower=False, trans=2, unit=False)
    if not R2.shape[1]:
        return B
    return np.concatenate((B, Q @ R_bar[:, k:]), axis=1)


def qr_pushforward_blas(Q, R, A_dot):
    """``qr_pushforward`` for one large matrix: BLAS-3 products and one triangular solve."""
    k = Q.shape[1]
    dt = np.result_type(Q, R, A_dot)
    R1, R2 = np.ascontiguousarray(R[:, :k], dt), R[:, k:]
    D = np.array(A_dot[:, :k], dtype=dt)
    trsm_c_inplace(R1, D, left=False, lower=False, trans=0, unit=False)  # A_dot R1^-1
    C = Q.conj().T @ D
    T = np.where(np.tri(k, k, -1, dtype=bool), 0, C + C.conj().T)  # C - Omega
    idx = np.arange(k)
    T[idx, idx] = C[idx, idx].real
    # T and R1 are upper triangular: trmm, half the multiplications of gemm, for both products
    R_dot = trmm_c(R1, T, left=False, lower=False)  # T R1, upper
    Q_dot = D - trmm_c(T, Q, left=False, lower=False)  # D - Q T
    if R2.shape[1]:
        R2_dot = Q.conj().T @ A_dot[:, k:] - (C - T) @ R2
        R_dot = np.concatenate((R_dot, R2_dot), axis=1)
    return Q_dot, R_dot
