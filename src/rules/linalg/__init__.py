"""Rules for numpy and scipy linear algebra, one file per topic; importing registers them."""

from rules.linalg import cholesky, expm, lu, matfun, products, qr, sylvester

__all__ = ["cholesky", "expm", "lu", "matfun", "products", "qr", "sylvester"]
