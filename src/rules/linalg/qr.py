r"""Rules for the QR factorization: ``np.linalg.qr`` and ``scipy.linalg.qr``.

``A = Q R`` with ``A`` of shape ``(..., m, n)``, ``k = min(m, n)``, ``Q`` (m, k) with orthonormal
columns and ``R`` (k, n) upper trapezoidal with a *real* diagonal, as LAPACK ``geqrf`` returns
it (also for complex ``A``). The signs of that diagonal are LAPACK's (they may be negative) and
stay fixed near ``A``, so the factorization numpy returns is locally a smooth function of ``A``
and the rules differentiate exactly that function. Square and tall (Walter & Lehmann 2010,
Seeger et al. 2017), with ``copyltu(M) = tril(M, -1) + tril(M, -1)^H + Re diag(M)``:

.. math::

    \bar A = \big(\bar Q + Q\, \mathrm{copyltu}(R \bar R^H - \bar Q^H Q)\big) R^{-H}, \qquad
    \dot R = (C - \Omega) R, \quad \dot Q = \dot A R^{-1} - Q (C - \Omega),

where :math:`C = Q^H \dot A R^{-1}` and :math:`\Omega = \mathrm{tril}(C, -1) -
\mathrm{tril}(C, -1)^H + i\, \mathrm{Im\, diag}(C)`. Wide (``m < n``): ``A = [X, Y]``,
``R = [R_1, R_2]``, ``X = Q R_1`` is a square QR and ``R_2 = Q^H Y`` (Liao et al. 2019; Roberts &
Roberts 2020); ``kernels.qr`` has the block formulas.

**Complete mode with m > n** (``np.linalg.qr(A, 'complete')``, ``scipy.linalg.qr(A)``): the extra
columns ``Q_2`` of ``Q = [Q_1, Q_2]`` are not determined by ``A`` (any orthonormal basis of the
complement of its range would do), so they have no derivative *as a factorization*. But numpy
returns one particular basis, LAPACK's product of Householder reflectors
``Q = I - V T V^H``, and that is a smooth function of ``Q_1`` alone: from ``I - Q_{11} =
V_1 T V_1^H`` and ``Q_{21} = -V_2 T V_1^H``,

.. math::

    Q_{12} = C X, \quad Q_{22} = I - Q_{21} X, \qquad C = I - Q_{11},\ X = C^{-H} Q_{21}^H,

with ``Q_11 = Q_1[:k]``, ``Q_21 = Q_1[k:]`` (checked against finite differences of numpy's own
``Q``). The rules differentiate this map, so every cotangent of the complete ``Q`` gets the exact
derivative of what numpy returns; a loss that depends only on the span of ``Q_2`` gets the
derivative of the factorization. ``C`` is singular exactly when a Householder reflector is the
identity (a column of ``A`` already zero below the diagonal): numpy's ``Q`` and ``R`` jump there
(a diagonal entry of ``R`` changes sign under any perturbation), and the rules raise
``numpy.linalg.LinAlgError`` if the cotangent of ``Q_2`` (or a tangent) needs ``C^{-1}``.

**Degenerate policy**: a rank-deficient ``A`` (an exact zero on the diagonal of ``R``) has no QR
derivative: the matching column of ``Q`` is not determined by ``A`` and jumps under
perturbations. The pullback and pushforward raise ``numpy.linalg.LinAlgError`` naming the
function, the shape and the matrix of the stack, rather than return inf/nan; the primal itself
still runs. NaN in gives NaN out (no exception).

Paths (chosen by :func:`rules.core.dispatch.paths`):

* algebra path: none; the cotangent formula needs elementwise access (``copyltu``), so
  cotangents must be arrays (:func:`rules.core.cotangents.as_array_cotangent`; other tangent
  types raise ``TypeError``).
* array-formula path: the formula above in stacked numpy, for dtypes without kernels.
* forward: small stacks (up to ``kernels.crossovers.QR_FORWARD_STACK_MAX_N``) and one small
  matrix (up to ``QR_FORWARD_SINGLE_MAX_N``) of a kernel dtype are factored by the Householder
  kernel ``kernels.qr_forward`` with LAPACK's signs; anything else by numpy's or scipy's LAPACK.
* fused lane: ``np.linalg.qr`` of one plain square matrix up to ``QR_FAST_SINGLE_MAX_N``
  ('reduced' or 'complete'): ``kernels.qr_single`` does the forward with its rank check, the
  pullback, or the whole frule in one compiled call each (the same bits as the paths below);
  a rank-deficient ``A`` or another kind of cotangent goes the general way.
* kernel path: ``kernels.qr``, one matrix up to ``kernels.crossovers.QR_SINGLE_MAX_N`` on a side
  and stacks up to ``QR_STACK_MAX_N`` in one compiled call, larger ones through the BLAS variant
  (one triangular solve, no inverse).

References
----------
.. [1] S. F. Walter, L. Lehmann, "Algorithmic differentiation of linear algebra functions with
   application in optimum experimental design (extended version)", arXiv:1001.1654 (2010).
.. [2] M. Seeger, A. Hetzel, Z. Dai, E. Meissner, N. D. Lawrence, "Auto-differentiating linear
   algebra", arXiv:1710.08717 (2017).
.. [3] H.-J. Liao, J.-G. Liu, L. Wang, T. Xiang, "Differentiable programming tensor networks",
   Phys. Rev. X 9, 031041 (2019).
.. [4] D. A. Roberts, L. R. Roberts, "QR and LQ decomposition matrix backpropagation algorithms
   for square, wide, and deep - real or complex - matrices and their software implementation",
   arXiv:2009.10071 (2020).
.. [5] R. Schreiber, C. Van Loan, "A storage-efficient WY representation for products of
   Householder transformations", SIAM J. Sci. Stat. Comput. 10 (1989), 53-57 (``Q = I - V T V^H``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from kernels import crossovers
from kernels import qr as kqr
from kernels.qr_forward import qr_batched
from kernels.qr_single import qr_single_into, qr_single_jvp, qr_single_pullback_into
from rules.core.cotangents import as_array_cotangent
from rules.core.dispatch import forward_stack, kernel_eligible, paths
from rules.core.nesting import as_array, call, contiguous, is_traced
from rules.core.registry import frule, rrule, split_cotangent
from rules.linalg._stacks import adjoint, check_shape
from tangents import AbstractZero, NoTangent, ProjectTo, Tangent, ZeroTangent, unthunk

# --- the reduced factorization: kernels and the stacked formula ----------------------------------


def _copyltu(M: np.ndarray) -> np.ndarray:
    """``tril(M, -1) + tril(M, -1)^H + Re diag(M)``, over the last two axes."""
    lower = np.tril(M, -1)
    K = lower + adjoint(lower)
    if is_traced(K):  # a nested differentiation: no in-place write
        return K + np.real(M) * np.eye(M.shape[-1], dtype=np.real(M).dtype)
    idx = np.arange(M.shape[-1])
    K[..., idx, idx] = M[..., idx, idx].real
    return K


def _pullback_formula(Q: np.ndarray, R: np.ndarray, Q_bar: Any, R_bar: Any) -> np.ndarray:
    """Array-formula path: the stacked numpy formula (also the reference in the tests)."""
    k = Q.shape[-1]
    R1, R2 = R[..., :k], R[..., k:]
    R1_bar, R2_bar = R_bar[..., :k], R_bar[..., k:]
    K = _copyltu(R1 @ adjoint(R1_bar) - adjoint(Q_bar) @ Q - R2_bar @ adjoint(R2))
    K = K + R2 @ adjoint(R2_bar)  # zero columns unless wide
    X_bar = adjoint(np.linalg.solve(R1, adjoint(Q_bar + Q @ K)))  # (...) R1^-H
    return np.concatenate((X_bar, Q @ R2_bar), axis=-1).astype(Q.dtype, copy=False)


def _pushforward_formula(Q: np.ndarray, R: np.ndarray, A_dot: Any) -> tuple[Any, Any]:
    k = Q.shape[-1]
    R1, R2 = R[..., :k], R[..., k:]
    D = adjoint(np.linalg.solve(adjoint(R1), adjoint(A_dot[..., :k])))  # X_dot R1^-1
    C = adjoint(Q) @ D
    idx = np.arange(k)
    T = np.triu(C + adjoint(C), 1)  # C - Omega: upper triangular with a real diagonal
    if is_traced(T):  # a nested differentiation: no in-place write
        T = T + np.real(C) * np.eye(k, dtype=np.real(C).dtype)
    else:
        T[..., idx, idx] = C[..., idx, idx].real
    R_dot = np.concatenate((T @ R1, adjoint(Q) @ A_dot[..., k:] - (C - T) @ R2), axis=-1)
    return (D - Q @ T).astype(Q.dtype, copy=False), R_dot.astype(Q.dtype, copy=False)


# Kernel path: the loop kernels up to the crossover (one matrix, or a stack in one compiled
# call), the BLAS variant per matrix above (one triangular solve, no inverse).
_PULLBACK = paths(
    formula=_pullback_formula,
    single=kqr.qr_pullback,
    batched=kqr.qr_pullback_batched,
    large=kqr.qr_pullback_blas,
    single_max_n="QR_SINGLE_MAX_N",
    stack_max_n="QR_STACK_MAX_N",
)
_PUSHFORWARD = paths(
    formula=_pushforward_formula,
    batched=kqr.qr_pushforward_batched,
    large=kqr.qr_pushforward_blas,
    single_max_n="QR_SINGLE_MAX_N",
    stack_max_n="QR_STACK_MAX_N",
)


def qr_pullback_array(Q: np.ndarray, R: np.ndarray, Q_bar: Any, R_bar: Any) -> np.ndarray:
    """``A_bar`` of the reduced ``A = Q R`` for ndarray cotangents (see the module docstring).

    ``Q`` (..., m, k), ``R`` (..., k, n); cast to ``Q``'s dtype.
    """
    size = max(Q.shape[-2], R.shape[-1])
    return _PULLBACK(Q, R, Q_bar, R_bar, n=size)


def qr_pushforward_array(Q: np.ndarray, R: np.ndarray, A_dot: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(Q_dot, R_dot)`` of the reduced ``A = Q R`` for an ndarray ``A_dot``."""
    size = max(Q.shape[-2], R.shape[-1])
    return _PUSHFORWARD(Q, R, A_dot, n=size)


