"""Helpers for rules written with numpy's own signatures (options after the array arguments).

numpy functions take options (``axis``, ``keepdims``, ``shape``, ``order``, ...) after their array
arguments, positionally or by keyword. A rule keeps numpy's signature and returns cotangents for
its leading array parameters; the registry fits them to each call (:mod:`rules.core.registry`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from rules.core.registry import rrule
from tangents import tangent_dtype

__all__ = [
    "is_constant",
    "normalize_axes",
    "refuse",
    "rrule_with_options",
    "zero_tangent_array",
]

Rule = Callable[..., Any]


def rrule_with_options(*fs: Any) -> Callable[[Rule], Rule]:
    """Decorator registering ``rule`` as the rrule of each of ``fs``.

    The rule keeps numpy's signature, options included, and its pullback returns cotangents for
    its leading array parameters; the registry fits them to each call (positional options get
    ``NoTangent()``, parameters passed by keyword are dropped; see :mod:`rules.core.registry`).
    """

    def decorator(rule: Rule) -> Rule:
        for f in fs:
            rrule.register(f)(rule)
        return rule

    return decorator


def refuse(name: str, **options: Any) -> None:
    """Raise ``ValueError`` naming ``name`` for each option that is set (not ``None``/``False``).

    Used for options a rule does not support, such as ``out=`` (it aliases the output with an
    array the caller owns) and ``where=`` (it leaves entries of the output undefined).
    """
    bad = sorted(k for k, v in options.items() if v is not None and v is not False)
    if bad:
        raise ValueError(f"the rules of {name} do not support the option(s) {bad}")


def normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (``None``, an int or a tuple of ints) as a tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    return tuple(normalize_axis_tuple(axis, ndim))


def zero_tangent_array(x: Any) -> np.ndarray:
    """Writable zeros in the tangent space of the primal ``x`` (float64 for integers)."""
    dtype = tangent_dtype(np.result_type(x))
    return np.zeros(np.shape(x), dtype=np.float64 if dtype is None else dtype)


def is_constant(x: Any) -> bool:
    """Python ints and bools (exact constants: exponents, counts) and ``None``: ``NoTangent()``.

    The convention of :func:`rules.scalar_rule`; integer *arrays* are real numbers instead.
    """
    return x is None or isinstance(x, int)
