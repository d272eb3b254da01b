"""Build a module that mirrors a scipy module (see :mod:`rules.autodiff.scipy`)."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

from rules.autodiff.dispatch import bind

__all__ = ["mirror"]


def _traceable(target: Any) -> Any:
    if isinstance(target, (np.ufunc, type)) or not callable(target):
        return target

    @functools.wraps(target)
    def traced_scipy_function(*args: Any, **kwargs: Any) -> Any:
        return bind(target, args, kwargs)

    return traced_scipy_function


def mirror(scipy_module: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of a mirror of ``scipy_module``."""
    cache: dict[str, Any] = {}

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name not in cache:
            module = importlib.import_module(scipy_module)
            try:
                target = getattr(module, name)
            except AttributeError:
                raise AttributeError(f"{scipy_module} has no attribute {name!r}") from None
            cache[name] = _traceable(target)
        return cache[name]

    def __dir__() -> list[str]:
        return sorted(dir(importlib.import_module(scipy_module)))

    return __getattr__, __dir__
