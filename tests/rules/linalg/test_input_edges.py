"""Inputs at the edges that numpy and scipy accept (issue 14, item 10)."""

import numpy as np
import pytest
import scipy.linalg as sla

from rules import rrule
from rules.testing import check_rrule
from tangents import NoTangent


@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0)])
def test_lstsq_of_empty_shapes(shape):
    A, b = np.zeros(shape), np.zeros(shape[0])
    check_rrule(np.linalg.lstsq, A, b, rcond=None)
    check_rrule(np.linalg.lstsq, A, np.zeros((shape[0], 2)), rcond=None)


def test_lstsq_takes_the_real_part_of_a_complex_cotangent_of_a_real_solution(rng):
    A, b = rng.standard_normal((4, 3)), rng.standard_normal(4)
    (_, residuals, _, s), pullback = rrule(np.linalg.lstsq, A, b, rcond=None)
    x_bar = rng.standard_normal(3)
    zeros = (np.zeros_like(residuals), NoTangent(), np.zeros_like(s))
    real = pullback((x_bar, *zeros))
    complex_ = pullback((x_bar + 1j * rng.standard_normal(3), *zeros))
    for got, want in zip(complex_[1:3], real[1:3], strict=True):
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, want)


def test_logm_nan_cotangent_gives_nan(rng):
    A = rng.standard_normal((3, 3)) / 4 + 2 * np.eye(3)
    _, pullback = rrule(sla.logm, A)
    assert np.isnan(pullback(np.full((3, 3), np.nan))[1]).all()


@pytest.mark.parametrize(
    ("f", "args"),
    [
        (sla.inv, lambda A: (A,)),
        (sla.solve, lambda A: (A, np.ones(3, np.float16))),
        (sla.solve_triangular, lambda A: (np.triu(A), np.ones(3, np.float16))),
    ],
    ids=["inv", "solve", "solve_triangular"],
)
def test_scipy_float16_input_is_computed_as_scipy_does(f, args, rng):
    A = (rng.standard_normal((3, 3)) / 4 + 2 * np.eye(3)).astype(np.float16)
    y, _ = rrule(f, *args(A))
    assert y.dtype == f(*args(A)).dtype == np.float32
    check_rrule(f, *args(A))


def test_numpy_still_refuses_float16():
    with pytest.raises(TypeError, match=r"np\.linalg\.inv: array type float16"):
        rrule(np.linalg.inv, np.eye(2, dtype=np.float16))


@pytest.mark.parametrize("f", [np.linalg.eigh, np.linalg.svd, sla.eigh, sla.svd])
def test_bool_input_to_eigh_and_svd_has_no_tangent(f):
    B = np.array([[True, False], [False, True]])  # a tie: the vectors' coupling must not raise
    y, pullback = rrule(f, B)
    y_bar = tuple(np.ones(np.shape(c)) for c in y)
    assert pullback(y_bar) == (NoTangent(), NoTangent())
