r"""Rules of scipy's Lyapunov and Riccati solvers.

``solve_continuous_lyapunov(a, q)``: :math:`A X + X A^H = Q`. Differentiating,
:math:`A \dot X + \dot X A^H = \dot Q - \dot A X - X \dot A^H`; the operator
:math:`L(Z) = A Z + Z A^H` has the adjoint :math:`L^*(Y) = A^H Y + Y A`, so with
:math:`A^H Y + Y A = \bar X`: :math:`\bar Q = Y`, :math:`\bar A = -(Y X^H + Y^H X)`.

``solve_discrete_lyapunov(a, q)``: :math:`A X A^H - X + Q = 0`. With :math:`T(Z) = Z - A Z A^H`,
:math:`T(\dot X) = \dot Q + \dot A X A^H + A X \dot A^H`, and :math:`T^*(Y) = Y - A^H Y A`, so
``Y = solve_discrete_lyapunov(A^H, X̄)``, :math:`\bar Q = Y`, :math:`\bar A = Y A X^H + Y^H A X`.

``solve_continuous_are(a, b, q, r)``: :math:`A^H X + X A - X B R^{-1} B^H X + Q = 0`. With the
gain :math:`K = R^{-1} B^H X` and the closed loop :math:`A_c = A - B K`,
:math:`A_c^H \dot X + \dot X A_c = -M`,
:math:`M = \dot A^H X + X \dot A + \dot Q - X \dot B K - K^H \dot B^H X + K^H \dot R K`.
The adjoint: solve :math:`A_c W + W A_c^H = -\bar X` and, with :math:`S = W + W^H`,
:math:`\bar A = X S`, :math:`\bar B = -X S K^H`, and for the Hermitian ``Q`` and ``R`` (the
equation is defined for those only) the Hermitian parts :math:`\bar Q = S/2`,
:math:`\bar R = K S K^H / 2`, as for ``eigh``'s input. The generalized forms (``e``, ``s``) are
refused.

All equations are solved by scipy itself, in the common precision of the operands and the
(co)tangent (scipy mixes real Schur forms with complex right-hand sides wrongly otherwise).
Singular equations (eigenvalues of ``A`` and ``-A^H`` meeting, ``|λ_i λ_j| = 1`` for the
discrete one, a non-stabilising Riccati solution) have no derivative.

References
----------
M. B. Giles, "An extended collection of matrix derivative results for forward and reverse mode
algorithmic differentiation", Oxford NA report 08/01 (2008), section 3 (Sylvester-type
equations); T. Kailath, "Linear Systems", Prentice Hall 1980 (the Riccati equation's
linearisation around the stabilising solution).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array, call
from rules.core.options import refuse, rrule_with_options
from rules.core.registry import frule
from rules.linalg._stacks import adjoint
from tangents import AbstractZero, NoTangent, ProjectTo, unthunk

__all__: list[str] = []


def _common(*arrays: Any) -> list[np.ndarray]:
    dtype = np.result_type(*arrays, np.float64)
    return [as_array(x, dtype=dtype) for x in arrays]


def _array(t: Any, name: str, what: str) -> np.ndarray:
    return as_array(as_array_cotangent(t, f"scipy.linalg.{name}'s {what}"))


def _dots(tangents: tuple[Any, ...], name: str) -> list[Any]:
    out = []
    for t in tangents[1:]:
        t = unthunk(t)
        out.append(None if isinstance(t, AbstractZero) else _array(t, name, "frule"))
    return out


# --- continuous Lyapunov ------------------------------------------------------------------------


@rrule_with_options(sla.solve_continuous_lyapunov)
def solve_continuous_lyapunov_rrule(a: Any, q: Any) -> Any:
    r"""``A X + X A^H = Q``: :math:`A^H Y + Y A = \bar X`, :math:`\bar Q = Y`, :math:`\bar A = -(Y X^H + Y^H X)`."""
    X = call(sla.solve_continuous_lyapunov, a, q)
    project_a, project_q = ProjectTo(a), ProjectTo(q)

    def solve_continuous_lyapunov_pullback(X_bar: Any) -> tuple[Any, Any, Any]:
        G = _array(X_bar, "solve_continuous_lyapunov", "pullback")
        A, G_, Xc = _common(a, G, X)
        Y = call(sla.solve_continuous_lyapunov, adjoint(A), G_)  # A^H Y + Y A = X̄
        return NoTangent(), project_a(-(Y @ adjoint(Xc) + adjoint(Y) @ Xc)), project_q(Y)

    return X, solve_continuous_lyapunov_pullback


@frule.register(sla.solve_continuous_lyapunov)
def solve_continuous_lyapunov_frule(tangents: tuple[Any, ...], a: Any, q: Any) -> Any:
    r"""``A Ẋ + Ẋ A^H = Q̇ - Ȧ X - X Ȧ^H``."""
    X = call(sla.solve_continuous_lyapunov, a, q)
    a_dot, q_dot = _dots(tangents, "solve_continuous_lyapunov")
    rhs: Any = np.zeros(X.shape, dtype=X.dtype)
    if q_dot is not None:
        rhs = rhs + q_dot
    if a_dot is not None:
        rhs = rhs - a_dot @ X - X @ adjoint(a_dot)
    A, R = _common(a, rhs)
    return X, ProjectTo(X)(call(sla.solve_continuous_lyapunov, A, R))


# --- discrete Lyapunov --------------------------------------------------------------------------


@rrule_with_options(sla.solve_discrete_lyapunov)
def solve_discrete_lyapunov_rrule(a: Any, q: Any, method: Any = None) -> Any:
    r"""``A X A^H - X + Q = 0``: ``Y = solve_discrete_lyapunov(A^H, X̄)``, :math:`\bar A = Y A X^H + Y^H A X`."""
    X = call(sla.solve_discrete_lyapunov, a, q, method)
    project_a, project_q = ProjectTo(a), ProjectTo(q)

    def solve_discrete_lyapunov_pullback(X_bar: Any) -> tuple[Any, Any, Any]:
        G = _array(X_bar, "solve_discrete_lyapunov", "pullback")
        A, G_, Xc = _common(a, G, X)
        Y = call(sla.solve_discrete_lyapunov, adjoint(A), G_, method)
        A_bar = Y @ A @ adjoint(Xc) + adjoint(Y) @ A @ Xc
        return NoTangent(), project_a(A_bar), project_q(Y)

    return X, solve_discrete_lyapunov_pullback


@frule.register(sla.solve_discrete_lyapunov)
def solve_discrete_lyapunov_frule(
    tangents: tuple[Any, ...], a: Any, q: Any, method: Any = None
) -> Any:
    r"""``Ẋ - A Ẋ A^H = Q̇ + Ȧ X A^H + A X Ȧ^H``."""
    X = call(sla.solve_discrete_lyapunov, a, q, method)
    a_dot, q_dot = _dots(tangents, "solve_discrete_lyapunov")[:2]
    rhs: Any = np.zeros(X.shape, dtype=X.dtype)
    if q_dot is not None:
        rhs = rhs + q_dot
    if a_dot is not None:
        rhs = rhs + a_dot @ X @ adjoint(a) + a @ X @ adjoint(a_dot)
    A, R = _common(a, rhs)
    return X, ProjectTo(X)(call(sla.solve_discrete_lyapunov, A, R, method))


# --- continuous algebraic Riccati ---------------------------------------------------------------


class _Riccati:
    """The stabilising solution ``X``, the gain ``K = R^{-1} B^H X`` and the closed loop."""

    def __init__(self, a: Any, b: Any, q: Any, r: Any, e: Any, s: Any, balanced: bool) -> None:
        refuse("scipy.linalg.solve_continuous_are", e=e, s=s)
        self.X = call(sla.solve_continuous_are, a, b, q, r, balanced=balanced)
        A, B, R, X = _common(a, b, r, self.X)
        self.A, self.B, self.Xc = A, B, X
        self.K = np.linalg.solve(R, adjoint(B) @ X)
        self.closed = A - B @ self.K


@rrule_with_options(sla.solve_continuous_are)
def solve_continuous_are_rrule(
    a: Any, b: Any, q: Any, r: Any, e: Any = None, s: Any = None, balanced: bool = True
) -> Any:
    r"""Reverse rule of the CARE: :math:`A_c W + W A_c^H = -\bar X`, then the four cotangents."""
    plan = _Riccati(a, b, q, r, e, s, balanced)
    projectors = [ProjectTo(v) for v in (a, b, q, r)]

    def solve_continuous_are_pullback(X_bar: Any) -> tuple[Any, ...]:
        G = _array(X_bar, "solve_continuous_are", "pullback")
        closed, G_ = _common(plan.closed, G)
        W = call(sla.solve_continuous_lyapunov, closed, -G_)
        S = W + adjoint(W)
        X, K = plan.Xc, plan.K
        bars = (X @ S, -(X @ S @ adjoint(K)), S / 2, K @ (S / 2) @ adjoint(K))
        return (NoTangent(), *(p(v) for p, v in zip(projectors, bars, strict=True)))

    return plan.X, solve_continuous_are_pullback


@frule.register(sla.solve_continuous_are)
def solve_continuous_are_frule(
    tangents: tuple[Any, ...],
    a: Any,
    b: Any,
    q: Any,
    r: Any,
    e: Any = None,
    s: Any = None,
    balanced: bool = True,
) -> Any:
    r"""``A_c^H Ẋ + Ẋ A_c = -M`` (module docstring)."""
    plan = _Riccati(a, b, q, r, e, s, balanced)
    a_dot, b_dot, q_dot, r_dot = _dots(tangents, "solve_continuous_are")[:4]
    X, K = plan.Xc, plan.K
    M: Any = np.zeros(X.shape, dtype=X.dtype)
    if a_dot is not None:
        M = M + adjoint(a_dot) @ X + X @ a_dot
    if q_dot is not None:
        M = M + q_dot
    if b_dot is not None:
        M = M - X @ b_dot @ K - adjoint(K) @ adjoint(b_dot) @ X
    if r_dot is not None:
        M = M + adjoint(K) @ r_dot @ K
    closed, M_ = _common(plan.closed, M)
    X_dot = call(sla.solve_continuous_lyapunov, adjoint(closed), -M_)
    return plan.X, ProjectTo(plan.X)(X_dot)
