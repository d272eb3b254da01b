r"""Rules of ``scipy.linalg.hessenberg``: :math:`A = Q H Q^H`, ``H`` upper Hessenberg, ``Q`` unitary.

LAPACK's ``gehrd`` builds ``Q`` from Householder reflectors that leave the first coordinate alone,
so :math:`Q e_1 = e_1`, and (for complex input) it makes the subdiagonal of ``H`` real. By the
implicit-Q theorem these conventions fix the factors of an unreduced ``H`` (no zero on its
subdiagonal) up to locally constant signs, so the factors are differentiable there. (The signs
jump where LAPACK's reflector changes sign: where the real part of the entry it reflects onto
the subdiagonal crosses 0. The factors are discontinuous there, as the QR factors are when a
column is reflected onto the other sign.)

Linearizing, with :math:`C = Q^H \dot A Q` and :math:`\Omega = Q^H \dot Q` (anti-Hermitian):
:math:`\dot H = C - (\Omega H - H \Omega)` and :math:`\dot Q = Q \Omega`. :math:`Q e_1 = e_1` makes
the first row and column of :math:`\Omega` zero. Write :math:`\Omega = L - L^H + iD` with ``L``
strictly lower and ``D`` real diagonal. ``H`` stays Hessenberg: entry ``(i, j)`` of
:math:`C - [\Omega, H]` is zero for :math:`i \ge j + 2`. Only ``L`` enters these equations, and
column ``j`` of them gives column ``j + 1`` of ``L`` (rows :math:`i \ge j + 2`):

.. math::

    L_{i,j+1} H_{j+1,j} = C_{ij} - \sum_{k \le j} L_{ik} H_{kj} + \sum_{k \ge j+1} H_{ik} L_{kj},

a forward recursion dividing by the subdiagonal entries (the unreduced condition). For complex
input the real subdiagonal fixes ``D``: with :math:`E = C - [L - L^H, H]`,
:math:`D_0 = 0` and :math:`D_{j+1} = D_j + \mathrm{Im}\,E_{j+1,j} / H_{j+1,j}`. Then
:math:`\dot H = \mathrm{hess}(C - [\Omega, H])` and :math:`\dot Q = Q\Omega`.

The pullback runs the adjoint of each step in reverse (the recursion backwards, column by
column): with :math:`U = \mathrm{hess}(\bar H)`, :math:`\bar\Omega = Q^H \bar Q - (U H^H - H^H U)`,
:math:`\bar D = \mathrm{Im}\,\mathrm{diag}\,\bar\Omega` back through the cumulative sum onto
:math:`\bar E`, :math:`\bar L` from :math:`\bar\Omega - \bar\Omega^H`, the recursion's adjoint
gives :math:`\bar C`, and :math:`\bar A = Q \bar C Q^H`. For ``n <= 2`` scipy returns ``H = A``,
``Q = I``: the rules are the identity and zero there.

Stacks ``(..., n, n)`` are handled matrix by matrix, as scipy does.

References
----------
The method (linearize the factorization, solve the structured equations for the derivatives of
the factors, then take the adjoint of each step) is the one of I. Murray, "Differentiation of the
Cholesky decomposition" (2016), and of M. Seeger, A. Hetzel, Z. Dai, E. Meissner, N. D. Lawrence,
"Auto-differentiating linear algebra" (2017); the implicit-Q theorem: G. H. Golub, C. F. Van Loan,
"Matrix Computations", 4th ed., theorem 7.4.2.
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

_NAME = "scipy.linalg.hessenberg"


def _hess(X: np.ndarray) -> np.ndarray:
    """The upper Hessenberg part of ``X`` (entries ``i <= j + 1``)."""
    return np.triu(X, -1)


def _solve_L(H: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Strictly lower ``L``, zero first column, with ``C - (L H - H L)`` zero below the subdiagonal."""
    n = H.shape[0]
    L = np.zeros((n, n), dtype=np.result_type(H, C))
    for j in range(n - 2):
        # L[i, j+1] H[j+1, j] = C[i, j] - L[i, :j+1] H[:j+1, j] + H[i, j+1:] L[j+1:, j], i >= j+2
        r = (
            C[j + 2 :, j]
            - L[j + 2 :, : j + 1] @ H[: j + 1, j]
            + H[j + 2 :, j + 1 :] @ L[j + 1 :, j]
        )
        L[j + 2 :, j + 1] = r / H[j + 1, j]
    return L


def _solve_L_adjoint(H: np.ndarray, L_bar: np.ndarray) -> np.ndarray:
    """The adjoint of :func:`_solve_L`: ``C_bar`` (zero on and above the subdiagonal)."""
    n = H.shape[0]
    acc = np.array(L_bar, dtype=np.result_type(H, L_bar))
    C_bar = np.zeros((n, n), dtype=acc.dtype)
    for j in range(n - 3, -1, -1):
        g = acc[j + 2 :, j + 1] / np.conj(H[j + 1, j])
        C_bar[j + 2 :, j] = g
        acc[j + 2 :, : j + 1] -= np.outer(g, np.conj(H[: j + 1, j]))
        acc[j + 1 :, j] += adjoint(H[j + 2 :, j + 1 :]) @ g
    return C_bar


def _commutator(X: np.ndarray, H: np.ndarray) -> np.ndarray:
    return X @ H - H @ X


