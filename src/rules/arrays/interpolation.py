r"""Rules of ``np.interp`` (piecewise-linear interpolation) and ``np.polyval``.

``interp(x, xp, fp)``: in the interval :math:`[x_{p,i}, x_{p,i+1}]` holding ``x``, with
:math:`\Delta = x_{p,i+1} - x_{p,i}`, :math:`t = (x - x_{p,i}) / \Delta` and slope
:math:`s = (f_{p,i+1} - f_{p,i}) / \Delta`, :math:`y = (1 - t) f_{p,i} + t f_{p,i+1}`; so
:math:`\partial y/\partial x = s`, :math:`\partial y/\partial f_{p,i} = 1 - t`,
:math:`\partial y/\partial f_{p,i+1} = t`, :math:`\partial y/\partial x_{p,i} = s (t - 1)`,
:math:`\partial y/\partial x_{p,i+1} = -s t`. Outside ``[xp[0], xp[-1]]`` the output is
``left``/``right`` (default ``fp[0]``/``fp[-1]``, then the weight goes to that end of ``fp``;
given values are keyword constants). At the knots the derivative in ``x`` jumps; the rule takes
the interval on the right (numpy's own search). ``fp`` may be complex; ``period`` is refused.

``polyval(p, x) = sum_i p_i x^{n-1-i}``: :math:`\bar p_i = \sum \overline{x^{n-1-i}}\, \bar y`,
:math:`\bar x = \overline{p'(x)}\, \bar y` (holomorphic in both).

References
----------
JAX ``jax/_src/numpy/lax_numpy.py`` (``interp`` as a gather and a linear combination, so its
derivative is that of the formula above); HIPS autograd ``autograd/numpy/numpy_vjps.py``
(``polyval``'s VJPs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.broadcasting import unbroadcast
from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array
from rules.core.options import is_constant, refuse, rrule_with_options
from rules.core.registry import frule
from tangents import AbstractZero, NoTangent, ProjectTo, unthunk

__all__: list[str] = []


class _Interpolation:
    """The interval, position and slope of each query point of ``np.interp``."""

    def __init__(self, x: Any, xp: Any, fp: Any, left: Any, right: Any) -> None:
        x, xp, fp = as_array(x, dtype=np.float64), as_array(xp), as_array(fp)
        n = xp.shape[0]
        self.i = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, max(n - 2, 0))
        self.i1 = np.minimum(self.i + 1, n - 1)
        delta = np.where(self.i1 > self.i, xp[self.i1] - xp[self.i], 1.0)
        self.t = np.where(self.i1 > self.i, (x - xp[self.i]) / delta, 0.0)
        self.slope = (fp[self.i1] - fp[self.i]) / delta
        self.below, self.above = x < xp[0], x > xp[-1]
        self.inside = ~(self.below | self.above)
        # Where fp's ends are the output outside the range (left/right not given).
        self.below_to_fp = self.below & (left is None)
        self.above_to_fp = self.above & (right is None)
        self.n = n

    def weights(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per query point: the weights of ``fp[i]``, ``fp[i + 1]``, ``xp[i]`` and ``xp[i + 1]``."""
        # Below the range i = 0, above it i1 = n - 1: the ends of fp.
        w0 = np.where(self.inside, 1 - self.t, 0.0) + self.below_to_fp
        w1 = np.where(self.inside, self.t, 0.0) + self.above_to_fp
        x0 = np.where(self.inside, self.slope * (self.t - 1), 0.0)
        x1 = np.where(self.inside, -self.slope * self.t, 0.0)
        return w0, w1, x0, x1


@rrule_with_options(np.interp)
def interp_rrule(
    x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None
) -> Any:
    r"""``y = interp(x, xp, fp)``: gathers of ``fp`` with weights ``1 - t``, ``t`` (module docstring)."""
    refuse("np.interp", period=period)
    y = np.interp(x, xp, fp, left, right)
    plan = _Interpolation(x, xp, fp, left, right)
    project_x, project_xp, project_fp = ProjectTo(x), ProjectTo(xp), ProjectTo(fp)
    n = plan.n

    def interp_pullback(y_bar: Any) -> tuple[Any, ...]:
        g = as_array(as_array_cotangent(y_bar, "np.interp's pullback"))
        w0, w1, x0, x1 = plan.weights()
        slope = np.where(plan.inside, plan.slope, 0)
        x_bar = project_x(np.reshape(np.real(np.conj(slope) * g), np.shape(x)))
        fp_bar = np.zeros(n, dtype=np.result_type(g, np.float64))
        np.add.at(fp_bar, plan.i, w0 * g)
        np.add.at(fp_bar, plan.i1, w1 * g)
        xp_bar = np.zeros(n, dtype=np.result_type(g, np.float64))
        np.add.at(xp_bar, plan.i, np.conj(x0) * g)
        np.add.at(xp_bar, plan.i1, np.conj(x1) * g)
        return NoTangent(), x_bar, project_xp(np.real(xp_bar)), project_fp(fp_bar)

    return y, interp_pullback


