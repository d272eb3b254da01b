"""``np.sum`` and ``np.mean`` over dask arrays: dask's own reductions give the forward.

A reduction is not chunk by chunk (its output mixes blocks), so it is not lifted block-wise as
the matrix rules are: the forward is ``dask.array.sum``/``mean``, with dask's tree reduction, and
the pullback broadcasts the cotangent back onto the input's chunks (divided by the count for the
mean), which is the in-memory rules' formula written with dask arrays. The tangent of the sum
is the sum of the tangent.
"""

from __future__ import annotations

import math
from typing import Any

import dask.array as da
import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from rules.core.registry import function_name
from tangents import AbstractZero, NoTangent, ZeroTangent, tangent_dtype, unthunk

__all__ = ["REDUCTIONS", "reduction_frule", "reduction_rrule"]

REDUCTIONS = {np.sum: da.sum, np.mean: da.mean}

_OPTIONS = ("axis", "dtype", "out", "keepdims")


def _options(f: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The array and numpy's options of ``np.sum``/``np.mean`` (positional ones included)."""
    name = function_name(f)
    if not args:
        raise TypeError(f"{name} needs an array argument")
    options = dict(zip(_OPTIONS, args[1:], strict=False))
    for key, value in kwargs.items():
        if key in options or key not in _OPTIONS:
            raise TypeError(f"{name} over dask arrays: unexpected or repeated option {key!r}")
        options[key] = value
    if options.pop("out", None) is not None:
        raise TypeError(f"{name} over dask arrays: out= is not supported (dask arrays are lazy)")
    return args[0], options


def _reduced_count(x: da.Array, axis: Any) -> tuple[tuple[int, ...], int]:
    axes = tuple(range(x.ndim)) if axis is None else normalize_axis_tuple(axis, x.ndim)
    return axes, math.prod(x.shape[a] for a in axes)


def _spread(y_bar: Any, x: da.Array, axes: tuple[int, ...], keepdims: bool) -> da.Array:
    """``y_bar`` broadcast back over the reduced axes of ``x``, with ``x``'s chunks."""
    y_bar = da.asarray(y_bar)
    if not keepdims:
        y_bar = da.expand_dims(y_bar, axes) if axes else y_bar
    return da.broadcast_to(y_bar, x.shape).rechunk(x.chunks)


def reduction_rrule(f: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``rrule(np.sum or np.mean, x, ...)`` for a dask array ``x``."""
    x, options = _options(f, args, kwargs)
    y = REDUCTIONS[f](x, **options)
    axes, count = _reduced_count(x, options.get("axis"))
    keepdims = bool(options.get("keepdims", False))
    dtype = tangent_dtype(x.dtype)

    def reduction_pullback(y_bar: Any) -> tuple[Any, ...]:
        y_bar = unthunk(y_bar)
        if dtype is None:
            return (NoTangent(), NoTangent()) + (NoTangent(),) * (len(args) - 1)
        if isinstance(y_bar, AbstractZero):
            x_bar: Any = ZeroTangent()
        else:
            if not np.issubdtype(dtype, np.complexfloating):
                y_bar = da.real(y_bar) if np.iscomplexobj(y_bar) else y_bar
            x_bar = _spread(y_bar, x, axes, keepdims)
            if f is np.mean:
                x_bar = x_bar / count
            x_bar = x_bar.astype(dtype)
        return (NoTangent(), x_bar) + (NoTangent(),) * (len(args) - 1)

    return y, reduction_pullback


def reduction_frule(
    tangents: tuple[Any, ...], f: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """``frule((f_dot, x_dot, ...), np.sum or np.mean, x, ...)`` for a dask array ``x``."""
    x, options = _options(f, args, kwargs)
    y = REDUCTIONS[f](x, **options)
    x_dot = unthunk(tangents[1])
    if isinstance(x_dot, AbstractZero):
        return y, ZeroTangent()
    options.pop("dtype", None)
    return y, REDUCTIONS[f](da.asarray(x_dot), **options)
