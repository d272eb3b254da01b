"""LU factorization, solves and inverse of 4x4 matrices, one matrix at a time in registers.

``kernels.lu.lu_factor_batched``, ``kernels.lu.lu_solve_batched``, the solve kernels of
``kernels.solve`` and ``kernels.inverse.inv_batched`` for stacks of 4x4 matrices. Per matrix, the 16 entries (or factors) and the
4 entries of a right-hand side are local variables and every loop has a constant length. The
lane blocks of ``kernels._smallmat`` (one matrix per SIMD lane, used for other orders) spend
most of their time moving entries in and out of the lane layout and swapping rows lane by lane,
with a branch per lane on its pivot.

In the solves the row swaps of ``piv`` become indices to read or write the right-hand side by,
so no branch depends on the pivot order, which differs from matrix to matrix. On a 10000 x
(4x4) float64 stack with one right-hand side, in one process, the solve took about a fifth of
the lane kernel's time and the pullback of ``solve`` a third; the factorization gains less
(:func:`lu_factor4`). Bench cases ``solve_vector.pullback`` and ``lu.pullback`` time them.

The arithmetic is that of the lane kernels, in the same order, and gives the same bits:
partial pivoting as LAPACK's ``getf2``; forward substitution with the unit lower factor, then
back substitution with ``U``, each row scaled by the reciprocal of its pivot (OpenBLAS's
``trsm`` also multiplies by reciprocals). ``trans`` 1 and 2 solve ``A^T x = b`` and
``A^H x = b``: ``U^T`` forward, then ``L^T`` back, then the swaps in reverse order.
"""

import numpy as np

from kernels._jit import jit, jit_inline
from kernels._smallmat import _abs1, _div

__all__ = ["inv4", "lu_factor4", "lu_solve4", "solve_pullback4", "solve_pushforward4"]


@jit_inline
def _op(x, conj):
    """``x``, conjugated when ``conj`` (a no-op for real ``x``)."""
    return np.conj(x) if conj else x


@jit_inline
def _substitute(w0, w1, w2, w3, f0, f1, f2, f3, r0, r1, r2, r3):
    """``U^-1 L^-1 w`` for the packed factors by rows (tuples ``f_i``).

    ``r_i`` are the reciprocals of ``U``'s pivots; the lane kernels' order of operations.
    """
    w1 -= f1[0] * w0  # L y = w, unit diagonal
    w2 -= f2[0] * w0
    w2 -= f2[1] * w1
    w3 -= f3[0] * w0
    w3 -= f3[1] * w1
    w3 -= f3[2] * w2
    w3 *= r3  # U x = y
    w2 -= f2[3] * w3
    w2 *= r2
    w1 -= f1[2] * w2
    w1 -= f1[3] * w3
    w1 *= r1
    w0 -= f0[1] * w1
    w0 -= f0[2] * w2
    w0 -= f0[3] * w3
    w0 *= r0
    return w0, w1, w2, w3


