r"""Rules for ``scipy.signal.lfilter(b, a, x, axis=-1)``: a linear recursive filter.

``y = lfilter(b, a, x)`` applies :math:`H = B/A` along ``axis`` from zero initial conditions.
With :math:`v = \mathrm{lfilter}(1, a, x)` and :math:`u = \mathrm{lfilter}(1, a, y)`, the
partials are :math:`\partial y_n/\partial b_k = v_{n-k}` and :math:`\partial y_n/\partial a_k =
-u_{n-k}` (from :math:`\partial H/\partial a_k = -H z^{-k}/A`; this holds for :math:`a_0` too,
which scipy normalizes by), so

.. math::

    \bar b_k = \sum_n \bar y_n\,\overline{v_{n-k}}, \qquad
    \bar a_k = -\sum_n \bar y_n\,\overline{u_{n-k}}, \qquad
    \bar x = \operatorname{rev}\,\mathrm{lfilter}(\bar b, \bar a, \operatorname{rev}\,\bar y),

summed over the other axes, where the last is the adjoint of a causal filter: the same filter
with conjugated coefficients run backwards in time. The pushforward is :math:`\dot y =
\mathrm{lfilter}(b, a, \dot x) + \sum_k \dot b_k v_{n-k} - \sum_k \dot a_k u_{n-k}`. Initial
conditions (``zi``, which make a second output) are refused by name.

References
----------
The adjoint of an IIR filter by time reversal: torchaudio's ``lfilter`` autograd; C.-Y. Yu et
al., "Differentiable all-pole filters for time-varying audio systems" (DAFx 2024), section 3.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.signal as ss

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array, call
from rules.core.options import refuse
from rules.core.registry import frule, rrule
from tangents import AbstractZero, NoTangent, ProjectTo, unthunk

__all__: list[str] = []


def _check(b: Any, a: Any, zi: Any) -> None:
    refuse("scipy.signal.lfilter", zi=zi)
    if np.ndim(b) != 1 or np.ndim(a) != 1:
        raise ValueError("the rules of scipy.signal.lfilter need 1-D coefficient arrays b and a")


def _delayed_sums(g: np.ndarray, v: np.ndarray, taps: int) -> np.ndarray:
    r""":math:`\sum_n g_n \overline{v_{n-k}}` for ``k < taps``, over every axis (time last)."""
    n = g.shape[-1]
    out = np.zeros(taps, dtype=np.result_type(g, v))
    for k in range(min(taps, n)):
        out[k] = np.sum(g[..., k:] * np.conj(v[..., : n - k]))
    return out


def _delayed_filter(c: Any, v: np.ndarray) -> np.ndarray:
    r""":math:`\sum_k c_k v_{n-k}` along the last axis (an FIR filter with taps ``c``)."""
    return call(ss.lfilter, c, [1.0], v, axis=-1)


@rrule.register(ss.lfilter)
def lfilter_rrule(b: Any, a: Any, x: Any, axis: int = -1, zi: Any = None) -> Any:
    r"""``y = lfilter(b, a, x)``: :math:`\bar x` by time reversal, :math:`\bar b, \bar a` by delayed sums."""
    _check(b, a, zi)
    y = call(ss.lfilter, b, a, x, axis=axis)
    project_b, project_a, project_x = ProjectTo(b), ProjectTo(a), ProjectTo(x)
    b_arr, a_arr = as_array(b), as_array(a)
    x_last = np.moveaxis(as_array(x), axis, -1)
    y_last = np.moveaxis(y, axis, -1)

    def lfilter_pullback(y_bar: Any) -> tuple[Any, ...]:
        g = np.moveaxis(
            as_array(as_array_cotangent(y_bar, "scipy.signal.lfilter's pullback")), axis, -1
        )
        x_bar = np.flip(
            call(ss.lfilter, np.conj(b_arr), np.conj(a_arr), np.flip(g, -1), axis=-1), -1
        )
        v = call(ss.lfilter, [1.0], a_arr, x_last, axis=-1)
        u = call(ss.lfilter, [1.0], a_arr, y_last, axis=-1)
        b_bar = _delayed_sums(g, v, b_arr.shape[0])
        a_bar = -_delayed_sums(g, u, a_arr.shape[0])
        return (
            NoTangent(),
            project_b(b_bar),
            project_a(a_bar),
            project_x(np.moveaxis(x_bar, -1, axis)),
        )

    return y, lfilter_pullback


@frule.register(ss.lfilter)
def lfilter_frule(
    tangents: tuple[Any, ...], b: Any, a: Any, x: Any, axis: int = -1, zi: Any = None
) -> Any:
    r"""``ẏ = lfilter(b, a, ẋ) + Σ ḃ_k v_{n-k} - Σ ȧ_k u_{n-k}``."""
    _check(b, a, zi)
    y = call(ss.lfilter, b, a, x, axis=axis)
    b_dot, a_dot, x_dot = (unthunk(t) for t in tangents[1:4])
    operation = "scipy.signal.lfilter's frule"
    a_arr = as_array(a)
    y_dot = np.zeros(np.moveaxis(y, axis, -1).shape, dtype=np.result_type(y, np.float32))
    if not isinstance(x_dot, AbstractZero):
        moved = np.moveaxis(as_array(as_array_cotangent(x_dot, operation)), axis, -1)
        y_dot = y_dot + call(ss.lfilter, b, a, moved, axis=-1)
    if not isinstance(b_dot, AbstractZero):
        v = call(ss.lfilter, [1.0], a_arr, np.moveaxis(as_array(x), axis, -1), axis=-1)
        y_dot = y_dot + _delayed_filter(as_array_cotangent(b_dot, operation), v)
    if not isinstance(a_dot, AbstractZero):
        u = call(ss.lfilter, [1.0], a_arr, np.moveaxis(y, axis, -1), axis=-1)
        y_dot = y_dot - _delayed_filter(as_array_cotangent(a_dot, operation), u)
    return y, ProjectTo(y)(np.moveaxis(y_dot, -1, axis))
