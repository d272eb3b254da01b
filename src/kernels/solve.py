"""Kernels for ``X = solve(A, B)`` and ``Y = inv(A)``: pullbacks and pushforwards.

solve (Giles 2008), ``X = A^-1 B`` with ``B`` of shape (n, k)::

    pushforward  X_dot = A^-1 (B_dot - A_dot X)
    pullback     B_bar = A^-H X_bar,   A_bar = -B_bar X^H

The pullback reuses the forward LU factorization (``kernels.lu.lu_factor_batched`` of a small
stack): ``B_bar`` is a solve with the conjugate-transposed factors, never a new factorization
and never an explicit inverse. A vector right-hand side ``b`` of shape (n,) is passed as
``b.reshape(n, 1)`` (a view); ``A_bar = -outer(B_bar, conj(x))`` is then the same formula. Large
matrices are the rule's business (``rules.linalg._systems``: LAPACK with the kept factors).

inv (Giles 2008), ``Y = A^-1``::

    pushforward  Y_dot = -Y A_dot Y
    pullback     A_bar = -Y^H Y_bar Y^H

Both need only ``Y`` from the forward pass: two products, no solve.

Singular ``A``: the forward factorization has a zero pivot and the kernels divide by it, so
the result is inf/nan (``error_model="numpy"``), never an exception; the rule raises
``numpy.linalg.LinAlgError`` itself, as ``numpy.linalg.solve`` does. NaN in gives NaN out.

References
----------
M. B. Giles, "An extended collection of matrix derivative results for forward and reverse
mode algorithmic differentiation", Oxford NA report 08/01 (2008).
"""

import numpy as np

from kernels import tiled_products as tiled
from kernels._jit import jit, jit_inline
from kernels._lu4 import solve_pullback4, solve_pushforward4
from kernels._smallmat import (
    _lanes,
    _load_inplace,
    _load_piv_inplace,
    _lu_solve_inplace,
    _mul_hn_inplace,
    _mul_nh_inplace,
    _mul_nn_inplace,
    _negate_inplace,
    _store_inplace,
)
from kernels.lu import lu_solve_batched
from kernels.products import adjoint_operand

# --- solve ---------------------------------------------------------------------------------


# Two ways to run each kernel, chosen by shape from A/Bs on 10000 x (2x2 .. 4x4) and
# 1000 x (8x8 .. 16x16) stacks, one thread. Everything on lane blocks (the matrices of a block
# side by side, the products vectorised across matrices: best for small matrices and few
# right-hand sides); or, for the pullback from 12 on a side and 8 right-hand sides,
# lu_solve_batched (one matrix at a time there for 8-byte dtypes, lane blocks for float32)
# and the product by numpy's stacked matmul
# (1000 x (16x16), 16 right-hand sides: 1.35 against 2.03 ms for lanes with the product one
# matrix at a time; 12 with 8: 0.62 against 0.77 ms); for the pushforward with 4 or more
# right-hand sides, its residual one matrix at a time with rows innermost and then
# lu_solve_batched (0.9 against 1.4 ms at 10000 x (4x4) with 4 right-hand sides). Since then
# 4x4 stacks take a third way before both: one matrix at a time in registers (kernels._lu4).
_MATMUL_PULLBACK_MIN_N = 12
_MATMUL_PULLBACK_MIN_K = 8
_ROWS_PUSHFORWARD_MIN_K = 4


@jit_inline
def _solve_pullback_lanes(lu, piv, X, X_bar, A_bar, B_bar):
    """:func:`solve_pullback_batched` on lane blocks: solve, product and sign per block."""
    b, n, k = X.shape
    nl = _lanes(b, n * max(n, k))
    dt = X.dtype
    F = np.empty((n, n, nl), dtype=dt)
    P = np.empty((n, nl), dtype=np.int32)
    Xw, Bb = np.empty((n, k, nl), dtype=dt), np.empty((n, k, nl), dtype=dt)
    Ab = np.empty((n, n, nl), dtype=dt)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(lu, t0, nb, F)
        _load_piv_inplace(piv, t0, nb, P)
        _load_inplace(X_bar, t0, nb, Bb)
        _lu_solve_inplace(F, P, 2, nb, Bb)  # A^-H X_bar with the forward's factors
        _load_inplace(X, t0, nb, Xw)
        _mul_nh_inplace(Bb, Xw, nb, Ab)
        _negate_inplace(nb, Ab)
        _store_inplace(Ab, t0, nb, A_bar)
        _store_inplace(Bb, t0, nb, B_bar)


