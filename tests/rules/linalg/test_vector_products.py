"""tensordot, cross, vecdot, matrix_transpose, np.linalg.outer against finite differences."""

import numpy as np
import pytest

import rules  # noqa: F401  (registers the rules)
from rules import rrule
from rules.testing import check_frule, check_rrule


def _check(f, *args, **kwargs):
    check_rrule(f, *args, **kwargs)
    check_frule(f, *args, **kwargs)


@pytest.mark.parametrize("f", [np.tensordot, np.linalg.tensordot])
@pytest.mark.parametrize(
    ("a", "b", "axes"),
    [
        ((2, 3, 4), (3, 4, 5), 2),
        ((2, 3), (3, 2), 1),
        ((2, 3), (4,), 0),
        ((2, 3, 4), (4, 2, 3), ([0, 1], [1, 2])),
        ((3, 4), (4, 3), ([1, 0], [0, 1])),
        ((2, 3), (2,), (0, 0)),
    ],
)
def test_tensordot(randn, dtype, f, a, b, axes):
    _check(f, randn(dtype, *a), randn(dtype, *b), axes=axes)


@pytest.mark.parametrize(
    ("a", "b", "kwargs"),
    [
        ((3,), (3,), {}),
        ((4, 3), (3,), {}),
        ((2, 1, 3), (4, 3), {}),
        ((3, 2), (2, 3), {"axisa": 0, "axisc": 0}),
        ((3, 2), (3, 2), {"axis": 0}),
    ],
)
def test_cross(randn, dtype, a, b, kwargs):
    _check(np.cross, randn(dtype, *a), randn(dtype, *b), **kwargs)


def test_linalg_cross(randn, dtype):
    _check(np.linalg.cross, randn(dtype, 4, 3), randn(dtype, 3))
    _check(np.linalg.cross, randn(dtype, 3, 2), randn(dtype, 3, 2), axis=0)


def test_cross_of_2_vectors_is_refused(randn):
    with pytest.raises(ValueError, match="3-vectors"):
        rrule(np.cross, randn(np.float64, 2), randn(np.float64, 2))


@pytest.mark.parametrize("f", [np.vecdot, np.linalg.vecdot])
def test_vecdot(randn, dtype, f):
    _check(f, randn(dtype, 4), randn(dtype, 4))
    _check(f, randn(dtype, 2, 4), randn(dtype, 4))
    _check(f, randn(dtype, 4, 2), randn(dtype, 4, 1), axis=0)


@pytest.mark.parametrize("f", [np.matrix_transpose, np.linalg.matrix_transpose])
def test_matrix_transpose(randn, dtype, f):
    _check(f, randn(dtype, 2, 3))
    _check(f, randn(dtype, 4, 2, 3))


def test_linalg_outer(randn, dtype):
    _check(np.linalg.outer, randn(dtype, 3), randn(dtype, 2))
    with pytest.raises(ValueError, match="vectors"):
        rrule(np.linalg.outer, randn(dtype, 2, 2), randn(dtype, 2))
