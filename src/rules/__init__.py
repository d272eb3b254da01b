"""Forward (``frule``) and reverse (``rrule``) differentiation rules for numpy and scipy.

``rrule(f, *args, **kwargs)`` returns ``(y, pullback)`` or ``None``; ``frule((f_dot, *arg_dots),
f, *args, **kwargs)`` returns ``(y, y_dot)`` or ``None``. Register your own rules with
``@rrule.register(f)`` / ``@frule.register(f)``; check them with :mod:`rules.testing`.
``require_rrule``/``require_frule`` take the same arguments and raise ``MissingRuleError``
naming the function instead of returning ``None``.
"""

# _packages first: it checks that tangents and kernels are this project's, not namesakes.
# Rule sets, one sub-package per library covered: importing one registers its rules.
from rules import _packages, arrays, fft, linalg, sparse  # noqa: F401  (imported for their side effects)
from rules.core.definition import non_differentiable, scalar_rule
from rules.core.registry import (
    defer,
    frule,
    is_zero_cotangent,
    lift_foreign,
    rrule,
    split_cotangent,
)
from rules.core.require import MissingRuleError, require_frule, require_rrule

# scipy.special, .stats, .signal and .sparse.linalg are slow to import: their rules load when a
# lookup first needs them (scipy.sparse itself is imported by the machinery already).
defer("rules.special", "scipy.special")
defer("rules.stats", "scipy.stats")
defer("rules.signal", "scipy.signal")
defer("rules.sparse.linalg", "scipy.sparse.linalg")
# dask arrays: the rules that act matrix by matrix run chunk by chunk (rules.dask, on first use).
lift_foreign("dask.array", "Array", "rules.dask")

__tangent_algebra__ = True
"""Marks this package as tangent-algebra's ``rules`` (PyPI's django-rules has the same name)."""

__all__ = [
    "MissingRuleError",
    "frule",
    "is_zero_cotangent",
    "non_differentiable",
    "require_frule",
    "require_rrule",
    "rrule",
    "scalar_rule",
    "split_cotangent",
]
