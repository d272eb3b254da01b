"""Rules for numpy and scipy linear algebra, one file per topic; importing registers them."""

from rules.linalg import cholesky, eig, eigh, expm, lu, matfun, products, qr, svd, sylvester

__all__ = ["cholesky", "eig", "eigh", "expm", "lu", "matfun", "products", "qr", "svd", "sylvester"]