# --- complete mode, m > n: LAPACK's Householder completion Q2 of Q1 ------------------------------


def _completion_solve(name: str, C: np.ndarray, B: np.ndarray, adjoint_c: bool) -> np.ndarray:
    """``C^-1 B`` (or ``C^-H B``) for ``C = I - Q11``, raising a clear error where it is singular."""
    try:
        return np.linalg.solve(adjoint(C) if adjoint_c else C, B)
    except np.linalg.LinAlgError:
        raise np.linalg.LinAlgError(
            f"{name}: the extra columns of the complete Q are not differentiable at this A: a "
            "Householder reflector is the identity (a column of A is already zero below the "
            "diagonal), where numpy's Q and R jump"
        ) from None


def _completion_pullback(name: str, Q: np.ndarray, Q2_bar: np.ndarray, k: int) -> np.ndarray:
    """The cotangent of ``Q1`` from that of ``Q2 = [C X; I - Q21 X]`` (the module docstring)."""
    Q11, Q21 = Q[..., :k, :k], Q[..., k:, :k]
    C = np.eye(k, dtype=Q.dtype) - Q11
    X = _completion_solve(name, C, adjoint(Q21), adjoint_c=True)  # C^-H Q21^H
    Q12_bar, Q22_bar = Q2_bar[..., :k, :], Q2_bar[..., k:, :]
    Z = _completion_solve(name, C, adjoint(C) @ Q12_bar - adjoint(Q21) @ Q22_bar, adjoint_c=False)
    top = X @ adjoint(Z) - Q12_bar @ adjoint(X)
    bottom = adjoint(Z) - Q22_bar @ adjoint(X)
    return np.concatenate((top, bottom), axis=-2)


