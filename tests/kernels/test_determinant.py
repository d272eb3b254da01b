import itertools
import warnings

import numpy as np
import pytest
import scipy.linalg
from numpy.testing import assert_allclose, assert_array_equal

from kernels import crossovers
from kernels.determinant import (
    adjugate_lapack,
    det_pullback,
    det_pullback_batched,
    det_pullback_lapack,
    det_pushforward,
    det_pushforward_batched,
    det_pushforward_lapack,
    slogdet_inverse4,
    slogdet_pullback,
    slogdet_pullback_batched,
    slogdet_pullback_lapack,
    slogdet_pushforward,
    slogdet_pushforward_batched,
    slogdet_pushforward_lapack,
)
from kernels.lu import lu_factor_batched

DTYPES = [np.float64, np.float32, np.complex128]

# exactly singular matrices: (matrix, rank)
SINGULAR = [
    # JAX's example, adj = [[4, -2, 0], [4, -2, 0], [-4, 2, 0]]
    ([[1, 2, 3], [2, 4, 6], [1, 0, 1]], 2),
    ([[0, 1], [0, 0]], 1),  # partial pivoting gives two zero pivots here
    ([[0, 1, 0], [0, 0, 1], [0, 0, 0]], 2),
    ([[2, 0, 0], [0, 0, 0], [0, 0, 5]], 2),
    ([[1, 1, 1, 1], [1, 1, 1, 1], [0, 1, 2, 3], [0, 0, 0, 0]], 2),  # rank n - 2: adj = 0
    ([[1, 2, 3], [2, 4, 6], [3, 6, 9]], 1),  # rank n - 2: adj = 0
    ([[0, 0], [0, 0]], 0),
    ([[0]], 0),  # 1x1: adj = [[1]]
]


def rand(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return np.ascontiguousarray(x, dtype=dtype)


def inner(a, b):
    """Real inner product Re tr(a^H b), the pairing of the complex convention."""
    return np.real(np.vdot(a, b))


def rtol(dtype):
    return 2e-4 if dtype == np.float32 else 1e-10


def adjugate(A):
    """The transposed cofactor matrix, from explicit minors (oracle for small n)."""
    A = np.asarray(A, dtype=np.complex128 if np.iscomplexobj(A) else np.float64)
    n = A.shape[0]
    cof = np.ones_like(A)
    for i, j in itertools.product(range(n), range(n)):
        if n > 1:
            minor = np.delete(np.delete(A, i, axis=0), j, axis=1)
            cof[i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return cof.T


def lu_factor_quiet(A):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        return scipy.linalg.lu_factor(A)


def factor(A):
    lu, piv = lu_factor_batched(A[None])
    return lu[0], piv[0]


# --- det -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_det_pullback_is_the_conjugate_adjugate(rng, dtype, n):
    A, det_bar = rand(rng, (n, n), dtype), rand(rng, (), dtype)
    expected = det_bar * adjugate(A).conj().T
    A_bar = det_pullback(A, det_bar)
    assert A_bar.dtype == dtype
    assert_allclose(A_bar, expected, rtol=rtol(dtype), atol=rtol(dtype))
    lu, piv = scipy.linalg.lu_factor(A)
    assert_allclose(
        det_pullback_lapack(A, lu, piv, det_bar), expected, rtol=rtol(dtype), atol=rtol(dtype)
    )


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize(("matrix", "rank"), SINGULAR)
def test_det_gradient_exact_at_singular_matrices(rng, dtype, matrix, rank):
    # det is a polynomial, so central differences are exact up to rounding
    A = np.array(matrix, dtype=dtype) * (1 + 1j if dtype == np.complex128 else 1)
    n = A.shape[0]
    det_bar = rand(rng, (), dtype)
    fd = np.zeros_like(A)
    h = 1e-3
    for i, j in itertools.product(range(n), range(n)):
        for step in (1, 1j) if dtype == np.complex128 else (1,):
            E = np.zeros_like(A)
            E[i, j] = h * step
            d = (np.linalg.det(A + E) - np.linalg.det(A - E)) / (2 * h)
            fd[i, j] += step * inner(det_bar, d)  # dL/dRe + i dL/dIm
    A_bar = det_pullback(A, det_bar)
    assert_allclose(A_bar, fd, atol=1e-9)
    assert_allclose(A_bar, det_bar * adjugate(A).conj().T, atol=1e-12)
    if rank < n - 1:
        assert_array_equal(A_bar, 0)
    else:
        assert np.abs(A_bar).max() > 0.1
    lu, piv = lu_factor_quiet(A)
    assert_allclose(det_pullback_lapack(A, lu, piv, det_bar), fd, atol=1e-9)


def test_adjugate_lapack_paths():
    A = np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])  # one zero pivot: rank-one formula
    lu, piv = lu_factor_quiet(A)
    assert np.count_nonzero(np.diagonal(lu) == 0) == 1
    assert_allclose(adjugate_lapack(A, lu, piv), [[4, -2, 0], [4, -2, 0], [-4, 2, 0]], atol=1e-14)
    A = np.array([[0.0, 1], [0, 0]])  # two zero pivots: SVD fallback
    lu, piv = lu_factor_quiet(A)
    assert np.count_nonzero(np.diagonal(lu) == 0) == 2
    assert_allclose(adjugate_lapack(A, lu, piv), [[0, -1], [0, 0]], atol=1e-15)


