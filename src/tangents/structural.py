"""Structural tangents: ``Tangent(P, ...)``, one component per field of a primal of type ``P``.

``Tangent(P, *elements)`` is the tangent of a tuple type ``P`` (a plain tuple or a namedtuple),
``Tangent(P, **fields)`` of a class with named fields (dataclass, namedtuple, ``__slots__`` or
``__dict__`` class) and ``Tangent(dict, mapping)`` of a dict. A component that is not given is
``ZeroTangent()``. Arithmetic lives in :mod:`tangents.arithmetic`.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from tangents.base import TangentArithmetic
from tangents.thunk import unthunk
from tangents.zero import AbstractZero, ZeroTangent


def _is_tuple_type(primal_type: type) -> bool:
    return issubclass(primal_type, tuple)


def _is_dict_type(primal_type: type) -> bool:
    return issubclass(primal_type, Mapping)


def field_names(primal_type: type) -> tuple[str, ...] | None:
    """The primal type's field names in declaration order, or ``None`` when the type does not say.

    Dataclasses and namedtuples declare their fields; so do classes whose every base uses
    ``__slots__``. A plain tuple, a dict or a class with a ``__dict__`` has no fixed field list.
    """
    if dataclasses.is_dataclass(primal_type):
        return tuple(f.name for f in dataclasses.fields(primal_type))
    if _is_tuple_type(primal_type):
        fields = getattr(primal_type, "_fields", None)
        return tuple(fields) if fields is not None else None
    if _is_dict_type(primal_type):
        return None
    names: list[str] = []
    for klass in reversed(primal_type.__mro__):
        if klass is object:
            continue
        if "__slots__" not in klass.__dict__:
            return None  # this class gives instances a __dict__: fields are per instance
        slots = klass.__dict__["__slots__"]
        slots = (slots,) if isinstance(slots, str) else slots
        names.extend(s for s in slots if s not in ("__dict__", "__weakref__") and s not in names)
    return tuple(names)


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: set for classes defined in Python, not for C types


def has_fields(x: Any) -> bool:
    """Whether ``x`` is an instance of a Python-defined class with fields to treat one by one.

    True for dataclasses, namedtuples, ``__slots__`` classes with at least one slot and objects
    with a non-empty ``__dict__``; false for instances of C types (ufuncs, numpy generators,
    ...), which are opaque. ``ProjectTo`` gives such a primal a structural ``Tangent``, and the
    rule checker differences it field by field.
    """
    if not type(x).__flags__ & _HEAPTYPE:
        return False
    names = field_names(type(x))
    if names is not None:
        return bool(names)
    return bool(getattr(x, "__dict__", None))


class Tangent(TangentArithmetic):
    """The tangent of a composite primal, one component per field (or element, or key).

    Parameters
    ----------
    primal_type : type
        The type ``P`` of the primal this is a tangent of.
    *elements
        Components by position, for tuple types (plain tuples and namedtuples); or, for
        ``P = dict``, a single mapping from keys to components.
    **fields
        Components by field name, for dataclasses, namedtuples and other objects.

    Notes
    -----
    ``t.name`` and ``t[i]`` read a component, unthunked; a component that is not stored is
    ``ZeroTangent()``. ``t.backing`` (the raw tuple or dict, thunks not evaluated) and
    ``t.primal_type`` are reserved names: read a field called ``backing`` as ``t["backing"]``.
    ``primal + t`` builds a new primal of type ``P``; ``t1 + t2`` is fieldwise.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Point:
    ...     x: float
    ...     y: float
    >>> Point(1.0, 2.0) + Tangent(Point, y=0.5)
    Point(x=1.0, y=2.5)
    """

    __slots__ = ("_backing", "_primal_type")

    def __init__(self, primal_type: type, *elements: Any, **fields: Any) -> None:
        if not isinstance(primal_type, type):
            raise TypeError(f"Tangent needs the primal's type first, got {primal_type!r}")
        if _is_dict_type(primal_type):
            if fields or len(elements) != 1 or not isinstance(elements[0], Mapping):
                raise TypeError(
                    "Tangent(dict, mapping) takes exactly one mapping for a dict primal"
                )
            backing: tuple[Any, ...] | dict[Any, Any] = dict(elements[0])
        elif elements:
            if fields:
                raise TypeError("give a Tangent's components by position or by name, not both")
            if not _is_tuple_type(primal_type):
                raise TypeError(
                    f"components by position are for tuple types; {primal_type.__name__} "
                    "takes them by name: Tangent(P, field=value)"
                )
            backing = tuple(elements)
        else:
            backing = dict(fields)
        self._primal_type = primal_type
        self._backing = backing

    @classmethod
    def from_backing(cls, primal_type: type, backing: tuple[Any, ...] | dict[Any, Any]) -> Tangent:
        """Build a tangent around an existing tuple or dict of components (no copy of the values)."""
        if isinstance(backing, tuple):
            return cls(primal_type, *backing)
        if _is_dict_type(primal_type):
            return cls(primal_type, backing)
        return cls(primal_type, **backing)

    @property
    def primal_type(self) -> type:
        """The type of the primal this is a tangent of."""
        return self._primal_type

    @property
    def backing(self) -> tuple[Any, ...] | dict[Any, Any]:
        """The stored components as given (a tuple or a dict; thunks are not evaluated)."""
        return self._backing

    def _names(self) -> tuple[str, ...] | None:
        return field_names(self._primal_type)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails, i.e. for component names.
        if name.startswith("__") or name in Tangent.__slots__:
            raise AttributeError(name)
        backing = self._backing
        names = self._names()
        if isinstance(backing, dict):
            if name in backing:
                return unthunk(backing[name])
            if names is None and not _is_dict_type(self._primal_type):
                return ZeroTangent()  # the field list is per instance: a missing one is a zero
        elif names is not None and name in names:
            index = names.index(name)
            return unthunk(backing[index]) if index < len(backing) else ZeroTangent()
        if names is not None and name in names:
            return ZeroTangent()
        raise AttributeError(f"{self._primal_type.__name__} has no field {name!r}")

    def __getitem__(self, key: Any) -> Any:
        backing = self._backing
        if _is_dict_type(self._primal_type):
            return unthunk(backing.get(key, ZeroTangent()))  # type: ignore[union-attr]
        if isinstance(key, str):
            return self.__getattr__(key)
        if isinstance(backing, tuple):
            return (
                unthunk(backing[key]) if -len(backing) <= key < len(backing) else _index_error(key)
            )
        names = self._names()
        if names is None:
            raise TypeError(f"{self._primal_type.__name__} has no field order; index by name")
        return self.__getattr__(names[key])

    def __iter__(self) -> Iterator[Any]:
        """Iterate over the canonical components (unthunked)."""
        canonical = canonicalize(self)
        values = (
            canonical._backing.values()
            if isinstance(canonical._backing, dict)
            else canonical._backing
        )
        return (unthunk(v) for v in values)

    def __len__(self) -> int:
        return len(canonicalize(self)._backing)

    def __repr__(self) -> str:
        name = self._primal_type.__qualname__
        backing = self._backing
        if _is_dict_type(self._primal_type):
            return f"Tangent({name}, {backing!r})"
        if isinstance(backing, tuple):
            parts = [repr(v) for v in backing]
        else:
            parts = [f"{k}={v!r}" for k, v in backing.items()]
        return f"Tangent({', '.join([name, *parts])})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tangent) or other._primal_type is not self._primal_type:
            return False
        mine, theirs = _comparable(self), _comparable(other)
        if isinstance(mine, tuple) != isinstance(theirs, tuple):
            return False
        if isinstance(mine, tuple):
            assert isinstance(theirs, tuple)
            return len(mine) == len(theirs) and all(map(_component_equal, mine, theirs))
        assert isinstance(theirs, dict)
        keys = set(mine) | set(theirs)
        zero = ZeroTangent()
        return all(_component_equal(mine.get(k, zero), theirs.get(k, zero)) for k in keys)

    __hash__ = None  # type: ignore[assignment]  (components may be arrays)


def _index_error(key: Any) -> Any:
    raise IndexError(f"Tangent index {key} out of range")


def _comparable(t: Tangent) -> tuple[Any, ...] | dict[Any, Any]:
    """The canonical backing, unthunked, with zero components dropped from dicts."""
    backing = canonicalize(t)._backing
    if isinstance(backing, tuple):
        return tuple(unthunk(v) for v in backing)
    return {k: unthunk(v) for k, v in backing.items() if not isinstance(unthunk(v), AbstractZero)}


def _component_equal(a: Any, b: Any) -> bool:
    if isinstance(a, AbstractZero) or isinstance(b, AbstractZero):
        return isinstance(a, AbstractZero) and isinstance(b, AbstractZero)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.shape(a) == np.shape(b) and np.array_equal(a, b))
    return bool(a == b)


def canonicalize(t: Tangent) -> Tangent:
    """Return ``t`` with every field of its primal type present, in the primal's order.

    Missing fields become ``ZeroTangent()``. Raises ``ValueError`` for a component the primal type
    does not have. Tangents of plain tuples, dicts and classes without a declared field list are
    returned unchanged. Idempotent.
    """
    if not isinstance(t, Tangent):
        raise TypeError(f"canonicalize takes a Tangent, got {type(t).__name__}")
    names = t._names()
    if names is None:
        return t
    backing = t._backing
    if isinstance(backing, tuple):
        if len(backing) > len(names):
            raise ValueError(
                f"{t.primal_type.__name__} has {len(names)} fields, the tangent has {len(backing)}"
            )
        values = dict(zip(names, backing, strict=False))
    else:
        extra = [k for k in backing if k not in names]
        if extra:
            raise ValueError(
                f"{t.primal_type.__name__} has no field(s) {extra}; its fields are {list(names)}"
            )
        values = backing
    zero = ZeroTangent()
    return Tangent.from_backing(t.primal_type, {k: values.get(k, zero) for k in names})


def primal_components(primal: Any) -> tuple[Any, ...] | dict[Any, Any]:
    """The components of a composite primal, as a tuple (tuples) or a dict (everything else)."""
    primal_type = type(primal)
    if _is_dict_type(primal_type):
        return dict(primal)
    if _is_tuple_type(primal_type) and field_names(primal_type) is None:
        return tuple(primal)
    names = field_names(primal_type)
    if names is not None:
        return {name: getattr(primal, name) for name in names}
    return dict(vars(primal))


def rebuild_primal(primal: Any, components: tuple[Any, ...] | dict[Any, Any]) -> Any:
    """A new primal of ``type(primal)`` with the given components; ``primal`` is not modified.

    Goes through :func:`construct`, so a class that registered a constructor there is rebuilt
    by it (and its ``__init__`` validates the new fields).
    """
    return construct(primal, components)


@functools.singledispatch
def construct(primal: Any, components: tuple[Any, ...] | dict[Any, Any]) -> Any:
    """Build a new primal like ``primal`` from ``components``: what ``primal + Tangent`` calls.

    The hook of ChainRulesCore's ``construct``, dispatched on the primal's type. Register one
    for a class whose ``__init__`` checks or derives its fields::

        @construct.register(Interval)
        def _(primal, fields):
            return Interval(fields["lo"], fields["hi"])  # runs Interval.__init__'s checks

    The defaults, when nothing is registered: tuples and namedtuples call their type with the
    components (a namedtuple's ``__new__`` runs); dicts are copied and updated; dataclasses go
    through ``dataclasses.replace``, which runs ``__init__`` and ``__post_init__`` (fields with
    ``init=False`` are then set directly); **any other class is copied with ``copy.copy`` and
    its attributes are set with ``object.__setattr__``, without calling ``__init__``**, since
    nothing says how ``__init__``'s parameters map onto the fields. Register a constructor for
    such a class when its ``__init__`` must run.

    Parameters
    ----------
    primal : any
        The primal being moved (not modified); its type selects the constructor.
    components : tuple or dict
        The new components: a tuple for plain tuples, a dict by field name otherwise.
    """
    primal_type = type(primal)
    if _is_dict_type(primal_type):
        new = copy.copy(primal)
        new.update(components)
        return new
    if _is_tuple_type(primal_type):
        values = tuple(components.values()) if isinstance(components, dict) else components
        return primal_type(*values) if field_names(primal_type) is not None else primal_type(values)
    assert isinstance(components, dict)
    if dataclasses.is_dataclass(primal_type):
        init = {f.name for f in dataclasses.fields(primal_type) if f.init}
        new = dataclasses.replace(primal, **{k: v for k, v in components.items() if k in init})
        for k, v in components.items():
            if k not in init:
                object.__setattr__(new, k, v)
        return new
    new = copy.copy(primal)
    for k, v in components.items():
        object.__setattr__(new, k, v)
    return new
