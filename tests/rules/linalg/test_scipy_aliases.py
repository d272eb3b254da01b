"""scipy.linalg's det, pinv, eig, eigvals, lstsq, norm: scipy's values with numpy's rules."""

import numpy as np
import pytest
import scipy.linalg as sla

import rules  # noqa: F401  (registers the rules)
from rules import rrule
from rules.testing import check_frule, check_rrule


def _check(f, *args, **kwargs):
    check_rrule(f, *args, **kwargs)
    check_frule(f, *args, **kwargs)


def test_det(well_conditioned, dtype):
    _check(sla.det, well_conditioned(dtype, 3, 3))
    _check(sla.det, well_conditioned(dtype, 2, 3, 3))


def test_det_refuses_overwrite(well_conditioned):
    with pytest.raises(ValueError, match="overwrite_a"):
        rrule(sla.det, well_conditioned(np.float64, 2, 2), True)


def test_pinv(randn, dtype):
    _check(sla.pinv, randn(dtype, 4, 2))
    _check(sla.pinv, randn(dtype, 2, 3), rtol=1e-8)
    with pytest.raises(ValueError, match="atol"):
        rrule(sla.pinv, randn(dtype, 2, 2), atol=0.1)


def test_eig(randn, gauge_fixed, dtype):
    A = randn(dtype, 4, 4)
    eig = gauge_fixed(sla.eig)
    _check(eig, A)


def test_eig_values_only(randn, dtype):
    A = randn(dtype, 4, 4)
    _check(sla.eig, A, right=False)
    _check(sla.eigvals, A)


def test_eig_refuses_generalized_problems(randn):
    A = randn(np.float64, 3, 3)
    with pytest.raises(ValueError, match="'b'"):
        rrule(sla.eig, A, A)


@pytest.mark.parametrize(("a", "b"), [((4, 2), (4,)), ((4, 2), (4, 3)), ((2, 3), (2,))])
def test_lstsq(randn, dtype, a, b):
    _check(sla.lstsq, randn(dtype, *a), randn(dtype, *b))


@pytest.mark.parametrize(
    ("shape", "kwargs"),
    [
        ((3,), {}),
        ((3, 3), {}),
        ((3, 3), {"ord": 2}),
        ((2, 3), {"ord": "nuc"}),
        ((2, 3), {"axis": 1}),
    ],
)
def test_norm(randn, dtype, shape, kwargs):
    _check(sla.norm, randn(dtype, *shape), **kwargs)
