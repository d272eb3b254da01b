import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from kernels.determinant_value import det_batched
from kernels.lu import lu_factor_batched


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 16])
def test_det_is_the_product_of_the_pivots(families, dtype, n):
    """det(P) prod(diag U) of the factorization whose backward error kernels/test_lu checks."""
    eps = np.finfo(dtype).eps
    for name, A in families(n, 40).items():
        d = det_batched(A)
        assert d.dtype == dtype
        lu, piv = lu_factor_batched(A)
        sign = np.where((piv != np.arange(n)).sum(axis=1) % 2, -1, 1)
        expected = sign * np.prod(np.diagonal(lu, axis1=1, axis2=2).astype(complex), axis=1)
        # float32 graded determinants are subnormal: each product rounds to that grid
        tiny = np.finfo(dtype).smallest_subnormal
        assert_allclose(d, expected, rtol=10 * n * eps, atol=10 * n * tiny, err_msg=name)


def test_agrees_with_numpy(rand, dtype):
    A = rand(50, 5, 5)
    eps = np.finfo(dtype).eps
    cond = np.linalg.cond(A.astype(complex)).max()
    assert_allclose(det_batched(A), np.linalg.det(A), rtol=10 * cond * eps)


def test_singular_gives_exactly_zero_and_range_is_numpys(dtype):
    big = 1e200 if dtype != np.float32 else 1e30
    A = np.stack(
        [
            [[1, 2], [2, 4]],  # an exact zero pivot
            [[0, 1], [0, 0]],
            [[big, 0], [0, 1 / big]],  # the product over/underflows in no order
            [[big, 0], [0, big]],  # overflows: inf, as numpy's sign * exp(log)
        ]
    ).astype(dtype)
    d = det_batched(A)
    assert_array_equal(d[:2], 0)
    assert_allclose(d[2], 1, rtol=10 * np.finfo(dtype).eps)
    assert np.isinf(d[3])


@pytest.mark.jit_only
def test_nan_in_nan_out(dtype):
    A = np.full((1, 3, 3), np.nan, dtype=dtype)
    assert np.isnan(det_batched(A)).all()


def test_shape_errors(dtype):
    with pytest.raises(ValueError, match="det_batched"):
        det_batched(np.zeros((2, 3, 4), dtype))
