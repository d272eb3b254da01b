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


@pytest.fixture
def dominant(randn):
    """``dominant(dtype, *shape)``: ``randn / 2 + 3 I`` (rectangular ``I`` for non-square shapes).

    Householder QR changes the sign of a diagonal entry of ``R`` where the real part of a pivot
    crosses zero (a jump of numpy's output); a dominant diagonal keeps finite differences away
    from those points. Also well conditioned.
    """

    def dominant(dtype, *shape):
        return (randn(dtype, *shape) / 2 + 3 * np.eye(*shape[-2:])).astype(dtype)

    return dominant


@pytest.fixture
def pivoted(dominant, rng):
    """``pivoted(dtype, *shape)``: a ``dominant`` matrix with its rows shuffled (each of a stack).

    Partial pivoting then picks the dominant entries: a non-trivial permutation with no near-ties
    between candidate pivots, so finite differences of ``scipy.linalg.lu`` stay on one branch.
    """

    def pivoted(dtype, *shape):
        X = dominant(dtype, *shape).reshape(-1, *shape[-2:])
        for i in range(len(X)):
            X[i] = X[i][rng.permutation(shape[-2])]
        return X.reshape(shape)

    return pivoted
