"""The reverse sweep: play the recorded pullbacks back, output to inputs.

Given cotangents for some traced outputs, the sweep visits the nodes reachable from them in
reverse topological order (each node after every node that used its outputs), so each
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


def _topological(roots: list[Node]) -> list[Node]:
    """The nodes reachable from ``roots``, each after all its parents (an iterative DFS)."""
    order: list[Node] = []
    seen: set[int] = set()
    stack: list[tuple[Node, bool]] = [(r, False) for r in roots]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((parent, False) for _, parent, _ in node.parents if id(parent) not in seen)
    return order


def _component(bars: Any, path: tuple[int, ...]) -> Any:
    """The cotangent at ``path`` in a pullback's result (see ``Node.parents``)."""
    value = bars[1 + path[0]]
    for j in path[1:]:
        if isinstance(value, AbstractZero):
            return value
        value = _unthunk(value)
        value = value[j] if isinstance(value, Tangent | tuple | list) else ZeroTangent()
    return value


class _Slots:
    """The cotangents accumulated so far for each node's outputs, and which buffers are ours."""

    __slots__ = ("owned", "values")

    def __init__(self) -> None:
        self.values: dict[int, list[Any]] = {}
        self.owned: set[tuple[int, int]] = set()

    def add(self, node: Node, k: int, dx: Any) -> None:
        slots = self.values.get(id(node))
        if slots is None:
            slots = self.values[id(node)] = [ZeroTangent()] * len(node.outputs)
        current = slots[k]
        if isinstance(current, AbstractZero):
            slots[k] = dx  # kept as it came: not ours to write into
            return
        key = (id(node), k)
        if key in self.owned:
            slots[k] = add_inplace(current, dx)
            return
        total = self._fresh_sum(node.outputs[k], current, dx)
        if type(total) is np.ndarray and total is not current and total is not dx:
            self.owned.add(key)
        slots[k] = total

    @staticmethod
    def _fresh_sum(primal: Any, a: Any, b: Any) -> Any:
        """``a + b`` in a new buffer when both are arrays or thunks of arrays, else as the algebra."""
        if type(a) is np.ndarray and type(b) is np.ndarray and a.shape == b.shape:
            return np.add(a, b)
        if isinstance(a, AbstractThunk) or isinstance(b, AbstractThunk):
            dtype = tangent_dtype(np.result_type(primal)) if hasattr(primal, "dtype") else None
            shape = getattr(primal, "shape", None)
            if dtype is not None and shape is not None and isinstance(primal, np.ndarray):
                buffer = np.zeros(shape, dtype)
                return add_inplace(add_inplace(buffer, a), b)
        return a + b

    def pop(self, node: Node) -> list[Any] | None:
        return self.values.pop(id(node), None)


def backward(seeds: list[tuple[Node, int, Any]], inputs: list[Node]) -> list[Any]:
    """The cotangent reaching each of ``inputs`` from cotangents ``seeds`` of traced outputs.

    ``seeds`` lists ``(node, index, cotangent)``; the result has one cotangent per input node,
    ``ZeroTangent()`` where none arrives. Thunks among the results are left for the caller.
    """
    slots = _Slots()
    for node, k, dx in seeds:
        if not isinstance(dx, AbstractZero):
            slots.add(node, k, dx)
    wanted = {id(n) for n in inputs}
    found: dict[int, Any] = {}
    for node in reversed(_topological([node for node, _, _ in seeds])):
        cotangents = slots.pop(node)
        if cotangents is None:
            continue  # no cotangent reached it: skipped, and so are its parents through it
        if id(node) in wanted:
            found[id(node)] = cotangents[0]
        if node.pullback is None or all(isinstance(c, AbstractZero) for c in cotangents):
            continue
        bars = node.pullback(node.cotangent(cotangents))
        for path, parent, k in node.parents:
            dx = _component(bars, path)
            if not isinstance(dx, AbstractZero):
                slots.add(parent, k, dx)
    return [found.get(id(n), ZeroTangent()) for n in inputs]
