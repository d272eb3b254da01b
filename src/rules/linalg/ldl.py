r"""Rules of ``scipy.linalg.ldl``: the Bunch-Kaufman factorization :math:`A = L D L^H`.

scipy returns ``lu, d, perm`` with ``A = lu @ d @ lu^H`` (``lu^T`` for ``hermitian=False``), ``d``
block diagonal with 1 x 1 and 2 x 2 blocks, and ``T = lu[perm]`` unit triangular (lower for
``lower=True``) with zeros inside the 2 x 2 blocks. The pivoting (the permutation and the block
sizes) is chosen by comparisons, so it is locally constant and the factors are differentiable
wherever it does not change. With :math:`B = A[p][:, p] = T D T^H` and ``op`` the adjoint (the
transpose for ``hermitian=False``), linearizing gives

.. math::

    X := T^{-1} \dot B\, \mathrm{op}(T^{-1}) = K D + \dot D + D\,\mathrm{op}(K), \qquad
    K = T^{-1} \dot T,

where ``K`` is strictly block triangular (on ``T``'s side of the block diagonal) and
:math:`\dot D` block diagonal; ``D op(K)`` lies on the other side. So
:math:`\dot D = \mathrm{bd}(X)` and :math:`\dot T = T\,\mathrm{sb}(X D^{-1})`: the block form of
the Cholesky derivative. The pullback is its adjoint:
:math:`\bar X = \mathrm{bd}(\bar D) + \mathrm{sb}(T^H \bar T) D^{-H}`,
:math:`\bar B = T^{-H} \bar X\, \mathrm{op}(T^{-1})^H`, scattered back through the permutation.

scipy reads one triangle of ``a`` (the lower for ``lower=True``) and mirrors it, ignoring the
imaginary part of the diagonal for ``hermitian=True``: the cotangent of ``a`` lies on that
triangle, :math:`\bar a = \mathrm{tril}(\bar M) + \mathrm{tril}(\mathrm{op}(\bar M), -1)` with
a real diagonal for Hermitian complex input. Stacks are handled matrix by matrix.

References
----------
I. Murray, "Differentiation of the Cholesky decomposition" (2016), the method (linearize,
solve the triangular structure, take the adjoint); M. B. Giles, "An extended collection of
matrix derivative results for forward and reverse mode algorithmic differentiation" (2008),
section 3.2 (the Cholesky and LDL^T forms); J. R. Bunch, L. Kaufman, "Some stable methods for
calculating inertia and solving symmetric linear systems", Math. Comp. 31 (1977) (the factors).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array, call
from rules.core.options import refuse, rrule_with_options
from rules.core.registry import frule, split_cotangent
from rules.linalg._stacks import adjoint, square_matrices
from tangents import AbstractZero, NoTangent, ProjectTo, Tangent, unthunk

__all__: list[str] = []

_NAME = "scipy.linalg.ldl"


class _LDL:
    """The factors of one matrix, their block structure and the linear maps of the rules."""

    def __init__(self, lu: np.ndarray, d: np.ndarray, perm: np.ndarray, lower: bool, her: bool):
        n = d.shape[-1]
        self.perm, self.lower, self.n = perm, lower, n
        self.her = her or d.dtype.kind != "c"
        self.T = lu[perm]
        in_block = np.eye(n, dtype=bool)
        pairs = np.flatnonzero(np.diag(d, -1) != 0)
        in_block[pairs + 1, pairs] = in_block[pairs, pairs + 1] = True
        self.block = in_block
        self.side = np.tril(~in_block) if lower else np.triu(~in_block)
        self.Tinv = call(
            sla.solve_triangular,
            self.T,
            np.eye(n, dtype=self.T.dtype),
            lower=lower,
            unit_diagonal=True,
        )
        self.Dinv = np.linalg.inv(d)

    def op(self, X: np.ndarray) -> np.ndarray:
        return adjoint(X) if self.her else X.mT

    def _mirror(self, A: np.ndarray) -> np.ndarray:
        """The matrix scipy factors: one triangle of ``A`` mirrored onto the other."""
        k = -1 if self.lower else 1
        inner = np.tril(A) if self.lower else np.triu(A)
        M = inner + self.op(np.tril(A, k) if self.lower else np.triu(A, k))
        if self.her and M.dtype.kind == "c":
            M[np.diag_indices(self.n)] = np.real(np.diagonal(M))
        return M

    def _mirror_adjoint(self, M_bar: np.ndarray) -> np.ndarray:
        k = -1 if self.lower else 1
        mirrored = self.op(M_bar)
        if self.lower:
            A_bar = np.tril(M_bar) + np.tril(mirrored, k)
        else:
            A_bar = np.triu(M_bar) + np.triu(mirrored, k)
        if self.her and A_bar.dtype.kind == "c":
            A_bar[np.diag_indices(self.n)] = np.real(np.diagonal(A_bar))
        return A_bar

    def pushforward(self, A_dot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = self.perm
        B_dot = self._mirror(as_array(A_dot))[np.ix_(p, p)]
        X = self.Tinv @ B_dot @ self.op(self.Tinv)  # K D + D_dot + D op(K)
        D_dot = np.where(self.block, X, 0)
        T_dot = self.T @ np.where(self.side, X @ self.Dinv, 0)
        lu_dot = np.empty_like(T_dot)
        lu_dot[p] = T_dot
        return lu_dot, D_dot

    def pullback(self, lu_bar: Any, d_bar: Any) -> np.ndarray:
        p = self.perm
        dtype = np.result_type(self.T, *(x for x in (lu_bar, d_bar) if x is not None))
        X_bar = np.zeros((self.n, self.n), dtype=dtype)
        if d_bar is not None:
            X_bar = X_bar + np.where(self.block, d_bar, 0)
        if lu_bar is not None:
            K_bar = np.where(self.side, adjoint(self.T) @ lu_bar[p], 0)
            X_bar = X_bar + K_bar @ adjoint(self.Dinv)
        W = self.Tinv if self.her else np.conj(self.Tinv)  # op(T^{-1})^H
        B_bar = adjoint(self.Tinv) @ X_bar @ W
        M_bar = np.empty_like(B_bar)
        M_bar[np.ix_(p, p)] = B_bar
        return self._mirror_adjoint(M_bar)


class _Stack:
    """:class:`_LDL` for each matrix of the stack scipy factored."""

    def __init__(self, a: Any, lower: bool, hermitian: bool, kwargs: dict[str, Any]) -> None:
        refuse(_NAME, overwrite_a=kwargs.get("overwrite_a"))
        self.shape = square_matrices(_NAME, a).shape
        self.y = call(sla.ldl, a, lower=lower, hermitian=hermitian, **kwargs)
        lu, d, perm = (as_array(t) for t in self.y)
        m = self.shape[-2:]
        self.plans = [
            _LDL(f, g, q, lower, hermitian)
            for f, g, q in zip(
                lu.reshape(-1, *m), d.reshape(-1, *m), perm.reshape(-1, m[0]), strict=True
            )
        ]

    def _rows(self, t: Any) -> Any:
        if t is None:
            return [None] * len(self.plans)
        return np.broadcast_to(t, self.shape).reshape(-1, *self.shape[-2:])

    def pushforward(self, A_dot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        dots = [p.pushforward(t) for p, t in zip(self.plans, self._rows(A_dot), strict=True)]
        return (
            np.stack([t for t, _ in dots]).reshape(self.shape),
            np.stack([t for _, t in dots]).reshape(self.shape),
        )

    def pullback(self, lu_bar: Any, d_bar: Any) -> np.ndarray:
        rows = zip(self.plans, self._rows(lu_bar), self._rows(d_bar), strict=True)
        return np.stack([p.pullback(f, g) for p, f, g in rows]).reshape(self.shape)


def _part(t: Any, what: str) -> Any:
    t = unthunk(t)
    if isinstance(t, AbstractZero):
        return None
    return as_array(as_array_cotangent(t, f"{_NAME}'s {what}"))


@rrule_with_options(sla.ldl)
def ldl_rrule(A: Any, lower: bool = True, hermitian: bool = True, **kwargs: Any) -> Any:
    r"""``lu, d, perm = ldl(A)``: :math:`\bar B = T^{-H} \bar X\,\mathrm{op}(T^{-1})^H` (module doc)."""
    plan = _Stack(A, lower, hermitian, kwargs)
    project_A = ProjectTo(A)

    def ldl_pullback(y_bar: Any) -> tuple[Any, Any]:
        lu_bar, d_bar, _ = (_part(t, "pullback") for t in split_cotangent(y_bar, 3))
        return NoTangent(), project_A(plan.pullback(lu_bar, d_bar))

    return plan.y, ldl_pullback


@frule.register(sla.ldl)
def ldl_frule(
    tangents: tuple[Any, ...], A: Any, lower: bool = True, hermitian: bool = True, **kwargs: Any
) -> Any:
    r"""``Ḋ = bd(X)``, ``Ṫ = T sb(X D^{-1})`` with ``X = T^{-1} Ḃ op(T^{-1})`` (module doc)."""
    plan = _Stack(A, lower, hermitian, kwargs)
    lu_dot, d_dot = plan.pushforward(_part(tangents[1], "frule"))
    lu, d, _ = plan.y
    return plan.y, Tangent(tuple, ProjectTo(lu)(lu_dot), ProjectTo(d)(d_dot), NoTangent())
