import warnings

import numpy as np
import pytest
import scipy.linalg as sla

from kernels import crossovers
from rules import frule, rrule
from rules.linalg import qr
from rules.testing import check_frule, check_rrule
from tangents import NoTangent, Symmetric, Tangent, ZeroTangent

SHAPES = [(4, 4), (5, 3), (3, 5), (2, 5, 3), (2, 12, 12)]  # 12: the stacked pullback


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_numpy_qr(dominant, dtype, shape, mode):
    A = dominant(dtype, *shape)
    check_rrule(np.linalg.qr, A, mode)
    check_frule(np.linalg.qr, A, mode)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("mode", ["full", "economic", "r"])
def test_scipy_qr(dominant, dtype, shape, mode):
    A = dominant(dtype, *shape)
    check_rrule(sla.qr, A, mode=mode)
    check_frule(sla.qr, A, mode=mode)


def test_scipy_output_containers_are_scipys(dominant):
    for A in (dominant(np.float64, 5, 3), dominant(np.float64, 2, 5, 3)):
        for mode in ("full", "economic", "r"):
            y, _ = rrule(sla.qr, A, mode=mode)
            want = sla.qr(A, mode=mode)
            assert type(y) is type(want)
            assert [np.shape(v) for v in y] == [np.shape(v) for v in want]


def test_large_matrices_take_the_blas_path(dominant):
    assert crossovers.QR_SINGLE_MAX_N < 14
    assert crossovers.QR_STACK_MAX_N < 18
    A = dominant(np.float64, 20, 14)  # above QR_SINGLE_MAX_N: one BLAS pullback
    check_rrule(np.linalg.qr, A)
    check_frule(np.linalg.qr, A)
    check_rrule(np.linalg.qr, dominant(np.float64, 2, 12, 18))  # a stack above QR_STACK_MAX_N


@pytest.mark.parametrize(
    "shape",
    [(6, 4, 4), (6, 5, 3), (6, 3, 5), (20, 20), (14, 19), (3, 13, 13)],  # 13: stacked
)
def test_kernel_path_agrees_with_the_formula(dominant, randn, dtype, shape):
    Q, R = np.linalg.qr(dominant(dtype, *shape))
    Q_bar, R_bar, A_dot = randn(dtype, *Q.shape), randn(dtype, *R.shape), randn(dtype, *shape)
    tol = 1e-4 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(
        qr.qr_pullback_array(Q, R, Q_bar, R_bar),
        qr._pullback_formula(Q, R, Q_bar, R_bar),
        rtol=tol,
        atol=tol,
    )
    for got, want in zip(
        qr.qr_pushforward_array(Q, R, A_dot), qr._pushforward_formula(Q, R, A_dot), strict=True
    ):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_other_dtypes_take_the_generic_path(dominant):
    A = dominant(np.complex64, 4, 3)
    check_rrule(np.linalg.qr, A, rtol=1e-3, atol=1e-4)
    check_frule(np.linalg.qr, A, rtol=1e-3, atol=1e-4)


def test_loss_of_the_span_of_the_extra_columns(dominant, randn):
    """``|Q2^H b|^2 = |b|^2 - |Q1^H b|^2``: through Q2 or Q1, the same gradient."""
    A, b = dominant(np.complex128, 6, 3), randn(np.complex128, 6)
    y, pullback = rrule(np.linalg.qr, A, "complete")
    Q1, Q2 = y.Q[:, :3], y.Q[:, 3:]
    via_Q2 = np.zeros((6, 6), complex)
    via_Q2[:, 3:] = 2 * np.outer(b, b.conj() @ Q2)  # d|Q2^H b|^2 / dQ2
    via_Q1 = np.zeros((6, 6), complex)
    via_Q1[:, :3] = -2 * np.outer(b, b.conj() @ Q1)
    np.testing.assert_allclose(
        pullback(Tangent(type(y), Q=via_Q2))[1], pullback(Tangent(type(y), Q=via_Q1))[1], atol=1e-12
    )


