"""The whole arithmetic table of the tangent types, in one place.

Operand kinds, highest precedence first::

    NotImplementedTangent > NoTangent > ZeroTangent > Thunk/InplaceableThunk > Tangent
        > StructuredMatrix > anything else

"Anything else" is an ndarray, a Python or numpy scalar or a user's own tangent type; between two
of those the ordinary Python operator runs. For each operator the highest-ranked operand decides:

``+``
    NotImplementedTangent wins (the left one if both are). **NoTangent wins ``+``**:
    ``NoTangent() + ZeroTangent() is NoTangent()``. A zero is the identity: ``ZeroTangent() + x
    is x`` and ``x + ZeroTangent() is x`` for every ``x`` (ndarrays too: no copy, no object array),
    and a thunk added to a zero is returned unevaluated. Thunks are evaluated against anything
    else. ``Tangent + Tangent`` is fieldwise for the same primal type and a ``TypeError``
    otherwise; ``primal + Tangent`` (either order) builds a new primal.
``-``
    Raises with a NotImplementedTangent. Otherwise as ``+``: ``x - zero is x``, ``zero - x`` is
    ``-x`` (evaluated), ``NoTangent()`` wins between zeros. There is no ``primal - Tangent``.
``*`` (scaling)
    **ZeroTangent wins ``*``**: ``ZeroTangent() * x is ZeroTangent()`` for every ``x``, even
    ``nan`` (a strong zero), and ``NoTangent() * ZeroTangent() is ZeroTangent()``. Then NoTangent.
    A NotImplementedTangent loses only to a zero factor. A Tangent scales by a number; a Tangent
    times anything else is a ``TypeError``.
``@``
    As ``*`` for zeros and NotImplementedTangent (``ZeroTangent() @ A is ZeroTangent()``);
    thunks are evaluated; a Tangent has no ``@``.
``/``
    A zero divided by anything is that zero; dividing a NotImplementedTangent or by one raises;
    dividing by a zero is a ``TypeError``; a Tangent divides by a number.
unary ``-`` and ``conj``
    Zeros and NotImplementedTangent map to themselves; ``-thunk`` is evaluated, ``conj(thunk)`` is
    a new lazy thunk; a Tangent maps componentwise.
StructuredMatrix (``Diagonal``, ``Symmetric``, ``Hermitian``, the triangular ones)
    ``+``/``-`` with the same structure keep it, with an ndarray or another structure give a
    dense ndarray; ``*`` and ``/`` by a scalar and unary ``-``, ``conj`` keep the structure (a
    complex multiple of a ``Hermitian`` is dense); ``@`` is computed from the structure
    (:mod:`tangents.structured`). Anything else gives ``NotImplemented``, so that Python asks
    the other operand (a user's type) before raising ``TypeError``.

This module imports the tangent classes; :mod:`tangents.base` imports nothing of the package, and
this module installs its operators into ``tangents.base.OPERATORS``, which the classes' dunder
methods call: the dependency runs one way.
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from tangents.base import OPERATORS, is_scalar
from tangents.not_implemented import NotImplementedTangent
from tangents.structural import Tangent, canonicalize, primal_components, rebuild_primal
from tangents.structured import StructuredMatrix
from tangents.thunk import AbstractThunk, Thunk, unthunk
from tangents.zero import AbstractZero, NoTangent, ZeroTangent

__all__ = ["add", "conj", "divide", "is_scalar", "matmul", "multiply", "negative", "subtract"]


# --- + ------------------------------------------------------------------------------------------


def add(a: Any, b: Any) -> Any:
    """``a + b`` under the precedence table of this module."""
    if isinstance(a, NotImplementedTangent):
        return a
    if isinstance(b, NotImplementedTangent):
        return b
    if isinstance(a, AbstractZero):
        return a if isinstance(a, NoTangent) and isinstance(b, AbstractZero) else b
    if isinstance(b, AbstractZero):
        return a
    if isinstance(a, AbstractThunk) or isinstance(b, AbstractThunk):
        return add(unthunk(a), unthunk(b))
    if isinstance(a, Tangent):
        return _add_tangent(a, b) if isinstance(b, Tangent) else _add_primal(b, a)
    if isinstance(b, Tangent):
        return _add_primal(a, b)
    if isinstance(a, StructuredMatrix) or isinstance(b, StructuredMatrix):
        return _structured_binary(a, b, np.add)
    return operator.add(a, b)


def _structured_binary(a: Any, b: Any, op: Callable[[Any, Any], Any]) -> Any:
    """``op(a, b)`` (``+`` or ``-``) where one operand is a structured matrix."""
    if isinstance(a, StructuredMatrix):
        return a._binary(b, op, reflected=False)
    return b._binary(a, op, reflected=True)


def _add_tangent(a: Tangent, b: Tangent) -> Tangent:
    if a.primal_type is not b.primal_type:
        raise TypeError(
            f"cannot add a tangent of {a.primal_type.__name__} to a tangent of "
            f"{b.primal_type.__name__}"
        )
    return _combine(a, b, add)


def _combine(a: Tangent, b: Tangent, op: Callable[[Any, Any], Any]) -> Tangent:
    """Componentwise ``op`` of two tangents of the same primal type; a missing component is zero."""
    x, y = a.backing, b.backing
    if isinstance(x, tuple) and isinstance(y, tuple):
        if len(x) != len(y):
            raise ValueError(
                f"tangents of {a.primal_type.__name__} have {len(x)} and {len(y)} components"
            )
        return Tangent.from_backing(a.primal_type, tuple(map(op, x, y)))
    if isinstance(x, tuple) or isinstance(y, tuple):
        x, y = canonicalize(a).backing, canonicalize(b).backing
    assert isinstance(x, dict)
    assert isinstance(y, dict)
    zero = ZeroTangent()
    keys = list(x) + [k for k in y if k not in x]
    return Tangent.from_backing(
        a.primal_type, {k: op(x.get(k, zero), y.get(k, zero)) for k in keys}
    )


def _add_primal(primal: Any, t: Tangent) -> Any:
    """``primal + t``: a new primal whose components are ``primal.f + t.f``."""
    if not isinstance(primal, t.primal_type):
        raise TypeError(
            f"cannot add a tangent of {t.primal_type.__name__} to a {type(primal).__name__}"
        )
    components = primal_components(primal)
    backing = t.backing
    if isinstance(components, tuple):
        if not isinstance(backing, tuple) or len(backing) != len(components):
            raise ValueError(
                f"a {type(primal).__name__} of length {len(components)} cannot take a tangent "
                f"with components {backing!r}"
            )
        return rebuild_primal(primal, tuple(map(add, components, backing)))
    if isinstance(backing, tuple):
        backing = canonicalize(t).backing
    assert isinstance(backing, dict)
    missing = [k for k in backing if k not in components]
    if missing:
        raise ValueError(f"{type(primal).__name__} has no component(s) {missing}")
    new = {k: add(v, backing[k]) if k in backing else v for k, v in components.items()}
    return rebuild_primal(primal, new)


# --- - ------------------------------------------------------------------------------------------


def subtract(a: Any, b: Any) -> Any:
    """``a - b`` under the precedence table of this module."""
    if isinstance(a, NotImplementedTangent):
        raise a.error("subtract")
    if isinstance(b, NotImplementedTangent):
        raise b.error("subtract")
    if isinstance(b, AbstractZero):
        if isinstance(a, AbstractZero):
            return NoTangent() if NoTangent() in (a, b) else a
        return a
    if isinstance(a, AbstractZero):
        return negative(b)
    if isinstance(a, AbstractThunk) or isinstance(b, AbstractThunk):
        return subtract(unthunk(a), unthunk(b))
    if isinstance(a, Tangent) or isinstance(b, Tangent):
        if not (isinstance(a, Tangent) and isinstance(b, Tangent)):
            raise TypeError("a Tangent can only be subtracted from (or subtract) another Tangent")
        _add_tangent(a, b)  # same checks as +
        return _combine(a, b, subtract)
    if isinstance(a, StructuredMatrix) or isinstance(b, StructuredMatrix):
        return _structured_binary(a, b, np.subtract)
    return operator.sub(a, b)


# --- * ------------------------------------------------------------------------------------------


def multiply(a: Any, b: Any) -> Any:
    """``a * b`` (scaling) under the precedence table of this module."""
    if isinstance(a, ZeroTangent) or isinstance(b, ZeroTangent):
        return ZeroTangent()
    if isinstance(a, NoTangent) or isinstance(b, NoTangent):
        return NoTangent()
    if isinstance(a, NotImplementedTangent):
        return a
    if isinstance(b, NotImplementedTangent):
        return b
    if isinstance(a, AbstractThunk) or isinstance(b, AbstractThunk):
        return multiply(unthunk(a), unthunk(b))
    if isinstance(a, Tangent) or isinstance(b, Tangent):
        t, s = (a, b) if isinstance(a, Tangent) else (b, a)
        if not is_scalar(s):
            raise TypeError(
                f"a Tangent can only be scaled by a number, not multiplied by {type(s).__name__}"
            )
        return _map(t, lambda v: multiply(v, s) if t is a else multiply(s, v))
    if isinstance(a, StructuredMatrix):
        return a._scale(b, reflected=False)
    if isinstance(b, StructuredMatrix):
        return b._scale(a, reflected=True)
    return operator.mul(a, b)


def _map(t: Tangent, f: Callable[[Any], Any]) -> Tangent:
    backing = t.backing
    if isinstance(backing, tuple):
        return Tangent.from_backing(t.primal_type, tuple(f(v) for v in backing))
    return Tangent.from_backing(t.primal_type, {k: f(v) for k, v in backing.items()})


# --- @ ------------------------------------------------------------------------------------------


def matmul(a: Any, b: Any) -> Any:
    """``a @ b`` under the precedence table of this module."""
    if isinstance(a, ZeroTangent) or isinstance(b, ZeroTangent):
        return ZeroTangent()
    if isinstance(a, NoTangent) or isinstance(b, NoTangent):
        return NoTangent()
    if isinstance(a, NotImplementedTangent):
        return a
    if isinstance(b, NotImplementedTangent):
        return b
    if isinstance(a, AbstractThunk) or isinstance(b, AbstractThunk):
        return matmul(unthunk(a), unthunk(b))
    if isinstance(a, Tangent) or isinstance(b, Tangent):
        raise TypeError("a structural Tangent has no matrix product")
    if isinstance(a, StructuredMatrix):
        return a._product(b, reflected=False)
    if isinstance(b, StructuredMatrix):
        return b._product(a, reflected=True)
    return operator.matmul(a, b)


# --- / ------------------------------------------------------------------------------------------


def divide(a: Any, b: Any) -> Any:
    """``a / b`` under the precedence table of this module."""
    if isinstance(a, AbstractZero):
        return a
    if isinstance(a, NotImplementedTangent):
        raise a.error("divide")
    if isinstance(b, NotImplementedTangent):
        raise b.error("divide by")
    if isinstance(b, AbstractZero):
        raise TypeError(f"cannot divide by {b!r}")
    if isinstance(a, AbstractThunk) or isinstance(b, AbstractThunk):
        return divide(unthunk(a), unthunk(b))
    if isinstance(b, Tangent):
        raise TypeError("cannot divide by a structural Tangent")
    if isinstance(a, Tangent):
        if not is_scalar(b):
            raise TypeError(f"a Tangent can only be divided by a number, not by {type(b).__name__}")
        return _map(a, lambda v: divide(v, b))
    if isinstance(b, StructuredMatrix):
        return NotImplemented  # no division by a matrix
    if isinstance(a, StructuredMatrix):
        return a._divide(b)
    return operator.truediv(a, b)


# --- unary - and conj ---------------------------------------------------------------------------


def negative(a: Any) -> Any:
    """``-a`` under the precedence table of this module."""
    if isinstance(a, AbstractZero | NotImplementedTangent):
        return a
    if isinstance(a, AbstractThunk):
        return negative(unthunk(a))
    if isinstance(a, Tangent):
        return _map(a, negative)
    if isinstance(a, StructuredMatrix):
        return a._map(np.negative)
    return operator.neg(a)


def conj(a: Any) -> Any:
    """Complex conjugate; lazy for thunks, the identity on zeros and on real arrays and numbers."""
    if isinstance(a, AbstractZero | NotImplementedTangent):
        return a
    if isinstance(a, AbstractThunk):
        return Thunk(lambda: conj(unthunk(a)))
    if isinstance(a, Tangent):
        return _map(a, conj)
    if isinstance(a, StructuredMatrix):
        return a._map(np.conj)
    if isinstance(a, np.ndarray | np.generic):
        return a if not np.iscomplexobj(a) else np.conj(a)
    if isinstance(a, numbers.Real):
        return a
    if isinstance(a, numbers.Complex):
        return a.conjugate()
    return a.conj()


OPERATORS.add, OPERATORS.subtract, OPERATORS.multiply = add, subtract, multiply
OPERATORS.divide, OPERATORS.matmul = divide, matmul
OPERATORS.negative, OPERATORS.conj = negative, conj
