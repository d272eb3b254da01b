"""A user's own matrix type with its own ``ProjectTo`` registration.

``Circulant(c)`` is the circulant matrix whose first column is ``c`` (each column is the previous
one rotated down by one). It is a primal users compute with, and its tangent space is the
circulant matrices. Registering a projector for it with ``ProjectTo.register`` is all it takes
for the library's rules to return ``Circulant`` cotangents: ``operator.matmul``'s pullback
computes the dense ``C_bar @ X^T`` and its projector turns that into a ``Circulant``.

The projector returns the cotangent in the coordinates of the primal's field ``c``: entry ``k``
is the sum of the dense cotangent along the k-th wrapped diagonal (the gradient with respect to
``c_k``), so that ``primal + step * cotangent`` moves ``c`` along the gradient, and
``rules.testing`` (which differences the field ``c``) agrees.

Run it: ``python examples/circulant_projection.py``.
"""

from __future__ import annotations

import dataclasses
import operator

import numpy as np
import scipy.linalg

from rules import rrule
from rules.testing import check_frule, check_rrule
from tangents import AbstractTangent, Projector, ProjectTo, Tangent


@dataclasses.dataclass
class Circulant(AbstractTangent):
    """The n x n circulant matrix with first column ``c``: ``C[i, j] = c[(i - j) % n]``."""

    c: np.ndarray

    @property
    def shape(self):
        return (len(self.c), len(self.c))

    @property
    def dtype(self):
        return self.c.dtype

    def __array__(self, dtype=None, copy=None):
        dense = scipy.linalg.circulant(self.c)
        return dense if dtype is None else dense.astype(dtype)

    def __matmul__(self, X):
        return np.asarray(self) @ X if isinstance(X, np.ndarray) else NotImplemented

    def __rmatmul__(self, X):
        return X @ np.asarray(self) if isinstance(X, np.ndarray) else NotImplemented

    def conj(self):
        return Circulant(self.c.conj())

    @property
    def mT(self):  # the transpose of a circulant matrix is circulant: c -> c[-k]
        return Circulant(np.roll(self.c[::-1], 1))

    T = mT


class CirculantProjector(Projector):
    """Sum a dense cotangent along wrapped diagonals: the gradient with respect to ``c``."""

    __slots__ = ("dtype", "n")

    def __init__(self, n, dtype):
        self.n, self.dtype = n, dtype

    def project(self, dx):
        if isinstance(dx, Tangent):  # the structural form, Tangent(Circulant, c=...)
            dx = Circulant(np.asarray(dx.c))
        if isinstance(dx, Circulant):
            return dx if dx.c.dtype == self.dtype else Circulant(dx.c.astype(self.dtype))
        dense = np.asarray(dx)
        if dense.shape != (self.n, self.n):
            raise ValueError(f"a cotangent of shape {dense.shape} does not fit Circulant({self.n})")
        i, j = np.indices(dense.shape)
        c_bar = np.bincount(
            ((i - j) % self.n).ravel(), weights=dense.real.ravel(), minlength=self.n
        )
        return Circulant(c_bar.astype(self.dtype))

    def __repr__(self):
        return f"ProjectTo(Circulant, n={self.n}, dtype={self.dtype})"


@ProjectTo.register(Circulant)
def _project_circulant(x):
    return CirculantProjector(len(x.c), x.c.dtype)


def main(seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    C = Circulant(rng.standard_normal(4))
    X = rng.standard_normal((4, 3))

    Y, pullback = rrule(operator.matmul, C, X)
    _, C_bar, _ = pullback(np.ones_like(Y))
    print(ProjectTo(C), "->", C_bar)
    assert isinstance(C_bar, Circulant)

    check_rrule(operator.matmul, C, X)  # finite differences perturb the field c
    check_frule(operator.matmul, C, X)
    print("the matmul rule returns Circulant cotangents, checked against finite differences")


if __name__ == "__main__":
    main()
