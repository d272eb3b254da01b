"""Sparse times dense in both directions, through ``@``: the cotangent stays on the pattern."""

import operator

import numpy as np
import pytest
import scipy.sparse as sp

import rules  # noqa: F401  (registers the rules)
from rules import rrule
from rules.testing import check_frule, check_rrule

FORMATS = ["csr", "csc", "coo"]


def sparse(rng, shape, fmt, dtype=np.float64, matrix=False, density=0.5):
    A = sp.random_array(shape, density=density, format="coo", rng=rng, dtype=np.float64)
    if np.issubdtype(dtype, np.complexfloating):
        A = A + 1j * A
    A = A.astype(dtype)
    A = sp.coo_matrix(A) if matrix else A
    return A.asformat(fmt)


def dense(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


@pytest.mark.parametrize("matrix", [False, True], ids=["array", "matrix"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("fmt", FORMATS)
def test_sparse_times_dense_both_ways(rng, fmt, dtype, matrix):
    A = sparse(rng, (4, 3), fmt, dtype, matrix)
    for B in (dense(rng, (3, 2), dtype), dense(rng, (3,), dtype)):
        check_rrule(operator.matmul, A, B)
        check_frule(operator.matmul, A, B)
    for D in (dense(rng, (2, 4), dtype), dense(rng, (4,), dtype)):
        check_rrule(operator.matmul, D, A)
        check_frule(operator.matmul, D, A)


def test_mixed_precision_and_np_matmul_route_here(rng):
    A = sparse(rng, (4, 3), "csr", np.float32)
    check_rrule(operator.matmul, A, dense(rng, (3, 2), np.complex128))
    _, pullback = rrule(np.matmul, A, np.ones((3, 2)))
    assert sp.issparse(pullback(np.ones((4, 2)))[1])


def test_a_large_sparse_cotangent_is_never_dense(rng):
    n = 200_000  # a dense n x n cotangent would take 320 GB
    A = sp.random_array((n, n), density=3 / n, format="csr", rng=rng)
    B = rng.standard_normal((n, 2))
    _, pullback = rrule(operator.matmul, A, B)
    _, A_bar, B_bar = pullback(np.ones((n, 2)))
    assert type(A_bar) is sp.csr_array
    assert A_bar.nnz == A.nnz
    np.testing.assert_array_equal(A_bar.indices, A.indices)
    np.testing.assert_allclose(A_bar.data, B[A.indices].sum(axis=1))  # (1 1^T B^T)_{ij}
    np.testing.assert_allclose(B_bar, np.ones(2) * np.bincount(A.indices, A.data, n)[:, None])
    _, pullback = rrule(operator.matmul, B.T, A)
    assert pullback(np.ones((2, n)))[2].nnz == A.nnz


def test_two_sparse_operands_and_other_formats_are_refused_by_name(rng):
    A = sparse(rng, (3, 3), "csr")
    with pytest.raises(ValueError, match="matmul do not support two sparse operands"):
        rrule(operator.matmul, A, A)
    with pytest.raises(TypeError, match=r"support CSR, CSC and COO.*DIA"):
        rrule(operator.matmul, A.todia(), np.ones(3))
