import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from kernels import determinant_lu as K
from kernels.determinant_value import det_batched
from kernels.lu import lu_factor_batched

ORDERS = [1, 2, 3, 4, 5, 16]


def _tau(dtype):
    return float(np.sqrt(np.finfo(dtype).eps))


@pytest.mark.parametrize("n", ORDERS)
def test_forward_keeps_the_batched_lu_and_det(rand, dtype, n):
    A = rand(37, n, n)
    A0 = A.copy()
    lu, piv, d, ok = K.lu_det_batched(A, _tau(dtype))
    lu1, piv1 = lu_factor_batched(A)
    assert_array_equal(lu, lu1)
    assert_array_equal(piv, piv1)
    assert_array_equal(d, det_batched(A))  # the same value as the det kernel, bit for bit
    assert d.dtype == dtype
    assert ok.dtype == np.bool_
    _, _, sign, logabsdet = K.lu_slogdet_batched(A)
    want_sign, want_log = np.linalg.slogdet(A)
    assert sign.dtype == dtype
    assert logabsdet.dtype == A.real.dtype
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    assert_allclose(sign, want_sign, rtol=rtol, atol=rtol)
    assert_allclose(logabsdet, want_log, rtol=rtol, atol=n * rtol)
    assert_array_equal(A, A0)  # no input mutation


def test_slogdet_edges_are_numpys(dtype):
    big = 1e200 if dtype != np.float32 else 1e30
    A = np.stack(
        [
            [[1, 2], [2, 4]],  # a zero pivot: (0, -inf)
            [[0, 1], [0, 0]],
            [[big, 0], [0, big]],  # the product overflows: the sum of logarithms
            [[1 / big, 0], [0, -1 / big]],  # underflows
            [[np.nan, 1], [1, 1]],
        ]
    ).astype(dtype)
    _, _, sign, logabsdet = K.lu_slogdet_batched(A)
    with np.errstate(all="ignore"):
        want_sign, want_log = np.linalg.slogdet(A)
    assert_allclose(sign[:4], want_sign[:4])
    assert_allclose(logabsdet[:4], want_log[:4], rtol=1e-6)
    assert np.isnan(logabsdet[4])


@pytest.mark.parametrize("n", ORDERS)
def test_inverse_adjoint_and_trace_agree_with_numpy(rand, dtype, n, tol):
    A = (rand(37, n, n) + 2 * np.sqrt(n) * np.eye(n)).astype(dtype)
    A_dot, c = rand(37, n, n), rand(37)
    lu, piv = lu_factor_batched(A)
    inv = np.linalg.inv(A.astype(np.complex128 if dtype.kind == "c" else np.float64))
    got = K.scaled_inverse_adjoint_batched(lu, piv, c)
    assert got.dtype == dtype
    assert_allclose(got, c[:, None, None] * inv.conj().swapaxes(-1, -2), **tol)
    tau = K.inverse_trace_batched(lu, piv, A_dot)
    assert tau.dtype == dtype
    assert_allclose(tau, np.einsum("tij,tji->t", inv, A_dot), **tol)


def test_pivot_test(dtype):
    """``ok`` is false at zero, tiny relative, NaN and out-of-range pivots; true elsewhere."""
    tau = _tau(dtype)
    small = 0.1 * tau
    A = np.stack(
        [
            [[2, 1, 0], [1, 3, 1], [0, 1, 4]],  # well conditioned: true
            [[1, 2, 3], [2, 4, 6], [1, 0, 1]],  # rank 2: a zero pivot
            [[1, 0, 0], [0, small, 0], [0, 0, 1]],  # a pivot below tau max|u|
            [[1, 0, 0], [0, 10 * tau, 0], [0, 0, 1]],  # above it: true
            [[np.nan, 0, 0], [0, 1, 0], [0, 0, 1]],
            [[1e-30, 0, 0], [0, 1e-30, 0], [0, 0, 1e-30]],  # det underflows (f32, f64: 1e-90)
        ]
    ).astype(dtype)
    if dtype != np.float32:
        A[5] *= 1e-80
    _, _, d, ok = K.lu_det_batched(A, tau)
    assert_array_equal(ok, [True, False, False, True, False, False])
    _, _, _, ok0 = K.lu_det_batched(A, 0.0)  # tau = 0 still refuses zeros, NaN and range
    assert_array_equal(ok0, [True, False, True, True, False, False])
    assert d[1] == 0


@pytest.mark.jit_only
def test_zero_pivots_give_non_finite_not_exceptions(dtype):
    A = np.stack([np.ones((3, 3)), np.eye(3)]).astype(dtype)
    lu, piv = lu_factor_batched(A)
    got = K.scaled_inverse_adjoint_batched(lu, piv, np.ones(2, dtype))
    assert not np.isfinite(got[0]).all()
    assert_allclose(got[1], np.eye(3))
    tau = K.inverse_trace_batched(lu, piv, A)
    assert not np.isfinite(tau[0])
    assert tau[1] == 3


def test_bad_shapes():
    A = np.ones((2, 3, 3))
    with pytest.raises(ValueError, match="square"):
        K.lu_det_batched(np.ones((2, 3, 4)), 0.0)
    with pytest.raises(ValueError, match="nonempty"):
        K.lu_slogdet_batched(np.ones((2, 0, 0)))
    lu, piv = lu_factor_batched(A)
    with pytest.raises(ValueError, match="need lu"):
        K.scaled_inverse_adjoint_batched(lu, piv, np.ones(3))
    with pytest.raises(ValueError, match="need lu"):
        K.inverse_trace_batched(lu, piv, np.ones((2, 3, 2)))
