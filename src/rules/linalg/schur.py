r"""Rules of ``scipy.linalg.schur``: :math:`A = Z T Z^H`, ``T`` upper triangular, ``Z`` unitary.

With :math:`C = Z^H \dot A Z` and :math:`\Omega = Z^H \dot Z` (anti-Hermitian), differentiating
gives :math:`\dot T = C - (\Omega T - T \Omega)`. ``T`` stays triangular, so the strictly lower
part :math:`L` of :math:`\Omega` solves :math:`\mathrm{low}(L T - T L) = \mathrm{low}(C)`, a
triangular recursion (entry ``(i, j)`` divides by :math:`T_{jj} - T_{ii}`: the eigenvalues must
be distinct); the diagonal of :math:`\Omega` is the gauge (the phases of the Schur vectors) and is
set to 0. Then :math:`\Omega = L - L^H`, :math:`\dot Z = Z \Omega`,
:math:`\dot T = \mathrm{triu}(C - [\Omega, T])`.

The pullback is the adjoint of each step: with :math:`U = \mathrm{triu}(\bar T)`,
:math:`\bar\Omega = Z^H \bar Z - (U T^H - T^H U)`, :math:`\bar L = \mathrm{low}(\bar\Omega -
\bar\Omega^H)`, then ``M`` (strictly lower) solves the adjoint recursion
:math:`\mathrm{low}(M T^H - T^H M) = \bar L`, and :math:`\bar A = Z (U + M) Z^H`. For a
gauge-invariant function of ``(T, Z)`` this is the exact cotangent; complex Schur vectors are
only defined up to those phases, as eigenvectors are.

A real Schur form (``output="real"``) is supported when it is triangular (real eigenvalues);
with 2 x 2 blocks (complex pairs) the rule raises and asks for ``output="complex"``. ``sort`` is
refused (it changes the output and adds ``sdim``).

References
----------
Derivation as for the eigendecomposition in M. B. Giles, "An extended collection of matrix
derivative results for forward and reverse mode algorithmic differentiation" (2008), section
3.1, applied to the triangular (Schur) form; G. W. Stewart, "Error and perturbation bounds for
subspaces associated with certain eigenvalue problems", SIAM Review 15 (1973) (the triangular
Sylvester recursion).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array, call
from rules.core.options import refuse, rrule_with_options
from rules.core.registry import frule, split_cotangent
from rules.linalg._stacks import adjoint
from tangents import AbstractZero, NoTangent, ProjectTo, Tangent, unthunk

__all__: list[str] = []

_NAME = "scipy.linalg.schur"


def _solve_lower(T: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Strictly lower ``L`` with ``low(L T - T L) = low(C)`` (columns left to right, rows up)."""
    n = T.shape[0]
    L = np.zeros((n, n), dtype=np.result_type(T, C))
    d = np.diag(T)
    for j in range(n):
        for i in range(n - 1, j, -1):
            # (L T)_ij = sum_{k<=j} L_ik T_kj; (T L)_ij = sum_{k>=i} T_ik L_kj
            s = C[i, j] - L[i, :j] @ T[:j, j] + T[i, i + 1 :] @ L[i + 1 :, j]
            L[i, j] = s / (d[j] - d[i])
    return L


def _solve_lower_adjoint(T: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Strictly lower ``M`` with ``low(M T^H - T^H M) = low(R)`` (columns right to left, rows down)."""
    n = T.shape[0]
    Th = adjoint(T)
    M = np.zeros((n, n), dtype=np.result_type(T, R))
    d = np.conj(np.diag(T))
    for j in range(n - 1, -1, -1):
        for i in range(j + 1, n):
            # (M T^H)_ij = sum_{j<=k<i} M_ik Th_kj; (T^H M)_ij = sum_{j<k<=i} Th_ik M_kj
            s = R[i, j] - M[i, j + 1 : i] @ Th[j + 1 : i, j] + Th[i, j + 1 : i] @ M[j + 1 : i, j]
            M[i, j] = s / (d[j] - d[i])
    return M


class _Schur:
    def __init__(self, a: Any, output: str, kwargs: dict[str, Any]) -> None:
        refuse(_NAME, sort=kwargs.get("sort"), overwrite_a=kwargs.get("overwrite_a"))
        self.y = call(sla.schur, a, output=output, **kwargs)
        T, Z = self.y
        if np.any(np.tril(T, -1) != 0):
            raise ValueError(
                f"{_NAME}: the real Schur form has 2 x 2 blocks (complex eigenvalues); its rules "
                "need a triangular form: pass output='complex'"
            )
        self.T, self.Z = T, Z

    def pushforward(self, A_dot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        T, Z = self.T, self.Z
        C = adjoint(Z) @ A_dot @ Z
        L = _solve_lower(T, C)
        Omega = L - adjoint(L)
        return np.triu(C - (Omega @ T - T @ Omega)), Z @ Omega

    def pullback(self, T_bar: Any, Z_bar: Any) -> np.ndarray:
        T, Z = self.T, self.Z
        dtype = np.result_type(T, *(x for x in (T_bar, Z_bar) if x is not None))
        U = np.zeros(T.shape, dtype=dtype) if T_bar is None else np.triu(T_bar)
        Omega_bar = -(U @ adjoint(T) - adjoint(T) @ U)
        if Z_bar is not None:
            Omega_bar = Omega_bar + adjoint(Z) @ Z_bar
        L_bar = np.tril(Omega_bar - adjoint(Omega_bar), -1)
        M = _solve_lower_adjoint(T, L_bar)
        return Z @ (U + M) @ adjoint(Z)


def _part(t: Any, what: str) -> Any:
    t = unthunk(t)
    if isinstance(t, AbstractZero):
        return None
    return as_array(as_array_cotangent(t, f"{_NAME}'s {what}"))


@rrule_with_options(sla.schur)
def schur_rrule(a: Any, output: str = "real", **kwargs: Any) -> Any:
    r"""``T, Z = schur(a)``: :math:`\bar A = Z (\mathrm{triu}(\bar T) + M) Z^H` (module docstring)."""
    plan = _Schur(a, output, kwargs)
    project_a = ProjectTo(a)

    def schur_pullback(y_bar: Any) -> tuple[Any, Any]:
        T_bar, Z_bar = (_part(t, "pullback") for t in split_cotangent(y_bar, 2))
        return NoTangent(), project_a(plan.pullback(T_bar, Z_bar))

    return plan.y, schur_pullback


@frule.register(sla.schur)
def schur_frule(tangents: tuple[Any, ...], a: Any, output: str = "real", **kwargs: Any) -> Any:
    r"""``Ṫ = triu(C - [Ω, T])``, ``Ż = Z Ω`` with ``C = Z^H Ȧ Z`` (module docstring)."""
    plan = _Schur(a, output, kwargs)
    T_dot, Z_dot = plan.pushforward(_part(tangents[1], "frule"))
    T, Z = plan.y
    return plan.y, Tangent(tuple, ProjectTo(T)(T_dot), ProjectTo(Z)(Z_dot))
