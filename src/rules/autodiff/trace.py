"""Traces: one differentiation in progress, and the stack of those running.

Each ``grad``/``vjp``/``jvp`` call opens a trace. Its level is its depth in the stack of open
traces, as in HIPS autograd's trace ids and JAX's main traces: a traced value belongs to one
trace, and a value traced by an outer trace may itself be the primal inside an inner trace's
traced value (nesting, for derivatives of derivatives). When a function is called with traced
values of several traces, the innermost (highest level) trace handles the call; values of outer
traces pass through it as ordinary primals and are handled when the rule computes with them.

A trace closes when its differentiation returns; a traced value used after that raises
:class:`~rules.autodiff.errors.EscapedTraceError` rather than acting as a constant.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["Trace", "open_trace"]

_OPEN: list[Trace] = []


class Trace:
    """A differentiation in progress; subclasses say what a call on its traced values does."""

    __slots__ = ("active", "level")

    def __init__(self) -> None:
        self.level = -1
        self.active = False

    def process(self, f: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Apply ``f`` to ``args`` (some of them this trace's traced values); the traced result."""
        raise NotImplementedError

    def __repr__(self) -> str:
        state = "open" if self.active else "closed"
        return f"<{type(self).__name__} level {self.level}, {state}>"


@contextmanager
def open_trace(trace: Trace) -> Iterator[Trace]:
    """Open ``trace`` one level above the open ones for the duration of the block."""
    trace.level = len(_OPEN)
    trace.active = True
    _OPEN.append(trace)
    try:
        yield trace
    finally:
        _OPEN.remove(trace)
        trace.active = False
