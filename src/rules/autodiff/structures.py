"""Nested arguments and results: tuples, lists, dicts, namedtuples and dataclasses.

The driver differentiates with respect to the *leaves* of an argument (arrays, numbers,
structured matrices) and rebuilds containers around them twice: once with traced leaves, to call
the user's function, and once with cotangents, to return the gradient. Gradients follow the
project's structural-tangent conventions (``tangents.ProjectTo`` of a container): a tuple,
namedtuple, dict or dataclass gets a ``Tangent`` of its type, a list a list, an array leaf the
``ProjectTo`` of that leaf (float32 stays float32, a ``Diagonal`` gets a ``Diagonal``) and an
``int``, ``bool``, ``str`` or ``None`` leaf ``NoTangent()``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from rules.autodiff.dispatch import is_traced
from rules.core.registry import is_foreign_array
from tangents import NoTangent, StructuredMatrix, Tangent
from tangents.structural import field_names

__all__ = ["Structure", "flatten", "is_differentiable_leaf", "leaf_kind"]


def leaf_kind(x: Any) -> str:
    """``"diff"`` for a leaf with a tangent space, ``"const"`` for one without, ``"other"``.

    Differentiable leaves are float, complex and integer ndarrays and numpy scalars (an integer
    array is a real number with a float64 cotangent, DESIGN.md section 3), Python floats and
    complex numbers, and the library's structured matrices. Python ints and bools, bool arrays,
    strings and ``None`` have none. Arrays of a library whose calls the registry lifts (dask
    arrays, :func:`rules.core.registry.lift_foreign`) count as ndarrays. A value traced by an
    enclosing differentiation is the kind of the value it stands for (nesting).
    """
    if is_traced(x):
        return leaf_kind(x._value)
    if isinstance(x, np.ndarray | np.generic) or is_foreign_array(x):
        return "diff" if x.dtype.kind in "fciu" else "const"
    if isinstance(x, bool | int | str | bytes) or x is None:
        return "const"
    if isinstance(x, float | complex | StructuredMatrix):
        return "diff"
    return "other"


def is_differentiable_leaf(x: Any) -> bool:
    """Whether ``x`` is a leaf the driver traces (see :func:`leaf_kind`)."""
    return leaf_kind(x) == "diff"


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and field_names(type(x)) is not None


def _is_container(x: Any) -> bool:
    return (
        type(x) in (tuple, list, dict)
        or _is_namedtuple(x)
        or isinstance(x, dict)
        or (dataclasses.is_dataclass(x) and not isinstance(x, type))
    )


class Structure:
    """How a nested value is put together: rebuild it from new leaves, or its cotangent."""

    __slots__ = ("children", "keys", "kind", "prototype")

    def __init__(self, kind: str, prototype: Any, keys: tuple[Any, ...], children: list[Any]):
        self.kind = kind  # "leaf", "tuple", "namedtuple", "list", "dict", "dataclass"
        self.prototype = prototype
        self.keys = keys
        self.children = children  # a list of Structure

    def rebuild(self, leaves: Callable[[], Any]) -> Any:
        """The value with each leaf replaced by the next of ``leaves()``."""
        if self.kind == "leaf":
            return leaves()
        parts = [child.rebuild(leaves) for child in self.children]
        if self.kind == "tuple":
            return tuple(parts)
        if self.kind == "list":
            return parts
        if self.kind == "namedtuple":
            return type(self.prototype)(*parts)
        if self.kind == "dict":
            new = type(self.prototype)() if type(self.prototype) is not dict else {}
            new.update(zip(self.keys, parts, strict=True))
            return new
        init = {f.name for f in dataclasses.fields(self.prototype) if f.init}
        values = dict(zip(self.keys, parts, strict=True))
        new = dataclasses.replace(self.prototype, **{k: v for k, v in values.items() if k in init})
        for k, v in values.items():
            if k not in init:
                object.__setattr__(new, k, v)
        return new

    def rebuild_tangent(self, leaves: Callable[[], Any]) -> Any:
        """The cotangent of the value, each leaf's taken from ``leaves()``, in Tangent form."""
        if self.kind == "leaf":
            return leaves()
        parts = [child.rebuild_tangent(leaves) for child in self.children]
        if self.kind == "list":
            return parts
        if self.kind in ("tuple", "namedtuple"):
            return Tangent(type(self.prototype), *parts)
        if self.kind == "dict":
            return Tangent(dict, dict(zip(self.keys, parts, strict=True)))
        return Tangent(type(self.prototype), **dict(zip(self.keys, parts, strict=True)))

    def split_cotangent(self, y_bar: Any) -> list[Any]:
        """The leaves of a cotangent given in the structure's shape (containers or ``Tangent``)."""
        out: list[Any] = []
        self._split(y_bar, out)
        return out

    def _split(self, y_bar: Any, out: list[Any]) -> None:
        from tangents import AbstractZero, unthunk

        if self.kind == "leaf":
            out.append(y_bar)
            return
        y_bar = unthunk(y_bar)
        for position, (key, child) in enumerate(zip(self.keys, self.children, strict=True)):
            if isinstance(y_bar, AbstractZero):
                part = y_bar
            elif isinstance(y_bar, Tangent):
                part = y_bar[key] if self.kind in ("dict", "dataclass") else y_bar[position]
                if self.kind == "namedtuple" and isinstance(y_bar.backing, dict):
                    part = getattr(y_bar, key)
            elif self.kind in ("dict",) or (self.kind == "dataclass" and isinstance(y_bar, dict)):
                part = y_bar[key]
            elif self.kind == "dataclass":
                part = getattr(y_bar, key)
            else:
                part = y_bar[position]
            child._split(part, out)


def flatten(x: Any) -> tuple[list[Any], Structure]:
    """The leaves of ``x`` in a fixed order, and its :class:`Structure`."""
    leaves: list[Any] = []
    return leaves, _flatten(x, leaves)


def _flatten(x: Any, leaves: list[Any]) -> Structure:
    if not _is_container(x):
        leaves.append(x)
        return Structure("leaf", None, (), [])
    if isinstance(x, dict):
        keys = tuple(x.keys())
        return Structure("dict", x, keys, [_flatten(x[k], leaves) for k in keys])
    if _is_namedtuple(x):
        keys = tuple(field_names(type(x)))  # type: ignore[arg-type]
        return Structure("namedtuple", x, keys, [_flatten(v, leaves) for v in x])
    if isinstance(x, tuple | list):
        kind = "list" if isinstance(x, list) else "tuple"
        return Structure(kind, x, tuple(range(len(x))), [_flatten(v, leaves) for v in x])
    keys = tuple(f.name for f in dataclasses.fields(x))
    return Structure("dataclass", x, keys, [_flatten(getattr(x, k), leaves) for k in keys])


def no_tangent() -> NoTangent:
    """The cotangent of a leaf without a tangent space."""
    return NoTangent()
