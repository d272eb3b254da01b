r"""Rules for the Sylvester equation ``scipy.linalg.solve_sylvester(a, b, q)``: ``A X + X B = Q``.

Differentiating the equation gives ``A X_dot + X_dot B = Q_dot - A_dot X - X B_dot`` (the
same equation, new right-hand side), and its adjoint (ChainRules.jl's ``sylvester`` rule, with
scipy's sign convention)

.. math::

    A^H Y + Y B^H = \bar X, \qquad \bar Q = Y, \qquad \bar A = -Y X^H, \qquad \bar B = -X^H Y.

The forward pass is scipy's algorithm (Bartels-Stewart: Schur forms ``A = U R U^H``,
``B^H = V S V^H``, then LAPACK ``trsyl``), so the primal equals scipy's (except when real and
complex operands are mixed: scipy 1.17 then pairs real Schur forms with complex ``trsyl`` and
returns a wrong ``X``; the rule uses complex Schur forms and solves the equation); the pullback and the
pushforward reuse both Schur forms and cost one ``trsyl`` and four products: the adjoint equation
is ``R^H Y' + Y' S = U^H X_bar V`` with ``Y = U Y' V^H``.

Conventions: ``(m, m)``, ``(n, n)`` and ``(m, n)`` operands, or stacks of them (scipy loops over
batch axes; so does the rule, keeping each matrix's Schur forms); real or complex, float32 kept.
When ``A`` and ``-B`` share an eigenvalue the equation is singular: scipy returns ``trsyl``'s
perturbed solution without an error, and the rule does the same. ``trsyl`` needs dense arrays, so
cotangents must be arrays (user tangent types raise ``TypeError``). NaN input raises scipy's
``ValueError`` (its Schur decomposition checks for finite values).

References
----------
.. [1] R. H. Bartels, G. W. Stewart, "Solution of the matrix equation AX + XB = C", Comm. ACM 15
   (1972) 820-826.
.. [2] M. B. Giles, "An extended collection of matrix derivative results for forward and reverse
   mode algorithmic differentiation", Oxford NA report 08/01 (2008).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array, call
from rules.core.registry import frule, rrule
from rules.linalg._stacks import adjoint, check_shape
from tangents import AbstractZero, NoTangent, ProjectTo, unthunk

__all__ = ["solve_sylvester_frule", "solve_sylvester_rrule"]

_NAME = "scipy.linalg.solve_sylvester"


class _Schur:
    """Scipy's Bartels-Stewart solve of ``A X + X B = Q`` for one matrix, Schur forms kept."""

    __slots__ = ("R", "S", "U", "V", "trsyl")

    def __init__(self, a: np.ndarray, b: np.ndarray, q: np.ndarray) -> None:
        # scipy asks for real Schur forms even when q (or one of a, b) is complex; complex trsyl
        # then misreads the 2x2 blocks and scipy's X is wrong. Complex forms when any is complex.
        output = "complex" if any(np.iscomplexobj(x) for x in (a, b, q)) else "real"
        self.R, self.U = call(sla.schur, a, output=output)
        self.S, self.V = call(sla.schur, b.conj().T, output=output)
        f = adjoint(self.U) @ q @ self.V
        (self.trsyl,) = sla.get_lapack_funcs(("trsyl",), (self.R, self.S, f))

    def solve(self, q: np.ndarray) -> np.ndarray:
        """``X`` with ``A X + X B = q``, as scipy computes it."""
        y, scale, info = self.trsyl(self.R, self.S, adjoint(self.U) @ q @ self.V, tranb="C")
        if info < 0:
            raise np.linalg.LinAlgError(f"{_NAME}: illegal value in argument {-info} of trsyl")
        return self.U @ (scale * y) @ adjoint(self.V)

    def solve_adjoint(self, c: np.ndarray) -> np.ndarray:
        """``Y`` with ``A^H Y + Y B^H = c``: ``R^H Y' + Y' S = U^H c V``, ``Y = U Y' V^H``."""
        f = adjoint(self.U) @ c @ self.V
        y, scale, _ = self.trsyl(self.R, self.S, f.astype(self.trsyl.dtype, copy=False), trana="C")
        return self.U @ (y / scale) @ adjoint(self.V)


