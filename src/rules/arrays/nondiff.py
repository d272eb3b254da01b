"""Functions whose output does not depend differentiably on their inputs: ``NoTangent()`` for all.

Registered with :func:`rules.non_differentiable`: the pullback returns ``NoTangent()`` for the
function and every argument, the pushforward ``NoTangent()``. They return indices, booleans,
integers, shapes, or values that are piecewise constant in the inputs (``floor``, ``round``,
...), so the derivative is zero wherever it exists; ``NoTangent()`` says so without allocating.

``sign`` is not listed here: it is piecewise constant for real input (and its rule then
returns ``NoTangent()``), but numpy 2 defines it as ``z/|z|`` for complex input, which is
differentiable; its rule is in :mod:`rules.arrays.elementwise_complex`.

References
----------
ChainRules.jl ``src/rulesets/Base/nondiff.jl`` (``@non_differentiable`` declarations).
"""

from __future__ import annotations

import operator

import numpy as np

from rules.core.definition import non_differentiable

__all__: list[str] = []

# Indices and orderings.
non_differentiable(
    np.argmax,
    np.argmin,
    np.argsort,
    np.argpartition,
    np.searchsorted,
    np.digitize,
    np.nonzero,
    np.flatnonzero,
    np.argwhere,
    np.count_nonzero,
)

# Piecewise constant: rounding.
non_differentiable(
    np.floor, np.ceil, np.round, np.around, np.trunc, np.fix, np.rint, np.floor_divide
)
non_differentiable(operator.floordiv)

# Predicates, comparisons and logical operations (boolean results).
non_differentiable(
    np.isnan,
    np.isfinite,
    np.isinf,
    np.isposinf,
    np.isneginf,
    np.signbit,
    np.isreal,
    np.iscomplex,
    np.isclose,
    np.allclose,
    np.array_equal,
    np.equal,
    np.not_equal,
    np.less,
    np.less_equal,
    np.greater,
    np.greater_equal,
    np.logical_and,
    np.logical_or,
    np.logical_xor,
    np.logical_not,
)
non_differentiable(
    operator.eq,
    operator.ne,
    operator.lt,
    operator.le,
    operator.gt,
    operator.ge,
    operator.not_,
    operator.and_,
    operator.or_,
    operator.xor,
    operator.invert,
)

# Values that do not depend on the input's values: new arrays like it, and shape queries.
non_differentiable(np.zeros_like, np.ones_like, np.empty_like, np.shape, np.ndim, np.size)

# Sets, counts, ranks and constructors of constant arrays. ``bincount``'s weights have a rule
# (rules.arrays.indexing); ``unique``'s values and ``histogram``'s edges move with the input and
# have rules (rules.arrays.unique, rules.arrays.histogram). ``arange`` counts: a float
# ``start``/``step`` does move its values, so write ``start + step * np.arange(n)`` to
# differentiate them.
non_differentiable(
    np.isin,
    np.eye,
    np.identity,
    np.arange,
    np.nanargmax,
    np.nanargmin,
    np.linalg.matrix_rank,
)
