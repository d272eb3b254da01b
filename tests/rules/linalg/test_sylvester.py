import numpy as np
import pytest
import scipy.linalg as sla

from rules import frule, rrule
from rules.linalg import sylvester
from rules.testing import check_frule, check_rrule
from tangents import NoTangent, UpperTriangular, ZeroTangent


@pytest.fixture
def operands(randn):
    """``(dtype, batch, m, n)``: a well-posed ``A X + X B = Q`` (spectra of A and -B far apart)."""

    def make(dtype, batch, m, n):
        a = (randn(dtype, *batch, m, m) + 3 * np.eye(m)).astype(dtype)
        b = (randn(dtype, *batch, n, n) + 3 * np.eye(n)).astype(dtype)
        return a, b, randn(dtype, *batch, m, n)

    return make


@pytest.mark.parametrize(("batch", "m", "n"), [((), 4, 3), ((), 3, 3), ((2,), 3, 2)])
def test_solve_sylvester(operands, dtype, batch, m, n):
    a, b, q = operands(dtype, batch, m, n)
    check_rrule(sla.solve_sylvester, a, b, q)
    check_frule(sla.solve_sylvester, a, b, q)


def test_broadcast_operands(operands, randn):
    a, b, _ = operands(np.float64, (), 3, 2)
    q = randn(np.float64, 2, 3, 2)
    check_rrule(sla.solve_sylvester, a, b, q)
    check_frule(sla.solve_sylvester, a, b, q)


def test_pullback_solves_the_adjoint_equation(operands, randn):
    a, b, q = operands(np.complex128, (), 4, 3)
    X, pullback = rrule(sla.solve_sylvester, a, b, q)
    X_bar = randn(np.complex128, 4, 3)
    _, a_bar, b_bar, q_bar = pullback(X_bar)
    Y = sla.solve_sylvester(a.conj().T, b.conj().T, X_bar)
    np.testing.assert_allclose(q_bar, Y, rtol=1e-12)
    np.testing.assert_allclose(a_bar, -Y @ X.conj().T, rtol=1e-12)
    np.testing.assert_allclose(b_bar, -X.conj().T @ Y, rtol=1e-12)
    np.testing.assert_allclose(X, sla.solve_sylvester(a, b, q))


def test_partial_tangents_and_structure(operands):
    a, b, q = operands(np.float64, (), 3, 3)
    _, X_dot = frule((NoTangent(), ZeroTangent(), ZeroTangent(), q), sla.solve_sylvester, a, b, q)
    np.testing.assert_allclose(X_dot, sla.solve_sylvester(a, b, q))
    U = UpperTriangular(np.triu(a))
    check_rrule(sla.solve_sylvester, U, b, q)
    _, pullback = rrule(sla.solve_sylvester, U, b, q)
    assert type(pullback(np.ones((3, 3)))[1]) is UpperTriangular


def test_mixed_real_and_complex_operands_are_solved(operands, randn):
    a, b, _ = operands(np.float64, (), 4, 3)
    q = randn(np.complex128, 4, 3)
    X, _ = rrule(sla.solve_sylvester, a, b, q)
    np.testing.assert_allclose(a @ X + X @ b, q, atol=1e-12)


def test_bad_input(user_tangent, operands):
    with pytest.raises(ValueError, match=r"solve_sylvester.*\(3, 3\), \(2, 2\) and \(3, 3\)"):
        rrule(sla.solve_sylvester, np.eye(3), np.eye(2), np.eye(3))
    with pytest.raises(ValueError, match="infs or NaNs"):
        rrule(sla.solve_sylvester, np.full((2, 2), np.nan), np.eye(2), np.eye(2))
    a, b, q = operands(np.float64, (), 3, 2)
    _, pullback = rrule(sla.solve_sylvester, a, b, q)
    with pytest.raises(ValueError, match=r"solve_sylvester pullback.*\(2, 3\).*\(3, 2\)"):
        pullback(np.ones((2, 3)))
    with pytest.raises(TypeError, match=r"solve_sylvester's pullback.*UserTangent"):
        pullback(user_tangent(np.ones((3, 2))))
    assert sylvester._NAME == "scipy.linalg.solve_sylvester"
