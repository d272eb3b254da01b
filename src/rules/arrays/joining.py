r"""Rules of joining and splitting: ``concatenate``, ``stack``, ``hstack``, ``vstack``, ``split``.

Also ``array_split`` and ``hsplit``/``vsplit``/``dsplit`` (``split`` along axis 1, 0 and 2;
``hsplit`` of a 1-D array along axis 0).

Joining is linear, so the pushforward joins the tangents (a zero tangent becomes zeros of its
array's shape) and the pullback cuts the cotangent back into pieces; splitting is the reverse.

Sequences of arrays
-------------------
The ``arrays`` argument is a tuple, a list, or an ndarray whose rows are joined. Its cotangent
is what ``ProjectTo`` gives for the tuple of arrays: a structural ``Tangent(tuple, *pieces)``,
one projected cotangent per array (an ndarray argument gets an ndarray cotangent). **A list
gets the same tuple** ``Tangent``: the tangent algebra has no list tangent, and a list's own
``+`` would concatenate rather than add. Likewise the output of ``split`` (a list of arrays) has
a ``Tangent(tuple, ...)`` as its tangent, and the pullback of ``split`` accepts a list, a tuple
or a ``Tangent`` with any piece a zero.

References
----------
ChainRules.jl ``src/rulesets/Base/array.jl`` (``hcat``, ``vcat``, ``cat``, ``stack``); reference
notes ``chainrules-linalg-and-testutils.md`` section 2.5.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array
from rules.core.options import normalize_axes, refuse, rrule_with_options, zero_tangent_array
from rules.core.registry import frule, split_cotangent
from tangents import AbstractZero, NoTangent, ProjectTo, Tangent, unthunk

__all__: list[str] = []


def _dense(t: Any, primal: Any, operation: str) -> Any:
    """The (co)tangent ``t`` of one array as an ndarray: zeros of the primal's shape for a zero."""
    t = unthunk(t)
    if isinstance(t, AbstractZero):
        return zero_tangent_array(primal)
    return as_array_cotangent(t, operation)


class _Arrays:
    """The sequence argument of a joining function, and how its (co)tangents look."""

    def __init__(self, arrays: Any) -> None:
        self.parts = tuple(arrays)
        self.is_ndarray = isinstance(arrays, np.ndarray)
        self.project = ProjectTo(arrays if self.is_ndarray else self.parts)

    def cotangent(self, pieces: list[Any]) -> Any:
        """The cotangent of the whole sequence from one cotangent per array."""
        if self.is_ndarray:
            return self.project(np.stack(pieces))
        return self.project(Tangent(tuple, *pieces))

    def tangents(self, t: Any, operation: str) -> list[Any]:
        """One dense tangent per array (zeros for a zero component)."""
        t = unthunk(t)
        if self.is_ndarray:
            return list(as_array_cotangent(t, operation))
        components = split_cotangent(t, len(self.parts))
        return [_dense(c, x, operation) for x, c in zip(self.parts, components, strict=True)]


def _cut(g: np.ndarray, sizes: list[int], axis: int, shapes: list[tuple[int, ...]]) -> list[Any]:
    """``g`` cut along ``axis`` into pieces of ``sizes``, each reshaped to its array's shape."""
    pieces = np.split(g, np.cumsum(sizes)[:-1], axis=axis)
    return [piece.reshape(shape) for piece, shape in zip(pieces, shapes, strict=True)]


def _register_join_frule(f: Any, name: str) -> None:
    """``ẏ = f(tangents, ...)``: joining is linear."""
    operation = f"np.{name}'s frule"

    def join_frule(tangents: tuple[Any, ...], arrays: Any, *args: Any, **kwargs: Any) -> Any:
        refuse(name, out=args[1] if len(args) > 1 else kwargs.get("out"))
        y = f(arrays, *args, **kwargs)
        dots = _Arrays(arrays).tangents(tangents[1], operation)
        return y, ProjectTo(y)(f(dots, *args, **kwargs))

    join_frule.__qualname__ = f"{name}_frule"
    join_frule.__doc__ = f"``ẏ = {name}(ẋ_1, ..., ẋ_n)``."
    frule.register(f)(join_frule)


