"""The fused single-matrix lane of ``np.linalg.qr`` (``kernels.qr_single``) against the general path.

``crossovers.QR_FAST_SINGLE_MAX_N = 0`` forces the general path; a spy on the fused kernels
checks which path ran.
"""

import numpy as np
import pytest

from kernels import crossovers
from rules import frule, rrule
from rules.linalg import qr as rules_qr
from rules.testing import check_frule, check_rrule
from tangents import NoTangent, Tangent, ZeroTangent


@pytest.fixture
def spy(call_counts):
    """Counts of the fused kernels' calls, by name (as ``rules.linalg.qr`` calls them)."""
    return call_counts(rules_qr, ("qr_single_into", "qr_single_pullback_into", "qr_single_jvp"))


@pytest.fixture
def general_path(lane_off):
    """``general_path(f)``: ``f()`` on the general path."""
    return lane_off(crossovers, "QR_FAST_SINGLE_MAX_N", 0)


def _whole(A, y_bar, mode="reduced"):
    y, pb = rrule(np.linalg.qr, A, mode)
    return y, pb(y_bar)


@pytest.mark.parametrize("n", [1, 2, 4, 7, 12])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_fast_lane_agrees_with_the_general_path(
    assert_same, general_path, spy, dominant, randn, dtype, n, mode
):
    A = dominant(dtype, n, n)
    y_bar = (randn(dtype, n, n), randn(dtype, n, n))
    fast = _whole(A, y_bar, mode)
    assert_same(fast, general_path(lambda: _whole(A, y_bar, mode)))
    for ours, lapack in zip(fast[0], np.linalg.qr(A, mode), strict=True):
        np.testing.assert_allclose(ours, lapack, rtol=1e-4, atol=1e-5)  # LAPACK's signs
    assert spy["qr_single"] == spy["qr_single_pullback"] == 1


@pytest.mark.parametrize("n", [1, 4, 12])
def test_fast_frule_agrees_with_the_general_path(
    assert_same, general_path, spy, dominant, randn, dtype, n
):
    A, A_dot = dominant(dtype, n, n), randn(dtype, n, n)
    fast = frule((NoTangent(), A_dot), np.linalg.qr, A)
    general = general_path(lambda: frule((NoTangent(), A_dot), np.linalg.qr, A))
    assert_same(fast[0], general[0])
    assert type(fast[1]) is type(general[1])
    assert_same(fast[1].Q, general[1].Q)
    assert_same(fast[1].R, general[1].R)
    assert spy["qr_single_jvp"] == 1


@pytest.mark.parametrize("n", [2, 4])
def test_fast_lane_derivatives_by_finite_differences(dominant, dtype, n):
    A = dominant(dtype, n, n)
    tol = {"rtol": 1e-3, "atol": 1e-3} if dtype == np.float32 else {}
    check_rrule(np.linalg.qr, A, **tol)
    check_frule(np.linalg.qr, A, **tol)


@pytest.mark.parametrize("layout", ["F", "strided", "readonly"])
def test_other_layouts_of_the_input(assert_same, general_path, spy, dominant, randn, layout):
    base = dominant(np.float64, 8, 8)
    A = {
        "F": np.asfortranarray(base[:4, :4]),
        "strided": base[::2, ::2],
        "readonly": base[:4, :4].copy(),
    }[layout]
    A.flags.writeable = layout != "readonly"
    y_bar = (randn(np.float64, 4, 4), randn(np.float64, 4, 4))
    assert_same(_whole(A, y_bar), general_path(lambda: _whole(A, y_bar)))
    assert spy["qr_single"] == spy["qr_single_pullback"] == 1


def test_cotangents_the_fused_pullback_does_not_take(
    assert_same, general_path, spy, dominant, randn
):
    A = dominant(np.float64, 4, 4)
    Q_bar, R_bar = randn(np.float64, 4, 4), randn(np.float64, 4, 4)
    Result = type(np.linalg.qr(A))
    cotangents = [
        (np.asfortranarray(Q_bar), R_bar),
        (Q_bar.astype(np.float32), R_bar),
        (ZeroTangent(), R_bar),
        (Q_bar, ZeroTangent()),
        Tangent(Result, Q=Q_bar, R=R_bar),
        [Q_bar, R_bar],
    ]
    for y_bar in cotangents:
        assert_same(_whole(A, y_bar), general_path(lambda y_bar=y_bar: _whole(A, y_bar)))
    assert spy["qr_single"] == len(cotangents)
    assert spy["qr_single_pullback"] == 1  # only the list of C-ordered float64 arrays


def test_rank_deficient_and_nan_input(general_path, spy, randn):
    A = randn(np.float64, 4, 4)
    A[:, 1] = 0  # R[1, 1] == 0 exactly
    _y, pb = rrule(np.linalg.qr, A)
    with pytest.raises(np.linalg.LinAlgError, match=r"R\[1, 1\].*rank deficient"):
        pb((randn(np.float64, 4, 4), randn(np.float64, 4, 4)))
    with pytest.raises(np.linalg.LinAlgError, match="rank deficient"):
        frule((NoTangent(), randn(np.float64, 4, 4)), np.linalg.qr, A)
    assert "qr_single_pullback" not in spy
    A = randn(np.float64, 4, 4)
    A[2, 3] = np.nan  # NaN in, NaN out, no exception (as the general path)
    y_bar = (randn(np.float64, 4, 4), randn(np.float64, 4, 4))
    fast = _whole(A, y_bar)
    general = general_path(lambda: _whole(A, y_bar))
    for got, want in zip((*fast[0], fast[1][1]), (*general[0], general[1][1]), strict=True):
        np.testing.assert_array_equal(got, want)
    assert np.isnan(fast[1][1]).any()
