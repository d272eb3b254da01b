"""The fused single-system lane of ``scipy.linalg.solve_triangular`` against the general path.

``crossovers.SOLVE_TRIANGULAR_KERNEL_MAX_SIZE`` is also the general path's kernel crossover, so
the general path is forced by making ``_fast_system`` decline; a spy on the fused kernels
checks which path ran.
"""

import itertools

import numpy as np
import pytest
import scipy.linalg as sla

from kernels import triangular_single as ktri_single
from rules import frule, rrule
from rules.linalg import triangular
from rules.testing import check_frule, check_rrule
from tangents import AbstractZero, LowerTriangular, NoTangent, ZeroTangent

FLAGS = list(itertools.product([True, False], [0, 1, 2, "C"], [False, True]))
NAMES = (
    "solve_triangular_single_into",
    "solve_triangular_single_pullback_into",
    "solve_triangular_single_jvp",
)


@pytest.fixture
def spy(call_counts):
    """Counts of the fused kernels' calls, by name."""
    return call_counts(ktri_single, NAMES)


@pytest.fixture
def general_path(lane_off):
    """``general_path(f)``: ``f()`` on the general path (``_fast_system`` declines)."""
    return lane_off(triangular, "_fast_system", lambda *args: None)


def _whole(a, b, x_bar, **options):
    x, pb = rrule(sla.solve_triangular, a, b, **options)
    return x, pb(x_bar)


def _system(randn, dtype, n, b_shape):
    return (randn(dtype, n, n) + 3 * np.eye(n)).astype(dtype), randn(dtype, *b_shape)


@pytest.mark.parametrize(("lower", "trans", "unit"), FLAGS)
@pytest.mark.parametrize("b_shape", [(4,), (4, 3)])
def test_fast_lane_agrees_with_the_general_path(
    assert_same, general_path, spy, randn, dtype, lower, trans, unit, b_shape
):
    a, b = _system(randn, dtype, 4, b_shape)
    x_bar = randn(dtype, *b_shape)
    options = {"lower": lower, "trans": trans, "unit_diagonal": unit}
    fast = _whole(a, b, x_bar, **options)
    assert_same(fast, general_path(lambda: _whole(a, b, x_bar, **options)))
    a_dot, b_dot = randn(dtype, 4, 4), randn(dtype, *b_shape)
    fast = frule((NoTangent(), a_dot, b_dot), sla.solve_triangular, a, b, **options)
    general = general_path(
        lambda: frule((NoTangent(), a_dot, b_dot), sla.solve_triangular, a, b, **options),
    )
    assert_same(fast, general, 1e-4 if dtype == np.float32 else 1e-12)  # real: LAPACK trtrs
    assert spy["solve_triangular_single"] == spy["solve_triangular_single_pullback"] == 1
    assert spy["solve_triangular_single_jvp"] == 1


@pytest.mark.parametrize(("lower", "trans", "unit"), [(True, 0, False), (False, 2, True)])
def test_fast_lane_derivatives_by_finite_differences(randn, dtype, lower, trans, unit):
    a, b = _system(randn, dtype, 4, (4, 4))
    options = {"lower": lower, "trans": trans, "unit_diagonal": unit}
    tol = {"rtol": 1e-3, "atol": 1e-3} if dtype == np.float32 else {}
    check_rrule(sla.solve_triangular, a, b, **options, **tol)
    check_frule(sla.solve_triangular, a, b, **options, **tol)


@pytest.mark.parametrize("layout", ["F", "strided", "readonly"])
def test_other_layouts_of_the_inputs(assert_same, general_path, spy, randn, layout):
    big_a, big_b = _system(randn, np.float64, 8, (8, 8))
    a, b = {
        "F": (np.asfortranarray(big_a[:4, :4]), np.asfortranarray(big_b[:4, :4])),
        "strided": (big_a[::2, ::2], big_b[::2, ::2]),
        "readonly": (big_a[:4, :4].copy(), big_b[:4, :4].copy()),
    }[layout]
    a.flags.writeable = b.flags.writeable = layout != "readonly"
    x_bar = randn(np.float64, 4, 4)
    fast = _whole(a, b, x_bar, lower=True)
    assert_same(fast, general_path(lambda: _whole(a, b, x_bar, lower=True)))
    np.testing.assert_allclose(fast[0], sla.solve_triangular(a, b, lower=True), rtol=1e-13)
    assert spy["solve_triangular_single_pullback"] == 1


def test_cotangents_the_fused_pullback_does_not_take(assert_same, general_path, spy, randn):
    a, b = _system(randn, np.float64, 4, (4, 4))
    x_bar = randn(np.float64, 4, 4)
    strided = np.repeat(x_bar, 2, axis=1)[:, ::2]
    cotangents = [np.asfortranarray(x_bar), x_bar.astype(np.float32), strided]
    for c in cotangents:
        assert_same(_whole(a, b, c), general_path(lambda c=c: _whole(a, b, c)))
    structured = LowerTriangular(x_bar)
    fast, general = (
        _whole(a, b, structured),
        general_path(lambda: _whole(a, b, structured)),
    )
    for got, want in zip(fast[1][1:], general[1][1:], strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    _, pb = rrule(sla.solve_triangular, a, b)
    _, a_bar, _ = pb(ZeroTangent())
    assert isinstance(a_bar, AbstractZero) or not np.any(a_bar)
    assert "solve_triangular_single_pullback" not in spy
    _whole(a, b, x_bar)
    assert spy["solve_triangular_single_pullback"] == 1


def test_inputs_the_fast_lane_does_not_take(spy, randn):
    a, b = _system(randn, np.float64, 4, (4, 3))
    check_rrule(sla.solve_triangular, a.astype(np.float32), b, lower=True)  # mixed dtypes
    check_rrule(sla.solve_triangular, LowerTriangular(np.tril(a)), b, lower=True)
    check_rrule(sla.solve_triangular, np.stack([a, a]), np.stack([b, b]), lower=True)
    assert "solve_triangular_single_pullback" not in spy


def test_nan_and_zero_diagonal_take_the_general_path(assert_same, general_path, spy, randn):
    a, b = _system(randn, np.float64, 4, (4, 3))
    bad = a.copy()
    bad[0, 3] = np.nan  # outside the lower triangle: scipy checks it anyway
    with pytest.raises(ValueError, match="infs or NaNs"):
        rrule(sla.solve_triangular, bad, b, lower=True)
    with pytest.raises(ValueError, match="infs or NaNs"):
        frule((NoTangent(), a, b), sla.solve_triangular, a, b + np.inf, lower=True)
    x, _ = rrule(sla.solve_triangular, bad, b, lower=True, check_finite=False)
    assert np.isfinite(x).all()  # not read
    b_nan = b.copy()
    b_nan[1, 1] = np.nan
    x_bar = randn(np.float64, 4, 3)
    fast = _whole(a, b_nan, x_bar, lower=True, check_finite=False)
    general = general_path(lambda: _whole(a, b_nan, x_bar, lower=True, check_finite=False))
    assert_same(fast, general)
    assert np.isnan(fast[0]).any()
    singular = a.copy()
    singular[2, 2] = 0
    with pytest.raises(np.linalg.LinAlgError, match="solve_triangular"):
        rrule(sla.solve_triangular, singular, b, lower=True)
    with pytest.raises(np.linalg.LinAlgError, match="solve_triangular"):
        frule((NoTangent(), a, b), sla.solve_triangular, singular, b, lower=True)
    rrule(sla.solve_triangular, singular, b, lower=True, unit_diagonal=True)  # not read