@jit
def _solve_pullback_lanes_batched(lu, piv, X, X_bar):
    """``(A_bar, B_bar)`` by :func:`_solve_pullback_lanes`, in one compiled call."""
    b, n, k = X.shape
    A_bar = np.empty((b, n, n), dtype=X.dtype)
    B_bar = np.empty((b, n, k), dtype=X.dtype)
    _solve_pullback_lanes(lu, piv, X, X_bar, A_bar, B_bar)
    return A_bar, B_bar


def solve_pullback_batched(lu, piv, X, X_bar):
    """Return ``(A_bar, B_bar)``: ``B_bar = A^-H X_bar``, ``A_bar = -B_bar X^H``.

    ``lu`` (b, n, n) and ``piv`` (b, n) int32 from the forward factorization
    (``lu_factor_batched``); ``X``, ``X_bar`` (b, n, k). Returns A_bar (b, n, n), B_bar (b, n, k).
    """
    b, n, k = X.shape
    if lu.shape != (b, n, n) or piv.shape != (b, n) or X_bar.shape != X.shape:
        raise ValueError(
            "solve_pullback_batched: need lu (b, n, n), piv (b, n), X and X_bar (b, n, k)"
        )
    if n == 4:
        return solve_pullback4(lu, piv, X, X_bar)
    if n < _MATMUL_PULLBACK_MIN_N or k < _MATMUL_PULLBACK_MIN_K:
        return _solve_pullback_lanes_batched(lu, piv, X, X_bar)
    B_bar = lu_solve_batched(lu, piv, X_bar, 2)  # A^-H X_bar with the forward's factors
    A_bar = np.matmul(B_bar, X.conj().swapaxes(-1, -2) if X.dtype.kind == "c" else X.mT)
    np.negative(A_bar, out=A_bar)
    return A_bar, B_bar


@jit_inline
def _solve_pushforward_lanes(lu, piv, X, A_dot, B_dot, X_dot):
    """:func:`solve_pushforward_batched` on lane blocks: residual and solve per block."""
    b, n, k = X.shape
    nl = _lanes(b, n * max(n, k))
    dt = X.dtype
    F = np.empty((n, n, nl), dtype=dt)
    P = np.empty((n, nl), dtype=np.int32)
    Ad = np.empty((n, n, nl), dtype=dt)
    Xw = np.empty((n, k, nl), dtype=dt)
    Bd = np.empty((n, k, nl), dtype=dt)
    R = np.empty((n, k, nl), dtype=dt)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(lu, t0, nb, F)
        _load_piv_inplace(piv, t0, nb, P)
        _load_inplace(X, t0, nb, Xw)
        _load_inplace(A_dot, t0, nb, Ad)
        _load_inplace(B_dot, t0, nb, Bd)
        _mul_nn_inplace(Ad, Xw, nb, R)
        for i in range(n):
            for j in range(k):
                for l in range(nb):
                    R[i, j, l] = Bd[i, j, l] - R[i, j, l]
        _lu_solve_inplace(F, P, 0, nb, R)
        _store_inplace(R, t0, nb, X_dot)


@jit_inline
def _residual_inplace(B_dot, A_dot, X, R):
    """Write ``R[t] = B_dot[t] - A_dot[t] X[t]`` for every ``t``, rows innermost (vectorised)."""
    b, n, k = X.shape
    for t in range(b):
        for i in range(n):
            for j in range(k):
                R[t, i, j] = B_dot[t, i, j]
            for p in range(n):
                a = A_dot[t, i, p]
                for j in range(k):
                    R[t, i, j] -= a * X[t, p, j]