class _Hessenberg:
    """The factors of one matrix and the linear maps of the rules."""

    def __init__(self, a: np.ndarray) -> None:
        self.H, self.Q = call(sla.hessenberg, a, calc_q=True)
        self.n = a.shape[-1]
        self.complex = self.H.dtype.kind == "c"
        if self.n > 2 and np.any(np.diag(self.H, -1) == 0):
            raise np.linalg.LinAlgError(
                f"{_NAME}: the Hessenberg form is reduced (a zero on its subdiagonal); its "
                "factors are not differentiable there"
            )

    def pushforward(self, A_dot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        H, Q = self.H, self.Q
        if self.n <= 2:
            return as_array(A_dot, dtype=np.result_type(H, A_dot)), np.zeros_like(Q)
        C = adjoint(Q) @ A_dot @ Q
        L = _solve_L(H, C)
        Omega = L - adjoint(L)
        if self.complex:
            E = C - _commutator(Omega, H)
            steps = np.imag(np.diag(E, -1)) / np.real(np.diag(H, -1))
            Omega = Omega + 1j * np.diag(
                np.concatenate((np.zeros(1, steps.dtype), np.cumsum(steps)))
            )
        return _hess(C - _commutator(Omega, H)), Q @ Omega

    def pullback(self, H_bar: Any, Q_bar: Any) -> np.ndarray:
        H, Q = self.H, self.Q
        dtype = np.result_type(H, *(x for x in (H_bar, Q_bar) if x is not None))
        U = np.zeros(H.shape, dtype=dtype) if H_bar is None else _hess(H_bar)
        if self.n <= 2:
            return U
        Hh = adjoint(H)
        Omega_bar = -(U @ Hh - Hh @ U)
        if Q_bar is not None:
            Omega_bar = Omega_bar + adjoint(Q) @ Q_bar
        C_bar = U
        if self.complex:
            # D_{j+1} = sum_{m <= j} Im(E_{m+1,m}) / H_{m+1,m}: reverse cumulative sum onto E
            D_bar = np.imag(np.diag(Omega_bar))
            steps_bar = np.cumsum(D_bar[:0:-1])[::-1]
            E_bar = np.diag(1j * steps_bar / np.real(np.diag(H, -1)), -1)
            C_bar = C_bar + E_bar
            Omega_bar = Omega_bar - (E_bar @ Hh - Hh @ E_bar)
        L_bar = np.tril(Omega_bar - adjoint(Omega_bar), -1)
        L_bar[:, 0] = 0
        C_bar = C_bar + _solve_L_adjoint(H, L_bar)
        return Q @ C_bar @ adjoint(Q)


class _Stack:
    """:class:`_Hessenberg` for each matrix of ``a`` ``(..., n, n)``."""

    def __init__(self, a: Any, kwargs: dict[str, Any]) -> None:
        refuse(_NAME, overwrite_a=kwargs.pop("overwrite_a", None))
        A = square_matrices(_NAME, a)
        self.shape = A.shape
        flat = A.reshape(-1, *A.shape[-2:])
        self.plans = [_Hessenberg(m) for m in flat]

    def _stacked(self, parts: list[np.ndarray]) -> np.ndarray:
        return np.stack(parts).reshape(self.shape)

    def pushforward(self, A_dot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        flat = np.broadcast_to(A_dot, self.shape).reshape(-1, *self.shape[-2:])
        dots = [p.pushforward(d) for p, d in zip(self.plans, flat, strict=True)]
        return self._stacked([h for h, _ in dots]), self._stacked([q for _, q in dots])

    def pullback(self, H_bar: Any, Q_bar: Any) -> np.ndarray:
        def rows(t: Any) -> Any:
            return [None] * len(self.plans) if t is None else t.reshape(-1, *self.shape[-2:])

        return self._stacked(
            [p.pullback(h, q) for p, h, q in zip(self.plans, rows(H_bar), rows(Q_bar), strict=True)]
        )


def _part(t: Any, what: str) -> Any:
    t = unthunk(t)
    if isinstance(t, AbstractZero):
        return None
    return as_array(as_array_cotangent(t, f"{_NAME}'s {what}"))


@rrule_with_options(sla.hessenberg)
def hessenberg_rrule(a: Any, calc_q: bool = False, **kwargs: Any) -> Any:
    r"""``H[, Q] = hessenberg(a)``: :math:`\bar A = Q \bar C Q^H` (module docstring)."""
    plan = _Stack(a, kwargs)
    y = call(sla.hessenberg, a, calc_q=calc_q, **kwargs)
    project_a = ProjectTo(a)

    def hessenberg_pullback(y_bar: Any) -> tuple[Any, Any]:
        if calc_q:
            H_bar, Q_bar = (_part(t, "pullback") for t in split_cotangent(y_bar, 2))
        else:
            H_bar, Q_bar = _part(y_bar, "pullback"), None
        if H_bar is None and Q_bar is None:
            return NoTangent(), project_a(np.zeros(plan.shape, dtype=np.result_type(a)))
        return NoTangent(), project_a(plan.pullback(H_bar, Q_bar))

    return y, hessenberg_pullback


@frule.register(sla.hessenberg)
def hessenberg_frule(tangents: tuple[Any, ...], a: Any, calc_q: bool = False, **kwargs: Any) -> Any:
    r"""``Ḣ = hess(C - [Ω, H])``, ``Q̇ = Q Ω`` with ``C = Q^H Ȧ Q`` (module docstring)."""
    plan = _Stack(a, kwargs)
    y = call(sla.hessenberg, a, calc_q=calc_q, **kwargs)
    H_dot, Q_dot = plan.pushforward(_part(tangents[1], "frule"))
    if not calc_q:
        return y, ProjectTo(y)(H_dot)
    H, Q = y
    return y, Tangent(tuple, ProjectTo(H)(H_dot), ProjectTo(Q)(Q_dot))
