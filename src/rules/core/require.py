"""``require_rrule`` and ``require_frule``: apply a rule, or fail naming the function.

``rrule(f, *args)`` returns ``None`` when no rule applies, so that a driver can fall back to
tracing ``f``'s body; a user who unpacks ``y, pullback = rrule(f, x)`` for an ``f`` without
a rule then gets ``cannot unpack non-iterable NoneType object``, which names nothing. These two functions take
the same arguments as ``rrule``/``frule`` and raise :class:`MissingRuleError` instead, saying
which function has no rule and how to register one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rules.core.registry import frule, function_name, rrule

__all__ = ["MissingRuleError", "require_frule", "require_rrule"]


class MissingRuleError(LookupError):
    """No rule is registered for a function (or its rule declined the arguments)."""


def _missing(kind: str, f: Any) -> MissingRuleError:
    name = function_name(f)
    table = rrule if kind == "rrule" else frule
    if f in table:
        return MissingRuleError(
            f"the {kind} registered for {name} declined these arguments (it returned None); "
            f"call {name} with arguments its rule supports, or register another {kind} with "
            f"@rules.{kind}.register({name}, override=True)"
        )
    return MissingRuleError(
        f"no {kind} is registered for {name}; register one with @rules.{kind}.register({name}) "
        "(rules.scalar_rule for an elementwise function, rules.non_differentiable for one "
        "whose output does not depend differentiably on its inputs), and check it with "
        f"rules.testing.check_{kind}"
    )


def require_rrule(f: Any, *args: Any, **kwargs: Any) -> tuple[Any, Callable[[Any], Any]]:
    """``rrule(f, *args, **kwargs)``, raising :class:`MissingRuleError` instead of returning None.

    Returns
    -------
    y, pullback
        As :data:`rules.rrule`.

    Raises
    ------
    MissingRuleError
        Naming ``f`` and how to register a rule for it.
    """
    result = rrule(f, *args, **kwargs)
    if result is None:
        raise _missing("rrule", f)
    return result


def require_frule(tangents: tuple[Any, ...], f: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """``frule(tangents, f, *args, **kwargs)``, raising :class:`MissingRuleError` instead of None.

    Returns
    -------
    y, y_dot
        As :data:`rules.frule`.

    Raises
    ------
    MissingRuleError
        Naming ``f`` and how to register a rule for it.
    """
    result = frule(tangents, f, *args, **kwargs)
    if result is None:
        raise _missing("frule", f)
    return result
