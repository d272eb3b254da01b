import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from kernels.inverse import inv_batched


def residual(A, Y):
    """``max_t ||A Y - I||_F / (||A||_F ||Y||_F)``, in double precision."""
    A, Y = A.astype(complex), Y.astype(complex)
    R = A @ Y - np.eye(A.shape[-1])
    norms = np.linalg.norm(A, axis=(1, 2)) * np.linalg.norm(Y, axis=(1, 2))
    return float(np.max(np.linalg.norm(R, axis=(1, 2)) / norms))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 16])
def test_residual_within_10x_lapack(families, dtype, n):
    eps = np.finfo(dtype).eps
    for name, A in families(n, 40).items():
        if name == "rank":
            continue  # numerically singular: the next test
        Y, info = inv_batched(A)
        assert Y.dtype == dtype
        assert_array_equal(info, 0)
        Y_ref = np.linalg.inv(A)  # LAPACK gesv per matrix
        assert residual(A, Y) <= 10 * max(residual(A, Y_ref), eps), name
        if name == "random":
            cond = np.linalg.cond(A.astype(complex)).max()
            assert_allclose(Y, Y_ref, atol=10 * cond * eps * np.abs(Y_ref).max())


def test_exactly_singular_sets_info_like_getrf(dtype):
    A = np.stack([np.eye(3), [[1, 2, 3], [2, 4, 6], [1, 0, 1]], np.zeros((3, 3))]).astype(dtype)
    _, info = inv_batched(A)
    assert info[0] == 0
    assert info[1] > 0  # numpy raises "Singular matrix" for these two
    assert info[2] == 1


@pytest.mark.jit_only
def test_nan_in_nan_out(dtype):
    A = np.stack([np.eye(2), np.full((2, 2), np.nan)]).astype(dtype)
    A_before = A.copy()
    Y, info = inv_batched(A)
    assert_array_equal(info, 0)  # NaN is not a zero pivot; numpy returns NaN
    assert_array_equal(Y[0], np.eye(2))
    assert np.isnan(Y[1]).all()
    assert_array_equal(A, A_before)


def test_shape_errors(dtype):
    with pytest.raises(ValueError, match="inv_batched"):
        inv_batched(np.zeros((2, 3, 4), dtype))
