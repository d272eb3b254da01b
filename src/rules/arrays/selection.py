r"""Rules of elementwise selections: ``maximum``, ``minimum``, ``fmax``, ``fmin``, ``clip``, ``where``.

Each output entry *is* one of the inputs, so its cotangent goes to the input that was selected
(and its tangent comes from it): the derivative is a 0/1 weight per input, times the cotangent.

Ties
----
Where two inputs are equal and both selected (``maximum(a, b)`` with ``a == b``), the derivative
does not exist; the cotangent is **split evenly**, 1/2 to each, the choice of JAX and the same
as for the ``max``/``min`` reductions (:mod:`rules.arrays.reductions`). The tangent is then the mean of
the two input tangents. ``clip(a, lo, hi)`` is treated as ``minimum(maximum(a, lo), hi)``, so
``a == lo`` splits between ``a`` and ``lo``.

NaN
---
An entry counts as selected when it equals the output or both are NaN: ``maximum(nan, 1)``
sends its cotangent to the NaN, ``fmax(nan, 1)`` (which returns 1) to the 1.

``select(condlist, choicelist, default)`` neither: each output entry comes from the first choice
whose condition holds there, or from ``default``; the choices' cotangent is a
``Tangent(tuple, ...)``, one piece per choice (as for the arrays of ``concatenate``).

``where(condition, x, y)`` has no ties: ``x`` gets the cotangent where ``condition`` holds, ``y``
elsewhere; ``condition`` gets ``NoTangent()``. The one-argument form ``where(condition)``
returns indices and is not differentiable.

Complex inputs: ``maximum`` and ``minimum`` compare complex numbers lexicographically; away from
ties the selection is locally constant, so the same weights apply.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.broadcasting import broadcast_tangent, unbroadcast
from rules.core.cotangents import as_array_cotangent
from rules.core.definition import scalar_rule
from rules.core.nesting import as_array
from rules.core.options import is_constant, refuse, rrule_with_options
from rules.core.registry import frule, rrule, split_cotangent
from tangents import AbstractZero, NoTangent, ProjectTo, Tangent, ZeroTangent, unthunk

__all__ = ["is_selected"]


def _weight_dtype(y: Any) -> np.dtype[Any]:
    """The real dtype matching ``y``'s precision (float64 for integers)."""
    dtype = np.result_type(y)
    return np.finfo(dtype).dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


def is_selected(x: Any, y: Any) -> Any:
    """Where ``x`` is the output ``y`` (equal, or both NaN)."""
    return (x == y) | (np.isnan(x) & np.isnan(y))


def _shares(a: Any, b: Any, y: Any) -> tuple[Any, Any]:
    """Weights of ``a`` and ``b`` in ``y``, a selection of one of them: 1 or 0, 1/2 at a tie."""
    take_a, take_b = is_selected(a, y), is_selected(b, y)
    tie = take_a & take_b
    dtype = _weight_dtype(y)
    return (
        np.where(tie, 0.5, take_a).astype(dtype, copy=False),
        np.where(tie, 0.5, take_b).astype(dtype, copy=False),
    )


scalar_rule(np.maximum, _shares)
scalar_rule(np.minimum, _shares)
scalar_rule(np.fmax, _shares)
scalar_rule(np.fmin, _shares)


# --- clip ---------------------------------------------------------------------------------------


