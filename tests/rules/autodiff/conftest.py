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


def _directional(f, args, i, v, h=1e-6):
    up = list(args)
    down = list(args)
    up[i] = args[i] + h * v
    down[i] = args[i] - h * v
    return (np.asarray(f(*up)) - np.asarray(f(*down))) / (2 * h)


def _random_like(rng, x):
    x = np.asarray(x)
    v = rng.standard_normal(x.shape)
    if np.iscomplexobj(x):
        v = v + 1j * rng.standard_normal(x.shape)
    return v


@pytest.fixture
def check_grads(rng):
    """HIPS autograd's ``check_grads(fun, modes)(*args)``, re-done for this driver.

    For every argument: the reverse mode (``vjp`` with a random cotangent ``u``) against central
    differences of ``Re sum(conj(u) fun(x))``, and the forward mode (``jvp`` along a random
    direction) against central differences of ``fun`` along it. The differences use the plain
    function only.
    """
    from rules.autodiff import jvp, vjp

    def check(fun, modes=("rev", "fwd"), rtol=1e-5, atol=1e-7):
        def run(*args):
            args = tuple(np.asarray(a, dtype=np.result_type(a, np.float64)) for a in args)
            y, pullback = vjp(fun, *args)
            u = _random_like(rng, y)
            for i in range(len(args)):
                if "rev" in modes:
                    x_bar = pullback(u)[i]

                    def scalar(*xs):
                        return np.real(np.sum(np.conj(u) * fun(*xs)))

                    np.testing.assert_allclose(
                        x_bar, numerical_grad(scalar, args, i), rtol=rtol, atol=atol
                    )
                if "fwd" in modes:
                    v = _random_like(rng, args[i])
                    tangents = [np.zeros_like(a) for a in args]
                    tangents[i] = v
                    _, y_dot = jvp(fun, args, tangents)
                    np.testing.assert_allclose(
                        y_dot, _directional(fun, args, i, v), rtol=rtol, atol=atol
                    )

        return run

    return check
