"""The checker's view of a rule's arguments: names, tangent spaces, snapshots, random tangents."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable
from typing import Any

import numpy as np
import scipy.sparse as sp

from rules.registry import function_name
from rules.testing.results import Failures
from rules.testing.spaces import CompositeSpace, EmptySpace, Space, space_of
from tangents import AbstractZero, ProjectTo, Tangent, unthunk

__all__ = [
    "ambient_or_fail",
    "argument_label",
    "argument_spaces",
    "check_not_mutated",
    "function_name",
    "output_components",
    "random_tangent",
    "same_kind",
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


def same_kind(got: Any, want: Any) -> str | None:
    """Why ``got`` does not have the type/dtype/structure of ``want`` (``None`` if it does)."""
    if isinstance(got, AbstractZero) or isinstance(want, AbstractZero):
        return None
    if isinstance(got, np.ndarray) and got.dtype == object:
        return "is an object array"
    if type(got) is not type(want):
        return f"is a {type(got).__name__}; ProjectTo of the primal gives a {type(want).__name__}"
    if isinstance(got, Tangent):
        for a, b in zip(got, want, strict=False):
            reason = same_kind(unthunk(a), unthunk(b))
            if reason:
                return f"has a component that {reason}"
        return None
    got_dtype, want_dtype = getattr(got, "dtype", None), getattr(want, "dtype", None)
    if got_dtype is not None and got_dtype != want_dtype:
        return f"has dtype {got_dtype}; the primal's tangent dtype is {want_dtype}"
    return None


def snapshot(values: Any) -> Any:
    """A deep copy, to detect later in-place changes."""
    return copy.deepcopy(values)


def _unchanged(before: Any, after: Any) -> bool:
    """Deep equality that treats NaN as equal and compares arrays by value and dtype."""
    if isinstance(before, np.ndarray | np.generic) or isinstance(after, np.ndarray | np.generic):
        a, b = np.asarray(before), np.asarray(after)
        return (
            a.shape == b.shape
            and a.dtype == b.dtype
            and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        )
    if sp.issparse(before):
        return sp.issparse(after) and _unchanged(before.toarray(), after.toarray())
    if isinstance(before, tuple | list):
        return (
            type(before) is type(after)
            and len(before) == len(after)
            and all(map(_unchanged, before, after))
        )
    if isinstance(before, dict):
        return before.keys() == after.keys() and all(
            _unchanged(before[k], after[k]) for k in before
        )
    if isinstance(before, Tangent):
        return isinstance(after, Tangent) and _unchanged(before.backing, after.backing)
    data = getattr(before, "data", None)
    if isinstance(data, np.ndarray):
        return _unchanged(data, getattr(after, "data", None))
    fields = getattr(before, "__dict__", None)
    if fields:
        return _unchanged(fields, getattr(after, "__dict__", None))
    return True


def check_not_mutated(failures: Failures, label: str, before: Any, after: Any) -> None:
    """Record a failure if ``after`` differs from its snapshot ``before``."""
    if not _unchanged(before, after):
        failures.fail(label, "was modified in place (rules must not mutate their inputs)")


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
