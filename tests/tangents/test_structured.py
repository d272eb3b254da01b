import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tangents import (
    Diagonal,
    Hermitian,
    LowerTriangular,
    NoTangent,
    Symmetric,
    Thunk,
    UpperTriangular,
    ZeroTangent,
)

DTYPES = [np.float32, np.float64, np.complex128]


def random(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def structured(kind, rng, n, dtype, batch=()):
    if kind is Diagonal:
        return Diagonal(random(rng, (*batch, n), dtype))
    A = random(rng, (*batch, n, n), dtype)
    if kind in (Symmetric, Hermitian):
        return kind(A, uplo="L" if rng.random() < 0.5 else "U")
    return kind(A)


def reference_dense(M):
    """The dense form, built from the definition independently of .dense()."""
    if isinstance(M, Diagonal):
        return np.apply_along_axis(np.diag, -1, M.diag) if M.diag.ndim > 1 else np.diag(M.diag)
    A = M.data
    if isinstance(M, LowerTriangular):
        return np.tril(A)
    if isinstance(M, UpperTriangular):
        return np.triu(A)
    tri = np.triu(A) if M.uplo == "U" else np.tril(A)
    strict = tri - np.tril(np.triu(tri))  # strict triangle
    other = np.swapaxes(strict, -1, -2)
    if isinstance(M, Hermitian):
        diag = np.tril(np.triu(tri)).real.astype(A.dtype)
        return diag + strict + other.conj()
    return tri + other


KINDS = [Diagonal, Symmetric, Hermitian, UpperTriangular, LowerTriangular]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_dense_form_shape_dtype(kind, dtype, rng):
    M = structured(kind, rng, 4, dtype)
    dense = np.asarray(M)
    np.testing.assert_array_equal(dense, reference_dense(M))
    assert M.shape == dense.shape == (4, 4)
    assert M.dtype == dense.dtype == dtype
    assert np.asarray(M) is not np.asarray(M)  # a copy each time


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul_with_arrays_equals_dense(kind, dtype, rng):
    M = structured(kind, rng, 4, dtype)
    dense = reference_dense(M)
    X = random(rng, (4, 3), dtype)
    Y = random(rng, (2, 4), dtype)
    v = random(rng, (4,), dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(M @ X, dense @ X, rtol=tol, atol=tol)
    np.testing.assert_allclose(Y @ M, Y @ dense, rtol=tol, atol=tol)
    np.testing.assert_allclose(M @ v, dense @ v, rtol=tol, atol=tol)
    np.testing.assert_allclose(v @ M, v @ dense, rtol=tol, atol=tol)
    assert isinstance(M @ X, np.ndarray)


@pytest.mark.parametrize("left", KINDS)
@pytest.mark.parametrize("right", KINDS)
def test_matmul_between_structures_equals_dense(left, right, rng):
    A = structured(left, rng, 4, np.float64)
    B = structured(right, rng, 4, np.float64)
    np.testing.assert_allclose(
        np.asarray(A @ B), reference_dense(A) @ reference_dense(B), atol=1e-12
    )


def test_structure_kept_where_the_product_keeps_it(rng):
    d = Diagonal(rng.standard_normal(3))
    U = UpperTriangular(rng.standard_normal((3, 3)))
    L = LowerTriangular(rng.standard_normal((3, 3)))
    assert isinstance(d @ d, Diagonal)
    assert isinstance(d @ U, UpperTriangular)
    assert isinstance(U @ d, UpperTriangular)
    assert isinstance(U @ U, UpperTriangular)
    assert isinstance(L @ L, LowerTriangular)
    assert isinstance(U @ L, np.ndarray)


def test_diagonal_matmul_never_forms_the_dense_matrix(rng, monkeypatch):
    d = Diagonal(rng.standard_normal(5))

    def forbidden(self):
        raise AssertionError("dense() called")

    monkeypatch.setattr(Diagonal, "dense", forbidden)
    X = rng.standard_normal((5, 5))
    np.testing.assert_allclose(d @ X, d.diag[:, None] * X)
    np.testing.assert_allclose(X @ d, X * d.diag)


@pytest.mark.parametrize("kind", KINDS)
def test_linear_operations(kind, rng):
    A = structured(kind, rng, 3, np.complex128)
    B = structured(kind, rng, 3, np.complex128)
    dA, dB = reference_dense(A), reference_dense(B)
    for result, expected in [
        (A + B, dA + dB),
        (A - B, dA - dB),
        (2.0 * A, 2.0 * dA),
        (A * 2.0, 2.0 * dA),
        (A / 2.0, dA / 2.0),
        (-A, -dA),
        (A.T, dA.T),
        (A.mT, dA.T),
        (A.conj(), dA.conj()),
        (A.real, dA.real),
        (A + dB, dA + dB),
        (dB + A, dB + dA),
        (dB - A, dB - dA),
    ]:
        np.testing.assert_allclose(np.asarray(result), expected, atol=1e-12)
    if kind is not Hermitian:
        assert type(A + B) is kind
        assert type(2.0 * A) is kind


def test_hermitian_times_complex_scalar_is_dense(rng):
    H = Hermitian(random(rng, (3, 3), np.complex128))
    result = 1j * H
    assert isinstance(result, np.ndarray)
    np.testing.assert_allclose(result, 1j * reference_dense(H))


def test_symmetric_sum_with_different_triangles(rng):
    A = Symmetric(rng.standard_normal((3, 3)), uplo="U")
    B = Symmetric(rng.standard_normal((3, 3)), uplo="L")
    np.testing.assert_allclose(np.asarray(A + B), reference_dense(A) + reference_dense(B))


def test_stacks(rng):
    d = Diagonal(rng.standard_normal((2, 3)))
    U = UpperTriangular(rng.standard_normal((2, 3, 3)))
    X = rng.standard_normal((2, 3, 4))
    np.testing.assert_allclose(d @ X, reference_dense(d) @ X)
    np.testing.assert_allclose(U @ X, np.triu(U.data) @ X)
    assert d.shape == (2, 3, 3)


def test_zeros_and_thunks_interplay(rng):
    d = Diagonal(rng.standard_normal(3))
    assert d + ZeroTangent() is d
    assert ZeroTangent() + d is d
    assert d + NoTangent() is d
    assert d @ ZeroTangent() is ZeroTangent()
    total = d + Thunk(lambda: Diagonal(np.ones(3)))
    np.testing.assert_allclose(total.diag, d.diag + 1)


def test_ndarray_operators_reach_the_structure(rng):
    d = Diagonal(rng.standard_normal(3))
    X = rng.standard_normal((3, 3))
    assert (X + d).dtype == np.float64
    assert (X @ d).dtype == np.float64


def test_bad_shapes():
    with pytest.raises(ValueError, match="square"):
        Symmetric(np.ones((2, 3)))
    with pytest.raises(ValueError, match="uplo"):
        Symmetric(np.ones((2, 2)), uplo="X")
    with pytest.raises(ValueError, match="vector"):
        Diagonal(np.float64(1.0))


@given(st.integers(1, 5), st.sampled_from(KINDS), st.integers(0, 2**32 - 1))
def test_transpose_is_an_involution(n, kind, seed):
    M = structured(kind, np.random.default_rng(seed), n, np.complex128)
    np.testing.assert_array_equal(np.asarray(M.T.T), reference_dense(M))
