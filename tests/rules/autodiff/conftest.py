"""Finite differences for the driver's tests, computed on the plain numpy function (no driver)."""

import numpy as np
import pytest


def _as_float(x):
    return np.asarray(x, dtype=np.result_type(x, np.float64))


def numerical_grad(f, args, argnum=0, h=1e-6):
    """Central differences of a real scalar ``f(*args)`` with respect to array ``args[argnum]``.

    For a complex input the result is ``dL/dRe + i dL/dIm``, the project's convention.
    """
    args = list(args)
    x = _as_float(args[argnum])
    g = np.zeros(x.shape, dtype=x.dtype)
    flat = g.reshape(-1)
    directions = [1.0, 1j] if np.iscomplexobj(x) else [1.0]
    for k in range(x.size):
        for d in directions:
            step = h * max(1.0, abs(x.reshape(-1)[k]))
            e = np.zeros(x.size, dtype=x.dtype)
            e[k] = step * d
            e = e.reshape(x.shape)
            up = float(f(*args[:argnum], x + e, *args[argnum + 1 :]))
            down = float(f(*args[:argnum], x - e, *args[argnum + 1 :]))
            flat[k] += d * (up - down) / (2 * step)
    return g


def numerical_jacobian(f, x, h=1e-6):
    """Central-difference Jacobian of an array function ``f`` at real ``x``: y.shape + x.shape."""
    x = _as_float(x)
    y = np.asarray(f(x))
    columns = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h * max(1.0, abs(x.reshape(-1)[k]))
        e = e.reshape(x.shape)
        columns.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * e.reshape(-1)[k]))
    return np.stack(columns, axis=-1).reshape(y.shape + x.shape)


@pytest.fixture
def fd():
    """The finite-difference helpers: ``fd.grad(f, args, argnum)``, ``fd.jacobian(f, x)``."""

    class FiniteDifferences:
        grad = staticmethod(numerical_grad)
        jacobian = staticmethod(numerical_jacobian)

    return FiniteDifferences


@pytest.fixture
def spd(rng):
    """A random symmetric positive-definite matrix of size n."""

    def make(n, batch=()):
        A = rng.standard_normal((*batch, n, n))
        return A @ np.swapaxes(A, -1, -2) + n * np.eye(n)

    return make
