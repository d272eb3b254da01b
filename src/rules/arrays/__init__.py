"""Rules for numpy's array functions and ufuncs, one file per topic; importing registers them."""

from rules.arrays import (
    cumulative,
    diagonals,
    einsum,
    elementwise,
    elementwise_complex,
    elementwise_outputs,
    indexing,
    joining,
    nondiff,
    reductions,
    selection,
    shape,
)

__all__ = [
    "cumulative",
    "diagonals",
    "einsum",
    "elementwise",
    "elementwise_complex",
    "elementwise_outputs",
    "indexing",
    "joining",
    "nondiff",
    "reductions",
    "selection",
    "shape",
]
