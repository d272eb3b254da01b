r"""Rules for the LU factorization ``scipy.linalg.lu``; ``lu_packed`` reuses its derivatives.

``A = P L U`` with partial pivoting: ``A`` of shape ``(..., m, n)``, ``k = min(m, n)``, ``L`` (m, k)
unit lower trapezoidal, ``U`` (k, n) upper trapezoidal, ``A = L[perm] @ U`` for the row indices
``perm`` (``p_indices=True``). The permutation is piecewise constant in ``A``: the rules hold it at
the one the forward pass chose (at an exact tie between candidate pivots it jumps, and the
derivative is the one-sided derivative of that branch). Square case (de Hoog, Anderssen & Lukas
2011; ChainRules.jl's ``lu`` rule), with :math:`F = L^{-1} P^T \dot A\, U^{-1}`:

.. math::

    \dot L = L\, \mathrm{tril}(F, -1), \quad \dot U = \mathrm{triu}(F)\, U, \qquad
    \bar A = P L^{-H} \big(\mathrm{tril}(L^H \bar L, -1) + \mathrm{triu}(\bar U U^H)\big) U^{-H}.

Tall and wide matrices add the blocks ``L_2 = (P^T A)[k:] U^{-1}`` and
``U_2 = L^{-1} (P^T A)[:, k:]`` (``kernels.lu`` has the block formulas). Only the free entries of
``L`` and ``U`` are read from their cotangents (the strict lower part of ``L``, the upper part of
``U``), which is what lets ``lu_factor``'s packed ``lu`` matrix pass its cotangent as both
(``rules.linalg.lu_packed`` holds ``lu_factor`` and ``lu_solve``, the packed pair, on top of this
module's :class:`_Factors`). ``P`` and ``perm`` are constant: their cotangents are ignored, and
their tangents are ``ZeroTangent()`` (``P``) and ``NoTangent()`` (the integer ``perm``/``piv``).

**Zero pivots** (an exact zero on the diagonal of ``U``). When it is the *last* pivot of a square
or wide matrix nothing is divided by it, and the factorization is smooth there: a generic
singular matrix of rank ``m - 1`` factors this way (``[[1, 2], [2, 4]]``, say). The rules then
split ``P^T A = [X, Z]`` after column ``m - 1``: ``X`` has the tall LU ``L[:, :m-1] U[:m-1, :m-1]``
(nonsingular) and ``U[:, m-1:] = L^{-1} Z``, and differentiate that, so the derivative is exact.
Any other zero pivot (an earlier one, or the last one of a tall matrix) leaves entries of ``L``
that are ``0/0`` limits depending on the direction of approach: the derivative does not exist,
and the pullback and pushforward raise ``numpy.linalg.LinAlgError`` naming the function, the
pivot, the shape and the matrix of the stack. NaN in gives NaN out.

Paths (chosen by :func:`rules.core.dispatch.paths`):

* algebra path: none; ``L_bar`` and ``U_bar`` are read by their triangles, so cotangents must be
  arrays (:func:`rules.core.cotangents.as_array_cotangent`).
* array-formula path: the formula in stacked numpy, for dtypes without kernels.
* forward: a stack of small square matrices (orders 2 to
  ``kernels.crossovers.LU_FORWARD_STACK_MAX_N``, a kernel dtype) is factored in one compiled
  call (``kernels.lu_unpacked.plu_batched`` for ``lu``, which writes ``P`` in the same pass,
  ``lu_batched`` for ``p_indices``/``permute_l``, ``kernels.lu.lu_factor_batched`` for
  ``lu_factor``) with LAPACK's pivot choice; so is one finite square matrix for ``lu`` (orders 2
  to ``LU_FORWARD_SINGLE_MAX_N``, a stack of one), where scipy's wrapper costs more than the
  factorization; ``lu_factor`` calls LAPACK ``getrf`` for one matrix directly. Anything else goes
  to scipy, which loops over a stack in Python.
* fused lane: one plain real square matrix (orders 2 to ``LU_FAST_SINGLE_MAX_N``) with the
  default outputs, or any ``frule`` but ``p_indices``: ``kernels.lu_single`` does the forward
  with its finiteness and zero-pivot checks, the pullback, or the whole frule in one compiled
  call each (the same bits as the paths below); an inf or NaN, a zero pivot or a cotangent that
  is not a C-ordered array of the dtype goes the general way.
* kernel path: ``kernels.lu``, one matrix up to ``kernels.crossovers.LU_SINGLE_MAX_N`` and
  stacks up to ``LU_STACK_MAX_N`` in one compiled call, larger ones through the BLAS variant
  (triangular solves with the forward's factors, no inverse).

References
----------
.. [1] F. R. de Hoog, R. S. Anderssen, M. A. Lukas, "Differentiation of matrix functionals using
   triangular factorization", Math. Comp. 80 (2011), 1585-1600.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from kernels import crossovers
from kernels import lu as klu
from kernels import lu_single as klu_single
from kernels import lu_unpacked as klu_unpacked
from kernels import rows as krows
from rules.core.cotangents import as_array_cotangent
from rules.core.dispatch import (
    forward_stack,
    kernel_array,
    kernel_eligible,
    kernel_ready,
    paths,
    unstack,
)
from rules.core.nesting import as_array, call, contiguous, is_traced
from rules.core.registry import frule, rrule, split_cotangent
from rules.linalg._stacks import adjoint, check_shape
from tangents import AbstractZero, NoTangent, ProjectTo, Tangent, ZeroTangent, unthunk

# --- A = L[perm] @ U: kernels and the stacked formula --------------------------------------------


def _rows(X: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``X[..., index, :]`` per matrix of the stack (``index`` of shape ``(..., m)``).

    A kernel-ready ``(b, m, n)`` stack: ``kernels.rows.rows_batched``.
    """
    if kernel_ready(X) and X.ndim == 3 and index.ndim == 2 and index.shape[0] == X.shape[0]:
        return krows.rows_batched(X, index)
    return np.take_along_axis(X, index[..., None], axis=-2)


