"""The checker's view of a rule's arguments: names, tangent spaces, snapshots, random tangents."""

from __future__ import annotations

import cmath
import copy
import dataclasses
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np
import scipy.sparse as sp

from rules.core.registry import function_name
from rules.testing.results import Failures
from rules.testing.spaces import CompositeSpace, EmptySpace, Space, space_of
from tangents import (
    AbstractZero,
    ProjectTo,
    StructuredMatrix,
    Tangent,
    ZeroTangent,
    canonicalize,
    unthunk,
)
from tangents.structural import has_fields, primal_components

__all__ = [
    "ambient_or_fail",
    "argument_label",
    "argument_spaces",
    "check_not_mutated",
    "check_primal_output",
    "function_name",
    "output_components",
    "owned",
    "projection_mismatch",
    "random_tangent",
    "same_kind",
    "same_primal",
    "snapshot",
    "with_component",
]


def argument_label(i: int, args: tuple[Any, ...]) -> str:
    """How failure messages name argument ``i`` (``-1``: the function object)."""
    if i == -1:
        return "cotangent of the function object"
    x = args[i]
    shape = np.shape(x) if isinstance(x, np.ndarray | np.generic) else getattr(x, "shape", None)
    shown = isinstance(shape, tuple) and shape
    described = f"{type(x).__name__}{' ' + str(tuple(shape)) if shown else ''}"
    return f"argument {i} ({described})"


def _function_space(f: Any) -> Space:
    if isinstance(f, type) or (
        callable(f) and not dataclasses.is_dataclass(f) and not getattr(f, "__dict__", None)
    ):
        return EmptySpace()
    try:
        space = space_of(f)
    except (TypeError, ValueError):
        return EmptySpace()
    return space if isinstance(space, CompositeSpace) else EmptySpace()


def argument_spaces(
    f: Any,
    args: tuple[Any, ...],
    symmetric: Iterable[int],
    constant: Iterable[int | tuple[int, Any]],
) -> dict[int, Space]:
    """The tangent space of each argument (and ``-1`` for a callable object with fields)."""
    symmetric, constant = set(symmetric), set(constant)
    components = {c for c in constant if isinstance(c, tuple)}
    constant -= components
    for option, positions in (
        ("symmetric", symmetric),
        ("constant", constant | {c[0] for c in components}),
    ):
        unknown = positions - set(range(len(args)))
        if unknown:
            raise ValueError(f"{option}= names argument(s) {sorted(unknown)} that were not given")
    spaces = {
        i: space_of(x, symmetric=i in symmetric, constant=i in constant) for i, x in enumerate(args)
    }
    for i, key in components:  # (i, key): component ``key`` of a composite argument ``i``
        space = spaces[i]
        if not isinstance(space, CompositeSpace) or key not in space.spaces:
            raise ValueError(f"constant= names component {key!r} of argument {i}, which has none")
        spaces[i] = space.holding_fixed(key)
    f_space = _function_space(f)
    if f_space.dim:
        spaces[-1] = f_space
    return spaces


def _tangent_parts(t: Tangent) -> dict[Any, Any]:
    backing = canonicalize(t).backing
    items = enumerate(backing) if isinstance(backing, tuple) else backing.items()
    return {k: unthunk(v) for k, v in items}