@jit_inline
def _solve_loop(lu, piv, B, X, transposed, conj, A_dot, X0, residual):
    """Write ``X[t] = op(A[t])^-1 B[t]``: ``A^-1``, or ``A^-T`` / ``A^-H`` with ``transposed``.

    With ``residual`` (and not ``transposed``) the right-hand sides are
    ``B[t] - A_dot[t] X0[t]`` instead, formed column by column as ``kernels.solve`` forms them
    (``B_dot - A_dot X``, the pushforward of ``solve``); ``A_dot`` and ``X0`` are not read
    otherwise. The swaps of ``piv`` are applied to the row indices ``Q`` first
    (``(P^T b)[i] = b[Q[i]]``), so each right-hand side is read (``A^-1``) or written
    (``P z``) in permuted order, with no branch that depends on the pivots.
    """
    R = np.empty(4, dtype=lu.dtype)
    Q = np.empty(4, dtype=np.intp)
    V = np.empty(4, dtype=B.dtype)
    for t in range(B.shape[0]):
        F = lu[t]
        f00, f01, f02, f03 = F[0, 0], F[0, 1], F[0, 2], F[0, 3]
        f10, f11, f12, f13 = F[1, 0], F[1, 1], F[1, 2], F[1, 3]
        f20, f21, f22, f23 = F[2, 0], F[2, 1], F[2, 2], F[2, 3]
        f30, f31, f32, f33 = F[3, 0], F[3, 1], F[3, 2], F[3, 3]
        f0, f1, f2, f3 = (
            (f00, f01, f02, f03),
            (f10, f11, f12, f13),
            (f20, f21, f22, f23),
            (f30, f31, f32, f33),
        )
        R[0], R[1] = _div(1, _op(f00, conj)), _div(1, _op(f11, conj))  # complex 0: inf
        R[2], R[3] = _div(1, _op(f22, conj)), _div(1, _op(f33, conj))
        r0, r1, r2, r3 = R[0], R[1], R[2], R[3]  # rounded to the dtype, as the lane kernels'
        Q[0], Q[1], Q[2], Q[3] = 0, 1, 2, 3
        for i in range(4):
            p = piv[t, i]
            if p < i or p > 3:  # getrf's swaps only reach down; others would index out of Q
                raise ValueError("lu_solve_batched: a pivot of a 4x4 matrix is not in [i, 4)")
            Q[i], Q[p] = Q[p], Q[i]
        q0, q1, q2, q3 = Q[0], Q[1], Q[2], Q[3]
        for j in range(B.shape[2]):
            if residual:
                for i in range(4):
                    V[i] = B[t, i, j]
                    for p in range(4):
                        V[i] -= A_dot[t, i, p] * X0[t, p, j]
                w0, w1, w2, w3 = V[q0], V[q1], V[q2], V[q3]  # P^T (b_dot - A_dot x)
            elif not transposed:
                w0, w1, w2, w3 = B[t, q0, j], B[t, q1, j], B[t, q2, j], B[t, q3, j]  # P^T b
            if not transposed:
                w0, w1, w2, w3 = _substitute(w0, w1, w2, w3, f0, f1, f2, f3, r0, r1, r2, r3)
                X[t, 0, j], X[t, 1, j], X[t, 2, j], X[t, 3, j] = w0, w1, w2, w3
            else:
                w0, w1, w2, w3 = B[t, 0, j], B[t, 1, j], B[t, 2, j], B[t, 3, j]
                w0 *= r0  # op(U) y = b: forward substitution
                w1 -= _op(f01, conj) * w0
                w1 *= r1
                w2 -= _op(f02, conj) * w0
                w2 -= _op(f12, conj) * w1
                w2 *= r2
                w3 -= _op(f03, conj) * w0
                w3 -= _op(f13, conj) * w1
                w3 -= _op(f23, conj) * w2
                w3 *= r3
                w2 -= _op(f32, conj) * w3  # op(L) z = y: back substitution, unit diagonal
                w1 -= _op(f21, conj) * w2
                w1 -= _op(f31, conj) * w3
                w0 -= _op(f10, conj) * w1
                w0 -= _op(f20, conj) * w2
                w0 -= _op(f30, conj) * w3
                X[t, q0, j], X[t, q1, j], X[t, q2, j], X[t, q3, j] = w0, w1, w2, w3  # P z


@jit
def lu_solve4(lu, piv, B, trans):
    """Return ``X[t] = op(A[t])^-1 B[t]`` for 4x4 factors ``lu`` (b, 4, 4), ``piv`` (b, 4), ``B`` (b, 4, k).

    ``trans`` as in ``scipy.linalg.lu_solve``. The caller checks the shapes
    (``kernels.lu.lu_solve_batched``). One loop per ``trans``, each with its flags constant.
    """
    X = np.empty_like(B)
    if trans == 0:
        _solve_loop(lu, piv, B, X, False, False, lu, B, False)
    elif trans == 1:
        _solve_loop(lu, piv, B, X, True, False, lu, B, False)
    else:
        _solve_loop(lu, piv, B, X, True, True, lu, B, False)
    return X


