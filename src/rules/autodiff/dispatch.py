"""``bind``: one call of a function on arguments some of which are traced values.

The innermost trace among the traced values handles the call (see :mod:`rules.autodiff.trace`):
reverse mode records the function's ``rrule``, forward mode applies its ``frule``. Traced values
are found among the positional arguments and inside the lists and tuples they hold
(``np.concatenate([x, y])``, ``np.einsum("ij,jk", a, b)``); a traced keyword argument is an error
(keyword arguments are never differentiated), and so is one given as ``out=``.
"""

from __future__ import annotations

from typing import Any

from rules.autodiff.errors import EscapedTraceError, InPlaceError, NoRuleError, TracedKeywordError

__all__ = ["bind", "bind_ufunc", "innermost_trace", "is_traced"]


def is_traced(x: Any) -> bool:
    """Whether ``x`` is a traced value (of any trace)."""
    return isinstance(x, _traced_type())


_TRACED: list[type] = []


def _traced_type() -> type:
    if not _TRACED:
        from rules.autodiff.traced import Traced

        _TRACED.append(Traced)
    return _TRACED[0]


def _scan(x: Any, best: Any, traced: type) -> Any:
    """The innermost open trace among ``x``'s traced values and ``best``; raise for closed ones."""
    if isinstance(x, traced):
        trace = x._trace
        if not trace.active:
            raise EscapedTraceError()
        return trace if best is None or trace.level > best.level else best
    if type(x) is list or isinstance(x, tuple):
        for item in x:
            best = _scan(item, best, traced)
    return best


def innermost_trace(args: tuple[Any, ...]) -> Any:
    """The innermost open trace among the traced values in ``args``, or ``None``."""
    traced = _traced_type()
    best = None
    for arg in args:
        best = _scan(arg, best, traced)
    return best


def _check_keywords(f: Any, kwargs: dict[str, Any]) -> None:
    traced = _traced_type()
    for key, value in kwargs.items():
        if _scan(value, None, traced) is not None:
            if key == "out":
                raise InPlaceError("out= given a traced array")
            raise TracedKeywordError(f, key)


def bind(f: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``f(*args, **kwargs)``, traced by the innermost trace among the arguments."""
    if kwargs:
        if kwargs.get("out") is not None:
            raise InPlaceError(f"{getattr(f, '__name__', f)}(..., out=...) with traced values")
        _check_keywords(f, kwargs)
    trace = innermost_trace(args)
    if trace is None:
        return f(*args, **kwargs)
    return trace.process(f, args, kwargs)


def bind_ufunc(ufunc: Any, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A ufunc call reached through ``__array_ufunc__``: only ``ufunc(...)`` itself has rules."""
    if kwargs.get("out") is not None:
        raise InPlaceError(f"np.{ufunc.__name__}(..., out=...) with traced values")
    if method != "__call__":
        raise NoRuleError(getattr(ufunc, method), name=f"np.{ufunc.__name__}.{method}")
    return bind(ufunc, inputs, kwargs)
