r"""Rules of ``np.linalg.tensorsolve``, ``np.linalg.tensorinv`` and ``np.linalg.cond``.

``tensorsolve(a, b, axes)`` and ``tensorinv(a, ind)`` are ``solve`` and ``inv`` of ``a`` reshaped
to a square matrix ``A`` (numpy's own reshapes, after moving ``axes`` to the end):

* ``x = A^{-1} b``: :math:`\bar b = A^{-H} \bar x`, :math:`\bar A = -\bar b\, x^H`;
  :math:`\dot x = A^{-1} (\dot b - \dot A x)`;
* ``Y = A^{-1}``: :math:`\bar A = -Y^H \bar Y Y^H`, :math:`\dot Y = -Y \dot A Y`;

each cotangent reshaped (and transposed) back to its argument's shape.

``cond(x, p)``: for ``p`` in ``None, 2, -2`` it is :math:`\sigma_1/\sigma_n` (or its inverse) of
the SVD :math:`x = U \Sigma V^H`, and with :math:`d\sigma_i = \mathrm{Re}(u_i^H\, dx\, v_i)`,
:math:`\bar x = \bar y (u_1 v_1^H / \sigma_n - \sigma_1 u_n v_n^H / \sigma_n^2)` (distinct extreme
singular values assumed, as for any derivative of a singular value). For the other orders
``cond = norm(x, p) * norm(inv(x), p)``, whose rule composes those of ``norm`` and ``inv``.
Stacks of matrices are supported.

References
----------
M. B. Giles, "An extended collection of matrix derivative results for forward and reverse mode
automatic differentiation", 2008 (inverse, solve); ChainRules.jl
``src/rulesets/LinearAlgebra/dense.jl`` and ``factorization.jl`` (``inv``, ``\``, ``svd``);
numpy's ``linalg/_linalg.py`` for the reshapes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array
from rules.core.options import rrule_with_options
from rules.core.registry import frule, rrule
from rules.linalg._stacks import adjoint
from tangents import AbstractZero, NoTangent, ProjectTo, unthunk

__all__: list[str] = []


def _array(t: Any, name: str, what: str = "pullback") -> np.ndarray:
    return as_array(as_array_cotangent(t, f"np.linalg.{name}'s {what}"))


# --- tensorsolve --------------------------------------------------------------------------------


class _TensorSystem:
    """``a`` as numpy's ``tensorsolve`` reshapes it: a square matrix, and the way back."""

    def __init__(self, a: Any, b: Any, axes: Any) -> None:
        a = as_array(a)
        self.perm = list(range(a.ndim))
        if axes is not None:
            for k in axes:
                self.perm.remove(k)
                self.perm.insert(a.ndim, k)
        moved = np.transpose(a, self.perm)
        self.moved_shape = moved.shape
        self.x_shape = moved.shape[-(a.ndim - np.ndim(b)) :]
        n = int(np.prod(self.x_shape, dtype=int))
        self.A = moved.reshape(n, n)
        self.b_shape = np.shape(b)

    def a_cotangent(self, A_bar: np.ndarray) -> np.ndarray:
        return np.transpose(A_bar.reshape(self.moved_shape), np.argsort(self.perm))

    def a_tangent(self, a_dot: Any) -> np.ndarray:
        return np.transpose(a_dot, self.perm).reshape(self.A.shape)


@rrule_with_options(np.linalg.tensorsolve)
def tensorsolve_rrule(a: Any, b: Any, axes: Any = None) -> Any:
    r"""``x = tensorsolve(a, b)``: :math:`\bar b = A^{-H} \bar x`, :math:`\bar A = -\bar b x^H`."""
    x = np.linalg.tensorsolve(a, b, axes)
    plan = _TensorSystem(a, b, axes)
    x_flat = np.reshape(x, -1)
    project_a, project_b = ProjectTo(a), ProjectTo(b)

    def tensorsolve_pullback(x_bar: Any) -> tuple[Any, Any, Any]:
        g = _array(x_bar, "tensorsolve").reshape(-1)
        b_bar = np.linalg.solve(adjoint(plan.A), g)
        A_bar = -np.outer(b_bar, np.conj(x_flat))
        return (
            NoTangent(),
            project_a(plan.a_cotangent(A_bar)),
            project_b(b_bar.reshape(plan.b_shape)),
        )

    return x, tensorsolve_pullback


@frule.register(np.linalg.tensorsolve)
def tensorsolve_frule(tangents: tuple[Any, ...], a: Any, b: Any, axes: Any = None) -> Any:
    r"""``ẋ = A^{-1} (ḃ - Ȧ x)``."""
    x = np.linalg.tensorsolve(a, b, axes)
    plan = _TensorSystem(a, b, axes)
    a_dot, b_dot = (unthunk(t) for t in tangents[1:3])
    rhs: Any = np.zeros(np.size(x), dtype=np.result_type(x))
    if not isinstance(b_dot, AbstractZero):
        rhs = rhs + _array(b_dot, "tensorsolve", "frule").reshape(-1)
    if not isinstance(a_dot, AbstractZero):
        rhs = rhs - plan.a_tangent(_array(a_dot, "tensorsolve", "frule")) @ np.reshape(x, -1)
    return x, ProjectTo(x)(np.linalg.solve(plan.A, rhs).reshape(np.shape(x)))


