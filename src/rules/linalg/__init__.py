"""Rules for numpy and scipy linear algebra, one file per topic; importing registers them."""

from rules.linalg import (
    cholesky,
    determinant,
    inverse,
    least_squares,
    products,
    solve,
    triangular,
)

__all__ = [
    "cholesky",
    "determinant",
    "inverse",
    "least_squares",
    "products",
    "solve",
    "triangular",
]
