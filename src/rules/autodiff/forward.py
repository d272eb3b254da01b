"""Forward mode: each call on a traced value applies its ``frule`` to the values and tangents.

A forward-mode traced value carries its tangent as its payload. A call gathers one tangent per
positional argument (the traced value's, ``ZeroTangent()`` for constants, a list of them for a
list argument such as ``np.concatenate``'s), applies ``frule((NoTangent(), *tangents), f,
*values)`` and wraps each differentiable output with its part of the output tangent. Nothing is
recorded: the tangent is computed as the program runs.
"""

from __future__ import annotations

from typing import Any

from rules import frule, split_cotangent
from rules.autodiff.errors import NoRuleError
from rules.autodiff.tape import box_outputs, traceable
from rules.autodiff.trace import Trace
from rules.autodiff.traced import Traced
from tangents import AbstractZero, NoTangent, ZeroTangent
from tangents.structural import field_names

__all__ = ["ForwardTrace"]


def _unbox(arg: Any, trace: Trace, flags: list[bool]) -> tuple[Any, Any]:
    """``(value, tangent)`` of one argument; ``flags`` records whether an integer input is traced."""
    if isinstance(arg, Traced):
        if arg._trace is trace:
            dtype = getattr(arg._value, "dtype", None)
            if dtype is not None and dtype.kind in "iu":
                flags.append(True)
            return arg._value, arg._payload
        return arg, ZeroTangent()
    if type(arg) is list or isinstance(arg, tuple):
        pairs = [_unbox(item, trace, flags) for item in arg]
        values = [v for v, _ in pairs]
        tangents = [t for _, t in pairs]
        if type(arg) is list:
            return values, (tangents if any(_live(t) for t in tangents) else ZeroTangent())
        rebuilt = type(arg)(*values) if field_names(type(arg)) is not None else type(arg)(values)
        return rebuilt, (tuple(tangents) if any(_live(t) for t in tangents) else ZeroTangent())
    return arg, ZeroTangent()


def _live(t: Any) -> bool:
    return not isinstance(t, AbstractZero)


class ForwardTrace(Trace):
    """Forward mode: each call applies the ``frule`` and wraps the outputs with their tangents."""

    __slots__ = ()

    def process(self, f: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run ``frule`` on the values and tangents; return the outputs traced."""
        flags: list[bool] = []
        pairs = [_unbox(a, self, flags) for a in args]
        values = tuple(v for v, _ in pairs)
        tangents = (NoTangent(), *(t for _, t in pairs))
        result = frule(tangents, f, *values, **kwargs)
        if result is None:
            raise NoRuleError(f, kind="frule", declined=values if f in frule else None)
        y, y_dot = result
        leaves: list[Any] = []
        _split_like(y, y_dot, leaves, bool(flags))
        boxed, _ = box_outputs(y, self, lambda value, k: leaves[k], [], bool(flags))
        return boxed

    def new_input(self, value: Any, tangent: Any) -> Traced:
        """A traced input with its tangent."""
        return Traced(value, self, tangent, 0)


def _split_like(y: Any, y_dot: Any, out: list[Any], int_inputs: bool) -> None:
    """Append the tangent of each traced leaf of ``y``, in the order ``box_outputs`` uses."""
    if isinstance(y, tuple | list):
        parts = split_cotangent(y_dot, len(y))
        for item, part in zip(y, parts, strict=True):
            _split_like(item, part, out, int_inputs)
        return
    if traceable(y, int_inputs):
        out.append(y_dot)
