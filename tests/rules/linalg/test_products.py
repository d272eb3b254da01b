import operator

import numpy as np
import pytest

from rules import frule, rrule
from rules.linalg import products
from rules.testing import check_frule, check_rrule
from tangents import Diagonal, LowerTriangular, NoTangent, Symmetric, UpperTriangular

SHAPES = [
    ((3, 4), (4, 2)),  # single matrices
    ((5, 3, 3), (5, 3, 3)),  # a stack: the kernel path
    ((2, 1, 3, 4), (3, 4, 2)),  # broadcast batch axes
    ((4,), (4, 3)),  # vector @ matrix
    ((3, 4), (4,)),  # matrix @ vector
    ((4,), (4,)),  # inner product
]


@pytest.mark.parametrize(("a_shape", "b_shape"), SHAPES)
def test_matmul(randn, dtype, a_shape, b_shape):
    A, B = randn(dtype, *a_shape), randn(dtype, *b_shape)
    check_rrule(np.matmul, A, B)
    check_frule(np.matmul, A, B)


def test_the_at_operator(randn):
    A, B = randn(np.float64, 2, 3), randn(np.float64, 3, 2)
    check_rrule(operator.matmul, A, B)
    check_frule(operator.matmul, A, B)


@pytest.mark.parametrize("kind", [Diagonal, Symmetric, UpperTriangular, LowerTriangular])
def test_structured_operands_get_structured_cotangents(randn, kind):
    M = kind(randn(np.float64, 3)) if kind is Diagonal else kind(randn(np.float64, 3, 3))
    X = randn(np.float64, 3, 2)
    check_rrule(operator.matmul, M, X)
    check_frule(operator.matmul, M, X)
    _, pullback = rrule(np.matmul, M, X)
    assert type(pullback(np.ones((3, 2)))[1]) is kind


def test_kernel_path_agrees_with_the_generic_path(randn, dtype):
    A, B, C_bar = randn(dtype, 6, 4, 4), randn(dtype, 6, 4, 4), randn(dtype, 6, 4, 4)
    _, pullback = rrule(np.matmul, A, B)
    kernel = pullback(C_bar)
    generic = products._matmul_pullback_generic(A, B, C_bar, lambda x: x, lambda x: x)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for got, want in zip(kernel[1:], generic, strict=True):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    _, C_dot = frule((NoTangent(), A, B), np.matmul, A, B)
    np.testing.assert_allclose(C_dot, A @ B + A @ B, rtol=tol, atol=tol)


def test_mismatched_shapes_name_the_function_and_shapes(randn):
    with pytest.raises(ValueError, match=r"np.matmul.*\(2, 3\).*\(4, 5\)"):
        rrule(np.matmul, randn(np.float64, 2, 3), randn(np.float64, 4, 5))
    _, pullback = rrule(np.matmul, randn(np.float64, 2, 3), randn(np.float64, 3, 4))
    with pytest.raises(ValueError, match=r"matmul pullback.*\(4, 2\).*\(2, 4\)"):
        pullback(np.ones((4, 2)))


def test_nan_in_nan_out(randn):
    A = randn(np.float64, 5, 2, 2)
    A[0, 0, 0] = np.nan
    _, pullback = rrule(np.matmul, A, A)
    A_bar = pullback(np.ones((5, 2, 2)))[1]
    assert np.isnan(A_bar[0]).any()
    assert np.isfinite(A_bar[1:]).all()