# --- tensorinv ----------------------------------------------------------------------------------


@rrule_with_options(np.linalg.tensorinv)
def tensorinv_rrule(a: Any, ind: int = 2) -> Any:
    r"""``Y = tensorinv(a, ind)``: :math:`\bar A = -Y^H \bar Y Y^H` on the reshaped matrices."""
    Y = np.linalg.tensorinv(a, ind)
    shape = np.shape(a)
    n = int(np.prod(shape[:ind], dtype=int))
    Y_matrix = Y.reshape(-1, n)
    project_a = ProjectTo(a)

    def tensorinv_pullback(Y_bar: Any) -> tuple[Any, Any]:
        G = _array(Y_bar, "tensorinv").reshape(Y_matrix.shape)
        Yh = adjoint(Y_matrix)
        return NoTangent(), project_a((-(Yh @ G @ Yh)).reshape(shape))

    return Y, tensorinv_pullback


@frule.register(np.linalg.tensorinv)
def tensorinv_frule(tangents: tuple[Any, ...], a: Any, ind: int = 2) -> Any:
    r"""``Ẏ = -Y Ȧ Y`` on the reshaped matrices."""
    Y = np.linalg.tensorinv(a, ind)
    n = int(np.prod(np.shape(a)[:ind], dtype=int))
    Y_matrix = Y.reshape(-1, n)
    A_dot = _array(tangents[1], "tensorinv", "frule").reshape(n, -1)
    return Y, ProjectTo(Y)((-(Y_matrix @ A_dot @ Y_matrix)).reshape(Y.shape))


# --- cond ---------------------------------------------------------------------------------------


def _by_svd(p: Any) -> bool:
    return p is None or p == 2 or p == -2


@rrule_with_options(np.linalg.cond)
def cond_rrule(x: Any, p: Any = None) -> Any:
    r"""``y = cond(x, p)``: the extreme singular pairs for ``p`` in ``None, ±2``; else composed."""
    y = np.linalg.cond(x, p)
    project_x = ProjectTo(x)
    if _by_svd(p):
        U, s, Vh = np.linalg.svd(x, full_matrices=False)
        hi, lo = (0, -1) if p != -2 else (-1, 0)
        u_hi, v_hi = U[..., :, hi], np.conj(Vh[..., hi, :])
        u_lo, v_lo = U[..., :, lo], np.conj(Vh[..., lo, :])
        s_hi, s_lo = s[..., hi], s[..., lo]

        def cond_pullback(y_bar: Any) -> tuple[Any, Any]:
            g = np.real(_array(y_bar, "cond"))
            w_hi, w_lo = g / s_lo, -g * s_hi / s_lo**2
            x_bar = w_hi[..., None, None] * u_hi[..., :, None] * np.conj(v_hi)[..., None, :]
            x_bar = x_bar + w_lo[..., None, None] * u_lo[..., :, None] * np.conj(v_lo)[..., None, :]
            return NoTangent(), project_x(x_bar)

        return y, cond_pullback

    axes = (-2, -1)
    n1, norm_pullback = rrule(np.linalg.norm, x, p, axes)
    X_inv, inv_pullback = rrule(np.linalg.inv, x)
    n2, inv_norm_pullback = rrule(np.linalg.norm, X_inv, p, axes)

    def cond_composed_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = np.real(_array(y_bar, "cond"))
        x_bar = norm_pullback(as_array(g * n2))[1]
        x_bar = x_bar + inv_pullback(inv_norm_pullback(as_array(g * n1))[1])[1]
        return NoTangent(), project_x(x_bar)

    return y, cond_composed_pullback


@frule.register(np.linalg.cond)
def cond_frule(tangents: tuple[Any, ...], x: Any, p: Any = None) -> Any:
    r"""``ẏ = σ̇_1/σ_n - σ_1 σ̇_n/σ_n^2`` with ``σ̇_i = Re(u_i^H ẋ v_i)``; else composed."""
    y = np.linalg.cond(x, p)
    x_dot = _array(tangents[1], "cond", "frule")
    if _by_svd(p):
        U, s, Vh = np.linalg.svd(x, full_matrices=False)
        hi, lo = (0, -1) if p != -2 else (-1, 0)

        def rate(i: int) -> np.ndarray:
            u, v = U[..., :, i], np.conj(Vh[..., i, :])
            return np.real(np.einsum("...i,...ij,...j->...", np.conj(u), x_dot, v))

        y_dot = rate(hi) / s[..., lo] - s[..., hi] * rate(lo) / s[..., lo] ** 2
        return y, ProjectTo(y)(y_dot)
    axes = (-2, -1)
    n1, n1_dot = frule((NoTangent(), x_dot, NoTangent(), NoTangent()), np.linalg.norm, x, p, axes)
    X_inv, X_inv_dot = frule((NoTangent(), x_dot), np.linalg.inv, x)
    n2, n2_dot = frule(
        (NoTangent(), X_inv_dot, NoTangent(), NoTangent()), np.linalg.norm, X_inv, p, axes
    )
    return y, ProjectTo(y)(unthunk(n1_dot) * n2 + n1 * unthunk(n2_dot))