@pytest.mark.parametrize("dtype", DTYPES)
def test_det_pushforward_matches_differences_and_is_adjoint(rng, dtype):
    A, A_dot, det_bar = rand(rng, (4, 4), dtype), rand(rng, (4, 4), dtype), rand(rng, (), dtype)
    det_dot = det_pushforward(A, A_dot)
    assert det_dot.dtype == dtype
    A64, V64 = A.astype(np.complex128), A_dot.astype(np.complex128)
    h = 1e-4
    fd = (np.linalg.det(A64 + h * V64) - np.linalg.det(A64 - h * V64)) / (2 * h)
    assert_allclose(det_dot, fd, rtol=max(rtol(dtype), 1e-7))
    lu, piv = scipy.linalg.lu_factor(A)
    assert_allclose(det_pushforward_lapack(A, lu, piv, A_dot), det_dot, rtol=rtol(dtype) * 10)
    A_bar = det_pullback(A, det_bar)
    assert_allclose(inner(A_bar, A_dot), inner(det_bar, det_dot), rtol=rtol(dtype) * 10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_det_batched_equals_per_matrix_and_inputs_unchanged(rng, dtype):
    A, A_dot, det_bar = (
        rand(rng, (37, 3, 3), dtype),
        rand(rng, (37, 3, 3), dtype),
        rand(rng, 37, dtype),
    )
    A[5] = [[1, 2, 3], [2, 4, 6], [1, 0, 1]]
    copies = [x.copy() for x in (A, A_dot, det_bar)]
    A_bar = det_pullback_batched(A, det_bar)
    det_dot = det_pushforward_batched(A, A_dot)
    for i in range(37):
        assert_array_equal(A_bar[i], det_pullback(A[i], det_bar[i]))
        assert_array_equal(det_dot[i], det_pushforward(A[i], A_dot[i]))
    for x, c in zip((A, A_dot, det_bar), copies, strict=True):
        assert_array_equal(x, c)


@pytest.mark.jit_only
@pytest.mark.parametrize("dtype", DTYPES)
def test_det_nan_in_nan_out(rng, dtype):
    A = rand(rng, (3, 3), dtype)
    A[1, 1] = np.nan
    assert np.isnan(det_pullback(A, dtype(1))).any()
    assert np.isnan(det_pushforward(A, rand(rng, (3, 3), dtype)))
    assert np.isnan(det_pullback(np.full((3, 3), np.nan, dtype=dtype), dtype(1))).all()


# --- slogdet -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 3, 4])
def test_slogdet_derivatives_match_differences_and_are_adjoint(rng, dtype, n):
    A, A_dot = rand(rng, (n, n), dtype), rand(rng, (n, n), dtype)
    sign, _ = np.linalg.slogdet(A)
    sign_bar, logabsdet_bar = rand(rng, (), dtype), rng.standard_normal()
    lu, piv = factor(A)
    A_bar = slogdet_pullback(lu, piv, sign, sign_bar, logabsdet_bar)
    sign_dot, logabsdet_dot = slogdet_pushforward(lu, piv, sign, A_dot)
    assert A_bar.dtype == sign_dot.dtype == dtype
    assert logabsdet_dot.dtype == np.zeros((), dtype).real.dtype
    # central differences in float64/complex128
    A64, V64 = (
        A.astype(np.result_type(dtype, np.float64)),
        A_dot.astype(np.result_type(dtype, np.float64)),
    )
    h = 1e-6
    s_p, l_p = np.linalg.slogdet(A64 + h * V64)
    s_m, l_m = np.linalg.slogdet(A64 - h * V64)
    tol = {"rtol": max(rtol(dtype), 1e-7), "atol": max(rtol(dtype), 1e-7)}
    assert_allclose(sign_dot, (s_p - s_m) / (2 * h), **tol)
    assert_allclose(logabsdet_dot, (l_p - l_m) / (2 * h), **tol)
    lhs = inner(A_bar, A_dot)
    rhs = inner(sign_bar, sign_dot) + logabsdet_bar * logabsdet_dot
    assert_allclose(lhs, rhs, rtol=rtol(dtype) * 10, atol=rtol(dtype) * 10)
    lu, piv = scipy.linalg.lu_factor(A)
    assert_allclose(slogdet_pullback_lapack(lu, piv, sign, sign_bar, logabsdet_bar), A_bar, **tol)
    sign_dot_l, logabsdet_dot_l = slogdet_pushforward_lapack(lu, piv, sign, A_dot)
    assert_allclose(sign_dot_l, sign_dot, **tol)
    assert_allclose(logabsdet_dot_l, logabsdet_dot, **tol)


def test_slogdet_pullback_of_the_phase(rng):
    # L = Im(sign): only the phase term contributes, A_bar = i Im(conj(sign) sign_bar) A^-H
    A = rand(rng, (3, 3), np.complex128)
    sign, _ = np.linalg.slogdet(A)
    A_bar = slogdet_pullback(*factor(A), sign, 1j, 0.0)
    expected = 1j * (np.conj(sign) * 1j).imag * np.linalg.inv(A).conj().T
    assert_allclose(A_bar, expected, rtol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_slogdet_batched_equals_per_matrix_and_inputs_unchanged(rng, dtype):
    A, A_dot = rand(rng, (37, 3, 3), dtype), rand(rng, (37, 3, 3), dtype)
    lu, piv = lu_factor_batched(A)
    sign, _ = np.linalg.slogdet(A)
    sign = np.ascontiguousarray(sign, dtype=dtype)
    sign_bar, logabsdet_bar = rand(rng, 37, dtype), rand(rng, 37, np.zeros((), dtype).real.dtype)
    inputs = (lu, piv, sign, sign_bar, logabsdet_bar, A_dot)
    copies = [x.copy() for x in inputs]
    A_bar = slogdet_pullback_batched(lu, piv, sign, sign_bar, logabsdet_bar)
    sign_dot, logabsdet_dot = slogdet_pushforward_batched(lu, piv, sign, A_dot)
    for i in range(37):
        assert_array_equal(
            A_bar[i], slogdet_pullback(lu[i], piv[i], sign[i], sign_bar[i], logabsdet_bar[i])
        )
        s_i, l_i = slogdet_pushforward(lu[i], piv[i], sign[i], A_dot[i])
        assert_array_equal(sign_dot[i], s_i)
        assert_array_equal(logabsdet_dot[i], l_i)
    for x, c in zip(inputs, copies, strict=True):
        assert_array_equal(x, c)


@pytest.mark.jit_only
@pytest.mark.parametrize("dtype", DTYPES)
def test_slogdet_singular_and_nan_give_inf_or_nan(rng, dtype):
    A = np.array([[1, 2, 3], [2, 4, 6], [1, 0, 1]], dtype=dtype)
    lu, piv = factor(A)
    A_bar = slogdet_pullback(lu, piv, dtype(0), dtype(1), 1.0)
    assert not np.isfinite(A_bar).all()
    lu, piv = factor(np.full((3, 3), np.nan, dtype=dtype))
    assert np.isnan(slogdet_pullback(lu, piv, dtype(1), dtype(1), 1.0)).all()
    assert np.isnan(slogdet_pushforward(lu, piv, dtype(1), rand(rng, (3, 3), dtype))[1])


@pytest.mark.parametrize("shape", [(0, 3, 3), (2, 0, 0)])
def test_det_and_slogdet_empty_stacks_and_matrices(shape):
    A, v = np.zeros(shape), np.ones(shape[0])
    piv = np.zeros(shape[:2], dtype=np.int32)
    assert det_pullback_batched(A, v).shape == shape
    assert_array_equal(det_pushforward_batched(A, A), np.zeros(shape[0]))  # tr of an empty product
    assert slogdet_pullback_batched(A, piv, v, v, v).shape == shape
    assert [x.shape for x in slogdet_pushforward_batched(A, piv, v, A)] == [shape[:1]] * 2


def test_det_and_slogdet_kernels_reject_mismatched_shapes():
    A, piv, v = np.zeros((2, 3, 3)), np.zeros((2, 3), dtype=np.int32), np.zeros(2)
    with pytest.raises(ValueError, match="det_pullback_batched"):
        det_pullback_batched(A, np.zeros(3))
    with pytest.raises(ValueError, match="det_pushforward_batched"):
        det_pushforward_batched(np.zeros((2, 3, 2)), np.zeros((2, 3, 2)))
    with pytest.raises(ValueError, match="slogdet_pullback_batched"):
        slogdet_pullback_batched(A, piv, v, v, np.zeros(1))
    with pytest.raises(ValueError, match="slogdet_pushforward_batched"):
        slogdet_pushforward_batched(A, piv[:, :2], v, A)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_inverse_from_the_lu_either_way(rng, monkeypatch, dtype):
    # getri up to crossovers.DET_GETRI_MAX_N, getrs on the identity above: the same inverse
    A = rand(rng, (5, 5), dtype) + 3 * np.eye(5)
    lu, piv = scipy.linalg.lu_factor(A)
    det_bar, sign = rand(rng, (), dtype), np.linalg.slogdet(A)[0]
    expected = [
        det_pullback_lapack(A, lu, piv, det_bar),
        slogdet_pullback_lapack(lu, piv, sign, det_bar, 0.7),
        adjugate_lapack(A, lu, piv),
    ]
    monkeypatch.setattr(crossovers, "DET_GETRI_MAX_N", 0)
    got = [
        det_pullback_lapack(A, lu, piv, det_bar),
        slogdet_pullback_lapack(lu, piv, sign, det_bar, 0.7),
        adjugate_lapack(A, lu, piv),
    ]
    for g, e in zip(got, expected, strict=True):
        assert_allclose(g, e, rtol=1e-12, atol=1e-12)
    assert_allclose(got[0], det_bar * np.linalg.det(A).conj() * np.linalg.inv(A).conj().T)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_slogdet_inverse4_is_slogdet_and_the_inverse_transposed(rng, dtype):
    tol = 1e-5 if dtype == np.float32 else 1e-13
    for order in itertools.permutations(range(4)):  # every pivot order, either sign of det
        A = (rng.standard_normal((4, 4)) + 4 * np.eye(4))[list(order)].astype(dtype)
        A[:, 0] *= rng.choice([-1, 1])
        kept = A.copy()
        sign, logabsdet, Z = slogdet_inverse4(A)
        want_sign, want_log = np.linalg.slogdet(A.astype(np.float64))
        assert sign == want_sign
        assert_allclose(logabsdet, want_log, rtol=tol, atol=tol)
        assert Z.dtype == dtype
        assert_allclose(Z, np.linalg.inv(A.astype(np.float64)).T, rtol=10 * tol, atol=10 * tol)
        assert_array_equal(A, kept)


@pytest.mark.jit_only
def test_slogdet_inverse4_singular_and_nan(rng):
    A = np.array([[1.0, 2, 3, 4], [2, 4, 6, 8], [0, 1, 0, 1], [1, 0, 1, 0]])  # exactly rank 3
    sign, logabsdet, Z = slogdet_inverse4(A)
    assert (sign, logabsdet) == (0.0, -np.inf)
    assert not np.isfinite(Z).all()
    A = rng.standard_normal((4, 4)) + 4 * np.eye(4)
    A[1, 2] = np.nan
    sign, logabsdet, Z = slogdet_inverse4(A)
    assert np.isnan(logabsdet)
    assert np.isnan(Z).any()
