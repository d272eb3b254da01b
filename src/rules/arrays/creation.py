r"""Rules of array constructors from values: ``np.linspace`` and ``np.full``.

``linspace(start, stop, num)`` is :math:`y_k = (1 - t_k)\,\mathrm{start} + t_k\,\mathrm{stop}`
with :math:`t_k = k / \mathrm{div}` (``div = num - 1``, or ``num`` without the endpoint), along
the new axis ``axis`` (array ``start``/``stop`` broadcast): :math:`\overline{\mathrm{start}} =
\sum_k (1 - t_k) \bar y_k`, :math:`\overline{\mathrm{stop}} = \sum_k t_k \bar y_k`, summed back
over broadcasting. With ``retstep=True`` the step :math:`(\mathrm{stop} - \mathrm{start}) /
\mathrm{div}` is a second output whose cotangent adds :math:`\mp \bar s / \mathrm{div}`.

``full(shape, fill_value)`` broadcasts ``fill_value``: its cotangent is ``ȳ`` summed back to
``fill_value``'s shape. An integer ``dtype`` (or an integer output) has no derivative.

References
----------
JAX ``jax/_src/numpy/array_creation.py`` (``linspace`` as ``start + step * iota``, ``full`` as a
broadcast).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.broadcasting import broadcast_tangent, unbroadcast
from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array
from rules.core.options import is_constant, normalize_axes, rrule_with_options
from rules.core.registry import frule, split_cotangent
from tangents import AbstractZero, NoTangent, ProjectTo, Tangent, ZeroTangent, unthunk

__all__: list[str] = []


def _fractions(num: int, endpoint: bool, axis: int, ndim: int) -> tuple[np.ndarray, int]:
    """``t_k`` shaped to lie along ``axis`` of the output, and the divisor ``div``."""
    div = (num - 1) if endpoint else num
    t = np.arange(num, dtype=np.float64) / div if div > 0 else np.zeros(num)
    shape = [1] * ndim
    shape[axis] = num
    return t.reshape(shape), div


def _inexact(y: Any) -> bool:
    return np.issubdtype(np.result_type(y), np.inexact)


@rrule_with_options(np.linspace)
def linspace_rrule(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
    **kwargs: Any,
) -> Any:
    r"""``y = linspace(start, stop, num)``: :math:`\bar{start} = \sum (1 - t) \bar y`, :math:`\bar{stop} = \sum t \bar y`."""
    out = np.linspace(start, stop, num, endpoint, retstep, dtype, axis, **kwargs)
    samples = out[0] if retstep else out
    along = normalize_axes(axis, np.ndim(samples))[0]
    t, div = _fractions(num, endpoint, along, np.ndim(samples))
    projectors = [None if is_constant(v) else ProjectTo(v) for v in (start, stop)]
    shapes = [np.shape(start), np.shape(stop)]
    differentiable = _inexact(samples)

    def linspace_pullback(y_bar: Any) -> tuple[Any, ...]:
        parts = split_cotangent(y_bar, 2) if retstep else (y_bar, ZeroTangent())
        g, s_bar = (unthunk(p) for p in parts)
        weights = [0.0, 0.0]
        if not isinstance(g, AbstractZero):
            g = as_array(as_array_cotangent(g, "np.linspace's pullback"))
            weights = [np.sum((1 - t) * g, axis=along), np.sum(t * g, axis=along)]
        if not isinstance(s_bar, AbstractZero) and div > 0:
            s_bar = as_array_cotangent(s_bar, "np.linspace's pullback")
            weights = [weights[0] - s_bar / div, weights[1] + s_bar / div]
        cotangents: list[Any] = [NoTangent()]
        for project, shape, w in zip(projectors, shapes, weights, strict=True):
            if project is None or not differentiable:
                cotangents.append(NoTangent())
            else:
                cotangents.append(project(unbroadcast(as_array(w), shape)))
        return tuple(cotangents)

    return out, linspace_pullback


@frule.register(np.linspace)
def linspace_frule(
    tangents: tuple[Any, ...],
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
    **kwargs: Any,
) -> Any:
    """``ẏ = linspace(ṡtart, ṡtop, num)``: linear in ``start`` and ``stop``."""
    out = np.linspace(start, stop, num, endpoint, retstep, dtype, axis, **kwargs)
    samples = out[0] if retstep else out
    along = normalize_axes(axis, np.ndim(samples))[0]
    t, div = _fractions(num, endpoint, along, np.ndim(samples))
    raw: list[Any] = []
    for value, dot in zip((start, stop), tangents[1:3], strict=True):
        dot = unthunk(dot)
        if isinstance(dot, AbstractZero) or is_constant(value):
            raw.append(np.zeros(np.shape(value)))
        else:
            raw.append(as_array(as_array_cotangent(dot, "np.linspace's frule")))
    if not _inexact(samples):
        return out, ZeroTangent()
    common = np.broadcast_shapes(np.shape(start), np.shape(stop))
    start_dot, stop_dot = (np.expand_dims(np.broadcast_to(d, common), along) for d in raw)
    y_dot = (1 - t) * start_dot + t * stop_dot
    y_dot = ProjectTo(samples)(broadcast_tangent(y_dot, samples.shape))
    if not retstep:
        return out, y_dot
    step_dot = (raw[1] - raw[0]) / div if div else np.zeros(np.shape(out[1]))
    return out, Tangent(tuple, y_dot, ProjectTo(out[1])(as_array(step_dot)))


@rrule_with_options(np.full)
def full_rrule(
    shape: Any, fill_value: Any, dtype: Any = None, order: str = "C", **kwargs: Any
) -> Any:
    """``y = full(shape, fill_value)``: ``fill_value̅ = ȳ`` summed back to ``fill_value``'s shape."""
    y = np.full(shape, fill_value, dtype, order, **kwargs)
    project = None if is_constant(fill_value) or not _inexact(y) else ProjectTo(fill_value)
    fill_shape = np.shape(fill_value)

    def full_pullback(y_bar: Any) -> tuple[Any, Any, Any]:
        g = as_array_cotangent(y_bar, "np.full's pullback")
        if project is None:
            return NoTangent(), NoTangent(), NoTangent()
        return NoTangent(), NoTangent(), project(unbroadcast(as_array(g), fill_shape))

    return y, full_pullback


@frule.register(np.full)
def full_frule(
    tangents: tuple[Any, ...],
    shape: Any,
    fill_value: Any,
    dtype: Any = None,
    order: str = "C",
    **kwargs: Any,
) -> Any:
    """``ẏ = full(shape, ḟill_value)``."""
    y = np.full(shape, fill_value, dtype, order, **kwargs)
    if is_constant(fill_value) or not _inexact(y):
        return y, ZeroTangent()
    dot = as_array_cotangent(tangents[2], "np.full's frule")
    return y, ProjectTo(y)(np.full(np.shape(y), dot, dtype=np.result_type(dot, y)))
