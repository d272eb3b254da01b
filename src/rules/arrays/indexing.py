r"""Rules of indexing: ``x[idx]`` (``operator.getitem``), ``take``, ``take_along_axis``, ``sort``, ``partition``, ``bincount``.

Each output entry is an entry of ``x``, so the pushforward indexes the tangent the same way and
the pullback scatters the cotangent back: :math:`\bar x = \sum_k \bar y_k\, e_{i_k}`. Where an
index selects the same entry more than once (integer arrays with repeated indices), the copies'
cotangents **accumulate** (``np.add.at``); basic indices (ints, slices, ``None``, ``...``) and
boolean masks cannot repeat and use a plain ``+=``.

The cotangent of ``getitem``, ``take`` and ``take_along_axis`` is an ``InplaceableThunk``:
``tangents.add_inplace`` scatters it straight into an existing accumulator without forming the
dense ``x``-shaped array, and any other use evaluates the dense array (once). The cotangent is
projected onto ``y`` first (``ProjectTo(y)`` has ``x``'s tangent dtype), which is what makes the
scatter land in ``x``'s tangent space. Index arguments get ``NoTangent()``.

``operator.getitem`` has this rule when ``x`` is an ndarray; for other containers (tuples,
lists, dicts) there is no rule and ``rrule`` returns ``None``.

``sort`` gathers with the permutation of a stable ``argsort``. Where entries tie, ``sort`` is
continuous but not differentiable; the rule sends each tied output's cotangent to the tied
inputs in their original order (any assignment between equal entries is a valid subgradient).

References
----------
ChainRules.jl ``src/rulesets/Base/indexing.jl`` (``getindex`` with ``∇getindex!`` as an
``InplaceableThunk``) and ``sort.jl``; reference notes ``chainrules-linalg-and-testutils.md``
section 2.6.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from rules.core.cotangents import as_array_cotangent
from rules.core.linear_frules import register_linear_frule
from rules.core.nesting import as_array, call, is_traced
from rules.core.options import refuse, rrule_with_options
from rules.core.registry import frule, rrule
from tangents import (
    AbstractZero,
    InplaceableThunk,
    NoTangent,
    ProjectTo,
    Thunk,
    ZeroTangent,
    tangent_dtype,
    unthunk,
)

__all__: list[str] = []


def _may_repeat(index: Any) -> bool:
    """Whether ``index`` can select an entry twice: it holds an integer array or a sequence."""
    parts = index if isinstance(index, tuple) else (index,)
    return any(
        isinstance(p, list | tuple) or (isinstance(p, np.ndarray) and p.dtype != np.bool_)
        for p in parts
    )


def scatter_cotangent(x: Any, index: Any, g: Any, accumulate: bool) -> Any:
    """The cotangent ``zeros_like(x)`` with ``g`` added at ``index``, as an ``InplaceableThunk``.

    ``accumulate`` uses ``np.add.at``, which adds repeated indices once per occurrence; without
    it, ``acc[index] += g`` (right only for indices that cannot repeat). An ``x`` without a
    tangent space (a bool array: ``g`` is then ``NoTangent()``) gets ``NoTangent()``.
    """
    shape = np.shape(x)
    dtype = tangent_dtype(np.result_type(x))
    if dtype is None or isinstance(g, AbstractZero):
        return NoTangent() if dtype is None else g
    if is_traced(g):  # a nested differentiation: the scatter is itself a traced call
        return call(scatter_into_zeros, g, shape, dtype, index, accumulate)

    def scatter_add(acc: np.ndarray) -> np.ndarray:
        if accumulate:
            np.add.at(acc, index, g)
        else:
            acc[index] += g
        return acc

    def scattered() -> np.ndarray:
        return scatter_add(np.zeros(shape, dtype=dtype))

    return InplaceableThunk(scatter_add, Thunk(scattered))


def scatter_into_zeros(
    g: Any, shape: tuple[int, ...], dtype: Any, index: Any, accumulate: bool
) -> np.ndarray:
    """``zeros(shape, dtype)`` with ``g`` added at ``index``: the pullback of ``x[index]``.

    A function of its own, with rules, so that a nested differentiation records the scatter as
    one call (its adjoint is the gather ``y_bar[index]``).
    """
    acc = np.zeros(shape, dtype=dtype)
    if accumulate:
        np.add.at(acc, index, g)
    else:
        acc[index] += g
    return acc


@rrule.register(scatter_into_zeros)
def scatter_into_zeros_rrule(
    g: Any, shape: tuple[int, ...], dtype: Any, index: Any, accumulate: bool
) -> Any:
    r"""The scatter is linear in ``g``: :math:`\bar g = \bar y[\text{index}]`."""
    y = scatter_into_zeros(g, shape, dtype, index, accumulate)
    project_g = ProjectTo(g)

    def scatter_into_zeros_pullback(y_bar: Any) -> tuple[Any, ...]:
        y_bar = as_array_cotangent(y_bar, "the scatter's pullback")
        return (
            NoTangent(),
            project_g(y_bar[index]),
            NoTangent(),
            NoTangent(),
            NoTangent(),
            NoTangent(),
        )

    return y, scatter_into_zeros_pullback


@frule.register(scatter_into_zeros)
def scatter_into_zeros_frule(
    tangents: tuple[Any, ...], g: Any, shape: Any, dtype: Any, index: Any, accumulate: bool
) -> Any:
    """``ẏ`` is the scatter of ``ġ``."""
    y = scatter_into_zeros(g, shape, dtype, index, accumulate)
    g_dot = tangents[1]
    if isinstance(g_dot, AbstractZero):
        return y, g_dot
    g_dot = as_array_cotangent(unthunk(g_dot), "the scatter's frule")
    if is_traced(g_dot):
        return y, call(scatter_into_zeros, g_dot, shape, dtype, index, accumulate)
    return y, scatter_into_zeros(g_dot, shape, dtype, index, accumulate)


# --- x[idx] -------------------------------------------------------------------------------------


@rrule.register(operator.getitem)
def getitem_rrule(x: Any, index: Any) -> Any:
    r"""``y = x[index]``: :math:`\bar x = 0` except ``x̄[index] += ȳ`` (accumulating repeats)."""
    if not (isinstance(x, np.ndarray | np.generic) or is_traced(x)):
        return None
    y = x[index]
    project_y = ProjectTo(y)
    accumulate = _may_repeat(index)

    def getitem_pullback(y_bar: Any) -> tuple[Any, Any, Any]:
        g = project_y(as_array_cotangent(y_bar, "getitem's pullback"))
        return NoTangent(), scatter_cotangent(x, index, g, accumulate), NoTangent()

    return y, getitem_pullback


@frule.register(operator.getitem)
def getitem_frule(tangents: tuple[Any, ...], x: Any, index: Any) -> Any:
    """``ẏ = ẋ[index]``."""
    if not (isinstance(x, np.ndarray | np.generic) or is_traced(x)):
        return None
    y = x[index]
    x_dot = as_array(as_array_cotangent(tangents[1], "getitem's frule"))
    return y, ProjectTo(y)(x_dot[index])


# --- take and take_along_axis -------------------------------------------------------------------


def _in_range(indices: Any, n: int, mode: str) -> Any:
    """Indices into an axis of length ``n`` as ``take`` reads them in ``mode``, all in ``[0, n)``."""
    indices = as_array(indices)
    if mode == "wrap":
        return np.mod(indices, n)
    if mode == "clip":
        return np.clip(indices, 0, n - 1)
    return np.where(indices < 0, indices + n, indices)


@rrule_with_options(np.take)
def take_rrule(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
    """``y = take(a, indices, axis)``: ``ā`` accumulates ``ȳ`` at the taken entries."""
    refuse("take", out=out)
    y = np.take(a, indices, axis=axis, mode=mode)
    shape = np.shape(a)
    if axis is None:  # indices into the flattened array
        index: Any = np.unravel_index(_in_range(indices, int(np.prod(shape)), mode), shape)
    else:
        along = axis % len(shape)
        index = (slice(None),) * along + (_in_range(indices, shape[along], mode),)
    project_y = ProjectTo(y)

    def take_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = project_y(as_array_cotangent(y_bar, "np.take's pullback"))
        return NoTangent(), scatter_cotangent(a, index, g, accumulate=True)

    return y, take_pullback


@frule.register(np.take)
def take_frule(
    tangents: tuple[Any, ...],
    a: Any,
    indices: Any,
    axis: Any = None,
    out: Any = None,
    mode: str = "raise",
) -> Any:
    """``ẏ = take(ȧ, indices, axis)``."""
    refuse("take", out=out)
    y = np.take(a, indices, axis=axis, mode=mode)
    a_dot = as_array_cotangent(tangents[1], "np.take's frule")
    return y, ProjectTo(y)(np.take(a_dot, indices, axis=axis, mode=mode))


def _along_axis_index(a: Any, indices: np.ndarray, axis: int, shape: tuple[int, ...]) -> tuple:
    """The fancy index ``a[result]`` equal to ``take_along_axis(a, indices, axis)`` (of ``shape``)."""
    ndim = np.ndim(a)
    index: list[Any] = []
    for d in range(ndim):
        if d == axis:
            index.append(indices)
            continue
        n = shape[d]
        positions = np.arange(n) if np.shape(a)[d] == n else np.zeros(n, dtype=np.intp)
        index.append(positions.reshape((1,) * d + (n,) + (1,) * (ndim - d - 1)))
    return tuple(index)


@rrule_with_options(np.take_along_axis)
def take_along_axis_rrule(arr: Any, indices: Any, axis: Any = -1) -> Any:
    """``y = take_along_axis(arr, indices, axis)``: ``ārr`` accumulates ``ȳ`` where it was read."""
    y = np.take_along_axis(arr, indices, axis=axis)
    shape = np.shape(arr)
    indices = as_array(indices)
    if axis is None:  # indices into the flattened array
        index: Any = np.unravel_index(_in_range(indices, int(np.prod(shape)), "raise"), shape)
    else:
        index = _along_axis_index(arr, indices, axis % len(shape), np.shape(y))
    project_y = ProjectTo(y)

    def take_along_axis_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = project_y(as_array_cotangent(y_bar, "np.take_along_axis's pullback"))
        return NoTangent(), scatter_cotangent(arr, index, g, accumulate=True)

    return y, take_along_axis_pullback


register_linear_frule(np.take_along_axis, "take_along_axis")


# --- sort ---------------------------------------------------------------------------------------


def _unpermute(g: Any, perm: np.ndarray, axis: Any, y: Any) -> Any:
    """``g`` put back through the permutation ``perm`` along ``axis`` (the inverse gather).

    In place into zeros for arrays; for a traced ``g`` (a nested differentiation) the gather
    by the inverse permutation, ``take_along_axis``, which has rules.
    """
    along = -1 if axis is None else axis
    if is_traced(g):
        return np.take_along_axis(g, np.argsort(perm, axis=along), axis=along)
    a_bar = np.zeros(np.shape(y), dtype=np.result_type(g))
    np.put_along_axis(a_bar, perm, g, axis=along)
    return a_bar


def _sort_permutation(a: Any, axis: Any, order: Any) -> np.ndarray:
    refuse("sort", order=order)
    return np.argsort(a, axis=axis, kind="stable")


@rrule_with_options(np.sort)
def sort_rrule(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, **kwargs: Any) -> Any:
    """``y = sort(a, axis)``: ``ā`` is ``ȳ`` put back through the sorting permutation."""
    perm = _sort_permutation(a, axis, order)
    y = np.sort(a, axis=axis, kind=kind, **kwargs)
    shape = np.shape(a)
    project_a = ProjectTo(a)

    def sort_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = as_array_cotangent(y_bar, "np.sort's pullback")
        return NoTangent(), project_a(_unpermute(g, perm, axis, y).reshape(shape))

    return y, sort_pullback


@frule.register(np.sort)
def sort_frule(
    tangents: tuple[Any, ...],
    a: Any,
    axis: Any = -1,
    kind: Any = None,
    order: Any = None,
    **kwargs: Any,
) -> Any:
    """``ẏ = take_along_axis(ȧ, argsort(a), axis)``."""
    perm = _sort_permutation(a, axis, order)
    y = np.sort(a, axis=axis, kind=kind, **kwargs)
    a_dot = as_array(as_array_cotangent(tangents[1], "np.sort's frule"))
    if axis is None:
        return y, ProjectTo(y)(a_dot.reshape(-1)[perm])
    return y, ProjectTo(y)(np.take_along_axis(a_dot, perm, axis=axis))


# --- partition ----------------------------------------------------------------------------------


@rrule_with_options(np.partition)
def partition_rrule(
    a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None
) -> Any:
    """``y = partition(a, kth, axis)``: ``ā`` is ``ȳ`` put back through ``argpartition``'s permutation.

    numpy's ``partition`` and ``argpartition`` run the same selection, so
    ``take_along_axis(a, argpartition(a, kth), axis)`` is ``partition(a, kth)``.
    """
    refuse("partition", order=order)
    y = np.partition(a, kth, axis=axis, kind=kind)
    perm = np.argpartition(a, kth, axis=axis, kind=kind)
    shape = np.shape(a)
    project_a = ProjectTo(a)

    def partition_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = as_array_cotangent(y_bar, "np.partition's pullback")
        return NoTangent(), project_a(_unpermute(g, perm, axis, y).reshape(shape))

    return y, partition_pullback


@frule.register(np.partition)
def partition_frule(
    tangents: tuple[Any, ...],
    a: Any,
    kth: Any,
    axis: Any = -1,
    kind: str = "introselect",
    order: Any = None,
) -> Any:
    """``ẏ = take_along_axis(ȧ, argpartition(a, kth), axis)``."""
    refuse("partition", order=order)
    y = np.partition(a, kth, axis=axis, kind=kind)
    perm = np.argpartition(a, kth, axis=axis, kind=kind)
    a_dot = as_array(as_array_cotangent(tangents[1], "np.partition's frule"))
    if axis is None:
        return y, ProjectTo(y)(a_dot.reshape(-1)[perm])
    return y, ProjectTo(y)(np.take_along_axis(a_dot, perm, axis=axis))


# --- bincount -----------------------------------------------------------------------------------


@rrule_with_options(np.bincount)
def bincount_rrule(x: Any, weights: Any = None, minlength: int = 0) -> Any:
    """``y = bincount(x, weights)``: ``w̄ = Re(ȳ)[x]`` (``y`` is a scatter-add of ``w``).

    The counts ``x`` are integers (``NoTangent()``); without weights nothing is differentiable.
    """
    y = np.bincount(x, weights, minlength)
    project_w = None if weights is None else ProjectTo(weights)

    def bincount_pullback(y_bar: Any) -> tuple[Any, ...]:
        g = as_array_cotangent(y_bar, "np.bincount's pullback")
        if project_w is None:
            return NoTangent(), NoTangent()
        return NoTangent(), NoTangent(), project_w(as_array(g)[as_array(x)])

    return y, bincount_pullback


@frule.register(np.bincount)
def bincount_frule(
    tangents: tuple[Any, ...], x: Any, weights: Any = None, minlength: int = 0
) -> Any:
    """``ẏ = bincount(x, ẇ)``."""
    y = np.bincount(x, weights, minlength)
    if weights is None or len(tangents) < 3:
        return y, ZeroTangent()
    w_dot = as_array_cotangent(unthunk(tangents[2]), "np.bincount's frule")
    return y, ProjectTo(y)(np.bincount(x, w_dot, minlength))
