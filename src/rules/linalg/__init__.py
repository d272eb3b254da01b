"""Rules for numpy and scipy linear algebra, one file per topic; importing registers them."""

from rules.linalg import cholesky, eig, eigh, products, svd

__all__ = ["cholesky", "eig", "eigh", "products", "svd"]