def same_kind(got: Any, want: Any) -> str | None:
    """Why ``got`` does not have the type/dtype/structure of ``want`` (``None`` if it does)."""
    if isinstance(got, AbstractZero) or isinstance(want, AbstractZero):
        return None
    if isinstance(got, np.ndarray) and got.dtype == object:
        return "is an object array"
    if type(got) is not type(want):
        return f"is a {type(got).__name__}; ProjectTo of the primal gives a {type(want).__name__}"
    if isinstance(got, Tangent):
        if got.primal_type is not want.primal_type:
            return (
                f"is a Tangent of {got.primal_type.__name__}; ProjectTo of the primal gives a "
                f"Tangent of {want.primal_type.__name__}"
            )
        got_parts, want_parts = _tangent_parts(got), _tangent_parts(want)
        for key, part in want_parts.items():
            reason = same_kind(got_parts.get(key, ZeroTangent()), part)
            if reason:
                return f"has a component {key!r} that {reason}"
        return None
    got_dtype, want_dtype = getattr(got, "dtype", None), getattr(want, "dtype", None)
    if got_dtype is not None and got_dtype != want_dtype:
        return f"has dtype {got_dtype}; the primal's tangent dtype is {want_dtype}"
    if (
        _array_like(want) and got.shape != want.shape
    ):  # ProjectTo mends trailing ones; rules must not need it
        return f"has shape {got.shape}; ProjectTo of the primal gives shape {want.shape}"
    if getattr(got, "uplo", None) != getattr(want, "uplo", None):
        # The same matrix either way, but stored the other way round: ProjectTo keeps the
        # primal's uplo, and a rule should return what it gives.
        return f"has uplo={got.uplo!r}; ProjectTo of the primal gives uplo={want.uplo!r}"
    return None


def projection_mismatch(t: Any, primal: Any) -> str | None:
    """Why the tangent ``t`` differs from what ``ProjectTo(primal)`` makes of it (``None``: it does not)."""
    try:
        projected = ProjectTo(primal)(t)
    except (TypeError, ValueError) as error:
        return f"is rejected by ProjectTo of the primal ({error})"
    return same_kind(t, projected)


def _array_like(x: Any) -> bool:
    return isinstance(x, np.ndarray | np.generic | StructuredMatrix) or sp.issparse(x)


def same_primal(got: Any, want: Any) -> str | None:
    """Why a rule's primal output ``got`` differs in type, dtype, shape or structure from ``want``.

    ``want`` is ``f(*args)``. Values are compared elsewhere; ``None`` when the kinds agree.
    """
    if type(got) is not type(want):
        return f"is a {type(got).__name__}; f(*args) gives a {type(want).__name__}"
    if _array_like(want):
        if got.dtype != want.dtype:
            return f"has dtype {got.dtype}; f(*args) gives {want.dtype}"
        if got.shape != want.shape:
            return f"has shape {got.shape}; f(*args) gives {want.shape}"
        if getattr(got, "uplo", None) != getattr(want, "uplo", None):
            return f"has uplo={got.uplo!r}; f(*args) gives uplo={want.uplo!r}"
        return None
    if isinstance(want, tuple | list | dict) or has_fields(want):
        got_parts = got if isinstance(got, list) else primal_components(got)
        want_parts = want if isinstance(want, list) else primal_components(want)
        if isinstance(want_parts, dict):
            assert isinstance(got_parts, dict)
            if got_parts.keys() != want_parts.keys():
                return f"has components {list(got_parts)}; f(*args) gives {list(want_parts)}"
            keys: Any = want_parts
        else:
            if len(got_parts) != len(want_parts):
                return f"has {len(got_parts)} elements; f(*args) gives {len(want_parts)}"
            keys = range(len(want_parts))
        for key in keys:
            reason = same_primal(got_parts[key], want_parts[key])
            if reason:
                return f"has a component {key!r} that {reason}"
    return None


def check_primal_output(failures: Failures, space: Space, y: Any, expected: Any) -> None:
    """The rule's primal output ``y`` equals ``expected = f(*args)`` in kind and in value."""
    reason = same_primal(y, expected)
    if reason:
        failures.fail("primal output", reason)
    got = ambient_or_fail(failures, "primal output", space, y)
    if got is not None:
        failures.compare("primal output", got, space.ambient(expected))


def owned(t: Any) -> Any:
    """``t`` (a tangent, or a pullback's tuple of them) unthunked and deep-copied.

    What a rule returns is taken over this way as soon as it returns, so that a later call that
    reuses the rule's buffers cannot change it behind the checker's back.
    """
    if isinstance(t, tuple):
        return tuple(owned(c) for c in t)
    t = unthunk(t)
    if isinstance(t, Tangent):
        backing = t.backing
        parts = (
            tuple(owned(v) for v in backing)
            if isinstance(backing, tuple)
            else {k: owned(v) for k, v in backing.items()}
        )
        return Tangent.from_backing(t.primal_type, parts)
    return copy.deepcopy(t)


