"""The fused single-matrix lane of ``scipy.linalg.lu`` (``kernels.lu_single``) against the general path.

``crossovers.LU_FAST_SINGLE_MAX_N = 0`` forces the general path; a spy on the fused kernels
checks which path ran, so a lane that silently stopped being taken fails here too.
"""

import numpy as np
import pytest
import scipy.linalg as sla

from kernels import crossovers
from kernels import lu_single as klu_single
from rules import frule, rrule
from rules.testing import check_frule, check_rrule
from tangents import NoTangent, Tangent, ZeroTangent


@pytest.fixture
def spy(call_counts):
    """Counts of the fused kernels' calls, by name."""
    return call_counts(
        klu_single, ("plu_single_into", "plu_single_pullback_into", "plu_single_jvp")
    )


@pytest.fixture
def general_path(lane_off):
    """``general_path(f)``: ``f()`` on the general path."""
    return lane_off(crossovers, "LU_FAST_SINGLE_MAX_N", 0)


def _whole(A, y_bar, **options):
    y, pb = rrule(sla.lu, A, **options)
    return y, pb(y_bar)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 16])
def test_fast_lane_agrees_with_the_general_path(
    assert_same, general_path, spy, pivoted, randn, dtype, n
):
    A = pivoted(dtype, n, n)
    y_bar = (randn(dtype, n, n), randn(dtype, n, n), randn(dtype, n, n))
    fast = _whole(A, y_bar)
    general = general_path(lambda: _whole(A, y_bar))
    assert_same(fast, general)
    np.testing.assert_array_equal(fast[0][0], sla.lu(A)[0])  # scipy's P
    real = dtype.kind == "f"
    assert spy.get("plu_single", 0) == spy.get("plu_single_pullback", 0) == int(real)


@pytest.mark.parametrize("n", [2, 4, 8])
@pytest.mark.parametrize("permute_l", [False, True])
def test_fast_frule_agrees_with_the_general_path(
    assert_same, general_path, spy, pivoted, randn, dtype, n, permute_l
):
    A, A_dot = pivoted(dtype, n, n), randn(dtype, n, n)
    fast = frule((NoTangent(), A_dot), sla.lu, A, permute_l=permute_l)
    general = general_path(lambda: frule((NoTangent(), A_dot), sla.lu, A, permute_l=permute_l))
    assert_same(fast[0], general[0])
    parts = (fast[1][i] for i in range(2 if permute_l else 3))
    for got, want in zip(parts, (general[1][i] for i in range(3)), strict=False):
        if isinstance(want, ZeroTangent):
            assert isinstance(got, ZeroTangent)
        else:
            assert_same(got, want)
    assert spy.get("plu_single_jvp", 0) == int(dtype.kind == "f")


@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_fast_lane_derivatives_by_finite_differences(pivoted, n):
    A = pivoted(np.float64, n, n)
    check_rrule(sla.lu, A)
    check_frule(sla.lu, A)
    check_frule(sla.lu, A, permute_l=True)


