"""Rules for numpy's array functions and ufuncs, one file per topic; importing registers them."""

from rules.arrays import (
    cumulative,
    diagonals,
    differences,
    einsum,
    elementwise,
    elementwise_complex,
    elementwise_misc,
    indexing,
    joining,
    nan_reductions,
    nondiff,
    rearranging,
    reductions,
    selection,
    shape,
    statistics,
)

__all__ = [
    "cumulative",
    "diagonals",
    "differences",
    "einsum",
    "elementwise",
    "elementwise_complex",
    "elementwise_misc",
    "indexing",
    "joining",
    "nan_reductions",
    "nondiff",
    "rearranging",
    "reductions",
    "selection",
    "shape",
    "statistics",
]
