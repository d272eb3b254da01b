"""``scipy.linalg.solve_triangular`` of one small system, and its derivatives, one call each.

As :mod:`kernels.lu_single`: for a 4x4 system the rule's whole call is mostly fixed costs, so
the forward solve with scipy's ``check_finite`` test and the zero-diagonal test is one
compiled call, and so are the pullback and the forward-mode pass:

* ``solve_triangular_single(T, B, lower, trans, unit_diagonal, check_finite) -> (X, status)``:
  ``status`` is ``-1`` for an inf or NaN in ``T`` or ``B`` (only with ``check_finite``; nothing
  is solved), ``i + 1`` for the first zero ``T[i, i]`` (without ``unit_diagonal``), else 0;
* ``solve_triangular_single_pullback(T, X, X_bar, lower, trans, unit_diagonal)
  -> (T_bar, B_bar)``;
* ``solve_triangular_single_jvp(T, B, T_dot, B_dot, lower, trans, unit_diagonal,
  check_finite) -> (X, X_dot, status)``.

``T`` (n, n), ``B`` (n,) or (n, k), C-contiguous, of one dtype (float32, float64, complex128);
flags as :mod:`kernels.triangular`, whose batched kernels these call on a stack of one (the
same bits). The rule calls the ``*_into`` variants of the first two, which write outputs that
it allocates (a returned array costs more to box than a passed one).
"""

import numpy as np

from kernels._jit import jit
from kernels.triangular import (
    solve_triangular_batched,
    solve_triangular_pullback_batched,
    solve_triangular_pushforward_batched,
)


@jit
def _finite(x):
    """Whether every entry of the C-contiguous array ``x`` is finite."""
    flat = x.reshape(-1)
    for i in range(flat.size):  # noqa: SIM110 (Numba compiles the loop, not a generator)
        if not np.isfinite(flat[i]):
            return False
    return True


@jit
def _status(T, B, unit_diagonal, check_finite):
    """``-1`` (inf or NaN, when checked), ``i + 1`` (a zero ``T[i, i]``), or 0."""
    if check_finite and not (_finite(T) and _finite(B)):
        return -1
    if not unit_diagonal:
        for i in range(T.shape[0]):
            if T[i, i] == 0:
                return i + 1
    return 0


@jit
def _copy_into(src, out):
    """``out[...] = src`` for C-contiguous arrays of one size."""
    a, b = src.reshape(-1), out.reshape(-1)
    for i in range(a.size):
        b[i] = a[i]


@jit
def solve_triangular_single_into(T, B, X, lower, trans, unit_diagonal, check_finite):
    """Write ``X = op(T)^-1 B`` into ``X`` (``B``'s shape, allocated by the caller); the status.

    Passing a new output costs less than boxing a returned one. Nothing is written when the
    status is not 0.
    """
    n = T.shape[0]
    if T.shape[1] != n or n == 0 or B.shape[0] != n or X.shape != B.shape:
        raise ValueError("solve_triangular_single: T (n, n), B and X (n,) or (n, k), n >= 1")
    status = _status(T, B, unit_diagonal, check_finite)
    if status == 0:
        k = B.size // n
        _copy_into(
            solve_triangular_batched(
                T.reshape((1, n, n)), B.reshape((1, n, k)), lower, trans, unit_diagonal
            ),
            X,
        )
    return status


def solve_triangular_single(T, B, lower, trans, unit_diagonal, check_finite):
    """Return ``(X, status)``; see the module docstring."""
    X = np.empty_like(B)
    return X, solve_triangular_single_into(T, B, X, lower, trans, unit_diagonal, check_finite)


@jit
def solve_triangular_single_pullback_into(T, X, X_bar, T_bar, B_bar, lower, trans, unit_diagonal):
    """Write ``T_bar`` (n, n) and ``B_bar`` (``X``'s shape), allocated by the caller."""
    n = T.shape[0]
    if T.shape[1] != n or n == 0 or X_bar.shape != X.shape or X.shape[0] != n:
        raise ValueError("solve_triangular_single_pullback: T (n, n), X and X_bar of one shape")
    if T_bar.shape != T.shape or B_bar.shape != X.shape:
        raise ValueError("solve_triangular_single_pullback: T_bar (n, n), B_bar like X")
    k = X.size // n
    T3_bar, B3_bar = solve_triangular_pullback_batched(
        T.reshape((1, n, n)),
        X.reshape((1, n, k)),
        X_bar.reshape((1, n, k)),
        lower,
        trans,
        unit_diagonal,
    )
    _copy_into(T3_bar, T_bar)
    _copy_into(B3_bar, B_bar)


def solve_triangular_single_pullback(T, X, X_bar, lower, trans, unit_diagonal):
    """Return ``(T_bar, B_bar)`` for ``X`` from ``solve_triangular_single``."""
    T_bar, B_bar = np.empty_like(T), np.empty_like(X)
    solve_triangular_single_pullback_into(T, X, X_bar, T_bar, B_bar, lower, trans, unit_diagonal)
    return T_bar, B_bar


@jit
def solve_triangular_single_jvp(T, B, T_dot, B_dot, lower, trans, unit_diagonal, check_finite):
    """Return ``(X, X_dot, status)``; see the module docstring."""
    n = T.shape[0]
    if T.shape[1] != n or n == 0 or B.shape[0] != n:
        raise ValueError("solve_triangular_single_jvp: T (n, n), B (n,) or (n, k), n >= 1")
    if T_dot.shape != T.shape or B_dot.shape != B.shape:
        raise ValueError("solve_triangular_single_jvp: tangents of the shapes of T and B")
    status = _status(T, B, unit_diagonal, check_finite)
    if status != 0:
        return np.empty_like(B), np.empty_like(B), status
    k = B.size // n
    T3 = T.reshape((1, n, n))
    X = solve_triangular_batched(T3, B.reshape((1, n, k)), lower, trans, unit_diagonal)
    X_dot = solve_triangular_pushforward_batched(
        T3, X, T_dot.reshape((1, n, n)), B_dot.reshape((1, n, k)), lower, trans, unit_diagonal
    )
    return X.reshape(B.shape), X_dot.reshape(B.shape), 0
