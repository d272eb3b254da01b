"""What the registry checks before a rule runs, and how it names the rule in errors.

Rules check their own options and the mathematics of their inputs; the checks below are the
same for every rule, so they are made once, in :mod:`rules.core.registry` (DESIGN.md section 3):

* :func:`object_input`: an object array (top level or one level inside a list or tuple
  argument) raises ``TypeError``; nothing differentiable can come out of it, and rules would
  otherwise return ``NoTangent()`` or fail deep inside numpy.
* :func:`match_fields`: a ``Tangent`` of a composite value (a tuple output's cotangent, a tuple
  argument's tangent) whose ``primal_type`` is not the value's own type is matched to the value's
  fields *by name* (a namedtuple or a dict with the right names, in any order), or refused with
  ``TypeError`` naming the expected type. It is never read by position: ``Tangent(S, R=Rb, Q=Qb)``
  for ``QRResult(Q, R)`` would otherwise swap the two cotangents.
* :func:`check_array_tangent`: the (co)tangent of an array of shape ``s`` with ``s != ()``
  must itself have a shape (an ndarray, a structured or sparse matrix, a tangent type with a
  ``shape``), equal to ``s``; a list, a tuple, or a Python number for an array of other than one
  element raises ``TypeError``, a wrong shape ``ValueError``, both naming the function.
* :func:`named`: an exception raised inside a rule whose message does not name the rule
  (numpy's and scipy's own messages) is raised again as the same type with the rule's name in
  front, chained to the original (``raise ... from original``).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from tangents import Tangent, unthunk
from tangents.structural import field_names

__all__ = [
    "ALL_BOOL",
    "check_array_tangent",
    "has_no_tangent_space",
    "match_fields",
    "named",
    "object_input",
    "object_input_error",
    "plain_arrays",
    "plain_parts",
    "plain_tangents",
    "primal_shape",
]


def _is_object_array(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.dtype == object


def object_input(args: tuple[Any, ...]) -> int | None:
    """The position of the first argument that is an object array, or ``None``.

    Arguments that are lists or tuples (``np.linalg.multi_dot``, ``np.concatenate``) have
    their elements checked too, one level deep.
    """
    for i, a in enumerate(args):
        if type(a) is np.ndarray and not a.dtype.hasobject:  # the common case
            continue
        if _is_object_array(a) or (
            isinstance(a, list | tuple) and any(_is_object_array(x) for x in a)
        ):
            return i
    return None


def object_input_error(function: str, i: int) -> TypeError:
    """The ``TypeError`` for argument ``i`` of ``function`` being an object array."""
    return TypeError(
        f"{function}: argument {i} is an array of dtype object; rules differentiate numeric "
        "arrays only (convert it first, e.g. np.asarray(x, dtype=float))"
    )


def has_no_tangent_space(x: Any) -> bool:
    """Whether ``x`` is a bool, a bool array, a string or ``None``: ``ProjectTo`` gives it none."""
    if isinstance(x, np.ndarray):
        return x.dtype.kind == "b"
    return x is None or isinstance(x, bool | np.bool_ | str)


def primal_shape(x: Any) -> tuple[int, ...] | None:
    """The shape a (co)tangent of the value ``x`` must have; ``None`` when the rule checks it.

    ndarrays and numpy scalars have their shape, Python numbers ``()``; anything else (lists,
    structured matrices, tuples, user types) is left to the rule.
    """
    if isinstance(x, np.ndarray | np.generic):
        return x.shape
    if isinstance(x, numbers.Number):
        return ()
    return None


def check_array_tangent(function: str, what: str, t: Any, shape: tuple[int, ...]) -> None:
    """Raise naming ``function`` when ``t`` cannot be the (co)tangent of an array of ``shape``.

    ``TypeError`` for a list or tuple where ``shape`` is not ``()``, for a Python number where
    the array has more than one element (or none), and for an object array; ``ValueError`` for a
    shape other than ``shape``. Zeros and values without a ``shape`` of other types (user tangent
    types) pass, as does a number for an array of one element.
    """
    got = getattr(t, "shape", None)
    if got is not None:
        if tuple(got) != shape:
            raise ValueError(f"{function}: {what} has shape {tuple(got)}, expected {shape}")
        if _is_object_array(t):
            raise TypeError(f"{function}: {what} is an array of dtype object; it must be numeric")
        return
    if shape != () and (
        isinstance(t, list | tuple) or (isinstance(t, numbers.Number) and math.prod(shape) != 1)
    ):
        raise TypeError(
            f"{function}: {what} is a {type(t).__name__}; an array of shape {shape} needs an "
            f"array of that shape (or a zero: ZeroTangent())"
        )


def match_fields(function: str, what: str, t: Any, primal: Any) -> Any:
    """``t``, a (co)tangent of the composite ``primal``, with its components matched to the fields.

    A ``Tangent`` of ``type(primal)``, of a plain ``tuple`` (components by position, as a plain
    tuple is read) and anything that is not a ``Tangent`` are returned as they are. A ``Tangent``
    of another type whose field names (or dict keys) are all fields of ``type(primal)`` becomes a
    ``Tangent(type(primal), **fields)``; any other ``Tangent`` raises ``TypeError`` naming
    ``function`` and the expected type. Thunks of the whole are evaluated first.
    """
    t = unthunk(t)
    if not isinstance(t, Tangent):
        return t
    expected = type(primal)
    given_type, backing = t.primal_type, t.backing
    if given_type is expected:
        return t
    if isinstance(backing, tuple) and field_names(given_type) is None:
        return t  # Tangent(tuple, ...): by position, like a plain tuple
    names = field_names(expected)
    if names is not None:
        if isinstance(backing, dict):
            given: dict[Any, Any] | None = backing
        else:
            given_names = field_names(given_type)
            given = None if given_names is None else dict(zip(given_names, backing, strict=False))
        if given is not None and all(isinstance(k, str) and k in names for k in given):
            return Tangent(expected, **given)
    fields = f" with fields {', '.join(names)}" if names else " (components by position)"
    raise TypeError(
        f"{function}: {what} is a Tangent of {given_type.__qualname__}, whose components do not "
        f"match the output's type {expected.__qualname__}{fields}; give a Tangent of "
        f"{expected.__qualname__}, a tuple in that order, or components named by its fields"
    )


def _rebuilt(error: Exception, text: str) -> Exception | None:
    """``error``'s type with the message ``text``, or ``None`` when it cannot be made so.

    First through the constructor (``KeyError(text)``, numpy's ``AxisError(text)``); for a type
    whose constructor takes other arguments and builds its own message (the driver's errors),
    an instance with ``args = (text,)`` and the original's attributes, its ``__init__`` not
    rerun. Either must print as ``text``.
    """
    cls = type(error)
    try:
        new = cls(text)
        if str(new) in (text, repr(text)):  # KeyError prints the repr of its message
            return new
    except Exception:  # noqa: BLE001, S110 (another constructor: try the next way)
        pass
    try:
        new = cls.__new__(cls)
        new.__dict__.update(getattr(error, "__dict__", {}))
        new.args = (text,)
        if str(new) == text:
            return new
    except Exception:  # noqa: BLE001, S110 (a type that cannot be made so: keep the original)
        pass
    return None


def named(error: Exception, function: str, stage: str) -> Exception | None:
    """A copy of ``error`` whose message starts with ``function`` and ``stage``, or ``None``.

    ``None`` when the message already names ``function`` (the rule's own errors) or when the
    exception type cannot be rebuilt from a message (its ``__init__`` takes other arguments,
    as numpy's ``UFuncTypeError``): the original then gets a note naming the function
    (``add_note``, shown in its traceback) and the caller re-raises it. ``stage`` is ``""`` for the forward pass,
    ``" pullback"`` or ``" pushforward"``.
    """
    message = str(error)
    if function in message:
        return None
    text = f"{function}{stage}: {message}"
    new = _rebuilt(error, text)
    if new is None:
        if not any(function in note for note in getattr(error, "__notes__", ())):
            error.add_note(f"raised in {function}{stage}")
        return None
    return new


# --- the registry's hot path: calls whose every check passes with nothing converted -------------


def plain_parts(y: tuple[Any, ...], y_bar: Any, n: int) -> bool:
    """Whether ``y_bar`` holds one plain non-object ndarray of its shape per output of ``y``.

    ``y`` a tuple of ``n`` ndarrays or numpy scalars (``slogdet``'s ``(sign, logabsdet)``, whose
    cotangents are then 0-d arrays), ``y_bar`` a tuple or list: then every check the registry
    makes on the cotangent of a tuple output passes as is (:func:`primal_shape` of a numpy
    scalar is its shape ``()``). The common cotangent of a multi-output function (``eigh``'s
    ``(w_bar, V_bar)``); the general checks build names and messages eagerly, several
    microseconds on a 4x4 pullback.
    """
    if (type(y_bar) is not tuple and type(y_bar) is not list) or len(y_bar) != n:
        return False
    for part, y_i in zip(y_bar, y, strict=True):
        if (
            type(part) is not np.ndarray
            or (type(y_i) is not np.ndarray and not isinstance(y_i, np.generic))
            or part.shape != y_i.shape
            or part.dtype.hasobject
        ):
            return False
    return True


ALL_BOOL = 2
"""What :func:`plain_arrays` returns when every argument is a bool array (a constant call)."""


def plain_arrays(args: tuple[Any, ...]) -> int:
    """Whether every argument is a plain ndarray of a non-object dtype: ``0`` (no) or ``1``.

    ``ALL_BOOL`` instead of ``1`` when there are arguments and all are bool arrays (no
    tangent space: a constant call).

    One loop instead of :func:`object_input`, the registry's test for another library's arrays
    and :func:`has_no_tangent_space` on each argument: their per-call cost is a large part of a
    4x4 rule's (bench, ``--sizes 4``).
    """
    all_bool = bool(args)
    for a in args:
        if type(a) is not np.ndarray:
            return 0
        dtype = a.dtype
        if dtype.hasobject:
            return 0
        all_bool = all_bool and dtype.kind == "b"
    return ALL_BOOL if all_bool else 1


def plain_tangents(tangents: tuple[Any, ...], args: tuple[Any, ...]) -> bool:
    """Whether every argument and its tangent are plain non-object ndarrays of one shape.

    And ``f_dot`` is not ``None``: then every check the registry makes on an frule's input
    tangents passes as is.
    """
    if tangents[0] is None:
        return False
    for i, a in enumerate(args, 1):
        t = tangents[i]
        if type(a) is not np.ndarray or type(t) is not np.ndarray:
            return False
        dtype = a.dtype
        if t.shape != a.shape or dtype.hasobject:
            return False
        if t.dtype is not dtype and t.dtype.hasobject:
            return False
    return True
