"""Forward (``frule``) and reverse (``rrule``) differentiation rules for numpy and scipy.

``rrule(f, *args, **kwargs)`` returns ``(y, pullback)`` or ``None``; ``frule((f_dot, *arg_dots),
f, *args, **kwargs)`` returns ``(y, y_dot)`` or ``None``. Register your own rules with
``@rrule.register(f)`` / ``@frule.register(f)``; check them with :mod:`rules.testing`.
"""

# Rule sets, one sub-package per library covered: importing one registers its rules.
from rules import arrays, linalg  # noqa: F401  (imported for their registrations)
from rules.core.definition import non_differentiable, scalar_rule
from rules.core.registry import (
    defer,
    frule,
    is_zero_cotangent,
    lift_foreign,
    rrule,
    split_cotangent,
)

# scipy.special is slow to import: its rules load when a lookup first needs them.
defer("rules.special", "scipy.special")
# dask arrays: the rules that act matrix by matrix run chunk by chunk (rules.dask, on first use).
lift_foreign("dask.array", "Array", "rules.dask")

__all__ = [
    "frule",
    "is_zero_cotangent",
    "non_differentiable",
    "rrule",
    "scalar_rule",
    "split_cotangent",
]