def _inverse(perm: np.ndarray) -> np.ndarray:
    """The inverse permutations: ``_rows(_rows(X, perm), _inverse(perm))`` is ``X``."""
    return np.argsort(perm, axis=-1).astype(np.int32)


def _blocks_traced(L1: Any, U1: Any, W11: Any, L_bar: Any, U_bar: Any) -> Any:
    """The pullback's ``W`` before the row permutation, for traced operands: no in-place writes.

    The same steps as :func:`_pullback_formula`'s, on blocks joined by traced concatenations.
    """
    k = L1.shape[-1]

    def right(X: Any) -> Any:  # X U1^-H
        return adjoint(np.linalg.solve(U1, adjoint(X)))

    def left(X: Any) -> Any:  # L1^-H X
        return np.linalg.solve(adjoint(L1), X)

    if L_bar.shape[-2] > k:  # tall: W = [W11; L_bar2], then rows :k
        W = right(np.concatenate((W11, L_bar[..., k:, :]), axis=-2))
        return np.concatenate((left(W[..., :k, :]), W[..., k:, :]), axis=-2)
    top = right(W11)
    if U_bar.shape[-1] > k:  # wide: W = [W11, U_bar2]
        top = np.concatenate((top, U_bar[..., k:]), axis=-1)
    return left(top)


