r"""Rules of reductions: ``sum``, ``mean``, ``prod``, ``max``/``amax``, ``min``/``amin``, ``var``, ``std``, ``average``.

Every reduction takes ``axis`` (``None``, an int or a tuple) and ``keepdims``. The pullbacks put
the reduced axes of the cotangent back as size 1 (:func:`expand_reduced`) and broadcast it over
the input; ``out=`` and ``where=`` are refused (:func:`rules.core.options.refuse`). Cumulative
reductions are in :mod:`rules.arrays.cumulative`.

Formulas (``ȳ`` expanded to the input's shape, ``n`` the number of reduced entries):

* ``sum``: :math:`\bar a = \bar y`; ``mean``: :math:`\bar a = \bar y / n`.
* ``prod``: :math:`\bar a_i = \overline{\prod_{j \ne i} a_j}\,\bar y`, the *exclusive* product,
  computed from cumulative products from both ends: exact when some entries are 0, no division.
* ``max``/``min``: :math:`\bar a_i = \bar y\,[a_i = y] / \#\{j : a_j = y\}`. **Ties** (several
  entries equal to the maximum) share the cotangent evenly; the tangent is the mean of their
  tangents. NaN entries count as equal to a NaN result. With ``initial=`` larger than every
  entry, nothing is selected and the cotangent is 0.
* ``var``: :math:`\bar a = 2 (a - \mu)\operatorname{Re}(\bar y) / (n - \text{ddof})` (the mean's
  own dependence on ``a`` drops out: :math:`\sum (a - \mu) = 0`); complex ``a`` too, since
  ``var`` is real.
* ``std``: :math:`\bar a = (a - \mu)\operatorname{Re}(\bar y) / ((n - \text{ddof})\,\sigma)`;
  **0 where** :math:`\sigma = 0` (all entries equal: ``std`` has a cone there, like ``abs`` at 0).
* ``average`` with weights :math:`w` and :math:`W = \sum w`: :math:`y = \sum w a / W`,
  :math:`\bar a = \overline{w / W}\,\bar y`, :math:`\bar w = \overline{(a - y)/W}\,\bar y`
  (the weights are differentiated when passed positionally).

References
----------
ChainRules.jl ``src/rulesets/Base/mapreduce.jl`` (``sum``, zero-safe ``prod`` via ``∇prod``),
``src/rulesets/Base/array.jl`` (``maximum``/``findmax``) and ``src/rulesets/Statistics``
(``mean``, ``var``, ``std``); reference notes ``chainrules-linalg-and-testutils.md`` section 2.4-2.8.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rules.arrays.selection import is_selected
from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array, is_traced
from rules.core.options import normalize_axes, refuse, rrule_with_options
from rules.core.registry import frule
from tangents import AbstractZero, NoTangent, ProjectTo, Thunk, ZeroTangent, unthunk

__all__ = ["expand_reduced", "reduced_size"]


def expand_reduced(g: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    """The cotangent ``g`` of a reduction over ``axes``, with those axes back as size 1."""
    return as_array(g) if keepdims else np.expand_dims(g, axes)


def reduced_size(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    """The number of entries that each output entry of a reduction over ``axes`` combines."""
    return math.prod(shape[i] for i in axes)


def _spread(g: Any, shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> Any:
    """The cotangent ``g`` of a reduction, broadcast (as a new array) over the input's ``shape``."""
    spread = np.broadcast_to(expand_reduced(g, axes, keepdims), shape)
    return spread if is_traced(spread) else np.array(spread)  # traced values are never written


def _tangent(t: Any, rule: str) -> Any:
    return as_array_cotangent(t, f"{rule}'s frule")


# --- sum and mean -------------------------------------------------------------------------------


@rrule_with_options(np.sum)
def sum_rrule(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    **kwargs: Any,
) -> Any:
    r"""``y = sum(a, axis)``: :math:`\bar a = \bar y` broadcast over the reduced axes."""
    refuse("sum", out=out, where=kwargs.get("where", True) is not True)
    y = np.sum(a, axis=axis, dtype=dtype, keepdims=keepdims, **kwargs)
    shape = np.shape(a)
    axes = normalize_axes(axis, len(shape))
    project_a = ProjectTo(a)

    def sum_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = as_array_cotangent(y_bar, "np.sum's pullback")
        return NoTangent(), project_a(_spread(g, shape, axes, keepdims))

    return y, sum_pullback


