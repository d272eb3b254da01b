"""Reverse mode's record: one :class:`Node` per traced call, made by :class:`ReverseTrace`.

Recording a call runs its ``rrule`` on the values (the forward pass) and keeps the pullback with
the call's traced inputs (its parents). Each traced value points at the node that made it and
each node at its parents; the trace also lists its nodes in the order they were recorded (the
tape), which is a topological order: the reverse sweep walks it backwards, with no graph search.
A pullback called twice (``jacobian``) replays the same tape.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules import rrule
from rules.autodiff.errors import NoRuleError
from rules.autodiff.structures import is_differentiable_leaf
from rules.autodiff.trace import Trace
from rules.autodiff.traced import Traced
from tangents import Tangent, ZeroTangent
from tangents.structural import field_names

__all__ = ["Node", "ReverseTrace", "box_outputs", "traceable", "unbox"]


class Node:
    """One recorded call: its pullback, its traced parents and the form of its output.

    ``parents`` lists ``(path, node, index)``: the cotangent for the parent output ``index`` of
    ``node`` is the pullback's result at ``path`` (``(i,)`` for positional argument ``i``,
    ``(i, j)`` for element ``j`` of a list argument). ``outputs`` holds the values of the traced
    outputs (``outputs[k]`` for the traced value with index ``k``) and ``form`` how to assemble
    the pullback's cotangent from theirs. A leaf node (an input) has no pullback.
    """

    __slots__ = ("f", "form", "outputs", "owned", "parents", "pullback", "slots")

    def __init__(self, f: Any, pullback: Any, parents: list[Any], outputs: list[Any], form: Any):
        self.f = f
        self.pullback = pullback
        self.parents = parents
        self.outputs = outputs
        self.form = form
        self.slots: list[Any] | None = None  # cotangents during a sweep (rules.autodiff.reverse)
        self.owned = 0  # bit k: the sweep made the buffer in slots[k] and may write into it

    def cotangent(self, slots: list[Any]) -> Any:
        """The cotangent to hand the pullback, from one per traced output."""
        return _assemble(self.form, slots)

    def __repr__(self) -> str:
        return f"<Node {getattr(self.f, '__name__', self.f)}>"


def _assemble(form: Any, slots: list[Any]) -> Any:
    if type(form) is int:
        return slots[form]
    if form is None:
        return ZeroTangent()
    kind, prototype, parts = form
    values = [_assemble(part, slots) for part in parts]
    if kind == "namedtuple":
        return Tangent(type(prototype), *values)
    return type(prototype)(values) if kind == "list" else tuple(values)


def unbox(arg: Any, trace: Trace, path: tuple[int, ...], parents: list[Any]) -> Any:
    """``arg`` with ``trace``'s traced values replaced by their values; their nodes to ``parents``."""
    if isinstance(arg, Traced):
        if arg._trace is trace:
            parents.append((path, arg._payload, arg._index))
            return arg._value
        return arg
    if type(arg) is list or isinstance(arg, tuple):
        items = [unbox(item, trace, (*path, j), parents) for j, item in enumerate(arg)]
        if type(arg) is list:
            return items
        if field_names(type(arg)) is not None:
            return type(arg)(*items)
        return type(arg)(items)
    return arg


def box_outputs(y: Any, trace: Trace, payloads: Any, outputs: list[Any], int_inputs: bool) -> Any:
    """``y`` with its differentiable leaves wrapped; returns ``(boxed, form)``.

    ``payloads(value, k)`` gives the payload of the traced value of output leaf ``k``; leaves
    without a tangent space (bools, integer results of float inputs such as ``np.argmax``)
    stay plain values. ``outputs`` collects the wrapped leaves' values.
    """
    if isinstance(y, tuple | list):
        kind = "namedtuple" if field_names(type(y)) is not None else type(y).__name__
        boxed, forms = [], []
        for item in y:
            b, form = box_outputs(item, trace, payloads, outputs, int_inputs)
            boxed.append(b)
            forms.append(form)
        if kind == "namedtuple":
            rebuilt = type(y)(*boxed)
        else:
            rebuilt = list(boxed) if type(y) is list else type(y)(boxed)
        return rebuilt, (kind if kind in ("namedtuple", "list") else "tuple", y, forms)
    if not traceable(y, int_inputs):
        return y, None
    k = len(outputs)
    outputs.append(y)
    return Traced(y, trace, payloads(y, k), k), k


def traceable(y: Any, int_inputs: bool) -> bool:
    """Whether an output leaf ``y`` is traced.

    It is when it has a tangent space and is not an integer result computed from non-integer
    inputs (an index, a count).
    """
    return is_differentiable_leaf(y) and (int_inputs or not _is_integer(y))


def _is_integer(y: Any) -> bool:
    dtype = getattr(y, "dtype", None)
    return dtype is not None and dtype.kind in "iu"


class ReverseTrace(Trace):
    """Reverse mode: each call on a traced value runs the ``rrule`` and records a node."""

    __slots__ = ("tape",)

    def __init__(self) -> None:
        super().__init__()
        self.tape: list[Node] = []  # every node, in the order recorded: a topological order

    def process(self, f: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run ``rrule(f, ...)`` on the values and return the outputs traced, with their node."""
        parents: list[Any] = []
        values = []
        for i, a in enumerate(args):
            if type(a) is Traced and a._trace is self:  # the common case, inline
                parents.append(((i,), a._payload, a._index))
                values.append(a._value)
            else:
                values.append(unbox(a, self, (i,), parents))
        result = rrule(f, *values, **kwargs)
        if result is None:
            raise NoRuleError(f, declined=values if f in rrule else None)
        y, pullback = result
        node = Node(f, pullback, parents, [], None)
        self.tape.append(node)
        if type(y) is np.ndarray and y.dtype.kind in "fc":  # one array out: no structure to walk
            node.outputs.append(y)
            node.form = 0
            return Traced(y, self, node, 0)
        int_inputs = any(_is_integer(parent.outputs[k]) for _, parent, k in parents)
        # Outputs without a tangent space (a comparison, np.argmax) come back as plain values.
        boxed, node.form = box_outputs(y, self, lambda v, k: node, node.outputs, int_inputs)
        return boxed

    def new_input(self, value: Any) -> Traced:
        """A traced input: a leaf node holding ``value``."""
        node = Node(None, None, [], [value], 0)
        self.tape.append(node)
        return Traced(value, self, node, 0)
