"""rules.autodiff over dask arrays: grad of a program is a lazy dask array, and it is right."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from rules.autodiff import grad, jvp, value_and_grad

N = 3


def loss(A):
    L = np.linalg.cholesky(A)
    sign, logdet = np.linalg.slogdet(A)
    return np.sum(np.sin(L)) + np.mean(np.linalg.inv(A) * 2.0) - np.sum(logdet) + np.sum(sign)


def _spd(rng, batch):
    X = rng.standard_normal((*batch, N, N))
    return X @ X.mT + N * np.eye(N)


def test_grad_of_a_program_over_a_dask_stack(rng):
    A = _spd(rng, (7,))
    value, g = value_and_grad(loss)(da.from_array(A, chunks=(3, N, N)))
    assert isinstance(g, da.Array)
    assert g.chunks == ((3, 3, 1), (N,), (N,))
    np.testing.assert_allclose(value.compute(), loss(A), rtol=1e-12)
    np.testing.assert_allclose(g.compute(), grad(loss)(A), rtol=1e-10, atol=1e-12)
    # Central differences of the plain numpy function, at a few entries (symmetric steps).
    for k, i, j in [(0, 0, 0), (4, 1, 2), (6, 2, 1)]:
        E = np.zeros_like(A)
        E[k, i, j] = E[k, j, i] = 1e-6
        fd = (loss(A + E) - loss(A - E)) / 2e-6
        got = g.compute()[k, i, j] + (g.compute()[k, j, i] if i != j else 0.0)
        np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)


def test_jvp_of_a_program_over_a_dask_stack(rng):
    A, A_dot = _spd(rng, (5,)), rng.standard_normal((5, N, N))
    A_dot = A_dot + A_dot.mT

    def f(A):
        return np.sin(np.linalg.cholesky(A)) * 3.0

    _, y_dot = jvp(f, (da.from_array(A, chunks=(2, N, N)),), (A_dot,))
    _, want = jvp(f, (A,), (A_dot,))
    assert isinstance(y_dot, da.Array)
    np.testing.assert_allclose(y_dot.compute(), want, rtol=1e-10, atol=1e-12)