# --- concatenate, hstack, vstack ----------------------------------------------------------------


@rrule_with_options(np.concatenate)
def concatenate_rrule(arrays: Any, axis: Any = 0, out: Any = None, **kwargs: Any) -> Any:
    """``y = concatenate(arrays, axis)``: ``x̄_i`` is the ``i``-th block of ``ȳ`` along ``axis``."""
    refuse("concatenate", out=out)
    y = np.concatenate(arrays, axis, **kwargs)
    sequence = _Arrays(arrays)
    shapes = [np.shape(x) for x in sequence.parts]
    if axis is None:  # the arrays are flattened first
        along, sizes = 0, [int(np.prod(s)) for s in shapes]
    else:
        along = normalize_axes(axis, y.ndim)[0]
        sizes = [s[along] for s in shapes]

    def concatenate_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = as_array_cotangent(y_bar, "np.concatenate's pullback")
        return NoTangent(), sequence.cotangent(_cut(g, sizes, along, shapes))

    return y, concatenate_pullback


@rrule_with_options(np.hstack)
def hstack_rrule(tup: Any, **kwargs: Any) -> Any:
    """``y = hstack(tup)``: blocks of ``ȳ`` along axis 1 (axis 0 for 1-D arrays)."""
    y = np.hstack(tup, **kwargs)
    sequence = _Arrays(tup)
    shapes = [np.shape(x) for x in sequence.parts]
    at_least_1d = [np.shape(np.atleast_1d(x)) for x in sequence.parts]
    along = 0 if len(at_least_1d[0]) == 1 else 1
    sizes = [s[along] for s in at_least_1d]

    def hstack_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = as_array_cotangent(y_bar, "np.hstack's pullback")
        return NoTangent(), sequence.cotangent(_cut(g, sizes, along, shapes))

    return y, hstack_pullback


@rrule_with_options(np.vstack)
def vstack_rrule(tup: Any, **kwargs: Any) -> Any:
    """``y = vstack(tup)``: blocks of ``ȳ`` along axis 0 (1-D arrays are rows)."""
    y = np.vstack(tup, **kwargs)
    sequence = _Arrays(tup)
    shapes = [np.shape(x) for x in sequence.parts]
    sizes = [np.shape(np.atleast_2d(x))[0] for x in sequence.parts]

    def vstack_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = as_array_cotangent(y_bar, "np.vstack's pullback")
        return NoTangent(), sequence.cotangent(_cut(g, sizes, 0, shapes))

    return y, vstack_pullback


# --- stack --------------------------------------------------------------------------------------


@rrule_with_options(np.stack)
def stack_rrule(arrays: Any, axis: int = 0, out: Any = None, **kwargs: Any) -> Any:
    """``y = stack(arrays, axis)``: ``x̄_i = take(ȳ, i, axis)``."""
    refuse("stack", out=out)
    y = np.stack(arrays, axis, **kwargs)
    sequence = _Arrays(arrays)
    along = normalize_axes(axis, y.ndim)[0]

    def stack_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = as_array(as_array_cotangent(y_bar, "np.stack's pullback"))
        pieces = [
            piece.reshape(np.shape(x))
            for piece, x in zip(np.moveaxis(g, along, 0), sequence.parts, strict=True)
        ]
        return NoTangent(), sequence.cotangent(pieces)

    return y, stack_pullback


for _f, _name in (
    (np.concatenate, "concatenate"),
    (np.hstack, "hstack"),
    (np.vstack, "vstack"),
    (np.stack, "stack"),
):
    _register_join_frule(_f, _name)


# --- split --------------------------------------------------------------------------------------