@frule.register(np.sum)
def sum_frule(
    tangents: tuple[Any, ...],
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    **kwargs: Any,
) -> Any:
    """``ẏ = sum(ȧ, axis)``."""
    refuse("sum", out=out, where=kwargs.get("where", True) is not True)
    y = np.sum(a, axis=axis, dtype=dtype, keepdims=keepdims, **kwargs)
    y_dot = np.sum(_tangent(tangents[1], "np.sum"), axis=axis, keepdims=keepdims)
    return y, ProjectTo(y)(y_dot)


@rrule_with_options(np.mean)
def mean_rrule(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    **kwargs: Any,
) -> Any:
    r"""``y = mean(a, axis)``: :math:`\bar a = \bar y / n` broadcast over the reduced axes."""
    refuse("mean", out=out, where=kwargs.get("where", True) is not True)
    y = np.mean(a, axis=axis, dtype=dtype, keepdims=keepdims, **kwargs)
    shape = np.shape(a)
    axes = normalize_axes(axis, len(shape))
    n = reduced_size(shape, axes)
    project_a = ProjectTo(a)

    def mean_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = as_array_cotangent(y_bar, "np.mean's pullback")
        return NoTangent(), project_a(_spread(g / n, shape, axes, keepdims))

    return y, mean_pullback


@frule.register(np.mean)
def mean_frule(
    tangents: tuple[Any, ...],
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    **kwargs: Any,
) -> Any:
    """``ẏ = mean(ȧ, axis)``."""
    refuse("mean", out=out, where=kwargs.get("where", True) is not True)
    y = np.mean(a, axis=axis, dtype=dtype, keepdims=keepdims, **kwargs)
    y_dot = np.mean(_tangent(tangents[1], "np.mean"), axis=axis, keepdims=keepdims)
    return y, ProjectTo(y)(y_dot)


# --- prod ---------------------------------------------------------------------------------------


def exclusive_products(a: Any, axes: tuple[int, ...]) -> np.ndarray:
    r""":math:`\prod_{j \ne i} a_j` over the entries ``j`` reduced together with ``i``.

    The product of everything before ``i`` times everything after it (both cumulative products),
    so an entry that is 0 gives no division by zero: with one zero, only that entry's exclusive
    product is non-zero; with two or more, all are 0.
    """
    a = as_array(a)
    if a.size == 0 or not axes:
        return np.ones_like(a)
    last = tuple(range(-len(axes), 0))
    moved = np.moveaxis(a, axes, last)
    flat = moved.reshape((*moved.shape[: -len(axes)], -1))
    ones = np.ones((*flat.shape[:-1], 1), dtype=flat.dtype)
    before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return np.moveaxis((before * after).reshape(moved.shape), last, axes)


@rrule_with_options(np.prod)
def prod_rrule(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    **kwargs: Any,
) -> Any:
    r"""``y = initial * prod(a, axis)``: :math:`\bar a_i = \overline{\text{initial} \prod_{j \ne i} a_j}\,\bar y`.

    Zero-safe: the exclusive product is formed without dividing by ``a`` (see the module).
    """
    refuse("prod", out=out, where=kwargs.get("where", True) is not True)
    y = np.prod(a, axis=axis, dtype=dtype, keepdims=keepdims, **kwargs)
    shape = np.shape(a)
    axes = normalize_axes(axis, len(shape))
    initial = kwargs.get("initial", 1)
    project_a = ProjectTo(a)

    def prod_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = expand_reduced(as_array_cotangent(y_bar, "np.prod's pullback"), axes, keepdims)
        others = initial * exclusive_products(a, axes)
        return NoTangent(), project_a(np.conj(others) * g)

    return y, prod_pullback


@frule.register(np.prod)
def prod_frule(
    tangents: tuple[Any, ...],
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    **kwargs: Any,
) -> Any:
    """``ẏ = initial * sum_i (prod_{j != i} a_j) ȧ_i``."""
    refuse("prod", out=out, where=kwargs.get("where", True) is not True)
    y = np.prod(a, axis=axis, dtype=dtype, keepdims=keepdims, **kwargs)
    axes = normalize_axes(axis, np.ndim(a))
    others = kwargs.get("initial", 1) * exclusive_products(a, axes)
    y_dot = np.sum(others * _tangent(tangents[1], "np.prod"), axis=axes, keepdims=keepdims)
    return y, ProjectTo(y)(y_dot)


# --- max and min --------------------------------------------------------------------------------


