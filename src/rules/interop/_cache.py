"""One wrapped operation per function and option set, built on first use by either adapter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["OperationCache"]


class OperationCache:
    """``cache(f, **options)``: ``wrap(f, **options)``, built once per ``(f, options)``.

    The ready namespaces call their wrapped operations with the peer's options (``UPLO``,
    ``mode``, ...); building an operation defines classes and closures, so it is kept.
    """

    def __init__(self, wrap: Callable[..., Callable[..., Any]]) -> None:
        self._wrap = wrap
        self._operations: dict[Any, Callable[..., Any]] = {}

    def __call__(self, f: Callable[..., Any], **options: Any) -> Callable[..., Any]:
        """The wrapped ``f`` with ``options`` as its static keyword arguments."""
        key = (f, tuple(sorted(options.items())))
        operation = self._operations.get(key)
        if operation is None:
            operation = self._operations[key] = self._wrap(f, **options)
        return operation