def _register_split(f: Any, name: str) -> None:
    """``split`` and ``array_split``: the pullback concatenates the pieces' cotangents."""

    def split_rrule(ary: Any, indices_or_sections: Any, axis: int = 0) -> Any:
        ys = f(ary, indices_or_sections, axis)
        project_ary = ProjectTo(ary)

        def split_pullback(ys_bar: Any) -> tuple[Any, Any]:
            components = split_cotangent(ys_bar, len(ys))
            operation = f"np.{name}'s pullback"
            pieces = [_dense(c, y, operation) for y, c in zip(ys, components, strict=True)]
            return NoTangent(), project_ary(np.concatenate(pieces, axis=axis))

        split_pullback.__qualname__ = f"{name}_pullback"
        return ys, split_pullback

    def split_frule(
        tangents: tuple[Any, ...], ary: Any, indices_or_sections: Any, axis: int = 0
    ) -> Any:
        ys = f(ary, indices_or_sections, axis)
        ary_dot = as_array_cotangent(tangents[1], f"np.{name}'s frule")
        pieces = f(ary_dot, indices_or_sections, axis)
        return ys, Tangent(tuple, *(ProjectTo(y)(p) for y, p in zip(ys, pieces, strict=True)))

    split_rrule.__qualname__ = f"{name}_rrule"
    split_rrule.__doc__ = (
        f"``ys = {name}(x, indices_or_sections, axis)``: ``x̄`` concatenates the ``ȳ_i`` "
        "(zeros for zero pieces)."
    )
    split_frule.__qualname__ = f"{name}_frule"
    split_frule.__doc__ = f"``ẏs = {name}(ẋ, ...)``, as a ``Tangent(tuple, ...)``."
    rrule_with_options(f)(split_rrule)
    frule.register(f)(split_frule)


_register_split(np.split, "split")
_register_split(np.array_split, "array_split")


def _register_split_along(f: Any, name: str, axis_of: Any) -> None:
    """``hsplit``, ``vsplit``, ``dsplit``: ``split`` along the axis ``axis_of(ndim)``."""

    def split_along_rrule(ary: Any, indices_or_sections: Any) -> Any:
        ys = f(ary, indices_or_sections)
        axis = axis_of(np.ndim(ary))
        project_ary = ProjectTo(ary)

        def split_along_pullback(ys_bar: Any) -> tuple[Any, Any]:
            components = split_cotangent(ys_bar, len(ys))
            operation = f"np.{name}'s pullback"
            pieces = [_dense(c, y, operation) for y, c in zip(ys, components, strict=True)]
            return NoTangent(), project_ary(np.concatenate(pieces, axis=axis))

        split_along_pullback.__qualname__ = f"{name}_pullback"
        return ys, split_along_pullback

    def split_along_frule(tangents: tuple[Any, ...], ary: Any, indices_or_sections: Any) -> Any:
        ys = f(ary, indices_or_sections)
        ary_dot = as_array_cotangent(tangents[1], f"np.{name}'s frule")
        pieces = f(ary_dot, indices_or_sections)
        return ys, Tangent(tuple, *(ProjectTo(y)(p) for y, p in zip(ys, pieces, strict=True)))

    split_along_rrule.__qualname__ = f"{name}_rrule"
    split_along_rrule.__doc__ = f"``ys = {name}(x, indices_or_sections)``: ``x̄`` joins the ``ȳ_i``."
    split_along_frule.__qualname__ = f"{name}_frule"
    split_along_frule.__doc__ = f"``ẏs = {name}(ẋ, ...)``, as a ``Tangent(tuple, ...)``."
    rrule_with_options(f)(split_along_rrule)
    frule.register(f)(split_along_frule)


_register_split_along(np.hsplit, "hsplit", lambda ndim: 1 if ndim > 1 else 0)
_register_split_along(np.vsplit, "vsplit", lambda ndim: 0)
_register_split_along(np.dsplit, "dsplit", lambda ndim: 2)
