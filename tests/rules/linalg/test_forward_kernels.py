"""The rules' forward passes on stacks of small matrices (the batched forward kernels).

Outputs, dtypes and containers are numpy's and scipy's; errors name the function; the
derivatives are checked against finite differences through the same forward.
"""

import numpy as np
import pytest
import scipy.linalg as sla
from numpy.testing import assert_allclose, assert_array_equal

from rules import rrule
from rules.testing import check_rrule


def close(dtype):
    return {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-12}


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_stack_matches_numpy(spd, dtype, upper):
    A = spd(dtype, 3, 2, 4, 4)
    L, _ = rrule(np.linalg.cholesky, A, upper=upper)
    ref = np.linalg.cholesky(A, upper=upper)
    assert L.dtype == ref.dtype
    assert L.flags.c_contiguous
    assert_allclose(L, ref, **close(dtype))
    U, _ = rrule(sla.cholesky, A)  # scipy: upper by default
    assert_allclose(U, sla.cholesky(A), **close(dtype))


def test_cholesky_stack_derivative(spd):
    check_rrule(np.linalg.cholesky, spd(np.float64, 3, 4, 4), symmetric=[0])


def test_cholesky_stack_not_positive_definite_raises_naming_the_function(spd):
    A = spd(np.float64, 3, 4, 4)
    A[1, 2, 2] = -50.0
    with pytest.raises(np.linalg.LinAlgError, match=r"np\.linalg\.cholesky: .*positive definite"):
        rrule(np.linalg.cholesky, A)
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(A)  # numpy agrees


def test_cholesky_stack_nan_gives_nan_as_numpy(spd):
    A = spd(np.float64, 2, 3, 3)
    A[1] = np.nan
    L, _ = rrule(np.linalg.cholesky, A)
    assert_array_equal(np.isnan(L), np.isnan(np.linalg.cholesky(A)))


@pytest.mark.parametrize("options", [{}, {"p_indices": True}, {"permute_l": True}])
def test_lu_stack_matches_scipy(randn, dtype, options):
    A = randn(dtype, 2, 3, 4, 4)
    y, _ = rrule(sla.lu, A, **options)
    ref = sla.lu(A, **options)
    assert type(y) is type(ref)
    for a, r in zip(y, ref, strict=True):
        assert a.dtype == r.dtype
        assert_allclose(a, r, **close(dtype))


def test_lu_factor_stack_matches_scipy(randn, dtype):
    A = randn(dtype, 5, 4, 4)
    y, _ = rrule(sla.lu_factor, A)
    ref = sla.lu_factor(A)
    assert type(y) is type(ref)  # scipy returns a list for a stack
    assert_allclose(y[0], ref[0], **close(dtype))
    assert_array_equal(y[1], ref[1])
    assert y[1].dtype == ref[1].dtype


def test_lu_stack_derivatives(randn):
    A = randn(np.float64, 3, 4, 4)
    check_rrule(sla.lu, A)
    check_rrule(sla.lu_factor, A)


def test_lu_stack_check_finite(randn):
    A = randn(np.float64, 3, 4, 4)
    A[0, 0, 0] = np.inf
    for f in (sla.lu, sla.lu_factor):
        with pytest.raises(ValueError, match="must not contain infs or NaNs"):
            rrule(f, A)
        assert rrule(f, A, check_finite=False) is not None


def test_inv_and_det_stacks_match_numpy(randn, dtype):
    A = randn(dtype, 2, 3, 4, 4)
    Y, _ = rrule(np.linalg.inv, A)
    assert Y.dtype == dtype
    assert_allclose(Y, np.linalg.inv(A), rtol=1e-3 if dtype == np.float32 else 1e-9)
    d, _ = rrule(np.linalg.det, A)
    assert d.dtype == dtype
    assert_allclose(d, np.linalg.det(A), **close(dtype))


def test_inv_and_det_stack_derivatives(randn):
    A = randn(np.float64, 3, 4, 4)
    check_rrule(np.linalg.inv, A)
    check_rrule(np.linalg.det, A)


def test_singular_stacks_behave_as_numpy():
    A = np.stack([np.eye(3), [[1.0, 2, 3], [2, 4, 6], [1, 0, 1]]])
    with pytest.raises(np.linalg.LinAlgError, match=r"np\.linalg\.inv: singular"):
        rrule(np.linalg.inv, A)
    with pytest.raises(np.linalg.LinAlgError, match=r"np\.linalg\.solve: singular"):
        rrule(np.linalg.solve, A, np.ones((2, 3, 1)))
    d, _ = rrule(np.linalg.det, A)
    assert_array_equal(d, [1.0, 0.0])
    (sign, logabsdet), _ = rrule(np.linalg.slogdet, A)
    assert_array_equal(sign, [1.0, 0.0])
    assert_array_equal(logabsdet, [0.0, -np.inf])
