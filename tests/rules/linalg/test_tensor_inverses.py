"""tensorsolve, tensorinv and cond against finite differences, in each dtype."""

import numpy as np
import pytest

import rules  # noqa: F401  (registers the rules)
from rules.testing import check_frule, check_rrule


def _check(f, *args, **kwargs):
    check_rrule(f, *args, **kwargs)
    check_frule(f, *args, **kwargs)


def test_tensorsolve(well_conditioned, randn, dtype):
    a = well_conditioned(dtype, 6, 6).reshape(2, 3, 2, 3)
    _check(np.linalg.tensorsolve, a, randn(dtype, 2, 3))
    a = well_conditioned(dtype, 6, 6).reshape(6, 2, 3)
    _check(np.linalg.tensorsolve, a, randn(dtype, 6))
    a = np.transpose(well_conditioned(dtype, 6, 6).reshape(2, 3, 3, 2), (0, 2, 1, 3))
    _check(np.linalg.tensorsolve, a, randn(dtype, 2, 3), (1, 3))


def test_tensorinv(well_conditioned, dtype):
    _check(np.linalg.tensorinv, well_conditioned(dtype, 6, 6).reshape(2, 3, 6), 2)
    _check(np.linalg.tensorinv, well_conditioned(dtype, 4, 4).reshape(4, 2, 2), 1)


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, np.inf, -np.inf, "fro"])
def test_cond(well_conditioned, dtype, p):
    _check(np.linalg.cond, well_conditioned(dtype, 3, 3), p)
    if p in (None, "fro"):
        _check(np.linalg.cond, well_conditioned(dtype, 2, 3, 3), p)


def test_cond_of_a_rectangular_matrix(randn, dtype):
    _check(np.linalg.cond, randn(dtype, 4, 2))
