"""Forward (``frule``) and reverse (``rrule``) differentiation rules for numpy and scipy.

``rrule(f, *args, **kwargs)`` returns ``(y, pullback)`` or ``None``; ``frule((f_dot, *arg_dots),
f, *args, **kwargs)`` returns ``(y, y_dot)`` or ``None``. Register your own rules with
``@rrule.register(f)`` / ``@frule.register(f)``; check them with :mod:`rules.testing`.
"""

# Rule sets: importing a module registers its rules.
from rules import (  # noqa: F401  (imported for their registrations)
    cumulative,
    diagonals,
    einsum,
    elementwise,
    elementwise_complex,
    indexing,
    joining,
    linalg,
    nondiff,
    reductions,
    selection,
    shape,
)
from rules.definition import non_differentiable, scalar_rule
from rules.registry import defer, frule, is_zero_cotangent, rrule, split_cotangent

# scipy.special is slow to import: its rules load when a lookup first needs them.
defer("rules.special", "scipy.special")

__all__ = [
    "frule",
    "is_zero_cotangent",
    "non_differentiable",
    "rrule",
    "scalar_rule",
    "split_cotangent",
]
