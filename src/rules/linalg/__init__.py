"""Rules for numpy and scipy linear algebra, one file per topic; importing registers them."""

from rules.linalg import (
    chains,
    cholesky,
    eig,
    eigh,
    expm,
    lu,
    matfun,
    norms,
    products,
    qr,
    svd,
    sylvester,
)

__all__ = [
    "chains",
    "cholesky",
    "eig",
    "eigh",
    "expm",
    "lu",
    "matfun",
    "norms",
    "products",
    "qr",
    "svd",
    "sylvester",
]
