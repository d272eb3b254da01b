"""Build a module that mirrors a scipy module (see :mod:`rules.autodiff.scipy`)."""

from __future__ import annotations

import functools
import importlib
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from rules.autodiff.dispatch import bind

__all__ = ["TracedObject", "mirror"]

_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType)


class TracedObject:
    """A scipy object with methods (a distribution such as ``scipy.stats.norm``), traced.

    Its methods are traced like the module's functions (``norm.logpdf(x)`` records one call of
    the bound method, whose rule the registry finds); other attributes are the object's own.
    """

    __slots__ = ("_object",)

    def __init__(self, obj: Any) -> None:
        self._object = obj

    def __getattr__(self, name: str) -> Any:
        return traceable(getattr(self._object, name))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the object (``norm(loc, scale)`` freezes a distribution), traced."""
        return bind(self._object, args, kwargs)

    def __repr__(self) -> str:
        return f"traceable({self._object!r})"


def traceable(target: Any) -> Any:
    """``target`` as the mirror exposes it: functions and methods wrapped to trace their calls."""
    if isinstance(target, np.ufunc | type | types.ModuleType) or not callable(target):
        return target
    if not isinstance(target, _FUNCTIONS):
        return TracedObject(target)

    @functools.wraps(target)
    def traced_scipy_function(*args: Any, **kwargs: Any) -> Any:
        return bind(target, args, kwargs)

    return traced_scipy_function


def mirror(scipy_module: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of a mirror of ``scipy_module``.

    A submodule (``scipy.sparse.linalg`` from the mirror of ``scipy.sparse``) is the mirror's
    own submodule, never scipy's untraced one.
    """
    cache: dict[str, Any] = {}
    own = "rules.autodiff." + scipy_module

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name not in cache:
            module = importlib.import_module(scipy_module)
            try:
                target = getattr(module, name)
            except AttributeError:
                raise AttributeError(f"{scipy_module} has no attribute {name!r}") from None
            if isinstance(target, types.ModuleType):
                try:
                    target = importlib.import_module(f"{own}.{name}")
                except ImportError:
                    raise AttributeError(
                        f"{own} has no mirror of {scipy_module}.{name}; add one as "
                        f"src/rules/autodiff/scipy/.../{name}.py (see rules.autodiff.scipy)"
                    ) from None
            cache[name] = traceable(target)
        return cache[name]

    def __dir__() -> list[str]:
        return sorted(dir(importlib.import_module(scipy_module)))

    return __getattr__, __dir__