def _pullback_formula(
    L: np.ndarray, U: np.ndarray, perm: np.ndarray, L_bar: Any, U_bar: Any
) -> np.ndarray:
    """Array-formula path: the stacked numpy formula (also the reference in the tests)."""
    m, k = L.shape[-2:]
    L1, L2, U1, U2 = L[..., :k, :], L[..., k:, :], U[..., :k], U[..., k:]
    G = adjoint(L1) @ L_bar[..., :k, :] - U_bar[..., k:] @ adjoint(U2)
    H = U_bar[..., :k] @ adjoint(U1) - adjoint(L2) @ L_bar[..., k:, :]
    if any(map(is_traced, (L, U, L_bar, U_bar))):
        return _rows(_blocks_traced(L1, U1, np.tril(G, -1) + np.triu(H), L_bar, U_bar), perm)
    W = np.empty((*L.shape[:-2], m, U.shape[-1]), dtype=np.result_type(L, L_bar, U_bar))
    W[..., :k, :k] = np.tril(G, -1) + np.triu(H)
    W[..., :k, k:] = U_bar[..., k:]  # wide
    W[..., k:, :k] = L_bar[..., k:, :]  # tall
    W[..., :k] = adjoint(np.linalg.solve(U1, adjoint(W[..., :k])))  # W[:, :k] U1^-H
    W[..., :k, :] = np.linalg.solve(adjoint(L1), W[..., :k, :])  # L1^-H W[:k]
    return _rows(W, perm).astype(L.dtype, copy=False)


