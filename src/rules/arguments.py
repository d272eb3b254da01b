"""Rules written with numpy's own signatures: option arguments get ``NoTangent()``.

numpy functions take options (``axis``, ``keepdims``, ``shape``, ``order``, ...) after their array
arguments, positionally or by keyword. DESIGN.md section 3 asks for one cotangent per *positional*
argument, and never differentiates keyword arguments. :func:`rrule_with_options` lets a rule keep
numpy's signature (``def sum_rrule(a, axis=None, ..., keepdims=False)``) and return cotangents for
its leading array parameters only; the registered rrule then fits the tuple to the call:

* positional options the pullback did not mention get ``NoTangent()``;
* cotangents for parameters that the caller passed by keyword are dropped (for example
  ``np.average(a, weights=w)`` differentiates ``a`` only, ``np.average(a, None, w)`` both).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from rules.registry import rrule
from tangents import NoTangent, tangent_dtype

__all__ = [
    "is_constant",
    "normalize_axes",
    "refuse",
    "rrule_with_options",
    "zero_tangent_array",
]

Rule = Callable[..., Any]


def rrule_with_options(*fs: Any) -> Callable[[Rule], Rule]:
    """Decorator registering ``rule`` as the rrule of each of ``fs``, fitting its cotangents.

    The pullback of ``rule`` returns ``(f_bar, x1_bar, ..., xk_bar)`` for its first ``k``
    parameters; the registered pullback returns exactly ``1 + len(args)`` cotangents, padding
    with ``NoTangent()`` or dropping the cotangents of parameters that were passed by keyword.
    """

    def decorator(rule: Rule) -> Rule:
        def fitted_rrule(*args: Any, **kwargs: Any) -> Any:
            result = rule(*args, **kwargs)
            if result is None:
                return None
            y, pullback = result
            n = len(args) + 1

            def fitted_pullback(y_bar: Any) -> tuple[Any, ...]:
                cotangents = pullback(y_bar)
                if len(cotangents) >= n:
                    return cotangents[:n]
                return cotangents + (NoTangent(),) * (n - len(cotangents))

            fitted_pullback.__qualname__ = pullback.__qualname__
            return y, fitted_pullback

        fitted_rrule.__qualname__ = rule.__qualname__
        fitted_rrule.__doc__ = rule.__doc__
        fitted_rrule.__wrapped__ = rule  # type: ignore[attr-defined]
        for f in fs:
            rrule.register(f)(fitted_rrule)
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
