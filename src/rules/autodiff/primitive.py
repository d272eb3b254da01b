"""``primitive(f)``: make a function of your own one recorded call, through its registered rules.

The driver traces numpy calls; a plain Python function is invisible to it, so a traced call of
``f`` simply runs ``f``'s body on traced values and records what the body does. When ``f`` has a
rule of its own (faster, more stable, or the body calls something without a rule), decorate it:

    @primitive
    def softplus(x):
        return np.logaddexp(0.0, x)

    @rrule.register(softplus)          # or register the rule for the undecorated function
    def softplus_rrule(x): ...

On traced arguments the decorated function is one call, ``rrule(softplus, ...)`` (or ``frule`` in
forward mode); on plain arguments it calls ``f``. numpy's and scipy's functions with rules behave
this way already (scipy's through :mod:`rules.autodiff.scipy`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from rules import frule, rrule
from rules.autodiff.dispatch import bind, innermost_trace

__all__ = ["primitive"]


def primitive(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` as one traced call: its registered ``rrule``/``frule`` run, its body is not traced.

    The rule may be registered for the returned function or for ``f`` itself, before or after
    decorating. A traced call with no rule for either raises
    :class:`~rules.autodiff.errors.NoRuleError` when it is traced.
    """

    @functools.wraps(f)
    def traced_as_one_call(*args: Any, **kwargs: Any) -> Any:
        if innermost_trace(args) is None and innermost_trace(tuple(kwargs.values())) is None:
            return f(*args, **kwargs)
        own = traced_as_one_call in rrule or traced_as_one_call in frule
        return bind(traced_as_one_call if own else f, args, kwargs)

    return traced_as_one_call
