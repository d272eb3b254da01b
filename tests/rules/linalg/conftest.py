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


class MatrixTangent:
    """A user's matrix tangent type: ``@`` (both sides), ``+``, ``-``, scalar ``*``, ``.mT``,
    ``.conj()`` and a shape; no array conversion, so rules must keep to the tangent algebra.
    """

    __array_ufunc__ = None

    def __init__(self, values):
        self.values = np.asarray(values)
        self.shape = self.values.shape

    def __add__(self, other):
        other = other.values if isinstance(other, MatrixTangent) else other
        return MatrixTangent(self.values + other)

    __radd__ = __add__

    def __sub__(self, other):
        other = other.values if isinstance(other, MatrixTangent) else other
        return MatrixTangent(self.values - other)

    def __rsub__(self, other):
        return MatrixTangent(other - self.values)

    def __neg__(self):
        return MatrixTangent(-self.values)

    def __mul__(self, scalar):
        return MatrixTangent(self.values * scalar)

    __rmul__ = __mul__

    def __matmul__(self, other):
        return MatrixTangent(self.values @ other)

    def __rmatmul__(self, other):
        return MatrixTangent(other @ self.values)

    @property
    def mT(self):
        return MatrixTangent(self.values.mT)

    def conj(self):
        return MatrixTangent(self.values.conj())


@pytest.fixture
def matrix_tangent():
    """The class of a user-defined matrix tangent type, for generic-path tests."""
    return MatrixTangent
