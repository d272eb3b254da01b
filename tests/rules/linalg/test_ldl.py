"""scipy.linalg.ldl: 1 x 1 and 2 x 2 pivots, both triangles, Hermitian and complex symmetric input,
stacks. Inputs are general matrices: scipy reads one triangle, so the other gets no cotangent."""

import numpy as np
import pytest
import scipy.linalg as sla

import rules  # noqa: F401  (registers the rules)
from rules import rrule
from rules.testing import check_frule, check_rrule


def _pivots_2x2(A, lower=True, hermitian=True):
    d = sla.ldl(A, lower=lower, hermitian=hermitian)[1]
    return np.any(np.diag(d, -1) != 0)


def _indefinite(randn, dtype, n):
    """A matrix whose factorization takes 2 x 2 pivots (a small diagonal)."""
    A = randn(dtype, n, n)
    A[np.diag_indices(n)] = 0.05 * np.real(A[np.diag_indices(n)])
    return A


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("pivots", ["1x1", "2x2"])
def test_real_and_float32(randn, dtype, lower, pivots):
    if pivots == "2x2":
        A = _indefinite(randn, dtype, 5)
    else:
        A = randn(dtype, 5, 5) + 5 * np.eye(5, dtype=dtype)
    assert _pivots_2x2(A, lower) == (pivots == "2x2")
    check_rrule(sla.ldl, A, lower)
    check_frule(sla.ldl, A, lower)


@pytest.mark.parametrize("lower", [True, False])
def test_complex_symmetric(randn, lower):
    A = _indefinite(randn, np.complex128, 4) + randn(np.complex128, 4, 4)
    check_rrule(sla.ldl, A, lower, False)
    check_frule(sla.ldl, A, lower, False)


# The finite differences move the imaginary part of the diagonal, which scipy warns it ignores.
@pytest.mark.filterwarnings("ignore:scipy.linalg.ldl")
@pytest.mark.parametrize("lower", [True, False])
def test_hermitian(randn, lower):
    A = _indefinite(randn, np.complex128, 4)
    assert _pivots_2x2(A, lower)
    check_rrule(sla.ldl, A, lower, True)
    check_frule(sla.ldl, A, lower, True)


def test_a_stack(randn):
    A = _indefinite(randn, np.float64, 4)
    A = np.stack([A, randn(np.float64, 4, 4) + 4 * np.eye(4)])
    check_rrule(sla.ldl, A)
    check_frule(sla.ldl, A)


def test_float32_is_kept_by_the_pullback(randn):
    A = _indefinite(randn, np.float32, 4)
    (lu, d, _), pullback = rrule(sla.ldl, A)
    assert pullback((np.ones_like(lu), np.ones_like(d), None))[1].dtype == np.float32