def _completion_pushforward(name: str, Q: np.ndarray, Q1_dot: np.ndarray, k: int) -> np.ndarray:
    """The tangent of ``Q2`` from that of ``Q1``."""
    Q11, Q21 = Q[..., :k, :k], Q[..., k:, :k]
    Q11_dot, Q21_dot = Q1_dot[..., :k, :], Q1_dot[..., k:, :]
    C = np.eye(k, dtype=Q.dtype) - Q11
    X = _completion_solve(name, C, adjoint(Q21), adjoint_c=True)
    X_dot = _completion_solve(
        name, C, adjoint(Q21_dot) + adjoint(Q11_dot) @ X, adjoint_c=True
    )  # C^-H (dQ21^H + dQ11^H X)
    top = C @ X_dot - Q11_dot @ X
    bottom = -(Q21_dot @ X) - Q21 @ X_dot
    return np.concatenate((top, bottom), axis=-2)


# --- the forward pass and the rule shared by numpy and scipy -------------------------------------


def _check_rank(name: str, R1: np.ndarray, shape: tuple[int, ...]) -> None:
    """Raise ``LinAlgError`` when ``R1`` has an exact zero on its diagonal (rank-deficient ``A``)."""
    if np.diagonal(R1, 0, -2, -1).all():
        return
    zero = np.diagonal(R1, 0, -2, -1) == 0
    if zero.any():  # not NaN
        where = np.argwhere(zero)[0]
        at = f" (matrix {tuple(int(w) for w in where[:-1])} of the stack)" if len(where) > 1 else ""
        raise np.linalg.LinAlgError(
            f"{name}: R[{where[-1]}, {where[-1]}] is zero{at}: A of shape {shape} is rank "
            "deficient and its QR factorization has no derivative there (the matching column "
            "of Q is not determined by A)"
        )