def _extremum_weights(a: Any, y: Any, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    """``[a_i = y] / #{j : a_j = y}``: 1 at the extremum, shared evenly between ties."""
    chosen = is_selected(a, expand_reduced(y, axes, keepdims))
    count = np.sum(chosen, axis=axes, keepdims=True)
    dtype = np.result_type(a, np.float16)
    real = np.finfo(dtype).dtype
    return (chosen / np.maximum(count, 1)).astype(real, copy=False)


def _register_extremum(name: str, functions: tuple[Any, ...]) -> None:
    primal = functions[0]

    def extremum_rrule(
        a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kwargs: Any
    ) -> Any:
        refuse(name, out=out, where=kwargs.get("where", True) is not True)
        y = primal(a, axis=axis, keepdims=keepdims, **kwargs)
        shape = np.shape(a)
        axes = normalize_axes(axis, len(shape))
        project_a = ProjectTo(a)

        def extremum_pullback(y_bar: Any) -> tuple[Any, Any]:
            g = as_array_cotangent(y_bar, f"np.{name}'s pullback")
            weights = _extremum_weights(a, y, axes, keepdims)
            return NoTangent(), project_a(weights * expand_reduced(g, axes, keepdims))

        extremum_pullback.__qualname__ = f"{name}_pullback"
        return y, extremum_pullback

    def extremum_frule(
        tangents: tuple[Any, ...],
        a: Any,
        axis: Any = None,
        out: Any = None,
        keepdims: bool = False,
        **kwargs: Any,
    ) -> Any:
        refuse(name, out=out, where=kwargs.get("where", True) is not True)
        y = primal(a, axis=axis, keepdims=keepdims, **kwargs)
        axes = normalize_axes(axis, np.ndim(a))
        weights = _extremum_weights(a, y, axes, keepdims)
        a_dot = _tangent(tangents[1], f"np.{name}")
        return y, ProjectTo(y)(np.sum(weights * a_dot, axis=axes, keepdims=keepdims))

    extremum_rrule.__qualname__ = f"{name}_rrule"
    extremum_rrule.__doc__ = (
        f"``y = {name}(a, axis)``: the cotangent goes to the entries equal to ``y``, shared "
        "evenly between ties (see the module docstring)."
    )
    extremum_frule.__qualname__ = f"{name}_frule"
    rrule_with_options(*functions)(extremum_rrule)
    for f in functions:
        frule.register(f)(extremum_frule)


_register_extremum("max", (np.max, np.amax))
_register_extremum("min", (np.min, np.amin))


# --- var and std --------------------------------------------------------------------------------


def _deviation(
    a: Any, axes: tuple[int, ...], ddof: Any, kwargs: dict[str, Any]
) -> tuple[np.ndarray, Any]:
    """``a - mean`` and the divisor ``n - ddof`` of ``var``/``std``."""
    a = as_array(a)
    mean = kwargs.get("mean")
    if mean is None:
        mean = np.mean(a, axis=axes, keepdims=True)
    ddof = kwargs.get("correction", ddof)
    return a - mean, reduced_size(a.shape, axes) - ddof


def _register_spread(name: str, primal: Any) -> None:
    """``var`` and ``std``, which share their derivation: ``d(var) = 2 Re(conj(a - mu) da) / N``."""
    is_std = name == "std"

    def spread_rrule(
        a: Any,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        ddof: Any = 0,
        keepdims: bool = False,
        **kwargs: Any,
    ) -> Any:
        refuse(name, out=out, where=kwargs.get("where", True) is not True)
        y = primal(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, **kwargs)
        axes = normalize_axes(axis, np.ndim(a))
        project_a = ProjectTo(a)

        def spread_pullback(y_bar: Any) -> tuple[Any, Any]:
            g = np.real(as_array_cotangent(y_bar, f"np.{name}'s pullback"))
            d, divisor = _deviation(a, axes, ddof, kwargs)
            scale = expand_reduced(g / divisor, axes, keepdims)
            if is_std:
                sigma = expand_reduced(y, axes, keepdims)
                scale = np.where(sigma == 0, 0, scale / np.where(sigma == 0, 1, sigma))
            else:
                scale = 2 * scale
            return NoTangent(), project_a(d * scale)

        spread_pullback.__qualname__ = f"{name}_pullback"
        return y, spread_pullback

    def spread_frule(
        tangents: tuple[Any, ...],
        a: Any,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        ddof: Any = 0,
        keepdims: bool = False,
        **kwargs: Any,
    ) -> Any:
        refuse(name, out=out, where=kwargs.get("where", True) is not True)
        y = primal(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, **kwargs)
        axes = normalize_axes(axis, np.ndim(a))
        d, divisor = _deviation(a, axes, ddof, kwargs)
        a_dot = _tangent(tangents[1], f"np.{name}")
        inner = np.real(np.sum(np.conj(d) * a_dot, axis=axes, keepdims=keepdims)) / divisor
        if is_std:
            y_dot = np.where(y == 0, 0, inner / np.where(y == 0, 1, y))
        else:
            y_dot = 2 * inner
        return y, ProjectTo(y)(y_dot)

    spread_rrule.__qualname__ = f"{name}_rrule"
    spread_rrule.__doc__ = (
        f"``y = {name}(a, axis, ddof)``; see the module docstring for the formula "
        "(``std`` gives 0 where it is 0)."
    )
    spread_frule.__qualname__ = f"{name}_frule"
    rrule_with_options(primal)(spread_rrule)
    frule.register(primal)(spread_frule)


_register_spread("var", np.var)
_register_spread("std", np.std)


# --- average ------------------------------------------------------------------------------------


def _weights_like(weights: Any, shape: tuple[int, ...], axes: tuple[int, ...]) -> np.ndarray:
    """The weights reshaped to broadcast against ``a`` (numpy lets them cover ``axes`` only)."""
    w = as_array(weights)
    if w.shape == shape:
        return w
    broadcast_shape = [1] * len(shape)
    for size, axis in zip(w.shape, axes, strict=True):
        broadcast_shape[axis] = size
    return w.reshape(broadcast_shape)


@rrule_with_options(np.average)
def average_rrule(
    a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *, keepdims: bool = False
) -> Any:
    r"""``y = sum(w a) / sum(w)``: :math:`\bar a = \overline{w/W}\,\bar y`, :math:`\bar w = \overline{(a - y)/W}\,\bar y`.

    Without weights, the rule of ``mean``. The weights are differentiated when passed
    positionally (then the pullback's third cotangent, after ``axis``'s ``NoTangent()``).
    ``returned=True`` is refused.
    """
    refuse("average", returned=returned)
    y = np.average(a, axis=axis, weights=weights, keepdims=keepdims)
    shape = np.shape(a)
    axes = normalize_axes(axis, len(shape))
    project_a = ProjectTo(a)
    if weights is None:
        n = reduced_size(shape, axes)

        def average_pullback(y_bar: Any) -> tuple[Any, ...]:
            g = as_array_cotangent(y_bar, "np.average's pullback")
            return NoTangent(), project_a(_spread(g / n, shape, axes, keepdims))

        return y, average_pullback

    w = _weights_like(weights, shape, axes)
    total = np.sum(w, axis=axes, keepdims=True)
    project_w = ProjectTo(weights)

    def weighted_average_pullback(y_bar: Any) -> tuple[Any, ...]:
        g = expand_reduced(as_array_cotangent(y_bar, "np.average's pullback"), axes, keepdims)
        a_bar = np.broadcast_to(np.conj(w / total) * g, shape)
        deviation = as_array(a) - expand_reduced(y, axes, keepdims)

        def weights_cotangent() -> Any:
            w_bar = np.sum(np.conj(deviation / total) * g, axis=_broadcast_axes(w, shape))
            return project_w(w_bar.reshape(np.shape(weights)))

        return NoTangent(), project_a(np.array(a_bar)), NoTangent(), Thunk(weights_cotangent)

    return y, weighted_average_pullback


def _broadcast_axes(w: np.ndarray, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The axes along which ``w`` (reshaped by :func:`_weights_like`) was broadcast to ``shape``."""
    return tuple(i for i, (m, n) in enumerate(zip(w.shape, shape, strict=True)) if m == 1 != n)


@frule.register(np.average)
def average_frule(
    tangents: tuple[Any, ...],
    a: Any,
    axis: Any = None,
    weights: Any = None,
    returned: bool = False,
    *,
    keepdims: bool = False,
) -> Any:
    """``ẏ = sum(w ȧ)/W + sum((a - y) ẇ)/W`` (the second term when ``weights`` is positional)."""
    refuse("average", returned=returned)
    y = np.average(a, axis=axis, weights=weights, keepdims=keepdims)
    a_dot = unthunk(tangents[1])
    y_dot: Any = ZeroTangent()
    if not isinstance(a_dot, AbstractZero):
        a_dot = _tangent(a_dot, "np.average")
        y_dot = np.average(a_dot, axis=axis, weights=weights, keepdims=keepdims)
    w_dot = unthunk(tangents[3]) if len(tangents) > 3 else NoTangent()
    if weights is not None and not isinstance(w_dot, AbstractZero):
        w_dot = _tangent(w_dot, "np.average")
        shape = np.shape(a)
        axes = normalize_axes(axis, len(shape))
        w = _weights_like(weights, shape, axes)
        deviation = as_array(a) - expand_reduced(y, axes, keepdims)
        moved = deviation * _weights_like(w_dot, shape, axes)
        y_dot = y_dot + np.sum(moved, axis=axes, keepdims=keepdims) / np.sum(
            w, axis=axes, keepdims=keepdims
        )
    return y, ProjectTo(y)(y_dot)
