"""``kernels.expm`` against scipy: the exponential, its Frechet derivative and its adjoint.

The kernels take float64 and complex128 only (the rule computes float32 in double), so these
tests use those two dtypes; the comparison with the rule's numpy path, degree by degree, is in
``tests/rules/linalg/test_expm_kernel.py``.
"""

import numpy as np
import pytest
import scipy.linalg as sla
from numpy.testing import assert_allclose

from kernels.expm import expm_forward_batched, expm_frechet_batched

DTYPES = [np.float64, np.complex128]


def stack(rng, dtype, b, n, norms):
    """``b`` random ``n x n`` matrices of ``dtype`` with 1-norms ``norms`` (one per matrix)."""
    A = rng.standard_normal((b, n, n))
    if dtype == np.complex128:
        A = A + 1j * rng.standard_normal((b, n, n))
    norms = np.broadcast_to(np.asarray(norms, dtype=float), (b,))
    return A * (norms / np.linalg.norm(A, 1, axis=(1, 2)))[:, None, None]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("b", "n"), [(1, 1), (1, 4), (3, 5), (70, 4), (9, 12)])
def test_agrees_with_scipy(rng, dtype, b, n):
    # 70 4x4 matrices: three lane blocks of 32, 32 and 6; norms up to 60: s up to 4
    A = stack(rng, dtype, b, n, np.geomspace(0.01, 60.0, b))
    E = stack(rng, dtype, b, n, 1.0)
    A0, E0 = A.copy(), E.copy()
    X, m, s, P, F, S = expm_forward_batched(A)
    L = expm_frechet_batched(m, s, P, F, S, E, False)
    L_adj = expm_frechet_batched(m, s, P, F, S, E, True)
    assert X.dtype == L.dtype == L_adj.dtype == dtype
    for t in range(b):
        X_ref, L_ref = sla.expm_frechet(A[t], E[t])
        L_adj_ref = sla.expm_frechet(A[t].conj().T, E[t], compute_expm=False)
        scale = np.abs(X_ref).max()
        assert_allclose(X[t], X_ref, rtol=1e-12, atol=1e-12 * scale)
        assert_allclose(L[t], L_ref, rtol=1e-11, atol=1e-11 * np.abs(L_ref).max())
        assert_allclose(L_adj[t], L_adj_ref, rtol=1e-11, atol=1e-11 * np.abs(L_adj_ref).max())
    np.testing.assert_array_equal(A, A0)  # the kernels never write into their inputs
    np.testing.assert_array_equal(E, E0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_per_matrix_scaling(rng, dtype):
    A = stack(rng, dtype, 3, 4, [0.5, 20.0, 300.0])
    _, m, s, *_ = expm_forward_batched(A)
    assert m == 13
    assert s[0] == 0 < s[1] < s[2]


@pytest.mark.parametrize("dtype", DTYPES)
def test_adjoint_is_the_adjoint(rng, dtype, inner):
    A, E, G = (stack(rng, dtype, 5, 4, [0.1, 1.0, 3.0, 10.0, 40.0]) for _ in range(3))
    _, m, s, P, F, S = expm_forward_batched(A)
    L = expm_frechet_batched(m, s, P, F, S, E, False)
    L_adj = expm_frechet_batched(m, s, P, F, S, G, True)
    for t in range(5):  # <G, L(A, E)> = <L(A, G^H)^H, E>
        assert inner(G[t], L[t]) == pytest.approx(inner(L_adj[t], E[t]), rel=1e-12)


@pytest.mark.jit_only
@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_in_nan_out(rng, dtype):
    A = stack(rng, dtype, 3, 4, 1.0)
    A[1, 2, 1] = np.nan
    X, m, s, P, F, S = expm_forward_batched(A)
    L = expm_frechet_batched(m, s, P, F, S, np.ones_like(A), True)
    assert m == 13  # a NaN bound fails every degree's test, as in the rule
    assert np.isnan(X[1]).all()
    assert np.isnan(L[1]).all()
    for t in (0, 2):
        assert_allclose(X[t], sla.expm(A[t]), rtol=1e-12, atol=1e-12)
        assert np.isfinite(L[t]).all()
