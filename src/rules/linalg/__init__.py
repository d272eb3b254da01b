"""Rules for numpy and scipy linear algebra, one file per topic; importing registers them."""

from rules.linalg import cholesky, expm, matfun, products, sylvester

__all__ = ["cholesky", "expm", "matfun", "products", "sylvester"]