def _clip_bounds(bounds: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """The bounds in effect: positional, or the keywords ``a_min=``/``a_max=`` or ``min=``/``max=``."""
    lo = bounds[0] if len(bounds) >= 1 else kwargs.get("a_min", kwargs.get("min"))
    hi = bounds[1] if len(bounds) >= 2 else kwargs.get("a_max", kwargs.get("max"))
    return lo, hi


def _refuse_clip_options(bounds: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    out = bounds[2] if len(bounds) > 2 else kwargs.get("out")
    refuse("clip", out=out, where=kwargs.get("where", True) is not True)


def _clip_weights(a: Any, lo: Any, hi: Any) -> tuple[Any, Any, Any]:
    """Weights of ``a``, ``lo`` and ``hi`` in ``minimum(maximum(a, lo), hi)``."""
    one = np.ones((), _weight_dtype(a))
    m, w_a, w_lo = a, one, None
    if lo is not None:
        m = np.maximum(a, lo)
        w_a, w_lo = _shares(a, lo, m)
    w_hi = None
    if hi is not None:
        w_m, w_hi = _shares(m, hi, np.minimum(m, hi))
        w_a = w_a * w_m
        w_lo = None if w_lo is None else w_lo * w_m
    return w_a, w_lo, w_hi


@rrule_with_options(np.clip)
def clip_rrule(a: Any, *bounds: Any, **kwargs: Any) -> Any:
    """``y = clip(a, lo, hi) = minimum(maximum(a, lo), hi)``; ties split evenly.

    Bounds given positionally are differentiated (unless ``None`` or Python ints); the keyword
    forms ``min=``/``max=`` are constants, as every keyword argument.
    """
    _refuse_clip_options(bounds, kwargs)
    y = np.clip(a, *bounds, **kwargs)
    lo, hi = _clip_bounds(bounds, kwargs)
    inputs = (a, lo, hi)
    projectors = tuple(None if is_constant(x) else ProjectTo(x) for x in inputs)

    def clip_pullback(y_bar: Any) -> tuple[Any, ...]:
        y_bar = as_array_cotangent(y_bar, "np.clip's pullback")
        weights = _clip_weights(a, lo, hi)
        cotangents: list[Any] = [NoTangent()]
        for x, w, project in zip(inputs, weights, projectors, strict=True):
            if project is None or w is None:
                cotangents.append(NoTangent())
            else:
                cotangents.append(project(unbroadcast(w * y_bar, np.shape(x))))
        return tuple(cotangents[: 2 + len(bounds)])  # keyword bounds get no cotangent

    return y, clip_pullback


@frule.register(np.clip)
def clip_frule(tangents: tuple[Any, ...], a: Any, *bounds: Any, **kwargs: Any) -> Any:
    """``ẏ = w_a ȧ + w_lo lȯ + w_hi hi_dot`` with the selection weights of :func:`clip_rrule`."""
    _refuse_clip_options(bounds, kwargs)
    y = np.clip(a, *bounds, **kwargs)
    lo, hi = _clip_bounds(bounds, kwargs)
    # Tangents of the positional bounds; keyword bounds are constants.
    dots = (tangents[1], *tangents[2 : 2 + min(len(bounds), 2)])
    dots = dots + (ZeroTangent(),) * (3 - len(dots))
    y_dot: Any = ZeroTangent()
    for x, w, x_dot in zip((a, lo, hi), _clip_weights(a, lo, hi), dots, strict=True):
        x_dot = unthunk(x_dot)
        if is_constant(x) or w is None or isinstance(x_dot, AbstractZero):
            continue
        y_dot = y_dot + w * as_array_cotangent(x_dot, "np.clip's frule")
    if isinstance(y_dot, AbstractZero):
        return y, ZeroTangent()
    return y, ProjectTo(y)(broadcast_tangent(y_dot, np.shape(y)))


# --- where --------------------------------------------------------------------------------------


@rrule.register(np.where)
def where_rrule(condition: Any, *xy: Any) -> Any:
    """``out = where(condition, x, y)``: ``x̄ = where(condition, ōut, 0)``, ``ȳ = where(condition, 0, ōut)``.

    Both are summed back over broadcast axes; ``condition`` gets ``NoTangent()``.
    """
    out = np.where(condition, *xy)
    if not xy:

        def where_indices_pullback(out_bar: Any) -> tuple[Any, ...]:
            return NoTangent(), NoTangent()

        return out, where_indices_pullback
    x, y = xy
    project_x = None if is_constant(x) else ProjectTo(x)
    project_y = None if is_constant(y) else ProjectTo(y)

    def where_pullback(out_bar: Any) -> tuple[Any, ...]:
        out_bar = as_array_cotangent(out_bar, "np.where's pullback")
        x_bar = y_bar = NoTangent()
        if project_x is not None:
            x_bar = project_x(unbroadcast(np.where(condition, out_bar, 0), np.shape(x)))
        if project_y is not None:
            y_bar = project_y(unbroadcast(np.where(condition, 0, out_bar), np.shape(y)))
        return NoTangent(), NoTangent(), x_bar, y_bar

    return out, where_pullback


def _as_dense(t: Any, primal: Any) -> Any:
    """A tangent as an array for elementwise use; zeros (and constants) as a scalar 0."""
    t = unthunk(t)
    if isinstance(t, AbstractZero) or is_constant(primal):
        return 0
    return as_array_cotangent(t, "np.where's frule")


@frule.register(np.where)
def where_frule(tangents: tuple[Any, ...], condition: Any, *xy: Any) -> Any:
    """``ȯut = where(condition, ẋ, ẏ)``."""
    out = np.where(condition, *xy)
    if not xy:
        return out, NoTangent()
    x, y = xy
    out_dot = np.where(condition, _as_dense(tangents[2], x), _as_dense(tangents[3], y))
    return out, ProjectTo(out)(broadcast_tangent(out_dot, np.shape(out)))


# --- select -------------------------------------------------------------------------------------


def _first_true(condlist: Any, shape: tuple[int, ...]) -> list[np.ndarray]:
    """For each condition, where it is the first one that holds (broadcast to ``shape``)."""
    taken = np.zeros(shape, dtype=bool)
    masks = []
    for condition in condlist:
        mask = np.broadcast_to(condition, shape) & ~taken
        masks.append(mask)
        taken = taken | mask
    masks.append(~taken)  # the default
    return masks


@rrule_with_options(np.select)
def select_rrule(condlist: Any, choicelist: Any, default: Any = 0) -> Any:
    """``y = select(condlist, choicelist, default)``: each choice gets ``ȳ`` where it was chosen.

    ``choicelist`` gets a ``Tangent(tuple, ...)`` (one piece per choice), ``default`` the rest.
    """
    y = np.select(condlist, choicelist, default)
    choices = tuple(choicelist)
    masks = _first_true(condlist, np.shape(y))
    project_choices = ProjectTo(choices)
    project_default = None if is_constant(default) else ProjectTo(default)

    def select_pullback(y_bar: Any) -> tuple[Any, ...]:
        g = as_array_cotangent(y_bar, "np.select's pullback")
        pieces = [
            unbroadcast(np.where(mask, g, 0), np.shape(x))
            for mask, x in zip(masks, choices, strict=False)
        ]
        default_bar: Any = NoTangent()
        if project_default is not None:
            default_bar = project_default(unbroadcast(np.where(masks[-1], g, 0), np.shape(default)))
        return NoTangent(), NoTangent(), project_choices(Tangent(tuple, *pieces)), default_bar

    return y, select_pullback


@frule.register(np.select)
def select_frule(
    tangents: tuple[Any, ...], condlist: Any, choicelist: Any, default: Any = 0
) -> Any:
    """``ẏ = select(condlist, ẋs, ḋefault)``."""
    y = np.select(condlist, choicelist, default)
    choices = tuple(choicelist)
    parts = split_cotangent(tangents[2], len(choices))
    dots = [_select_dense(t, x) for t, x in zip(parts, choices, strict=True)]
    default_dot = _select_dense(tangents[3], default) if len(tangents) > 3 else 0
    y_dot = np.select(condlist, dots, default_dot)
    return y, ProjectTo(y)(as_array(y_dot, dtype=np.result_type(y_dot, y)))


def _select_dense(t: Any, primal: Any) -> Any:
    t = unthunk(t)
    if isinstance(t, AbstractZero) or is_constant(primal):
        return np.zeros(np.shape(primal))
    return as_array_cotangent(t, "np.select's frule")
