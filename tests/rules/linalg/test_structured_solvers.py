"""scipy.linalg's structured constructors, Lyapunov and Riccati solvers against finite differences."""

import numpy as np
import pytest
import scipy.linalg as sla

import rules  # noqa: F401  (registers the rules)
from rules import rrule
from rules.testing import check_frule, check_rrule


def _check(f, *args, **kwargs):
    check_rrule(f, *args, **kwargs)
    check_frule(f, *args, **kwargs)


def test_block_diag(randn, dtype):
    _check(sla.block_diag, randn(dtype, 2, 3), randn(dtype, 2), randn(dtype), randn(dtype, 1, 1))


def test_toeplitz(randn, dtype):
    _check(sla.toeplitz, randn(dtype, 3), randn(dtype, 4))
    _check(sla.toeplitz, randn(dtype, 4))
    _check(sla.toeplitz, randn(dtype, 2, 3), randn(dtype, 2, 2))


def test_circulant(randn, dtype):
    _check(sla.circulant, randn(dtype, 4))
    _check(sla.circulant, randn(dtype, 2, 3))


def _stable(randn, dtype, n):
    """``A`` with eigenvalues of negative real part (and inside the unit disc after scaling)."""
    return (randn(dtype, n, n) / (2 * np.sqrt(n)) - np.eye(n)).astype(dtype)


def test_continuous_lyapunov(randn, dtype):
    _check(sla.solve_continuous_lyapunov, _stable(randn, dtype, 3), randn(dtype, 3, 3))


@pytest.mark.parametrize("method", [None, "bilinear"])
def test_discrete_lyapunov(randn, dtype, method):
    a = (0.4 * randn(dtype, 3, 3) / np.sqrt(3)).astype(dtype)
    _check(sla.solve_discrete_lyapunov, a, randn(dtype, 3, 3), method)


@pytest.mark.slow
@pytest.mark.parametrize("kind", [np.float64, np.complex128])
def test_continuous_are(randn, spd, kind):
    # scipy's solver is slow (tens of ms a call): small sizes, and float32 only for its dtype.
    a, b = randn(kind, 2, 2), randn(kind, 2, 1)
    q, r = spd(kind, 2, 2), spd(kind, 1, 1)
    _check(sla.solve_continuous_are, a, b, q, r, symmetric=(2, 3))


def test_continuous_are_keeps_float32(randn, spd):
    args = (
        randn(np.float32, 2, 2),
        randn(np.float32, 2, 1),
        spd(np.float32, 2, 2),
        spd(np.float32, 1, 1),
    )
    X, pullback = rrule(sla.solve_continuous_are, *args)
    bars = pullback(np.ones_like(X))[1:]
    assert all(bar.dtype == np.float32 for bar in bars)


def test_continuous_are_refuses_the_generalized_form(randn, spd):
    a, b, q, r = randn(float, 2, 2), randn(float, 2, 1), spd(float, 2, 2), spd(float, 1, 1)
    with pytest.raises(ValueError, match="'e'"):
        rrule(sla.solve_continuous_are, a, b, q, r, np.eye(2))


# --- solve_banded, expm_frechet, fractional_matrix_power -------------------------------------------


def _band(randn, dtype, l, u, n):
    ab = randn(dtype, l + u + 1, n) / 4
    ab[u] += 3  # a dominant diagonal
    return ab.astype(dtype)


@pytest.mark.parametrize(("l", "u", "k"), [(1, 1, None), (2, 0, 2), (0, 1, None), (1, 2, 3)])
def test_solve_banded(randn, dtype, l, u, k):
    ab = _band(randn, dtype, l, u, 5)
    b = randn(dtype, 5) if k is None else randn(dtype, 5, k)
    _check(sla.solve_banded, (l, u), ab, b)


def test_solve_banded_matches_the_dense_solve(randn):
    from rules.linalg.banded import _band_adjoint, _band_matmul

    l, u, n = 2, 1, 6
    ab = _band(randn, np.complex128, l, u, n)
    A = np.zeros((n, n), complex)
    for i in range(n):
        for j in range(n):
            if -u <= i - j <= l:
                A[i, j] = ab[u + i - j, j]
    x = randn(np.complex128, n, 2)
    np.testing.assert_allclose(_band_matmul(l, u, ab, x), A @ x)
    np.testing.assert_allclose(_band_matmul(u, l, _band_adjoint(l, u, ab), x), A.conj().T @ x)


def test_expm_frechet(randn, dtype):
    A, E = (randn(dtype, 2, 2) / 2).astype(dtype), randn(dtype, 2, 2)
    _check(sla.expm_frechet, A, E)
    check_rrule(sla.expm_frechet, A, E, compute_expm=False)


@pytest.mark.slow
def test_fractional_matrix_power(well_conditioned):
    # scipy's fractional_matrix_power takes a large fraction of a second per call: 2 x 2 only.
    A = well_conditioned(np.float64, 2, 2) + np.eye(2)
    _check(sla.fractional_matrix_power, A, 0.5)
    check_rrule(
        sla.fractional_matrix_power, well_conditioned(np.complex128, 2, 2) + np.eye(2), -0.3
    )


def test_fractional_matrix_power_integer_exponent_and_dtype(well_conditioned):
    A = well_conditioned(np.float32, 2, 2)
    _check(sla.fractional_matrix_power, A, 2)
    Y, pullback = rrule(sla.fractional_matrix_power, A, 0.5)
    assert pullback(np.ones_like(Y))[1].dtype == np.float32
