"""Random inputs for linear-algebra rule tests, in the dtypes the rules claim."""

import numpy as np
import pytest

DTYPES = [np.float64, np.float32, np.complex128]


@pytest.fixture(params=DTYPES, ids=["float64", "float32", "complex128"])
def dtype(request):
    return np.dtype(request.param)


@pytest.fixture
def randn(rng):
    """``randn(dtype, *shape)``: standard normal entries (complex: both parts)."""

    def randn(dtype, *shape):
        x = rng.standard_normal(shape)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * rng.standard_normal(shape)
        return x.astype(dtype)

    return randn


@pytest.fixture
def spd(randn):
    """``spd(dtype, *shape)``: well-conditioned Hermitian positive definite (stacks of) matrices."""

    def spd(dtype, *shape):
        X = randn(dtype, *shape)
        n = shape[-1]
        return (X @ X.conj().swapaxes(-1, -2) + n * np.eye(n)).astype(dtype)

    return spd


class LowRank:
    """A user's tangent type: the matrix ``U @ V^H`` kept as its factors (``@``, ``+``, ``.mT``, ``.conj()``).

    It is not an array (``__array_ufunc__ = None`` makes numpy defer to it), so it reaches a rule
    only through the generic path; a product with a matrix stays low rank.
    """

    __array_ufunc__ = None

    def __init__(self, U, V):
        self.U, self.V = U, V
        self.shape = (U.shape[0], V.shape[0])

    def dense(self):
        return self.U @ self.V.conj().T

    def __matmul__(self, X):  # (U V^H) X = U (X^H V)^H
        if X.ndim == 1:
            return self.U @ (self.V.conj().T @ X)
        return LowRank(self.U, X.conj().T @ self.V)

    def __rmatmul__(self, X):  # X (U V^H) = (X U) V^H
        if X.ndim == 1:
            return (X @ self.U) @ self.V.conj().T
        return LowRank(X @ self.U, self.V)

    def __add__(self, other):
        if isinstance(other, LowRank):
            return LowRank(np.hstack([self.U, other.U]), np.hstack([self.V, other.V]))
        return NotImplemented

    def __neg__(self):
        return LowRank(-self.U, self.V)

    @property
    def mT(self):  # (U V^H)^T = conj(V) U^T
        return LowRank(self.V.conj(), self.U.conj())

    def conj(self):
        return LowRank(self.U.conj(), self.V.conj())


@pytest.fixture
def low_rank():
    """The class of a low-rank tangent type, for generic-path tests."""
    return LowRank


@pytest.fixture
def well_conditioned(randn):
    """``well_conditioned(dtype, *shape)``: ``I + 0.3 X / sqrt(n)``, far from singular, powers tame."""

    def well_conditioned(dtype, *shape):
        n = shape[-1]
        return (np.eye(n) + 0.3 * randn(dtype, *shape) / np.sqrt(n)).astype(dtype)

    return well_conditioned