@jit
def solve_pushforward_batched(lu, piv, X, A_dot, B_dot):
    """Return ``X_dot = A^-1 (B_dot - A_dot X)`` (b, n, k) from the forward's ``lu``, ``piv``."""
    b, n, k = X.shape
    if (
        lu.shape != (b, n, n)
        or piv.shape != (b, n)
        or A_dot.shape != (b, n, n)
        or B_dot.shape != X.shape
    ):
        raise ValueError(
            "solve_pushforward_batched: need lu, A_dot (b, n, n), piv (b, n), X, B_dot (b, n, k)"
        )
    if n == 4:
        return solve_pushforward4(lu, piv, X, A_dot, B_dot)
    if k >= _ROWS_PUSHFORWARD_MIN_K:
        R = np.empty((b, n, k), dtype=X.dtype)
        _residual_inplace(B_dot, A_dot, X, R)
        return lu_solve_batched(lu, piv, R, 0)
    X_dot = np.empty((b, n, k), dtype=X.dtype)
    _solve_pushforward_lanes(lu, piv, X, A_dot, B_dot, X_dot)
    return X_dot


# --- inv -----------------------------------------------------------------------------------


@jit_inline
def _chain4(Y, M, adjoint):
    """``-Y^H M Y^H`` with ``adjoint``, else ``-Y M Y``, for stacks of 4x4 matrices.

    One matrix at a time, both products through a 4x4 scratch matrix that stays in cache: the
    lane kernels' sums (each from zero, its terms in order), without their lane layout.
    """
    b = Y.shape[0]
    out = np.empty_like(Y)
    S = np.empty((4, 4), dtype=Y.dtype)
    zero = Y.dtype.type(0)
    for t in range(b):
        for i in range(4):
            for j in range(4):
                s = zero
                for r in range(4):  # M Y^H or M Y
                    s += M[t, i, r] * (np.conj(Y[t, j, r]) if adjoint else Y[t, r, j])
                S[i, j] = s
        for i in range(4):
            for j in range(4):
                s = zero
                for r in range(4):  # Y^H S or Y S
                    s += (np.conj(Y[t, r, i]) if adjoint else Y[t, i, r]) * S[r, j]
                out[t, i, j] = -s
    return out


@jit
def inv_pullback_batched(Y, Y_bar):
    """Return ``A_bar = -Y^H Y_bar Y^H`` (b, n, n) given the forward output ``Y = A^-1``."""
    b, n, _ = Y.shape
    if Y.shape != (b, n, n) or Y_bar.shape != Y.shape:
        raise ValueError("inv_pullback_batched: need Y and Y_bar (b, n, n)")
    if n == 4:
        return _chain4(Y, Y_bar, True)
    nl = _lanes(b, n * n)
    dt = Y.dtype
    A_bar = np.empty((b, n, n), dtype=dt)
    Yw = np.empty((n, n, nl), dtype=dt)
    Yb = np.empty((n, n, nl), dtype=dt)
    T = np.empty((n, n, nl), dtype=dt)
    Ab = np.empty((n, n, nl), dtype=dt)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(Y, t0, nb, Yw)
        _load_inplace(Y_bar, t0, nb, Yb)
        _mul_nh_inplace(Yb, Yw, nb, T)  # Y_bar Y^H
        _mul_hn_inplace(Yw, T, nb, Ab)  # Y^H (Y_bar Y^H)
        _negate_inplace(nb, Ab)
        _store_inplace(Ab, t0, nb, A_bar)
    return A_bar


@jit
def inv_pushforward_batched(Y, A_dot):
    """Return ``Y_dot = -Y A_dot Y`` (b, n, n) given the forward output ``Y = A^-1``."""
    b, n, _ = Y.shape
    if Y.shape != (b, n, n) or A_dot.shape != Y.shape:
        raise ValueError("inv_pushforward_batched: need Y and A_dot (b, n, n)")
    if n == 4:
        return _chain4(Y, A_dot, False)
    nl = _lanes(b, n * n)
    dt = Y.dtype
    Y_dot = np.empty((b, n, n), dtype=dt)
    Yw = np.empty((n, n, nl), dtype=dt)
    Ad = np.empty((n, n, nl), dtype=dt)
    T = np.empty((n, n, nl), dtype=dt)
    Yd = np.empty((n, n, nl), dtype=dt)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        _load_inplace(Y, t0, nb, Yw)
        _load_inplace(A_dot, t0, nb, Ad)
        _mul_nn_inplace(Ad, Yw, nb, T)  # A_dot Y
        _mul_nn_inplace(Yw, T, nb, Yd)  # Y (A_dot Y)
        _negate_inplace(nb, Yd)
        _store_inplace(Yd, t0, nb, Y_dot)
    return Y_dot