def _operands(a: Any, b: Any, q: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a, b, q = as_array(a), as_array(b), as_array(q)
    square = (
        a.ndim >= 2 and b.ndim >= 2 and a.shape[-1] == a.shape[-2] and b.shape[-1] == b.shape[-2]
    )
    if not (square and q.ndim >= 2 and q.shape[-2:] == (a.shape[-1], b.shape[-1])):
        raise ValueError(
            f"{_NAME}: needs a (..., m, m), b (..., n, n) and q (..., m, n); got shapes "
            f"{a.shape}, {b.shape} and {q.shape}"
        )
    for x in (a, b, q):
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{_NAME}: array must not contain infs or NaNs")
    return a, b, q


class _Solver:
    """The Schur forms of every matrix of a (broadcast) stack, and the solution ``X``."""

    __slots__ = ("X", "batch", "schurs")

    def __init__(self, a: np.ndarray, b: np.ndarray, q: np.ndarray) -> None:
        self.batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2], q.shape[:-2])
        a_s, b_s = (np.broadcast_to(x, self.batch + x.shape[-2:]) for x in (a, b))
        q_s = np.broadcast_to(q, self.batch + q.shape[-2:])
        self.schurs = {}
        solutions = []
        for index in np.ndindex(self.batch):
            schur = _Schur(a_s[index], b_s[index], q_s[index])
            self.schurs[index] = schur
            solutions.append(schur.solve(q_s[index]))
        self.X = (
            np.stack(solutions).reshape(self.batch + q.shape[-2:]) if self.batch else solutions[0]
        )

    def map(self, method: str, C: np.ndarray) -> np.ndarray:
        """``solve`` or ``solve_adjoint`` of each matrix of ``C`` (broadcast to the batch)."""
        if not self.batch:
            return getattr(self.schurs[()], method)(C)
        C = np.broadcast_to(C, self.batch + C.shape[-2:])
        return np.stack([getattr(self.schurs[i], method)(C[i]) for i in np.ndindex(self.batch)])


def _unbroadcast(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``x`` over the batch axes that broadcasting added to an operand of ``shape``."""
    extra = x.ndim - len(shape)
    if extra:
        x = x.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape[:-2]) if n == 1 and x.shape[i] != 1)
    return x.sum(axis=axes, keepdims=True) if axes else x


@rrule.register(sla.solve_sylvester)
def solve_sylvester_rrule(a: Any, b: Any, q: Any) -> tuple[np.ndarray, Any]:
    r"""Reverse rule for ``X = solve_sylvester(a, b, q)``, ``A X + X B = Q``.

    :math:`A^H Y + Y B^H = \bar X`, :math:`\bar Q = Y`, :math:`\bar A = -Y X^H`,
    :math:`\bar B = -X^H Y` (module docstring); summed over broadcast batch axes.
    """
    A, B, Q = _operands(a, b, q)
    solver = _Solver(A, B, Q)
    X = solver.X
    project_a, project_b, project_q, project_X = (ProjectTo(v) for v in (a, b, q, X))

    def solve_sylvester_pullback(X_bar: Any) -> tuple[Any, Any, Any, Any]:
        X_bar = unthunk(X_bar)
        check_shape(f"{_NAME} pullback", "the cotangent", X_bar, X.shape)
        X_bar = as_array(as_array_cotangent(project_X(X_bar), f"{_NAME}'s pullback (LAPACK trsyl)"))
        Y = solver.map("solve_adjoint", X_bar)
        Xh = adjoint(X)
        return (
            NoTangent(),
            project_a(_unbroadcast(-(Y @ Xh), A.shape)),
            project_b(_unbroadcast(-(Xh @ Y), B.shape)),
            project_q(_unbroadcast(Y, Q.shape)),
        )

    return X, solve_sylvester_pullback


@frule.register(sla.solve_sylvester)
def solve_sylvester_frule(
    tangents: tuple[Any, Any, Any, Any], a: Any, b: Any, q: Any
) -> tuple[np.ndarray, Any]:
    r"""Forward rule: :math:`A \dot X + \dot X B = \dot Q - \dot A X - X \dot B`."""
    A, B, Q = _operands(a, b, q)
    solver = _Solver(A, B, Q)
    X = solver.X
    _, a_dot, b_dot, q_dot = (unthunk(t) for t in tangents)
    rhs: Any = np.zeros(X.shape, dtype=X.dtype)
    for dot, term, shape in ((q_dot, None, Q.shape), (a_dot, "a", A.shape), (b_dot, "b", B.shape)):
        if isinstance(dot, AbstractZero):
            continue
        dot = as_array(as_array_cotangent(dot, f"{_NAME}'s pushforward (LAPACK trsyl)"))
        check_shape(f"{_NAME} pushforward", "a tangent", dot, shape)
        if term is None:
            rhs = rhs + dot
        elif term == "a":
            rhs = rhs - dot @ X
        else:
            rhs = rhs - X @ dot
    return X, ProjectTo(X)(solver.map("solve", rhs))
