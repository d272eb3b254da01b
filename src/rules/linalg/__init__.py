"""Rules for numpy and scipy linear algebra, one file per topic; importing registers them."""

from rules.linalg import cholesky, inverse, products, solve

__all__ = ["cholesky", "inverse", "products", "solve"]
