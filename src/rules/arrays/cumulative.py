r"""Rules of cumulative reductions: ``cumsum`` and ``cumprod``.

Both work along one axis (``axis=None`` means along the flattened input, whose cotangent is
reshaped back). With ``k`` the position along that axis:

* ``cumsum``: :math:`y_k = \sum_{j \le k} a_j`, so :math:`\bar a_j = \sum_{k \ge j} \bar y_k`, a
  cumulative sum taken from the far end.
* ``cumprod``: :math:`y_k = \prod_{j \le k} a_j` and
  :math:`\bar a_j = \sum_{k \ge j} \bar y_k\,\overline{\prod_{i \le k,\, i \ne j} a_i}`. Without zeros
  in ``a`` that is :math:`\bar a_j = \sum_{k \ge j} \bar y_k \overline{y_k} / \overline{a_j}`
  (a reversed cumulative sum and one division). With zeros it is computed **without division** from
  :math:`\bar a_j = \overline{y_{j-1}}\,R_j`, where :math:`R_j = \bar y_j + \overline{a_{j+1}}
  R_{j+1}` runs backwards (:math:`y_{-1} = 1`); the pushforward likewise from
  :math:`\dot y_k = \dot y_{k-1} a_k + y_{k-1} \dot a_k`. These recurrences loop in Python over
  the axis (vectorised over the other axes), so they cost more for long axes; they are only taken
  when ``a`` has a zero.

References
----------
ChainRules.jl ``src/rulesets/Base/mapreduce.jl`` (``cumsum``; ``cumprod`` with the zero-aware
``∇cumprod``); reference notes ``chainrules-linalg-and-testutils.md`` section 2.4.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array
from rules.core.options import refuse, rrule_with_options
from rules.core.registry import frule
from tangents import NoTangent, ProjectTo

__all__: list[str] = []


def _along_last(a: Any, axis: Any) -> tuple[np.ndarray, int]:
    """``a`` with the cumulative axis last (flattened first for ``axis=None``), and that axis."""
    a = as_array(a)
    if axis is None:
        return a.reshape(-1), 0
    axis = axis % a.ndim if a.ndim else 0
    return np.moveaxis(a, axis, -1), axis


def _restore(t: np.ndarray, shape: tuple[int, ...], axis: Any, moved_axis: int) -> np.ndarray:
    """Undo :func:`_along_last` on a tangent or cotangent."""
    if axis is None:
        return t.reshape(shape)
    return np.moveaxis(t, -1, moved_axis)


def _reverse_cumsum(g: np.ndarray) -> np.ndarray:
    r""":math:`\sum_{k \ge j} g_k` along the last axis."""
    return np.cumsum(g[..., ::-1], axis=-1)[..., ::-1]


# --- cumsum -------------------------------------------------------------------------------------


@rrule_with_options(np.cumsum)
def cumsum_rrule(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    r"""``y = cumsum(a, axis)``: :math:`\bar a_j = \sum_{k \ge j} \bar y_k`."""
    refuse("cumsum", out=out)
    y = np.cumsum(a, axis=axis, dtype=dtype)
    shape = np.shape(a)
    project_a = ProjectTo(a)

    def cumsum_pullback(y_bar: Any) -> tuple[Any, Any]:
        g, moved_axis = _along_last(as_array_cotangent(y_bar, "np.cumsum's pullback"), axis)
        return NoTangent(), project_a(_restore(_reverse_cumsum(g), shape, axis, moved_axis))

    return y, cumsum_pullback


@frule.register(np.cumsum)
def cumsum_frule(
    tangents: tuple[Any, ...], a: Any, axis: Any = None, dtype: Any = None, out: Any = None
) -> Any:
    """``ẏ = cumsum(ȧ, axis)``."""
    refuse("cumsum", out=out)
    y = np.cumsum(a, axis=axis, dtype=dtype)
    a_dot = as_array_cotangent(tangents[1], "np.cumsum's frule")
    return y, ProjectTo(y)(np.cumsum(a_dot, axis=axis))


# --- cumprod ------------------------------------------------------------------------------------


def _cumprod_pullback_with_zeros(a: np.ndarray, y: np.ndarray, g: np.ndarray) -> np.ndarray:
    r""":math:`\bar a_j = \overline{y_{j-1}} R_j`, :math:`R_j = \bar y_j + \overline{a_{j+1}} R_{j+1}` (last axis)."""
    a_conj, y_conj = np.conj(a), np.conj(y)
    n = a.shape[-1]
    a_bar = np.empty(np.broadcast_shapes(a.shape, g.shape), dtype=np.result_type(a, g))
    r = g[..., n - 1]
    for j in range(n - 1, -1, -1):
        if j < n - 1:
            r = g[..., j] + a_conj[..., j + 1] * r
        a_bar[..., j] = r if j == 0 else y_conj[..., j - 1] * r
    return a_bar


def _cumprod_pushforward_with_zeros(a: np.ndarray, y: np.ndarray, a_dot: np.ndarray) -> np.ndarray:
    r""":math:`\dot y_k = \dot y_{k-1} a_k + y_{k-1} \dot a_k` along the last axis."""
    y_dot = np.empty(np.broadcast_shapes(a.shape, a_dot.shape), dtype=np.result_type(a, a_dot))
    for k in range(a.shape[-1]):
        if k == 0:
            y_dot[..., 0] = a_dot[..., 0]
        else:
            y_dot[..., k] = y_dot[..., k - 1] * a[..., k] + y[..., k - 1] * a_dot[..., k]
    return y_dot


@rrule_with_options(np.cumprod)
def cumprod_rrule(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    r"""``y = cumprod(a, axis)``: :math:`\bar a_j = \sum_{k \ge j} \bar y_k \overline{\prod_{i \le k, i \ne j} a_i}`.

    Zero-safe; see the module docstring for the two ways it is computed.
    """
    refuse("cumprod", out=out)
    y = np.cumprod(a, axis=axis, dtype=dtype)
    shape = np.shape(a)
    project_a = ProjectTo(a)

    def cumprod_pullback(y_bar: Any) -> tuple[Any, Any]:
        g, moved_axis = _along_last(as_array_cotangent(y_bar, "np.cumprod's pullback"), axis)
        a_last, _ = _along_last(a, axis)
        y_last, _ = _along_last(y, axis)
        if np.all(a_last != 0):
            a_bar = _reverse_cumsum(g * np.conj(y_last)) / np.conj(a_last)
        else:
            a_bar = _cumprod_pullback_with_zeros(a_last, y_last, g)
        return NoTangent(), project_a(_restore(a_bar, shape, axis, moved_axis))

    return y, cumprod_pullback


@frule.register(np.cumprod)
def cumprod_frule(
    tangents: tuple[Any, ...], a: Any, axis: Any = None, dtype: Any = None, out: Any = None
) -> Any:
    r"""``ẏ_k = y_k \sum_{j \le k} ȧ_j / a_j`` (zero-free ``a``), else the product-rule recurrence."""
    refuse("cumprod", out=out)
    y = np.cumprod(a, axis=axis, dtype=dtype)
    a_dot = as_array_cotangent(tangents[1], "np.cumprod's frule")
    a_last, moved_axis = _along_last(a, axis)
    y_last, _ = _along_last(y, axis)
    a_dot_last, _ = _along_last(a_dot, axis)
    if np.all(a_last != 0):
        y_dot = y_last * np.cumsum(a_dot_last / a_last, axis=-1)
    else:
        y_dot = _cumprod_pushforward_with_zeros(a_last, y_last, a_dot_last)
    return y, ProjectTo(y)(_restore(y_dot, np.shape(y), axis, moved_axis))
