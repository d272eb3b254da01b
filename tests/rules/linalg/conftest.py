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
