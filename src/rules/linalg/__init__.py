"""Rules for numpy and scipy linear algebra, one file per topic; importing registers them."""

from rules.linalg import cholesky, lu, products, qr

__all__ = ["cholesky", "lu", "products", "qr"]
