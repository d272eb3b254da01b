"""scipy.linalg.hessenberg: both outputs, one matrix and stacks, the small sizes scipy passes."""

import numpy as np
import pytest
import scipy.linalg as sla

import rules  # noqa: F401  (registers the rules)
from rules import rrule
from rules.linalg.hessenberg import _solve_L, _solve_L_adjoint
from rules.testing import check_frule, check_rrule


def test_the_recursion_and_its_adjoint(randn):
    n = 5
    H = np.triu(randn(np.complex128, n, n), -1)
    C = randn(np.complex128, n, n)
    L = _solve_L(H, C)
    np.testing.assert_allclose(np.tril(C - (L @ H - H @ L), -2), 0, atol=1e-10)
    assert np.all(np.triu(L) == 0)
    assert np.all(L[:, 0] == 0)
    # <C_bar, C> == <L_bar, L(C)> for the linear map C -> L (restricted to low2 C)
    L_bar = np.tril(randn(np.complex128, n, n), -1)
    L_bar[:, 0] = 0
    C_bar = _solve_L_adjoint(H, L_bar)
    lhs = np.vdot(C_bar, np.tril(C, -2)).real
    rhs = np.vdot(L_bar, L).real
    np.testing.assert_allclose(lhs, rhs, rtol=1e-10)


@pytest.mark.parametrize("calc_q", [False, True])
def test_one_matrix(randn, dtype, calc_q):
    A = randn(dtype, 5, 5)
    check_rrule(sla.hessenberg, A, calc_q)
    check_frule(sla.hessenberg, A, calc_q)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_a_stack(randn, dtype):
    A = randn(dtype, 2, 3, 4, 4)
    check_rrule(sla.hessenberg, A, True)
    check_frule(sla.hessenberg, A, True)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_small_sizes(randn, n):
    # scipy returns (a, I) for n <= 2 without calling LAPACK; n = 3 has one reflector
    A = randn(np.complex128, n, n)
    check_rrule(sla.hessenberg, A, True)
    check_frule(sla.hessenberg, A, True)


def test_float32_is_kept_by_the_pullback(randn):
    A = randn(np.float32, 4, 4)
    (H, Q), pullback = rrule(sla.hessenberg, A, True)
    assert pullback((np.ones_like(H), np.ones_like(Q)))[1].dtype == np.float32


def test_a_reduced_form_is_refused():
    A = np.triu(np.ones((4, 4)), -1)
    A[2, 1] = 0.0
    with pytest.raises(np.linalg.LinAlgError, match="reduced"):
        rrule(sla.hessenberg, A)
