"""scipy.linalg.polar and scipy.linalg.rq against finite differences."""

import numpy as np
import pytest
import scipy.linalg as sla

import rules  # noqa: F401  (registers the rules)
from rules import rrule
from rules.testing import check_frule, check_rrule


def _check(f, *args, **kwargs):
    check_rrule(f, *args, **kwargs)
    check_frule(f, *args, **kwargs)


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
def test_polar(dominant, dtype, side, shape):
    _check(sla.polar, dominant(dtype, *shape), side)


@pytest.mark.parametrize("mode", ["full", "economic", "r"])
def test_rq(dominant, dtype, mode):
    _check(sla.rq, dominant(dtype, 3, 3), mode=mode)


def test_rq_with_negative_pivots(dominant):
    a = -dominant(np.float64, 3, 3)  # LAPACK's signs differ between rq and the flipped qr
    _check(sla.rq, a)


def test_rq_of_a_rectangular_matrix_is_refused(randn):
    with pytest.raises(ValueError, match="square"):
        rrule(sla.rq, randn(np.float64, 2, 3))
