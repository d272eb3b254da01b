r"""Rules of ``scipy.linalg.polar`` and ``scipy.linalg.rq``, composed from the SVD and QR rules.

``polar(a, side)``: scipy computes both factors from the thin SVD :math:`a = W S V^H`:
:math:`U = W V^H`, and :math:`P = V S V^H` (``side="right"``, ``a = U P``) or :math:`P = W S W^H`
(``"left"``, ``a = P U``). Both factors are invariant under the SVD's gauge (the phases of the
singular pairs), so the rule composes ``np.linalg.svd``'s rule with the adjoints of these
products: :math:`\bar W = \bar U V`, :math:`\bar V^H = W^H \bar U`, and for ``P = V S V^H``:
:math:`\bar s = \mathrm{Re}\,\mathrm{diag}(V^H \bar P V)`,
:math:`\bar V^H \mathrel{+}= S V^H (\bar P + \bar P^H)` (``left``: the same with ``W``). It
inherits the SVD rule's requirement of distinct (and, for non-square ``a``, non-zero) singular
values, although the polar factor itself is smooth there.

``rq(a)`` for square ``a``: with the reversal ``J``, the QR factorization
:math:`a^T J = Q_1 R_1` gives :math:`a = (J R_1^T J)(J Q_1^T)`, an RQ factorization; scipy's
factors differ from it by a diagonal :math:`E` of signs (both keep real diagonals in ``R``, so
``E`` is locally constant): :math:`R = J R_1^T J E^H`, :math:`Q = E J Q_1^T`. The rule composes
``np.linalg.qr``'s rule with these linear maps. Modes ``"full"``, ``"economic"`` (the same for a
square ``a``) and ``"r"``.

References
----------
N. J. Higham, "Functions of Matrices", SIAM 2008, section 8.1 (the polar decomposition from the
SVD); ChainRules.jl ``src/rulesets/LinearAlgebra/factorization.jl`` (``svd``, ``qr``), whose
pullbacks these compose.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array, call
from rules.core.options import refuse, rrule_with_options
from rules.core.registry import frule, rrule, split_cotangent
from rules.linalg._stacks import adjoint
from tangents import AbstractZero, NoTangent, ProjectTo, Tangent, unthunk

__all__: list[str] = []


def _part(t: Any, name: str, what: str) -> Any:
    """A component of a (co)tangent as an array, ``None`` for a zero."""
    t = unthunk(t)
    if isinstance(t, AbstractZero):
        return None
    return as_array(as_array_cotangent(t, f"scipy.linalg.{name}'s {what}"))


# --- polar --------------------------------------------------------------------------------------


@rrule_with_options(sla.polar)
def polar_rrule(a: Any, side: str = "right") -> Any:
    r"""``U, P = polar(a, side)``: ``np.linalg.svd``'s pullback of the factors' cotangents."""
    y = call(sla.polar, a, side)
    (W, s, Vh), svd_pullback = rrule(np.linalg.svd, as_array(a), full_matrices=False)
    project_a = ProjectTo(a)

    def polar_pullback(y_bar: Any) -> tuple[Any, Any]:
        U_bar, P_bar = (_part(t, "polar", "pullback") for t in split_cotangent(y_bar, 2))
        dtype = np.result_type(W, *(t for t in (U_bar, P_bar) if t is not None))
        W_bar = np.zeros(W.shape, dtype=dtype)
        Vh_bar = np.zeros(Vh.shape, dtype=dtype)
        s_bar = np.zeros(s.shape, dtype=s.dtype)
        if U_bar is not None:
            W_bar = W_bar + U_bar @ adjoint(Vh)
            Vh_bar = Vh_bar + adjoint(W) @ U_bar
        if P_bar is not None:
            both = P_bar + adjoint(P_bar)
            if side == "right":  # P = V S V^H, V = Vh^H
                s_bar = np.real(np.einsum("ij,jk,ki->i", Vh, P_bar, adjoint(Vh)))
                Vh_bar = Vh_bar + s[:, None] * (Vh @ both)
            else:  # P = W S W^H
                s_bar = np.real(np.einsum("ji,jk,ki->i", np.conj(W), P_bar, W))
                W_bar = W_bar + both @ W * s
        a_bar = unthunk(svd_pullback((W_bar, s_bar, Vh_bar))[1])
        return NoTangent(), project_a(a_bar)

    return y, polar_pullback


@frule.register(sla.polar)
def polar_frule(tangents: tuple[Any, ...], a: Any, side: str = "right") -> Any:
    r"""``U̇ = Ẇ V^H + W V̇^H``; ``Ṗ`` from ``Ẇ``, ``ṡ``, ``V̇`` (``np.linalg.svd``'s frule)."""
    y = call(sla.polar, a, side)
    a_dot = _part(tangents[1], "polar", "frule")
    (W, s, Vh), svd_dot = frule(
        (NoTangent(), a_dot), np.linalg.svd, as_array(a), full_matrices=False
    )
    W_dot, s_dot, Vh_dot = (as_array(unthunk(t)) for t in split_cotangent(svd_dot, 3))
    U_dot = W_dot @ Vh + W @ Vh_dot
    if side == "right":
        P_dot = adjoint(Vh_dot) @ (s[:, None] * Vh) + adjoint(Vh) @ (s_dot[:, None] * Vh)
        P_dot = P_dot + adjoint(Vh) @ (s[:, None] * Vh_dot)
    else:
        P_dot = (W_dot * s) @ adjoint(W) + (W * s_dot) @ adjoint(W) + (W * s) @ adjoint(W_dot)
    return y, Tangent(tuple, ProjectTo(y[0])(U_dot), ProjectTo(y[1])(P_dot))


# --- rq -----------------------------------------------------------------------------------------


class _RQ:
    """``a = R Q`` from the QR factorization of ``a^T J``, in scipy's signs."""

    def __init__(self, a: Any) -> None:
        a = as_array(a)
        if a.ndim != 2 or a.shape[0] != a.shape[1]:
            raise ValueError("the rules of scipy.linalg.rq support square matrices only")
        (Q1, R1), self.qr_pullback = rrule(np.linalg.qr, a.T[:, ::-1])
        R_mine, Q_mine = R1.T[::-1, ::-1], Q1.T[::-1, :]
        self.R, self.Q = call(sla.rq, a)
        self.E = np.sum(self.Q * np.conj(Q_mine), axis=1)  # Q = E Q_mine, E = diag(+-1)
        scale = max(float(np.max(np.abs(self.R), initial=0.0)), 1.0)
        if not np.allclose(self.R, R_mine * np.conj(self.E)[None, :], atol=1e-5 * scale, rtol=1e-4):
            raise np.linalg.LinAlgError(
                "scipy.linalg.rq: the factors do not match the flipped QR factorization "
                "(a rank-deficient input?); the rule cannot follow them"
            )
        self.a = a

    def pullback(self, R_bar: Any, Q_bar: Any) -> Any:
        E = self.E
        R1_bar = None if R_bar is None else (R_bar * E[None, :])[::-1, ::-1].T
        Q1_bar = None if Q_bar is None else (np.conj(E)[:, None] * Q_bar)[::-1, :].T
        parts = tuple(
            np.zeros(self.a.shape, dtype=np.result_type(self.a, E)) if t is None else t
            for t in (Q1_bar, R1_bar)
        )
        B_bar = as_array(unthunk(self.qr_pullback(parts)[1]))
        return B_bar[:, ::-1].T

    def pushforward(self, a_dot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        B = self.a.T[:, ::-1]
        _, qr_dot = frule((NoTangent(), a_dot.T[:, ::-1]), np.linalg.qr, B)
        Q1_dot, R1_dot = (as_array(unthunk(t)) for t in split_cotangent(qr_dot, 2))
        R_dot = R1_dot.T[::-1, ::-1] * np.conj(self.E)[None, :]
        Q_dot = self.E[:, None] * Q1_dot.T[::-1, :]
        return R_dot, Q_dot


def _rq_mode(mode: str, kwargs: dict[str, Any]) -> None:
    refuse("scipy.linalg.rq", overwrite_a=kwargs.get("overwrite_a"))
    if mode not in ("full", "economic", "r"):
        raise ValueError(f"the rules of scipy.linalg.rq support modes full, economic, r: {mode!r}")


@rrule_with_options(sla.rq)
def rq_rrule(a: Any, mode: str = "full", **kwargs: Any) -> Any:
    """``R, Q = rq(a)``: ``np.linalg.qr``'s pullback at ``a^T J`` (module docstring)."""
    _rq_mode(mode, kwargs)
    y = call(sla.rq, a, mode=mode, **kwargs)
    plan = _RQ(a)
    project_a = ProjectTo(a)

    def rq_pullback(y_bar: Any) -> tuple[Any, Any]:
        if mode == "r":
            R_bar, Q_bar = _part(y_bar, "rq", "pullback"), None
        else:
            R_bar, Q_bar = (_part(t, "rq", "pullback") for t in split_cotangent(y_bar, 2))
        return NoTangent(), project_a(plan.pullback(R_bar, Q_bar))

    return y, rq_pullback


@frule.register(sla.rq)
def rq_frule(tangents: tuple[Any, ...], a: Any, mode: str = "full", **kwargs: Any) -> Any:
    """``Ṙ``, ``Q̇`` from ``np.linalg.qr``'s frule at ``a^T J``."""
    _rq_mode(mode, kwargs)
    y = call(sla.rq, a, mode=mode, **kwargs)
    R_dot, Q_dot = _RQ(a).pushforward(_part(tangents[1], "rq", "frule"))
    if mode == "r":
        return y, ProjectTo(y)(R_dot)
    return y, Tangent(tuple, ProjectTo(y[0])(R_dot), ProjectTo(y[1])(Q_dot))