@frule.register(np.interp)
def interp_frule(
    tangents: tuple[Any, ...],
    x: Any,
    xp: Any,
    fp: Any,
    left: Any = None,
    right: Any = None,
    period: Any = None,
) -> Any:
    """``ẏ = s ẋ + (1 - t) ḟp_i + t ḟp_{i+1} + s (t - 1) ẋp_i - s t ẋp_{i+1}``."""
    refuse("np.interp", period=period)
    y = np.interp(x, xp, fp, left, right)
    plan = _Interpolation(x, xp, fp, left, right)
    w0, w1, x0, x1 = plan.weights()
    dots = [unthunk(t) for t in tangents[1:4]]
    dots = [
        None
        if isinstance(t, AbstractZero)
        else as_array(as_array_cotangent(t, "np.interp's frule"))
        for t in dots
    ]
    y_dot: Any = np.zeros(np.shape(y), dtype=np.result_type(y, np.float64))
    if dots[0] is not None:
        y_dot = y_dot + np.where(plan.inside, plan.slope, 0) * dots[0]
    if dots[1] is not None:
        y_dot = y_dot + x0 * dots[1][plan.i] + x1 * dots[1][plan.i1]
    if dots[2] is not None:
        y_dot = y_dot + w0 * dots[2][plan.i] + w1 * dots[2][plan.i1]
    return y, ProjectTo(y)(y_dot)


# --- polyval ------------------------------------------------------------------------------------


def _derivative(p: np.ndarray) -> np.ndarray:
    n = p.shape[0]
    return p[:-1] * np.arange(n - 1, 0, -1) if n > 1 else np.zeros(1, dtype=p.dtype)


@rrule_with_options(np.polyval)
def polyval_rrule(p: Any, x: Any) -> Any:
    r"""``y = polyval(p, x)``: :math:`\bar p_i = \sum \overline{x^{n-1-i}} \bar y`, :math:`\bar x = \overline{p'(x)} \bar y`."""
    y = np.polyval(p, x)
    p_arr = as_array(p)
    powers = np.arange(p_arr.shape[0] - 1, -1, -1)
    project_p = ProjectTo(p)
    project_x = None if is_constant(x) else ProjectTo(x)

    def polyval_pullback(y_bar: Any) -> tuple[Any, Any, Any]:
        g = as_array(as_array_cotangent(y_bar, "np.polyval's pullback"))
        xs = as_array(x)
        monomials = np.power(xs[..., None], powers)  # (*x.shape, n)
        p_bar = np.tensordot(g, np.conj(monomials), axes=g.ndim)
        x_bar: Any = NoTangent()
        if project_x is not None:
            x_bar = project_x(
                unbroadcast(np.conj(np.polyval(_derivative(p_arr), xs)) * g, xs.shape)
            )
        return NoTangent(), project_p(p_bar), x_bar

    return y, polyval_pullback


@frule.register(np.polyval)
def polyval_frule(tangents: tuple[Any, ...], p: Any, x: Any) -> Any:
    """``ẏ = polyval(ṗ, x) + p'(x) ẋ``."""
    y = np.polyval(p, x)
    y_dot: Any = 0
    p_dot, x_dot = unthunk(tangents[1]), unthunk(tangents[2])
    if not isinstance(p_dot, AbstractZero):
        y_dot = y_dot + np.polyval(as_array_cotangent(p_dot, "np.polyval's frule"), x)
    if not isinstance(x_dot, AbstractZero) and not is_constant(x):
        x_dot = as_array_cotangent(x_dot, "np.polyval's frule")
        y_dot = y_dot + np.polyval(_derivative(as_array(p)), x) * x_dot
    return y, ProjectTo(y)(y_dot)
