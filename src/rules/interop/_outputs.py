"""What both adapters share: the output structure of a rule, and cotangents as plain arrays.

Neither torch nor jax is imported here; the adapters convert their tensors to numpy arrays
before calling these helpers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rules import split_cotangent
from rules.core.registry import function_name
from tangents import AbstractZero, unthunk

__all__ = ["Structure", "cotangent_array", "flatten", "is_differentiable_dtype"]


@dataclass(frozen=True)
class Structure:
    """How a function's output is built from its leaves: one array, a tuple, a namedtuple, a list.

    ``kind`` is ``None`` for a single output, else the sequence type (``tuple``, ``list`` or a
    namedtuple class such as numpy's ``EighResult``); ``n`` is the number of leaves.
    """

    kind: type | None
    n: int

    def build(self, leaves: tuple[Any, ...]) -> Any:
        """The output of this structure holding ``leaves``."""
        if self.kind is None:
            return leaves[0]
        if hasattr(self.kind, "_make"):  # a namedtuple
            return self.kind._make(leaves)
        return self.kind(leaves)

    def split(self, y_dot: Any) -> tuple[Any, ...]:
        """The ``n`` components of a tangent of the output (zeros and thunks as given)."""
        if self.kind is None:
            return (y_dot,)
        return split_cotangent(y_dot, self.n)


def flatten(y: Any) -> tuple[tuple[Any, ...], Structure]:
    """The leaves of a rule's output ``y`` and its :class:`Structure` (one level deep)."""
    if isinstance(y, tuple | list):
        return tuple(y), Structure(type(y), len(y))
    return (y,), Structure(None, 1)


def is_differentiable_dtype(dtype: Any) -> bool:
    """Whether values of ``dtype`` carry a tangent (inexact: float or complex)."""
    return np.issubdtype(np.dtype(dtype), np.inexact)


def cotangent_array(f: Callable[..., Any], dx: Any, what: str) -> np.ndarray | None:
    """A rule's (co)tangent ``dx`` as a plain ndarray, or ``None`` for a symbolic zero.

    Raises ``TypeError`` naming ``f`` when the rule returned something that is not an array
    (an object array or a tangent type the peers cannot hold).
    """
    dx = unthunk(dx)
    if isinstance(dx, AbstractZero):
        return None
    array = np.asarray(dx)
    if array.dtype == object or not np.issubdtype(array.dtype, np.number):
        raise TypeError(
            f"{function_name(f)}: the rule returned {what} of type {type(dx).__name__}, "
            "which is not a numeric array"
        )
    return array