@pytest.mark.parametrize("layout", ["F", "strided", "readonly"])
def test_other_layouts_of_the_input(assert_same, general_path, spy, pivoted, randn, layout):
    base = pivoted(np.float64, 8, 8)
    A = {
        "F": np.asfortranarray(base[:4, :4]),
        "strided": base[::2, ::2],
        "readonly": base[:4, :4].copy(),
    }[layout]
    A.flags.writeable = layout != "readonly"
    y_bar = (randn(np.float64, 4, 4), randn(np.float64, 4, 4), randn(np.float64, 4, 4))
    fast = _whole(A, y_bar)
    assert_same(fast, general_path(lambda: _whole(A, y_bar)))
    for got, want in zip(fast[0], sla.lu(A), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    assert spy["plu_single"] == spy["plu_single_pullback"] == 1


def test_cotangents_the_fused_pullback_does_not_take(
    assert_same, general_path, spy, pivoted, randn
):
    A = pivoted(np.float64, 4, 4)
    P_bar, L_bar, U_bar = (randn(np.float64, 4, 4) for _ in range(3))
    cotangents = [
        (P_bar, np.asfortranarray(L_bar), U_bar),  # F order
        (P_bar, L_bar.astype(np.float32), U_bar),  # another dtype: cast as before
        (P_bar, ZeroTangent(), U_bar),
        (ZeroTangent(), L_bar, ZeroTangent()),
        Tangent(tuple, P_bar, L_bar, U_bar),
        [P_bar, L_bar, U_bar],
    ]
    for y_bar in cotangents:
        assert_same(_whole(A, y_bar), general_path(lambda y_bar=y_bar: _whole(A, y_bar)))
    assert spy["plu_single"] == len(cotangents)
    assert spy["plu_single_pullback"] == 1  # only the list of C-ordered float64 arrays


def test_a_wrong_shape_of_cotangent_raises_as_before(pivoted, randn):
    A = pivoted(np.float64, 4, 4)
    _, pb = rrule(sla.lu, A)
    with pytest.raises(ValueError, match=r"has shape \(3, 4\)"):
        pb((randn(np.float64, 4, 4), randn(np.float64, 3, 4), randn(np.float64, 4, 4)))


def test_non_finite_input_takes_the_general_path(general_path, spy, pivoted, randn):
    A = pivoted(np.float64, 4, 4)
    A[1, 2] = np.nan
    with pytest.raises(ValueError, match="infs or NaNs"):
        rrule(sla.lu, A)
    y_bar = (randn(np.float64, 4, 4), randn(np.float64, 4, 4), randn(np.float64, 4, 4))
    fast = _whole(A, y_bar, check_finite=False)
    general = general_path(lambda: _whole(A, y_bar, check_finite=False))
    for got, want in zip(fast[0], general[0], strict=True):
        np.testing.assert_array_equal(got, want)  # NaN in the same places
    np.testing.assert_array_equal(fast[1][1], general[1][1])
    assert np.isnan(fast[1][1]).any()
    A_dot = randn(np.float64, 4, 4)
    y, _ = frule((NoTangent(), A_dot), sla.lu, A, check_finite=False)
    assert np.isnan(y[2]).any()
    with pytest.raises(ValueError, match="infs or NaNs"):
        frule((NoTangent(), A_dot), sla.lu, A)
    assert "plu_single_pullback" not in spy


def test_zero_pivots_take_the_general_path(assert_same, general_path, spy, randn):
    # the last pivot zero: smooth (the split path); an earlier one: no derivative
    last = np.array([[4.0, 1, 0, 0], [1, 4, 1, 0], [0, 1, 4, 0], [1, 1, 1, 0]])
    assert sla.lu(last)[2][3, 3] == 0
    y_bar = (randn(np.float64, 4, 4), randn(np.float64, 4, 4), randn(np.float64, 4, 4))
    assert_same(_whole(last, y_bar), general_path(lambda: _whole(last, y_bar)))
    A_dot = randn(np.float64, 4, 4)
    fast = frule((NoTangent(), A_dot), sla.lu, last)
    general = general_path(lambda: frule((NoTangent(), A_dot), sla.lu, last))
    for i in (1, 2):
        assert_same(fast[1][i], general[1][i])
    early = np.array([[0.0, 1, 2, 3], [0, 4, 5, 6], [0, 7, 8, 10], [0, 1, 1, 1]])
    _, pb = rrule(sla.lu, early)
    with pytest.raises(np.linalg.LinAlgError, match="zero pivot"):
        pb(y_bar)
    with pytest.raises(np.linalg.LinAlgError, match="zero pivot"):
        frule((NoTangent(), A_dot), sla.lu, early)
    assert spy["plu_single"] == 2
    assert spy["plu_single_jvp"] == 2
    assert "plu_single_pullback" not in spy
