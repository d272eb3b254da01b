"""The reverse sweep: play the recorded pullbacks back, output to inputs.

Given cotangents for some traced outputs, the sweep walks the tape (the nodes in the order they
were recorded) backwards, so each node comes after every node that used its outputs, and each
pullback runs once, with the sum of the cotangents of its outputs. The tangent algebra does the
work, and the sweep keeps its promises:

* **Zeros skip work.** A node whose outputs' cotangents are all ``AbstractZero`` is not played
  back at all (its pullback is linear), and nor, through it, are the nodes that only it used.
* **Laziness.** Only the cotangents of traced arguments are read from a pullback's result; the
  others (arguments not being differentiated, constants) stay as the rule returned them, thunks
  unevaluated.
* **Accumulation in place, only into the driver's own buffers.** The first cotangent to reach
  an output is kept as it came (it may be the user's array or shared by two pullbacks); the
  second makes a new buffer (a sum the sweep owns) and later ones are added into it with
  ``tangents.add_inplace``, which also lets an ``InplaceableThunk`` (``x[i]``'s pullback) write
  its scatter straight into it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.autodiff.tape import Node
from tangents import AbstractThunk, AbstractZero, Tangent, ZeroTangent, add_inplace, tangent_dtype
from tangents import unthunk as _unthunk

__all__ = ["backward"]


def _component(bars: Any, path: tuple[int, ...]) -> Any:
    """The cotangent at ``path`` in a pullback's result (see ``Node.parents``)."""
    value = bars[1 + path[0]]
    for j in path[1:]:
        if isinstance(value, AbstractZero):
            return value
        value = _unthunk(value)
        value = value[j] if isinstance(value, Tangent | tuple | list) else ZeroTangent()
    return value


def _accumulate(node: Node, k: int, dx: Any) -> None:
    """Add the cotangent ``dx`` to output ``k`` of ``node`` (see the module docstring)."""
    slots = node.slots
    if slots is None:
        slots = node.slots = [ZeroTangent()] * len(node.outputs)
    current = slots[k]
    if isinstance(current, AbstractZero):
        slots[k] = dx  # kept as it came: not ours to write into
        return
    bit = 1 << k
    if node.owned & bit:
        slots[k] = add_inplace(current, dx)
        return
    total = _fresh_sum(node.outputs[k], current, dx)
    if type(total) is np.ndarray and total is not current and total is not dx:
        node.owned |= bit
    slots[k] = total


def _fresh_sum(primal: Any, a: Any, b: Any) -> Any:
    """``a + b`` in a new buffer when both are arrays or thunks of arrays, else as the algebra."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.shape == b.shape:
        return np.add(a, b)
    thunk = isinstance(a, AbstractThunk) or isinstance(b, AbstractThunk)
    if thunk and isinstance(primal, np.ndarray) and tangent_dtype(primal.dtype) is not None:
        buffer = np.zeros(primal.shape, tangent_dtype(primal.dtype))
        return add_inplace(add_inplace(buffer, a), b)
    return a + b


def backward(seeds: list[tuple[Node, int, Any]], inputs: list[Node], tape: list[Node]) -> list[Any]:
    """The cotangent reaching each of ``inputs`` from cotangents ``seeds`` of traced outputs.

    ``seeds`` lists ``(node, index, cotangent)``; ``tape`` is every node of the trace in the
    order recorded. The result has one cotangent per input node, ``ZeroTangent()`` where none
    arrives. Thunks among the results are left for the caller.
    """
    try:
        for node, k, dx in seeds:
            if not isinstance(dx, AbstractZero):
                _accumulate(node, k, dx)
        found = [ZeroTangent()] * len(inputs)
        position = {id(n): i for i, n in enumerate(inputs)}
        for node in reversed(tape):
            cotangents = node.slots
            if cotangents is None:
                continue  # no cotangent reached it: skipped, and so are its parents through it
            if node.pullback is None:
                i = position.get(id(node))
                if i is not None:
                    found[i] = cotangents[0]
                continue
            node.slots = None
            node.owned = 0
            if all(isinstance(c, AbstractZero) for c in cotangents):
                continue
            bars = node.pullback(node.cotangent(cotangents))
            for path, parent, k in node.parents:
                dx = bars[1 + path[0]] if len(path) == 1 else _component(bars, path)
                if not isinstance(dx, AbstractZero):
                    _accumulate(parent, k, dx)
        return found
    finally:
        for node in tape:  # a sweep that raised leaves nothing behind for the next one
            node.slots = None
            node.owned = 0
