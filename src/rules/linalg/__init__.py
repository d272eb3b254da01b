"""Rules for numpy and scipy linear algebra, one file per topic; importing registers them."""

from rules.linalg import chains, cholesky, norms, products

__all__ = ["chains", "cholesky", "norms", "products"]
