"""kernels.hermitian_products: V^H herm(A) V from a triangular product."""

import numpy as np
import pytest

from kernels import crossovers
from kernels.hermitian_products import hermitian_part_times, lower_of_hermitian_part, takes_trmm

TOL = {"d": 1e-13, "f": 1e-5, "D": 1e-13}
TABLES = ("EIGH_HERMITIAN_GEMM_MAX_N", "EIGH_HERMITIAN_GEMM_SMALL_GEMM_MAX_N")


def herm(X):
    return (X + X.conj().swapaxes(-1, -2)) / 2


@pytest.fixture(params=["gemm", "trmm"])
def path(request, monkeypatch):
    """The plain product, or the triangular one forced at every order."""
    table = {"f": 0, "d": 0, "D": 0} if request.param == "trmm" else {}
    for name in TABLES:  # both: the one in use depends on numpy's OpenBLAS core
        monkeypatch.setattr(crossovers, name, table)
    return request.param


@pytest.mark.parametrize(("b", "n", "k"), [(1, 1, 1), (1, 7, 7), (3, 6, 4), (2, 9, 9)])
def test_identities_for_a_general_matrix(rand, dtype, b, n, k, path):
    A = rand(b, n, n)  # not Hermitian: only its Hermitian part counts
    V = rand(b, n, k)
    A0, V0 = A.copy(), V.copy()
    W = hermitian_part_times(A, V)
    assert W.dtype == dtype
    assert W.shape == (b, n, k)
    assert W.flags.c_contiguous
    np.testing.assert_array_equal(A, A0)
    np.testing.assert_array_equal(V, V0)
    Vh = V.conj().swapaxes(-1, -2)
    expected = Vh @ herm(A.astype(np.complex128)) @ V
    scale = TOL[dtype.char] * max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(herm(Vh @ W), expected, rtol=0, atol=scale)
    got_diag = np.real(np.diagonal(Vh @ W, axis1=-2, axis2=-1))
    want_diag = np.real(np.diagonal(Vh @ A @ V, axis1=-2, axis2=-1))
    np.testing.assert_allclose(got_diag, want_diag, rtol=0, atol=scale)
    if path == "trmm" and n > 1:  # the triangular product ran: W is T V, not A V
        assert not np.allclose(W, A @ V)


def test_lower_of_hermitian_part(rand, dtype):
    A = rand(2, 5, 5)
    T = lower_of_hermitian_part(A)
    assert T.dtype == dtype
    np.testing.assert_array_equal(np.triu(T, 1), 0)
    np.testing.assert_allclose((T + T.conj().swapaxes(-1, -2)) / 2, herm(A), rtol=1e-6)
    np.testing.assert_array_equal(
        np.diagonal(T, axis1=1, axis2=2), np.diagonal(A, axis1=1, axis2=2).real
    )


def test_strided_inputs_and_nan(rng, path):
    A = rng.standard_normal((1, 12, 12)).swapaxes(1, 2)  # not C-contiguous
    V = rng.standard_normal((1, 12, 12))[:, :, ::-1]
    W = hermitian_part_times(A, V)
    Vh = V.swapaxes(1, 2)
    np.testing.assert_allclose(herm(Vh @ W), Vh @ herm(A) @ V, atol=1e-12)
    A[0, 3, 1] = np.nan
    assert np.isnan(hermitian_part_times(A, V)).any()


@pytest.mark.parametrize("avx512", [False, True])
def test_takes_trmm_follows_the_table_of_its_openblas_core(monkeypatch, avx512):
    """The small-gemm (AVX-512) cores' table where numpy's OpenBLAS runs one, the other's elsewhere."""
    from kernels import _blas_core

    monkeypatch.setattr(_blas_core, "small_gemm_core", lambda: avx512)
    in_use, other = TABLES[::-1] if avx512 else TABLES
    monkeypatch.setattr(crossovers, in_use, {"d": 10})
    monkeypatch.setattr(crossovers, other, {"d": 100, "f": 0})
    assert takes_trmm(11, np.float64)
    assert not takes_trmm(10, np.float64)
    assert not takes_trmm(1000, np.complex64)
    assert not takes_trmm(1000, np.float32)


def test_the_tables_hold_the_three_dtypes():
    for name in TABLES:
        table = getattr(crossovers, name)
        assert sorted(table) == ["D", "d", "f"]
        assert all(isinstance(v, int) and v >= 0 for v in table.values())


def test_mismatched_inputs_raise(rng):
    A = rng.standard_normal((2, 4, 4))
    with pytest.raises(ValueError, match="hermitian_part_times"):
        hermitian_part_times(A, rng.standard_normal((2, 5, 4)))
    with pytest.raises(ValueError, match="hermitian_part_times"):
        hermitian_part_times(A[:, :, :3], rng.standard_normal((2, 4, 4)))


def test_layouts_dtypes_and_ranks_found_in_review(rng, path):
    V = np.asfortranarray(rng.standard_normal((3, 6, 6)))  # a stack of Fortran layout
    A = rng.standard_normal((3, 6, 6))
    W = hermitian_part_times(A, V)
    assert W.flags.c_contiguous
    Vh = V.swapaxes(1, 2)
    np.testing.assert_allclose(herm(Vh @ W), Vh @ herm(A) @ V, atol=1e-12)
    # mixed dtypes (a real direction for complex vectors): numpy's promotion, A @ V
    Vc = rng.standard_normal((1, 6, 6)) + 1j * rng.standard_normal((1, 6, 6))
    np.testing.assert_array_equal(hermitian_part_times(A[:1], Vc), A[:1] @ Vc)
    with pytest.raises(ValueError, match="hermitian_part_times"):
        hermitian_part_times(A[0, 0], V[0])