@jit
def solve_pullback4(lu, piv, X, X_bar):
    """Return ``(A_bar, B_bar) = (-B_bar X^H, A^-H X_bar)`` for 4x4 factors; ``X``, ``X_bar`` (b, 4, k).

    ``kernels.solve.solve_pullback_batched`` for 4x4 matrices: the solve of :func:`lu_solve4`
    (``trans`` 2), then each entry of ``A_bar`` summed over the right-hand sides in order and
    negated, as the lane kernels do. The caller checks the shapes.
    """
    b, _, k = X.shape
    B_bar = np.empty_like(X_bar)
    _solve_loop(lu, piv, X_bar, B_bar, True, True, lu, X, False)
    A_bar = np.zeros((b, 4, 4), dtype=X.dtype)
    for t in range(b):
        for p in range(k):  # each entry's terms in order of p; rows of A_bar innermost
            for i in range(4):
                c = B_bar[t, i, p]
                for j in range(4):
                    A_bar[t, i, j] += c * np.conj(X[t, j, p])
        for i in range(4):
            for j in range(4):
                A_bar[t, i, j] = -A_bar[t, i, j]
    return A_bar, B_bar


@jit
def solve_pushforward4(lu, piv, X, A_dot, B_dot):
    """Return ``X_dot = A^-1 (B_dot - A_dot X)`` for 4x4 factors; ``X``, ``B_dot`` (b, 4, k).

    ``kernels.solve.solve_pushforward_batched`` for 4x4 matrices: each column of the residual
    is formed and solved in registers (:func:`lu_solve4`), one pass over the stacks. The caller
    checks the shapes.
    """
    X_dot = np.empty_like(B_dot)
    _solve_loop(lu, piv, B_dot, X_dot, False, False, A_dot, X, True)
    return X_dot


@jit_inline
def _pick_row(r0, r1, r2, r3, p):
    """Row ``p`` of four rows (tuples)."""
    return r0 if p == 0 else (r1 if p == 1 else (r2 if p == 2 else r3))


@jit_inline
def _pivot_of(r0, r1, r2, r3, k):
    """The first row ``i >= k`` of largest ``|Re| + |Im|`` in column ``k`` (LAPACK's ``i?amax``)."""
    p = k
    best = _abs1(_pick_row(r0, r1, r2, r3, k)[k])
    for i in range(k + 1, 4):
        v = _abs1(_pick_row(r0, r1, r2, r3, i)[k])
        p = i if v > best else p
        best = v if v > best else best  # noqa: FURB136 (as the lane kernels compare, NaN too)
    return p


@jit_inline
def _eliminated(r, pivot_row, k):
    """Row ``r`` after elimination step ``k`` with the pivot row ``pivot_row``.

    Its multiplier ``m = r[k] / d`` in column ``k`` (``r[k]`` itself if the pivot ``d`` is 0, as
    LAPACK's ``getf2``), and ``r[j] - m pivot_row[j]`` right of it.
    """
    d = pivot_row[k]
    m = _div(r[k], d) if d != 0 else r[k]
    return (
        r[0] if k > 0 else m,
        r[1] if k > 1 else (m if k == 1 else r[1] - m * pivot_row[1]),
        r[2] if k > 2 else (m if k == 2 else r[2] - m * pivot_row[2]),
        m if k == 3 else r[3] - m * pivot_row[3],
    )


@jit_inline
def _step(r0, r1, r2, r3, k):
    """One step of partial pivoting on the rows: ``(p, r0, r1, r2, r3)`` after it."""
    p = _pivot_of(r0, r1, r2, r3, k)
    rk, rp = _pick_row(r0, r1, r2, r3, k), _pick_row(r0, r1, r2, r3, p)
    r0 = rp if k == 0 else (rk if p == 0 else r0)  # swap rows k and p
    r1 = rp if k == 1 else (rk if p == 1 else r1)
    r2 = rp if k == 2 else (rk if p == 2 else r2)
    r3 = rp if k == 3 else (rk if p == 3 else r3)
    r1 = _eliminated(r1, rp, k) if k < 1 else r1
    r2 = _eliminated(r2, rp, k) if k < 2 else r2
    r3 = _eliminated(r3, rp, k) if k < 3 else r3
    return p, r0, r1, r2, r3


