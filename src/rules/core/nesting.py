"""Values traced by a differentiation, as rule code sees them: the hook for higher order.

A rule's pullback is differentiated in turn (``grad(grad(f))``, ``hessian``, ``hvp``) by running
it on *traced values*, the driver's array-likes (:class:`rules.autodiff.Traced`) that record what
is done to them. A traced value never passes the kernel gate
(:func:`rules.core.dispatch.kernel_eligible`), so it takes the algebra path or the array-formula
path, whose numpy operations reach the driver through numpy's ``__array_function__`` and
``__array_ufunc__`` protocols and are rules again. Three things on those paths do not dispatch,
and rule code uses this module's helpers for them instead:

* ``np.asarray(x)`` would freeze a traced value into a constant: :func:`as_array` passes it
  through (casting it, traced, when a ``dtype`` is asked for);
* scipy's functions call ``np.asarray`` themselves: :func:`call` hands a call with traced
  arguments to the driver, which records it through the function's own rule;
* ``isinstance(x, np.ndarray)`` tests: :func:`is_traced` says whether ``x`` is one.

The rule sets may not import the driver (DESIGN.md section 7), so the driver registers its
traced type and its call hook here with :func:`register_traced` when ``rules.autodiff`` is
imported. Until then no value is traced and every helper is its plain numpy counterpart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["as_array", "call", "contiguous", "innermost_value", "is_traced", "register_traced"]

_TRACED: list[type] = []
_BIND: list[Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]] = []


def register_traced(cls: type, bind: Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]) -> None:
    """Make ``cls`` the traced type and ``bind(f, args, kwargs)`` the call that records ``f``."""
    _TRACED[:] = [cls]
    _BIND[:] = [bind]


def is_traced(x: Any) -> bool:
    """Whether ``x`` is a value being differentiated (a traced value of the driver)."""
    return bool(_TRACED) and isinstance(x, _TRACED[0])


def _any_traced(x: Any) -> bool:
    if is_traced(x):
        return True
    if type(x) is list or type(x) is tuple:
        return any(_any_traced(item) for item in x)
    return False


def innermost_value(x: Any) -> Any:
    """The plain value a (possibly nested) traced value stands for; ``x`` itself otherwise."""
    while is_traced(x):
        x = x._value
    return x


def as_array(x: Any, dtype: Any = None) -> Any:
    """``np.asarray(x, dtype)``, but a traced value stays traced (cast by ``astype`` if needed)."""
    if _TRACED and isinstance(x, _TRACED[0]):
        if dtype is not None and np.dtype(dtype) != x.dtype:
            return x.astype(dtype)
        return x
    return np.asarray(x, dtype=dtype)


def contiguous(x: Any, dtype: Any = None) -> Any:
    """``np.ascontiguousarray(x, dtype)``, but a traced value stays traced (see :func:`as_array`).

    Layout is a property of stored arrays; a traced value has none to fix.
    """
    if _TRACED and isinstance(x, _TRACED[0]):
        return as_array(x, dtype)
    return np.ascontiguousarray(x, dtype=dtype)


def call(f: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``f(*args, **kwargs)``; recorded by the driver through ``f``'s rule if an argument is traced.

    For functions that do not dispatch on their arguments' types (scipy's), called on the
    array-formula path of a rule whose operands may be traced.
    """
    if _BIND:
        for a in (*args, *kwargs.values()):  # a loop, not any(): this sits on hot paths
            if _any_traced(a):  # a traced keyword gets the driver's error naming it
                return _BIND[0](f, args, kwargs)
    return f(*args, **kwargs)