def _pushforward_formula(
    L: np.ndarray, U: np.ndarray, perm: np.ndarray, A_dot: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    k = L.shape[-1]
    L1, L2, U1, U2 = L[..., :k, :], L[..., k:, :], U[..., :k], U[..., k:]
    X = _rows(A_dot, _inverse(perm))  # P^T A_dot
    F = np.linalg.solve(L1, X[..., :k, :k])
    F = adjoint(np.linalg.solve(adjoint(U1), adjoint(F)))  # L1^-1 X11 U1^-1
    L1_dot, U1_dot = L1 @ np.tril(F, -1), np.triu(F) @ U1
    L2_dot = adjoint(np.linalg.solve(adjoint(U1), adjoint(X[..., k:, :k] - L2 @ U1_dot)))
    U2_dot = np.linalg.solve(L1, X[..., :k, k:] - L1_dot @ U2)
    L_dot = np.concatenate((L1_dot, L2_dot), axis=-2).astype(L.dtype, copy=False)
    return L_dot, np.concatenate((U1_dot, U2_dot), axis=-1).astype(L.dtype, copy=False)


# Kernel path: the loop kernels up to the crossover (one matrix, or a stack in one compiled
# call), the BLAS variant per matrix above (triangular solves with the forward's factors, no
# inverse). The kernels take ``perm`` third; paths() passes it last, so these reorder.


def _perm_last(f: Any) -> Any:
    """``f(L, U, perm, *rest)`` called as ``g(L, U, *rest, perm)``, the order paths() passes."""

    def g(L: np.ndarray, U: np.ndarray, *rest: Any) -> Any:
        return f(L, U, rest[-1], *rest[:-1])

    g.__name__ = g.__qualname__ = f.__name__
    return g


_PULLBACK = paths(
    formula=_perm_last(_pullback_formula),
    single=_perm_last(klu.lu_pullback),
    batched=_perm_last(klu.lu_pullback_batched),
    large=_perm_last(klu.lu_pullback_blas),
    single_max_n="LU_SINGLE_MAX_N",
    stack_max_n="LU_STACK_MAX_N",
)
_PUSHFORWARD = paths(
    formula=_perm_last(_pushforward_formula),
    batched=_perm_last(klu.lu_pushforward_batched),
    large=_perm_last(klu.lu_pushforward_blas),
    single_max_n="LU_SINGLE_MAX_N",
    stack_max_n="LU_STACK_MAX_N",
)


def lu_pullback_array(
    L: np.ndarray, U: np.ndarray, perm: np.ndarray, L_bar: Any, U_bar: Any
) -> np.ndarray:
    """``A_bar`` for ``A = L[perm] @ U`` and ndarray cotangents (module docstring).

    ``L`` (..., m, k), ``U`` (..., k, n), ``perm`` (..., m) int32; cast to ``L``'s dtype.
    """
    size = max(L.shape[-2], U.shape[-1])
    return _PULLBACK(L, U, L_bar, U_bar, n=size, index=(perm,))


def lu_pushforward_array(
    L: np.ndarray, U: np.ndarray, perm: np.ndarray, A_dot: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(L_dot, U_dot)`` for ``A = L[perm] @ U`` and an ndarray ``A_dot``."""
    size = max(L.shape[-2], U.shape[-1])
    return _PUSHFORWARD(L, U, A_dot, n=size, index=(perm,))


# --- the forward factors, zero pivots, and the pullback/pushforward shared by the rules ----------


class _Factors:
    """``A = L[perm] @ U`` from the forward pass, with its zero pivots classified.

    ``last_zero`` flags the matrices of the stack whose only zero pivot is the last one of a
    square or wide matrix (smooth there: the split path); any other zero pivot is ``bad``.
    """

    __slots__ = ("L", "U", "bad", "last_zero", "name", "perm", "shape")

    def __init__(
        self,
        name: str,
        perm: np.ndarray,
        L: np.ndarray,
        U: np.ndarray,
        info: np.ndarray | None = None,
    ) -> None:
        self.name, self.L, self.U = name, L, U
        self.perm = perm.astype(np.int32, copy=False)  # int64 for 1x1 from scipy
        self.shape = (*L.shape[:-1], U.shape[-1])
        self.last_zero = self.bad = None
        # a forward kernel's getrf-style info saves reading the diagonal of U when it is all 0
        some_zero = info.any() if info is not None else not np.diagonal(U, 0, -2, -1).all()
        if some_zero:  # some pivot is zero
            zero = np.diagonal(U, 0, -2, -1) == 0
            m, n = self.shape[-2:]
            last_only = zero[..., -1] & ~zero[..., :-1].any(axis=-1)
            if m > n:
                last_only = np.zeros_like(last_only)
            self.last_zero = last_only if last_only.any() else None
            bad = zero.any(axis=-1) & ~last_only
            self.bad = bad if bad.any() else None

    def _check(self, what: str) -> None:
        if self.bad is None:
            return
        where = np.argwhere(self.bad)[0] if self.bad.ndim else ()
        j = int(np.argmax(np.diagonal(self.U, axis1=-2, axis2=-1)[tuple(where)] == 0))
        at = f" (matrix {tuple(int(w) for w in where)} of the stack)" if len(where) else ""
        raise np.linalg.LinAlgError(
            f"{self.name} {what}: U[{j}, {j}] is a zero pivot{at} of A of shape {self.shape}; "
            "the LU factorization has no derivative there (entries of L are 0/0 limits that "
            "depend on the direction of approach)"
        )

    def pullback(self, L_bar: Any, U_bar: Any) -> np.ndarray:
        """``A_bar`` from ndarray (or zero) cotangents of ``L`` and ``U``."""
        self._check("pullback")
        if 0 in self.shape:  # an empty A (or stack)
            return np.zeros(self.shape, dtype=self.L.dtype)
        L_bar = np.zeros_like(self.L) if L_bar is None else L_bar
        U_bar = np.zeros_like(self.U) if U_bar is None else U_bar
        A_bar = lu_pullback_array(self.L, self.U, self.perm, L_bar, U_bar)
        if self.last_zero is not None:
            at = self.last_zero
            A_bar[at] = _split_pullback(
                self.L[at], self.U[at], self.perm[at], L_bar[at], U_bar[at], A_bar.dtype
            )
        return A_bar

    def pushforward(self, A_dot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(L_dot, U_dot)`` for an ndarray ``A_dot``."""
        self._check("pushforward")
        check_shape(f"{self.name} pushforward", "the tangent of A", A_dot, self.shape)
        if 0 in self.shape:
            return np.zeros_like(self.L), np.zeros_like(self.U)
        L_dot, U_dot = lu_pushforward_array(self.L, self.U, self.perm, A_dot)
        if self.last_zero is not None:
            at = self.last_zero
            L_dot[at], U_dot[at] = _split_pushforward(
                self.L[at], self.U[at], self.perm[at], A_dot[at], L_dot.dtype
            )
        return L_dot, U_dot


def _split_pullback(
    L: np.ndarray, U: np.ndarray, perm: np.ndarray, L_bar: Any, U_bar: Any, dtype: Any
) -> np.ndarray:
    """``A_bar`` of stacks (b, m, m) L, (b, m, n) U whose only zero pivot is ``U[m-1, m-1]``.

    ``P^T A = [X, Z]``: ``X`` has the tall LU ``L[:, :j] U[:j, :j]`` (``j = m - 1``) and
    ``U[:, j:] = L^-1 Z``, so ``Z_bar = L^-H U_bar[:, j:]``, and ``L`` also receives
    ``-Z_bar U[:, j:]^H`` before the tall pullback gives ``X_bar``.
    """
    j = L.shape[-1] - 1
    L_bar = as_array(L_bar, dtype=dtype)
    Z_bar = np.linalg.solve(adjoint(L), as_array(U_bar[..., j:], dtype=dtype))
    if j == 0:  # a single row: U = A
        return _rows(Z_bar, perm)
    X_bar = lu_pullback_array(
        contiguous(L[..., :j]),
        contiguous(U[..., :j, :j]),
        _identity(perm),
        contiguous(L_bar[..., :j] - Z_bar @ adjoint(U[..., :j, j:])),
        contiguous(U_bar[..., :j, :j], dtype=dtype),
    )
    return _rows(np.concatenate((X_bar, Z_bar), axis=-1), perm)


def _identity(perm: np.ndarray) -> np.ndarray:
    """Identity permutations like ``perm`` (a new, writeable int32 array, as kernels expect)."""
    identity = np.empty(perm.shape, dtype=np.int32)
    identity[...] = np.arange(perm.shape[-1], dtype=np.int32)
    return identity


def _split_pushforward(
    L: np.ndarray, U: np.ndarray, perm: np.ndarray, A_dot: np.ndarray, dtype: Any
) -> tuple[np.ndarray, np.ndarray]:
    """``(L_dot, U_dot)`` for the matrices of ``_split_pullback``."""
    j = L.shape[-1] - 1
    X = _rows(as_array(A_dot, dtype=dtype), _inverse(perm))  # P^T A_dot
    L_dot = np.zeros(L.shape, dtype=dtype)
    U_dot = np.zeros(U.shape, dtype=dtype)
    if j > 0:
        L_dot[..., :j], U_dot[..., :j, :j] = lu_pushforward_array(
            contiguous(L[..., :j]),
            contiguous(U[..., :j, :j]),
            _identity(perm),
            contiguous(X[..., :j]),
        )
    U_dot[..., j:] = np.linalg.solve(L, X[..., j:] - L_dot @ U[..., j:])  # L^-1 (Z_dot - L_dot U_Z)
    return L_dot, U_dot


def _as_array(name: str, X_bar: Any, shape: tuple[int, ...], what: str) -> np.ndarray | None:
    """An ndarray (co)tangent of the given shape, or ``None`` for a zero."""
    X_bar = unthunk(X_bar)
    if isinstance(X_bar, AbstractZero):
        return None
    if type(X_bar) is not np.ndarray:
        X_bar = as_array(as_array_cotangent(X_bar, name))
    check_shape(name, what, X_bar, shape)
    return X_bar


def _refuse_overwrite(name: str, overwrite: bool) -> None:
    if overwrite:
        raise ValueError(
            f"{name}: overwrite_a/overwrite_b=True is not differentiable (it mutates the input)"
        )


def _small_stack(A: np.ndarray) -> np.ndarray | None:
    """``A`` as a kernel's ``(b, n, n)`` stack when the batched forward kernels factor it, or ``None``.

    Square orders 2 to ``kernels.crossovers.LU_FORWARD_STACK_MAX_N``, of a kernel dtype (the
    dtype scipy returns; other layouts are copied to C order once, here, which costs far less
    than scipy's loop); 1 x 1 stays with scipy, whose ``P`` then has the input's dtype.
    """
    if A.shape[-1] != A.shape[-2]:
        return None
    stack = forward_stack(A, "LU_FORWARD_STACK_MAX_N", min_n=2)
    return None if stack is None else kernel_array(stack)


def _small_single(A: np.ndarray) -> np.ndarray | None:
    """One small square matrix as a stack of one for ``kernels.lu_unpacked.lu_batched``, or ``None``.

    Orders 2 to ``kernels.crossovers.LU_FORWARD_SINGLE_MAX_N``: the kernel factors with LAPACK's
    pivot choice in less time than scipy's wrapper takes to check its arguments. A non-finite
    matrix stays with scipy, which raises (``check_finite``) or returns its NaNs as before.
    """
    if not kernel_eligible(A) or A.ndim != 2 or A.shape[0] != A.shape[1]:
        return None
    if not 2 <= A.shape[0] <= crossovers.LU_FORWARD_SINGLE_MAX_N[A.dtype.kind]:
        return None
    if not np.isfinite(A).all():
        return None
    return kernel_array(A)[None]


def _check_finite(name: str, A: np.ndarray) -> None:
    """Raise ``ValueError`` for inf or NaN in ``A``, as scipy does with ``check_finite=True``."""
    if not np.isfinite(A).all():
        raise ValueError(f"{name}: array must not contain infs or NaNs (check_finite=True)")


def _matrix(name: str, A: Any) -> np.ndarray:
    dense = as_array(A)
    if dense.ndim < 2:
        raise ValueError(f"{name}: needs a matrix or a stack of matrices, got shape {dense.shape}")
    return dense


# --- scipy.linalg.lu -----------------------------------------------------------------------------


def _scipy_lu(
    A: Any, permute_l: bool, overwrite_a: bool, check_finite: bool, p_indices: bool
) -> tuple[Any, _Factors]:
    name = "scipy.linalg.lu"
    _refuse_overwrite(name, overwrite_a)
    dense = _matrix(name, A)
    single = _small_single(dense)
    stack = None if single is not None else _small_stack(dense)
    if single is not None:  # one compiled call instead of scipy's wrapper
        perm, L, U = klu_unpacked.lu_batched(single)
        perm, L, U = perm[0], L[0], U[0]
    elif stack is not None:  # one compiled call instead of scipy's loop over the stack
        if check_finite:
            _check_finite(name, stack)
        if permute_l or p_indices:
            perm, L, U = klu_unpacked.lu_batched(stack)
        else:  # P in the same pass
            P, perm, L, U, info = klu_unpacked.plu_batched(stack)
        perm, L, U = (
            perm.reshape(dense.shape[:-1]),
            unstack(L, dense.shape),
            unstack(U, dense.shape),
        )
        if not (permute_l or p_indices):
            return (unstack(P, dense.shape), L, U), _Factors(name, perm, L, U, info)
    else:
        perm, L, U = call(sla.lu, dense, p_indices=True, check_finite=check_finite)
    factors = _Factors(name, perm, L, U)
    if permute_l:
        return (_rows(L, factors.perm), U), factors
    if p_indices:
        return (perm, L, U), factors
    # scipy 1.17's P is real, except for 1x1 matrices, where it has the input's dtype
    P_dtype = L.dtype if dense.shape[-2:] == (1, 1) else L.real.dtype
    return (_permutation_matrices(perm, P_dtype), L, U), factors


def _permutation_matrices(perm: np.ndarray, dtype: Any) -> np.ndarray:
    """``P`` with ``A = P L U``: ``P[..., i, perm[..., i]] = 1``, as ``np.eye(n)[perm]``.

    One scatter into flat zeros; on a stack of small matrices it is several times faster than
    the gather ``np.eye(n)[perm]`` (bench case ``lu.pullback --sizes 10000x4``, whole call).
    """
    n = perm.shape[-1]
    P = np.zeros((*perm.shape, n), dtype=dtype)
    if P.size:  # rows r = (..., i) of P, flat: entry r * n + perm[r]
        P.reshape(-1)[np.arange(0, P.size, n) + perm.reshape(-1)] = 1
    return P


@rrule.register(sla.lu)
def lu_rrule(
    A: Any,
    permute_l: bool = False,
    overwrite_a: bool = False,
    check_finite: bool = True,
    p_indices: bool = False,
) -> tuple[Any, Any]:
    """Reverse rule for ``scipy.linalg.lu(A)``; square, tall, wide, stacks.

    Outputs ``(P, L, U)``, ``(perm, L, U)`` with ``p_indices=True``, ``(P L, U)`` with
    ``permute_l=True``. The cotangent of ``P`` or ``perm`` is ignored (both are constant).
    ``overwrite_a`` is refused, ``check_finite`` honoured. See the module docstring for the formula
    and the policy at zero pivots.
    """
    if not (permute_l or overwrite_a or p_indices):
        fast = _fast_rrule(A)
        if fast is not None:
            return fast
    y, factors = _scipy_lu(A, permute_l, overwrite_a, check_finite, p_indices)
    project_A = ProjectTo(A)

    def lu_pullback(y_bar: Any) -> tuple[Any, Any]:
        return _general_pullback(factors, project_A, permute_l, y_bar)

    return y, lu_pullback


def _general_pullback(factors: _Factors, project_A: Any, permute_l: bool, y_bar: Any) -> Any:
    name = "scipy.linalg.lu pullback"
    if permute_l:
        PL_bar, U_bar = split_cotangent(y_bar, 2)
        PL_bar = _as_array(name, PL_bar, factors.L.shape, "the cotangent of P L")
        L_bar = None if PL_bar is None else _rows(PL_bar, _inverse(factors.perm))
    else:
        _, L_bar, U_bar = split_cotangent(y_bar, 3)
        L_bar = _as_array(name, L_bar, factors.L.shape, "the cotangent of L")
    U_bar = _as_array(name, U_bar, factors.U.shape, "the cotangent of U")
    return NoTangent(), project_A(factors.pullback(L_bar, U_bar))


@frule.register(sla.lu)
def lu_frule(
    tangents: tuple[Any, ...],
    A: Any,
    permute_l: bool = False,
    overwrite_a: bool = False,
    check_finite: bool = True,
    p_indices: bool = False,
) -> tuple[Any, Any]:
    r"""Forward rule for ``scipy.linalg.lu``.

    :math:`\dot L = L\,\mathrm{tril}(F, -1)`, :math:`\dot U = \mathrm{triu}(F) U` (module
    docstring).
    """
    if not (overwrite_a or p_indices):
        fast = _fast_frule(A, tangents[1], bool(permute_l))
        if fast is not None:
            return fast
    y, factors = _scipy_lu(A, permute_l, overwrite_a, check_finite, p_indices)
    A_dot = _as_array("scipy.linalg.lu pushforward", tangents[1], factors.shape, "the tangent")
    L_dot, U_dot = factors.pushforward(A_dot)
    if permute_l:
        return y, Tangent(tuple, _rows(L_dot, factors.perm), U_dot)
    return y, Tangent(tuple, NoTangent() if p_indices else ZeroTangent(), L_dot, U_dot)


# --- one small real matrix: the fused kernels of kernels.lu_single -------------------------------
# The whole call of a 4x4 lu is mostly fixed costs (checks, conversions, one compiled call per
# step); here each of the forward, the pullback and the frule is one compiled call, which also
# checks for inf/NaN and zero pivots. Anything else (other dtypes, layouts of the cotangents,
# non-finite input, a zero pivot, traced values) takes the general path above, unchanged.

_FAST_DTYPES = frozenset((np.dtype(np.float64), np.dtype(np.float32)))
_NO_TANGENT = NoTangent()


def _fast_operand(A: Any) -> np.ndarray | None:
    """``A`` as the fused kernels' operand (C-contiguous, writable), or ``None``: general path.

    One plain real square ndarray of order 2 to ``kernels.crossovers.LU_FAST_SINGLE_MAX_N``
    (and within the general path's single-matrix kernel crossovers, so both give the same bits);
    other layouts are copied (the general path copies them too).
    """
    if type(A) is not np.ndarray or A.ndim != 2 or A.dtype not in _FAST_DTYPES:
        return None
    n = A.shape[0]
    if A.shape[1] != n or not 2 <= n <= crossovers.LU_FAST_SINGLE_MAX_N:
        return None
    if n > crossovers.LU_FORWARD_SINGLE_MAX_N["f"] or n > crossovers.LU_SINGLE_MAX_N:
        return None  # the general path's own crossovers (which tests lower) still apply
    return A if A.flags.carray else np.array(A, order="C")


def _fits(X: Any, like: np.ndarray) -> bool:
    """``X`` can go to a fused kernel in place of an array like ``like`` as it is."""
    return (
        type(X) is np.ndarray and X.dtype == like.dtype and X.shape == like.shape and X.flags.carray
    )


def _fast_rrule(A: Any) -> tuple[Any, Any] | None:
    """``lu_rrule(A)`` for the default outputs ``(P, L, U)`` by the fused kernels, or ``None``."""
    dense = _fast_operand(A)
    if dense is None:
        return None
    dtype, shape = dense.dtype, dense.shape
    F = np.empty((3, *shape), dtype=dtype)  # P, L, U: written by the kernel
    if klu_single.plu_single_into(dense, F):  # inf/NaN or a zero pivot: the general path
        return None
    L = F[1]

    def lu_pullback(y_bar: Any) -> tuple[Any, Any]:
        if (type(y_bar) is tuple or type(y_bar) is list) and len(y_bar) == 3:
            _, L_bar, U_bar = y_bar
            if (  # ProjectTo(A) is the identity here
                type(L_bar) is np.ndarray
                and type(U_bar) is np.ndarray
                and L_bar.dtype == dtype
                and U_bar.dtype == dtype
                and L_bar.shape == shape
                and U_bar.shape == shape
                and L_bar.flags.carray
                and U_bar.flags.carray
            ):
                A_bar = np.empty(shape, dtype=dtype)
                klu_single.plu_single_pullback_into(F, L_bar, U_bar, A_bar)
                return _NO_TANGENT, A_bar
        perm = np.argmax(F[0], axis=-1).astype(np.int32)  # P[i, perm[i]] = 1
        factors = _Factors("scipy.linalg.lu", perm, L, F[2])
        return _general_pullback(factors, ProjectTo(A), False, y_bar)

    return (F[0], L, F[2]), lu_pullback


def _fast_frule(A: Any, A_dot: Any, permute_l: bool) -> tuple[Any, Any] | None:
    """``lu_frule`` (outputs ``(P, L, U)`` or ``(P L, U)``) by one fused kernel, or ``None``."""
    dense = _fast_operand(A)
    if dense is None or not _fits(A_dot, dense):
        return None
    G, status = klu_single.plu_single_jvp(dense, A_dot, permute_l)
    if status:
        return None
    if permute_l:
        return (G[0], G[1]), Tangent(tuple, G[2], G[3])
    return (G[0], G[1], G[2]), Tangent(tuple, ZeroTangent(), G[3], G[4])
