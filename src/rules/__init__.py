"""Forward (``frule``) and reverse (``rrule``) differentiation rules for numpy and scipy.

``rrule(f, *args, **kwargs)`` returns ``(y, pullback)`` or ``None``; ``frule((f_dot, *arg_dots),
f, *args, **kwargs)`` returns ``(y, y_dot)`` or ``None``. Register your own rules with
``@rrule.register(f)`` / ``@frule.register(f)``; check them with :mod:`rules.testing`.
"""

# _packages first: it checks that tangents and kernels are this project's, not namesakes.
# Rule sets, one sub-package per library covered: importing one registers its rules.
from rules import _packages, arrays, linalg  # noqa: F401  (imported for their side effects)
from rules.core.definition import non_differentiable, scalar_rule
from rules.core.registry import defer, frule, is_zero_cotangent, rrule, split_cotangent

# scipy.special is slow to import: its rules load when a lookup first needs them.
defer("rules.special", "scipy.special")

__tangent_algebra__ = True
"""Marks this package as tangent-algebra's ``rules`` (PyPI's django-rules has the same name)."""

__all__ = [
    "frule",
    "is_zero_cotangent",
    "non_differentiable",
    "rrule",
    "scalar_rule",
    "split_cotangent",
]
