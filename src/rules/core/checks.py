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
  front, chained to the original (``raise ... from original``); :func:`renamed_error` adds the
  message for a user's tangent type that lacks an operation, and :func:`function_name` is the
  name every message uses.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from rules.core.cotangents import missing_operation
from tangents import AbstractThunk, AbstractZero, Tangent, unthunk
from tangents.structural import field_names

__all__ = [
    "ALL_BOOL",
    "check_array_tangent",
    "check_tangents",
    "function_name",
    "has_no_tangent_space",
    "match_fields",
    "named",
    "object_input",
    "object_input_error",
    "plain_arrays",
    "plain_parts",
    "plain_tangents",
    "primal_shape",
    "renamed_error",
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


_SCALARS = frozenset((float, complex, np.float64, np.float32, np.complex128, np.complex64))


def plain_parts(y: tuple[Any, ...], y_bar: Any, n: int) -> bool:
    """Whether ``y_bar`` holds one plain non-object ndarray of its shape per output of ``y``.

    ``y`` a tuple of ``n`` ndarrays or numpy scalars (``slogdet``'s ``(sign, logabsdet)``, whose
    cotangents are then 0-d arrays), ``y_bar`` a tuple or list: then every check the registry
    makes on the cotangent of a tuple output passes as is (:func:`primal_shape` of a numpy
    scalar is its shape ``()``). The common cotangent of a multi-output function (``eigh``'s
    ``(w_bar, V_bar)``); the general checks build names and messages eagerly, several
    microseconds on a 4x4 pullback.

    A Python or numpy float or complex scalar counts as plain for an output of shape ``()``
    (the general checks pass it as it is; a 4x4 ``slogdet`` pullback of ``(0.0, 1.0)`` took
    5.4 us through them, 1.7 without).
    """
    if (type(y_bar) is not tuple and type(y_bar) is not list) or len(y_bar) != n:
        return False
    for i in range(n):
        part, y_i = y_bar[i], y[i]
        if type(part) in _SCALARS:  # a float for a scalar output (slogdet's logabsdet_bar)
            if (type(y_i) is np.ndarray or isinstance(y_i, np.generic)) and y_i.shape == ():
                continue
            return False
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
    numeric = False
    for a in args:
        if type(a) is not np.ndarray:
            return 0
        kind = a.dtype.kind
        if kind == "b":
            continue
        if kind == "O" or (kind == "V" and a.dtype.hasobject):  # only these can hold objects
            return 0
        numeric = True
    return ALL_BOOL if args and not numeric else 1


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


def function_name(f: Any) -> str:
    """The name of ``f`` for messages: ``np.sum``, ``np.linalg.solve``, ``scipy.linalg.expm``.

    The module path drops its private parts (``scipy.linalg._matfuncs`` is ``scipy.linalg``,
    ``_operator`` is ``operator``) and ``numpy`` reads ``np``; builtins and ``__main__`` give the
    bare name, callables without a name their type's name.
    """
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None)
    if not isinstance(name, str):
        return type(f).__name__
    module = getattr(f, "__module__", None)
    if not isinstance(module, str) or module == "builtins" or module.startswith("__"):
        return name
    first, *rest = module.split(".")
    first = "np" if first == "numpy" else first.lstrip("_")
    return ".".join([first, *(part for part in rest if not part.startswith("_")), name])


def renamed_error(error: Exception, f: Any, stage: str) -> Exception | None:
    """The error to raise instead of ``error``, met in ``f``'s rule at ``stage``; ``None``: as is.

    A user's tangent type lacking a protocol operation gets a ``TypeError`` naming the rule and
    the operation; any other error whose message does not name ``f`` is renamed
    (:func:`named`).
    """
    name = function_name(f)
    if isinstance(error, AttributeError):
        part = {"": "rule", " pullback": "pullback", " pushforward": "frule"}[stage]
        missing = missing_operation(error, f"{name}'s {part}")
        if missing is not None:
            return missing
    return named(error, name, stage)


def check_tangents(f: Any, tangents: tuple[Any, ...], args: tuple[Any, ...]) -> tuple[Any, ...]:
    """An frule's input tangents, checked against its arguments, fields matched.

    The shapes of array arguments' tangents (:func:`check_array_tangent`), the fields of tuple
    arguments' (:func:`match_fields`), both named ``f``'s pushforward.
    """
    checked = list(tangents)
    for i, (t, a) in enumerate(zip(tangents[1:], args, strict=True)):
        plain = type(t) is np.ndarray and type(a) is np.ndarray
        if plain and t.shape == a.shape and not t.dtype.hasobject:
            continue  # the common case
        t = unthunk(t) if isinstance(t, AbstractThunk) else t
        if isinstance(t, AbstractZero):
            continue
        what = f"the tangent of argument {i}"
        shape = primal_shape(a)
        if shape is not None:
            check_array_tangent(f"{function_name(f)} pushforward", what, t, shape)
        elif isinstance(a, tuple) and isinstance(t, Tangent):
            checked[i + 1] = match_fields(f"{function_name(f)} pushforward", what, t, a)
    return tuple(checked)
