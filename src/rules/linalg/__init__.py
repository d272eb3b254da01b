"""Rules for numpy and scipy linear algebra, one file per topic; importing registers them."""

from rules.linalg import cholesky, determinant, inverse, products, solve, triangular

__all__ = ["cholesky", "determinant", "inverse", "products", "solve", "triangular"]