def test_structured_input(dominant):
    S = Symmetric(dominant(np.float64, 4, 4))
    check_rrule(np.linalg.qr, S)
    _, pullback = rrule(np.linalg.qr, S)
    assert type(pullback((np.ones((4, 4)), ZeroTangent()))[1]) is Symmetric


def test_rank_deficient_input_raises(dominant):
    A = dominant(np.float64, 2, 4, 3)
    A[1, :, 1] = 0  # a zero column: R[1, 1] == 0 in the second matrix
    y, pullback = rrule(np.linalg.qr, A)  # the primal still runs
    with pytest.raises(
        np.linalg.LinAlgError,
        match=r"np.linalg.qr pullback: R\[1, 1\].*matrix \(1,\).*rank deficient",
    ):
        pullback((np.ones_like(y.Q), ZeroTangent()))
    with pytest.raises(np.linalg.LinAlgError, match=r"pushforward.*rank deficient"):
        frule((NoTangent(), np.ones_like(A)), np.linalg.qr, A)


def test_complete_q_where_a_reflector_is_the_identity():
    A = np.eye(4)[:, :2]  # already triangular: numpy's Q and R jump under any perturbation
    y, pullback = rrule(np.linalg.qr, A, "complete")
    pullback(Tangent(type(y), R=np.ones((4, 2))))  # the reduced part is still differentiable
    with pytest.raises(np.linalg.LinAlgError, match="extra columns of the complete Q"):
        pullback(Tangent(type(y), Q=np.ones((4, 4))))


def test_bad_input(dominant):
    with pytest.raises(ValueError, match=r"np.linalg.qr: mode='raw'"):
        rrule(np.linalg.qr, np.eye(3), "raw")
    with pytest.raises(np.linalg.LinAlgError, match=r"np.linalg.qr.*\(3,\)"):
        rrule(np.linalg.qr, np.ones(3))
    with pytest.raises(ValueError, match=r"scipy.linalg.qr: pivoting=True"):
        rrule(sla.qr, np.eye(3), pivoting=True)
    with pytest.raises(ValueError, match="overwrite_a"):
        rrule(sla.qr, np.eye(3), overwrite_a=True)
    with pytest.raises(ValueError, match="array must not contain infs or NaNs"):
        rrule(sla.qr, np.full((2, 2), np.nan))
    _, pullback = rrule(np.linalg.qr, dominant(np.float64, 4, 3))
    with pytest.raises(
        ValueError, match=r"qr pullback: the cotangent of Q has shape \(3, 3\), expected \(4, 3\)"
    ):
        pullback((np.ones((3, 3)), ZeroTangent()))
    with pytest.raises(TypeError, match=r"np.linalg.qr's pullback needs an ndarray"):
        pullback((object(), ZeroTangent()))


def test_nan_in_nan_out():
    A = np.eye(3) + 1.0
    A[1, 1] = np.nan
    _, pullback = rrule(np.linalg.qr, A)
    assert np.isnan(pullback((np.ones((3, 3)), np.ones((3, 3))))[1]).any()
    _, y_dot = frule((NoTangent(), np.eye(3)), np.linalg.qr, A)
    assert np.isnan(y_dot.Q).any()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, pullback = rrule(sla.qr, A, mode="r", check_finite=False)
        assert np.isnan(pullback((np.ones((3, 3)),))[1]).any()


@pytest.mark.parametrize("shape", [(0, 0), (3, 0), (0, 3), (2, 0, 0)])
def test_empty_matrices(shape):
    A = np.zeros(shape)
    for mode in ("reduced", "complete"):
        y, pullback = rrule(np.linalg.qr, A, mode)
        assert pullback((np.ones_like(y.Q), np.ones_like(y.R)))[1].shape == shape
        _, y_dot = frule((NoTangent(), A, NoTangent()), np.linalg.qr, A, mode)
        assert y_dot.Q.shape == y.Q.shape