def snapshot(values: Any) -> Any:
    """A deep copy, to detect later in-place changes."""
    return copy.deepcopy(values)


_UNSET = object()  # an empty slot


def _attributes(x: Any) -> dict[str, Any]:
    """Every attribute an object stores: its ``__dict__`` and the slots of each class in its MRO."""
    values = dict(getattr(x, "__dict__", None) or {})
    for klass in type(x).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__"):
                name = f"_{klass.__name__.lstrip('_')}{name}"  # a private slot's mangled name
            values.setdefault(name, getattr(x, name, _UNSET))
    return values


def _unchanged(before: Any, after: Any, seen: set[tuple[int, int]] | None = None) -> bool:
    """Deep equality that treats NaN as equal and compares arrays by value and dtype.

    Objects are compared by every attribute they store (``__dict__`` and ``__slots__``), so a
    structured matrix, a dataclass or a user's object is looked into as deeply as a tuple.
    """
    if isinstance(before, np.ndarray | np.generic) or isinstance(after, np.ndarray | np.generic):
        a, b = np.asarray(before), np.asarray(after)
        return (
            a.shape == b.shape
            and a.dtype == b.dtype
            and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        )
    if isinstance(before, numbers.Number | str | bytes) or before is None:
        return type(before) is type(after) and (
            before == after
            or (isinstance(before, float | complex) and cmath.isnan(before) and cmath.isnan(after))
        )
    if sp.issparse(before):
        return (
            type(before) is type(after)
            and before.dtype == after.dtype
            and _unchanged(before.toarray(), after.toarray())
        )
    seen = set() if seen is None else seen
    if (id(before), id(after)) in seen:
        return True  # a cycle: compared further up
    seen.add((id(before), id(after)))
    if isinstance(before, tuple | list):
        return (
            type(before) is type(after)
            and len(before) == len(after)
            and all(_unchanged(a, b, seen) for a, b in zip(before, after, strict=True))
        )
    if isinstance(before, dict):
        return before.keys() == after.keys() and all(
            _unchanged(before[k], after[k], seen) for k in before
        )
    if isinstance(before, Tangent):
        return isinstance(after, Tangent) and _unchanged(before.backing, after.backing, seen)
    if type(before) is not type(after):
        return False
    return _unchanged(_attributes(before), _attributes(after), seen)


def check_not_mutated(
    failures: Failures,
    label: str,
    before: Any,
    after: Any,
    why: str = "rules must not mutate their inputs",
) -> None:
    """Record a failure if ``after`` differs from its snapshot ``before``."""
    if not _unchanged(before, after):
        failures.fail(label, f"was modified in place ({why})", first=True)


def ambient_or_fail(failures: Failures, what: str, space: Space, t: Any) -> np.ndarray | None:
    """The dense entries of ``t`` in ``space``, or ``None`` after recording why it does not fit."""
    try:
        return space.ambient(t)
    except (TypeError, ValueError) as error:
        failures.fail(what, str(error))
        return None


def random_tangent(space: Space, primal: Any, rng: np.random.Generator) -> tuple[Any, np.ndarray]:
    """A random tangent of ``primal`` (its projected type) and its coordinates in ``space``."""
    coords = rng.standard_normal(space.dim)
    return ProjectTo(primal)(space.tangent(coords)), coords


def output_components(y: Any, space: Space) -> list[Any]:
    """Keys of the components of a multi-output ``y`` (empty for a single output)."""
    if isinstance(space, CompositeSpace) and len(space.spaces) > 1:
        return list(space.spaces)
    return []


def with_component(y: Any, y_bar: Any, space: CompositeSpace, key: Any, value: Any) -> Tangent:
    """``y_bar`` as a Tangent of ``y``'s type with component ``key`` replaced by ``value``."""
    parts = space.components(y_bar)
    parts[key] = value
    if space.positional:
        primal_type = tuple if isinstance(y, list) else type(y)
        return Tangent.from_backing(primal_type, tuple(parts[k] for k in space.spaces))
    return Tangent.from_backing(type(y), parts)