class _Factors:
    """The forward factors of ``A = Q R`` in the form the pullback and pushforward need."""

    __slots__ = ("Q", "Q1", "R1", "R_shape", "complete", "k", "name", "shape")

    def __init__(
        self, name: str, Q: np.ndarray, R: np.ndarray, shape: tuple[int, ...], R_rows: int = 0
    ) -> None:
        m, n = shape[-2:]
        self.name, self.shape, self.k = name, shape, min(m, n)
        self.R_shape = (*shape[:-2], R_rows or R.shape[-2], n)  # the returned R's shape
        self.complete = Q.shape[-1] > self.k  # complete mode with m > n: Q2 is returned
        self.Q = Q
        self.Q1 = contiguous(Q[..., : self.k]) if self.complete else Q
        self.R1 = contiguous(R[..., : self.k, :]) if R.shape[-2] > self.k else R

    def pullback(self, Q_bar: Any, R_bar: Any) -> np.ndarray:
        """``A_bar`` from the cotangents of the returned ``Q`` and ``R`` (either may be zero)."""
        _check_rank(f"{self.name} pullback", self.R1, self.shape)
        Q_bar = self._array(Q_bar, self.Q.shape, "Q")
        R_bar = self._array(R_bar, self.R_shape, "R")
        if 0 in self.shape:  # an empty A (or stack)
            return np.zeros(self.shape, dtype=self.Q.dtype)
        if R_bar is None:
            R_bar = np.zeros_like(self.R1)
        elif R_bar.shape[-2] > self.k:  # complete R's zero rows are constant
            R_bar = R_bar[..., : self.k, :]
        if Q_bar is None:
            Q_bar = np.zeros_like(self.Q1)
        elif self.complete:
            Q2_bar = Q_bar[..., self.k :]
            Q_bar = Q_bar[..., : self.k] + _completion_pullback(
                f"{self.name} pullback (A of shape {self.shape})", self.Q, Q2_bar, self.k
            )
        return qr_pullback_array(self.Q1, self.R1, Q_bar, R_bar)

    def _array(self, X_bar: Any, shape: tuple[int, ...], what: str) -> np.ndarray | None:
        X_bar = unthunk(X_bar)
        if isinstance(X_bar, AbstractZero):
            return None
        if type(X_bar) is not np.ndarray:
            X_bar = as_array(as_array_cotangent(X_bar, f"{self.name}'s pullback"))
        check_shape(f"{self.name} pullback", f"the cotangent of {what}", X_bar, shape)
        return X_bar

    def pushforward(self, A_dot: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(Q_dot, R_dot)`` in the shapes of the returned ``Q`` and ``R``."""
        _check_rank(f"{self.name} pushforward", self.R1, self.shape)
        A_dot = as_array_cotangent(A_dot, f"{self.name}'s pushforward")
        check_shape(f"{self.name} pushforward", "the tangent of A", A_dot, self.shape)
        if 0 in self.shape:
            return np.zeros_like(self.Q), np.zeros(self.R_shape, dtype=self.Q.dtype)
        Q1_dot, R1_dot = qr_pushforward_array(self.Q1, self.R1, as_array(A_dot))
        if not self.complete:
            return Q1_dot, R1_dot
        name = f"{self.name} pushforward (A of shape {self.shape})"
        Q2_dot = _completion_pushforward(name, self.Q, Q1_dot, self.k)
        R_dot = np.zeros((*self.shape[:-2], self.shape[-2], self.shape[-1]), dtype=R1_dot.dtype)
        R_dot[..., : self.k, :] = R1_dot
        return np.concatenate((Q1_dot, Q2_dot.astype(Q1_dot.dtype, copy=False)), axis=-1), R_dot


def _as_matrix(name: str, A: Any) -> np.ndarray:
    dense = as_array(A)
    if dense.ndim < 2:
        raise np.linalg.LinAlgError(
            f"{name}: needs a matrix or a stack of matrices, got shape {dense.shape}"
        )
    return dense


# --- np.linalg.qr --------------------------------------------------------------------------------


_QRResult = type(np.linalg.qr(np.eye(1)))


def _stack_qr(dense: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray] | None:
    """``(Q, R)`` (numpy's ``mode`` 'reduced' or 'complete') from the batched Householder kernel.

    ``None`` unless ``dense`` is a stack of small matrices, or one small matrix (up to
    ``kernels.crossovers.QR_FORWARD_SINGLE_MAX_N``, as a stack of one: the kernel takes less
    time than numpy's wrapper). LAPACK's reflectors, so the factors are numpy's to rounding
    (``kernels.qr_forward``).
    """
    stack = forward_stack(
        dense, "QR_FORWARD_STACK_MAX_N", single="QR_FORWARD_SINGLE_MAX_N", strided=True
    )
    if stack is None:
        return None
    Q, R = qr_batched(stack, mode)
    batch = dense.shape[:-2]
    return Q.reshape(*batch, *Q.shape[-2:]), R.reshape(*batch, *R.shape[-2:])


def _numpy_qr(A: Any, mode: str) -> tuple[Any, _Factors]:
    """``np.linalg.qr(A, mode)`` and its factors; the 'r' mode computes ``Q`` too."""
    name = "np.linalg.qr"
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(
            f"{name}: mode={mode!r} is not differentiable (it returns Householder reflectors); "
            "use 'reduced', 'complete' or 'r'"
        )
    dense = _as_matrix(name, A)
    factors = _stack_qr(dense, "reduced" if mode == "r" else mode)
    if factors is not None:
        result = _QRResult(*factors)
    else:
        result = np.linalg.qr(dense, mode="reduced" if mode == "r" else mode)
    factors = _Factors(name, result.Q, result.R, dense.shape)
    return (result.R if mode == "r" else result), factors


@rrule.register(np.linalg.qr)
def qr_rrule(A: Any, mode: str = "reduced") -> tuple[Any, Any]:
    """Reverse rule for ``np.linalg.qr(A, mode)``, modes 'reduced', 'complete' and 'r'; stacks too.

    See the module docstring for the formulas, complete mode with ``m > n`` and the policy at
    rank-deficient ``A``. The output cotangent is a ``Tangent`` of the ``QRResult`` (or a tuple
    ``(Q_bar, R_bar)``, either may be a zero), or ``R_bar`` for mode 'r'.
    """
    if mode == "reduced" or mode == "complete":
        fast = _fast_rrule(A)
        if fast is not None:
            return fast
    y, factors = _numpy_qr(A, mode)
    project_A = ProjectTo(A)

    def qr_pullback(y_bar: Any) -> tuple[Any, Any]:
        if mode == "r":
            return NoTangent(), project_A(factors.pullback(ZeroTangent(), y_bar))
        return NoTangent(), project_A(factors.pullback(*split_cotangent(y_bar, 2)))

    return y, qr_pullback


@frule.register(np.linalg.qr)
def qr_frule(tangents: tuple[Any, Any], A: Any, mode: str = "reduced") -> tuple[Any, Any]:
    r"""Forward rule for ``np.linalg.qr``: :math:`\dot R = (C - \Omega) R`, :math:`\dot Q = \dot A R^{-1} - Q (C - \Omega)`."""
    if mode == "reduced" or mode == "complete":
        fast = _fast_frule(A, tangents[1])
        if fast is not None:
            return fast
    y, factors = _numpy_qr(A, mode)
    Q_dot, R_dot = factors.pushforward(unthunk(tangents[1]))
    if mode == "r":
        return y, R_dot
    return y, Tangent(type(y), Q=Q_dot, R=R_dot)


# --- one small square matrix: the fused kernels of kernels.qr_single ----------------------------
# np.linalg.qr's forward, pullback and frule each in one compiled call (as rules.linalg.lu's
# fast lane). Anything else (a rank-deficient A, other cotangents, traced values) takes the
# general path above, unchanged; square, so 'reduced' and 'complete' are the same factorization.


def _fast_operand(A: Any) -> np.ndarray | None:
    """``A`` as the fused kernels' operand (C-contiguous, writable), or ``None``: general path."""
    if not kernel_eligible(A) or A.ndim != 2:
        return None
    n = A.shape[0]
    if A.shape[1] != n or not 1 <= n <= crossovers.QR_FAST_SINGLE_MAX_N:
        return None
    if n > crossovers.QR_FORWARD_SINGLE_MAX_N[A.dtype.kind] or n > crossovers.QR_SINGLE_MAX_N:
        return None  # the general path's own crossovers (which tests lower) still apply
    return A if A.flags.carray else np.array(A, order="C")


def _fits(X: Any, like: np.ndarray) -> bool:
    """``X`` can go to a fused kernel in place of an array like ``like`` as it is."""
    return (
        type(X) is np.ndarray and X.dtype == like.dtype and X.shape == like.shape and X.flags.carray
    )


_NO_TANGENT = NoTangent()


def _fast_rrule(A: Any) -> tuple[Any, Any] | None:
    """``qr_rrule(A)`` by the fused kernels, or ``None``."""
    dense = _fast_operand(A)
    if dense is None:
        return None
    dtype, shape = dense.dtype, dense.shape
    F = np.empty((2, *shape), dtype=dtype)  # Q, R: written by the kernel
    if qr_single_into(dense, F):  # rank-deficient: the general path raises in the pullback
        return None
    y = _QRResult(F[0], F[1])

    def qr_pullback(y_bar: Any) -> tuple[Any, Any]:
        if (type(y_bar) is tuple or type(y_bar) is list) and len(y_bar) == 2:
            Q_bar, R_bar = y_bar
            if (  # ProjectTo(A) is the identity here
                type(Q_bar) is np.ndarray
                and type(R_bar) is np.ndarray
                and Q_bar.dtype == dtype
                and R_bar.dtype == dtype
                and Q_bar.shape == shape
                and R_bar.shape == shape
                and Q_bar.flags.carray
                and R_bar.flags.carray
            ):
                A_bar = np.empty(shape, dtype=dtype)
                qr_single_pullback_into(F, Q_bar, R_bar, A_bar)
                return _NO_TANGENT, A_bar
        factors = _Factors("np.linalg.qr", y.Q, y.R, shape)
        return NoTangent(), ProjectTo(A)(factors.pullback(*split_cotangent(y_bar, 2)))

    return y, qr_pullback


def _fast_frule(A: Any, A_dot: Any) -> tuple[Any, Any] | None:
    """``qr_frule`` by one fused kernel, or ``None``."""
    dense = _fast_operand(A)
    if dense is None or not _fits(A_dot, dense):
        return None
    G, status = qr_single_jvp(dense, A_dot)
    if status:
        return None
    y = _QRResult(G[0], G[1])
    return y, Tangent(_QRResult, Q=G[2], R=G[3])


# --- scipy.linalg.qr -----------------------------------------------------------------------------


def _scipy_qr(
    A: Any, overwrite_a: bool, mode: str, pivoting: bool, check_finite: bool
) -> tuple[Any, _Factors]:
    """``scipy.linalg.qr(A, mode=mode, ...)`` as scipy returns it, and its factors."""
    name = "scipy.linalg.qr"
    if pivoting:
        raise ValueError(
            f"{name}: pivoting=True is not supported by the rule (the column permutation "
            "changes discontinuously with A); differentiate A[:, P] with P held fixed instead"
        )
    if overwrite_a:
        raise ValueError(f"{name}: overwrite_a=True is not differentiable (it mutates the input)")
    if mode not in ("full", "economic", "r"):
        raise ValueError(
            f"{name}: mode={mode!r} is not differentiable; use 'full', 'economic' or 'r'"
        )
    dense = _as_matrix(name, A)
    factors = None
    if not check_finite or np.isfinite(dense).all():  # else scipy raises its error
        factors = _stack_qr(dense, "complete" if mode == "full" else "reduced")
    if factors is not None:
        Q, R = factors
    else:
        Q, R = call(
            sla.qr, dense, mode="economic" if mode == "r" else mode, check_finite=check_finite
        )
    factors = _Factors(name, Q, R, dense.shape, R_rows=dense.shape[-2] if mode == "r" else 0)
    if mode != "r":
        return [Q, R] if dense.ndim > 2 else (Q, R), factors  # as scipy returns them
    m, n = dense.shape[-2:]
    R_full = R
    if m > n:  # mode 'r' returns the (m, n) R with zero rows below the (n, n) block
        R_full = np.zeros((*dense.shape[:-2], m, n), dtype=R.dtype)
        R_full[..., :n, :] = R
    return ((R_full,) if dense.ndim == 2 else R_full), factors


@rrule.register(sla.qr)
def scipy_qr_rrule(
    A: Any,
    overwrite_a: bool = False,
    lwork: Any = None,
    mode: str = "full",
    pivoting: bool = False,
    check_finite: bool = True,
) -> tuple[Any, Any]:
    """Reverse rule for ``scipy.linalg.qr(A, mode='full')``, modes 'full', 'economic' and 'r'.

    ``pivoting=True`` and ``overwrite_a=True`` are refused with a ``ValueError``;
    ``check_finite`` is honoured, ``lwork`` ignored. Outputs as scipy 1.17 returns them:
    ``(Q, R)`` (a list for stacks), ``(R,)`` for mode 'r' (``R`` itself for stacks). See the
    module docstring.
    """
    y, factors = _scipy_qr(A, overwrite_a, mode, pivoting, check_finite)
    project_A = ProjectTo(A)

    def scipy_qr_pullback(y_bar: Any) -> tuple[Any, Any]:
        if mode != "r":
            return NoTangent(), project_A(factors.pullback(*split_cotangent(y_bar, 2)))
        R_bar = split_cotangent(y_bar, 1)[0] if isinstance(y, tuple) else y_bar
        return NoTangent(), project_A(factors.pullback(ZeroTangent(), R_bar))

    return y, scipy_qr_pullback


@frule.register(sla.qr)
def scipy_qr_frule(
    tangents: tuple[Any, ...],
    A: Any,
    overwrite_a: bool = False,
    lwork: Any = None,
    mode: str = "full",
    pivoting: bool = False,
    check_finite: bool = True,
) -> tuple[Any, Any]:
    """Forward rule for ``scipy.linalg.qr``; the output tangent mirrors scipy's output."""
    y, factors = _scipy_qr(A, overwrite_a, mode, pivoting, check_finite)
    Q_dot, R_dot = factors.pushforward(unthunk(tangents[1]))
    if mode != "r":
        return y, Tangent(tuple, Q_dot, R_dot)
    m, n = factors.shape[-2:]
    if m > n:
        R_full = np.zeros((*factors.shape[:-2], m, n), dtype=R_dot.dtype)
        R_full[..., :n, :] = R_dot
        R_dot = R_full
    return y, (Tangent(tuple, R_dot) if isinstance(y, tuple) else R_dot)