@jit_inline
def _factor(A, t):
    """``(p0, p1, p2, r0, r1, r2, r3)``: the swaps and the packed rows of ``A[t] = P L U``."""
    r0 = (A[t, 0, 0], A[t, 0, 1], A[t, 0, 2], A[t, 0, 3])
    r1 = (A[t, 1, 0], A[t, 1, 1], A[t, 1, 2], A[t, 1, 3])
    r2 = (A[t, 2, 0], A[t, 2, 1], A[t, 2, 2], A[t, 2, 3])
    r3 = (A[t, 3, 0], A[t, 3, 1], A[t, 3, 2], A[t, 3, 3])
    p0, r0, r1, r2, r3 = _step(r0, r1, r2, r3, 0)
    p1, r0, r1, r2, r3 = _step(r0, r1, r2, r3, 1)
    p2, r0, r1, r2, r3 = _step(r0, r1, r2, r3, 2)  # step 3: pivot row 3, no row below it
    return p0, p1, p2, r0, r1, r2, r3


@jit
def lu_factor4(A):
    """Return ``(lu, piv)`` of ``kernels.lu.lu_factor_batched`` for a stack ``A`` (b, 4, 4).

    The arithmetic of the lane kernels (``kernels._smallmat._lu_partial_inplace``), one matrix
    at a time with its rows in registers: the pivot is the first entry of largest
    ``|Re| + |Im|`` (LAPACK's ``i?amax``), and an exactly zero pivot leaves its column unscaled
    (LAPACK ``getf2``). The rows are exchanged by selects in the source, but LLVM compiles
    picking the pivot row to a jump table on its index: unlike the solves, the factorization
    still branches on the pivot order (measured against selects through a scratch matrix,
    which were slower).
    """
    b = A.shape[0]
    lu = np.empty_like(A)
    piv = np.empty((b, 4), dtype=np.int32)
    for t in range(b):
        p0, p1, p2, r0, r1, r2, r3 = _factor(A, t)
        piv[t, 0], piv[t, 1], piv[t, 2], piv[t, 3] = p0, p1, p2, 3
        for j in range(4):
            lu[t, 0, j], lu[t, 1, j], lu[t, 2, j], lu[t, 3, j] = r0[j], r1[j], r2[j], r3[j]
    return lu, piv


@jit
def inv4(A):
    """Return ``(Y, info)`` of ``kernels.inverse.inv_batched`` for a stack ``A`` (b, 4, 4).

    Per matrix, :func:`lu_factor4`'s factorization in registers, then the columns of the
    identity, swapped by the pivots, through :func:`_substitute`: the arithmetic of the lane
    kernels, the same bits. ``info[t]`` is ``k + 1`` for the first exactly zero pivot ``U[k, k]``.
    """
    b = A.shape[0]
    Y = np.empty_like(A)
    info = np.zeros(b, dtype=np.int32)
    R = np.empty(4, dtype=A.dtype)
    Q = np.empty(4, dtype=np.intp)
    one, zero = A.dtype.type(1), A.dtype.type(0)
    for t in range(b):
        p0, p1, p2, r0, r1, r2, r3 = _factor(A, t)
        d0, d1, d2, d3 = r0[0], r1[1], r2[2], r3[3]
        info[t] = 1 if d0 == 0 else (2 if d1 == 0 else (3 if d2 == 0 else (4 if d3 == 0 else 0)))
        R[0], R[1], R[2], R[3] = _div(1, d0), _div(1, d1), _div(1, d2), _div(1, d3)
        Q[0], Q[1], Q[2], Q[3] = 0, 1, 2, 3
        Q[0], Q[p0] = Q[p0], Q[0]
        Q[1], Q[p1] = Q[p1], Q[1]
        Q[2], Q[p2] = Q[p2], Q[2]
        q0, q1, q2, q3 = Q[0], Q[1], Q[2], Q[3]
        for j in range(4):  # column j of P^T I: entry i is 1 where Q[i] is j
            w0, w1, w2, w3 = _substitute(
                one if q0 == j else zero,
                one if q1 == j else zero,
                one if q2 == j else zero,
                one if q3 == j else zero,
                r0,
                r1,
                r2,
                r3,
                R[0],
                R[1],
                R[2],
                R[3],
            )
            Y[t, 0, j], Y[t, 1, j], Y[t, 2, j], Y[t, 3, j] = w0, w1, w2, w3
    return Y, info
