"""``astype``: the function ``x.astype(dtype)`` is traced as, with its rules.

numpy has no function for the method, so the driver defines one and registers its rules like any
other; its derivative is the identity, cast back (the pullback projects onto the input's tangent
space: a float64 cotangent of ``x.astype(np.float64)`` for a float32 ``x`` is float32 again).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules import frule, rrule
from tangents import NoTangent, ProjectTo, ZeroTangent, unthunk

__all__ = ["astype"]


def astype(x: Any, dtype: Any, *args: Any, **kwargs: Any) -> Any:
    """``x.astype(dtype, ...)`` for an array or a numpy or Python number."""
    return np.asarray(x).astype(dtype, *args, **kwargs)[()]


@rrule.register(astype)
def astype_rrule(x: Any, dtype: Any, *args: Any, **kwargs: Any) -> Any:
    """The cast, and a pullback that casts the cotangent back: ``x_bar = project_x(y_bar)``."""
    project_x = ProjectTo(x)
    y = astype(x, dtype, *args, **kwargs)
    # A cast to integers or bools is piecewise constant: its derivative is zero.
    inexact = np.result_type(y).kind in "fc"

    def astype_pullback(y_bar: Any) -> tuple[Any, ...]:
        x_bar = project_x(unthunk(y_bar)) if inexact else ZeroTangent()
        return NoTangent(), x_bar, NoTangent()

    return y, astype_pullback


@frule.register(astype)
def astype_frule(tangents: tuple[Any, ...], x: Any, dtype: Any, *args: Any, **kwargs: Any) -> Any:
    """The cast, and the tangent cast the same way: ``y_dot = project_y(x_dot)``."""
    y = astype(x, dtype, *args, **kwargs)
    if np.result_type(y).kind not in "fc":
        return y, ZeroTangent()
    return y, ProjectTo(y)(unthunk(tangents[1]))
