import warnings

import numpy as np
import pytest
import scipy.linalg as sla

from rules import frule, rrule
from rules.linalg import lu, lu_packed
from rules.testing import check_frule, check_rrule
from tangents import NoTangent

SHAPES = [(4, 4), (5, 3), (3, 5), (2, 4, 4), (1, 1)]


@pytest.mark.parametrize("shape", SHAPES)
def test_lu_factor(pivoted, dtype, shape):
    A = pivoted(dtype, *shape)
    check_rrule(sla.lu_factor, A)
    check_frule(sla.lu_factor, A)


@pytest.mark.parametrize("trans", [0, 1, 2])
@pytest.mark.parametrize(
    ("lu_shape", "b_shape"),
    [
        ((4, 4), (4,)),
        ((4, 4), (4, 2)),
        ((4, 4), (3, 4, 1)),
        ((2, 4, 4), (4,)),
        ((2, 4, 4), (1, 4, 2)),
    ],
)
def test_lu_solve(pivoted, randn, dtype, trans, lu_shape, b_shape):
    factors = sla.lu_factor(pivoted(dtype, *lu_shape))
    b = randn(dtype, *b_shape)
    check_rrule(sla.lu_solve, factors, b, trans=trans, constant=[(0, 1)])
    check_frule(sla.lu_solve, factors, b, trans=trans, constant=[(0, 1)])


def test_perm_from_lapack_pivots(pivoted):
    A = pivoted(np.float64, 3, 6, 4)
    _, piv = sla.lu_factor(A)
    perm, _, _ = sla.lu(A, p_indices=True)
    np.testing.assert_array_equal(lu._inverse(lu_packed._row_order(piv, 6)), perm)


def test_lu_solve_with_a_singular_factor_gives_inf_or_nan_like_the_primal():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sla.LinAlgWarning)
        factors = sla.lu_factor(np.ones((3, 3)))
    x, pullback = rrule(sla.lu_solve, factors, np.ones(3))
    _, lu_bar, b_bar = pullback(np.ones(3))
    assert not np.isfinite(x).all()
    assert not np.isfinite(b_bar).all()
    assert not np.isfinite(lu_bar[0]).all()
    _, x_dot = frule(
        (NoTangent(), (np.eye(3), NoTangent()), np.ones(3)), sla.lu_solve, factors, np.ones(3)
    )
    assert not np.isfinite(x_dot).all()


def test_bad_input(pivoted):
    factors = sla.lu_factor(pivoted(np.float64, 3, 3))
    with pytest.raises(ValueError, match=r"scipy.linalg.lu_solve: trans must be 0, 1 or 2"):
        rrule(sla.lu_solve, factors, np.ones(3), trans=3)
    with pytest.raises(ValueError, match=r"lu must be a square matrix.*\(3, 2\)"):
        rrule(sla.lu_solve, (np.ones((3, 2)), np.zeros(2, np.int32)), np.ones(3))
    for b in (np.ones(4), np.ones((4, 2))):  # scipy: "Shapes of lu ... are incompatible"
        with pytest.raises(ValueError, match=r"lu_solve: lu of shape \(3, 3\) and b of shape"):
            rrule(sla.lu_solve, factors, b)
        with pytest.raises(ValueError, match=r"lu_solve: lu of shape \(3, 3\) and b of shape"):
            frule((NoTangent(), NoTangent(), b), sla.lu_solve, factors, b)
    with pytest.raises(ValueError, match=r"lu_solve: piv of shape \(2,\) does not match lu"):
        rrule(sla.lu_solve, (factors[0], np.zeros(2, np.int32)), np.ones(3))


def test_nan_in_nan_out():
    A = np.eye(3) + 1.0
    A[0, 1] = np.nan
    _, y_dot = frule((NoTangent(), np.eye(3)), sla.lu_factor, A, check_finite=False)
    assert np.isnan(y_dot[0]).any()