@jit
def _chain_one(Y, M, adjoint):
    """``-Y^H M Y^H`` (``adjoint``) or ``-Y M Y`` for one (n, n) matrix: :func:`_chain4`'s sums.

    Each sum from zero, its terms in order, as the lane kernels; ``adjoint`` an argument, so
    the pullback and the pushforward share one compilation per dtype.
    """
    n = Y.shape[0]
    if Y.shape != (n, n) or M.shape != Y.shape:
        raise ValueError("inv_pullback, inv_pushforward: need Y and its (co)tangent (n, n)")
    S = np.empty((n, n), dtype=Y.dtype)
    out = np.empty((n, n), dtype=Y.dtype)
    zero = Y.dtype.type(0)
    for i in range(n):
        for j in range(n):
            s = zero
            for r in range(n):
                s += M[i, r] * (np.conj(Y[j, r]) if adjoint else Y[r, j])
            S[i, j] = s
    for i in range(n):
        for j in range(n):
            s = zero
            for r in range(n):
                s += (np.conj(Y[r, i]) if adjoint else Y[i, r]) * S[r, j]
            out[i, j] = -s
    return out


def inv_pullback(Y, Y_bar):
    """:func:`inv_pullback_batched` for one (n, n) matrix, without making it a stack of one."""
    return _chain_one(Y, Y_bar, True)


def inv_pushforward(Y, A_dot):
    """:func:`inv_pushforward_batched` for one (n, n) matrix, without making it a stack of one."""
    return _chain_one(Y, A_dot, False)


def inv_pullback_blas(Y, Y_bar):
    """``inv_pullback`` for large matrices (or stacks): two products, ``-Y^H (Y_bar Y^H)``.

    ``Y^H`` is :func:`kernels.products.adjoint_operand`'s: a C-ordered copy for real stacks of
    small matrices, which makes both products plain ones (1000 x (16x16) float64: 0.64 against
    0.74 ms with the view). Real ``(b, n, n)`` stacks that :func:`kernels.tiled_products.fits`
    takes (``kind="inv_pullback"``) go through :func:`kernels.tiled_products.inv_pullback_tiled`
    instead, both products per matrix in one pass over the stacks.
    """
    n = Y.shape[-1]
    if (
        Y.ndim == 3
        and Y_bar.shape == Y.shape
        and tiled.fits((n, n, n), Y, Y_bar, kind="inv_pullback")
    ):
        return tiled.inv_pullback_tiled(Y, Y_bar)
    Y_h = adjoint_operand(Y)
    A_bar = Y_h @ (Y_bar @ Y_h)
    np.negative(A_bar, out=A_bar)
    return A_bar


def inv_pushforward_blas(Y, A_dot):
    """``inv_pushforward`` for large matrices (or stacks): two products, ``-Y (A_dot Y)``.

    Two BLAS ``gemm`` (numpy's matmul, which broadcasts). Real ``(b, n, n)`` stacks that
    :func:`kernels.tiled_products.fits` takes (``kind="inv_pushforward"``) go through
    :func:`kernels.tiled_products.inv_pushforward_tiled`, one pass over the stacks.
    """
    n = Y.shape[-1]
    if (
        Y.ndim == 3
        and A_dot.shape == Y.shape
        and tiled.fits((n, n, n), Y, A_dot, kind="inv_pushforward")
    ):
        return tiled.inv_pushforward_tiled(Y, A_dot)
    Y_dot = Y @ (A_dot @ Y)
    np.negative(Y_dot, out=Y_dot)
    return Y_dot
