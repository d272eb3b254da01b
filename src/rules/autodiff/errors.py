"""The driver's errors: each says what went wrong, at the call that caused it, and what to do.

A gradient that is wrong because something was not traced would be silent; every way a value
can leave a trace (a conversion to an ndarray or a Python number, a write into an array, a
function without a rule, a traced value kept past the end of its trace) raises one of these
instead, when it happens.
"""

from __future__ import annotations

from typing import Any

from rules.core.registry import function_name

__all__ = [
    "EscapedTraceError",
    "InPlaceError",
    "NoRuleError",
    "TracedConversionError",
    "TracedKeywordError",
]


class NoRuleError(TypeError):
    """A traced value reached a function that has no ``rrule`` (or no ``frule``, in forward mode)."""

    def __init__(
        self, f: Any, kind: str = "rrule", name: str | None = None, declined: Any = None
    ) -> None:
        name = name or function_name(f)
        table = "rrule" if kind == "rrule" else "frule"
        mode = "reverse mode (grad, vjp)" if kind == "rrule" else "forward mode (jvp)"
        self.function = f
        if declined is not None:  # a rule exists but returned None for these arguments
            types = ", ".join(type(a).__name__ for a in declined)
            super().__init__(
                f"the {table} of {name} does not apply to these arguments ({types}), so {mode} "
                f"cannot differentiate this call. Register a rule that covers them with "
                f"@rules.{table}.register({name}, override=True), or call {name} differently."
            )
            return
        super().__init__(
            f"{name} was called on a traced value but has no {table}, so {mode} cannot "
            f"differentiate through it. Register one with @rules.{table}.register({name}) "
            "(see docs/autodiff.md, 'Adding a rule'); for a function of your own, register its "
            "rule and decorate it with rules.autodiff.primitive, or write it with functions "
            "that have rules."
        )
        self.function = f


class TracedConversionError(TypeError):
    """A traced value was converted to an ndarray or a Python number, which would drop its trace."""

    def __init__(self, how: str) -> None:
        super().__init__(
            f"{how} on a traced value: the result would be a constant, and every gradient "
            "through it silently zero. Keep the computation in numpy functions and operators "
            "(they are traced); for an array made from traced values use np.stack or "
            "np.concatenate, not np.array; for a Python number from a traced scalar compute with "
            "the traced scalar itself. Inside a function you differentiate, use numpy on the "
            "value as it is (see docs/autodiff.md, 'What is traced')."
        )


class InPlaceError(TypeError):
    """An in-place write into, or out of, a traced array."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"{what}: in-place writes are not traced, so the gradient would be wrong. Build the "
            "array functionally instead (x = x + y rather than np.add(x, y, out=x); "
            "np.where(mask, new, x) or np.concatenate rather than x[i] = new)."
        )


class TracedKeywordError(TypeError):
    """A traced value was passed by keyword, and keyword arguments are never differentiated."""

    def __init__(self, f: Any, keyword: str) -> None:
        super().__init__(
            f"{function_name(f)} got a traced value as its keyword argument {keyword!r}; "
            "keyword arguments are never differentiated (DESIGN.md section 3), so its gradient "
            "would be silently dropped. Pass it positionally."
        )


class EscapedTraceError(RuntimeError):
    """A traced value was used after the trace that made it had finished."""

    def __init__(self) -> None:
        super().__init__(
            "a traced value from a finished grad/vjp/jvp call was used again (it escaped, e.g. "
            "into a global, a closure or a cache). Its derivative would be lost: return it from "
            "the differentiated function instead, or pass it in as an argument."
        )
