import numpy as np
import pytest
from numpy.testing import assert_allclose

from kernels.products import (
    adjoint_batched,
    adjoint_operand,
    matmul_batched,
    matmul_pullback_batched,
    matmul_pushforward_batched,
    matmul_with_pushforward_batched,
)

# (m, k, n): the specialised square sizes 2, 3, 4, and the loop for any size
SHAPES = [(2, 2, 2), (3, 3, 3), (4, 4, 4), (2, 5, 3), (1, 1, 6)]


def oracle_pullback(A, B, C_bar):
    A, B, C_bar = (x.astype(complex) for x in (A, B, C_bar))
    return C_bar @ B.conj().mT, A.conj().mT @ C_bar


@pytest.mark.parametrize(("m", "k", "n"), SHAPES)
def test_pullback_matches_numpy(rand, dtype, tol, m, k, n):
    A, B, C_bar = rand(3, m, k), rand(3, k, n), rand(3, m, n)
    A_bar, B_bar = matmul_pullback_batched(A, B, C_bar)
    assert A_bar.dtype == dtype
    assert B_bar.dtype == dtype
    assert A_bar.shape == A.shape
    assert B_bar.shape == B.shape
    A_ref, B_ref = oracle_pullback(A, B, C_bar)
    assert_allclose(A_bar, A_ref, **tol)
    assert_allclose(B_bar, B_ref, **tol)


@pytest.mark.parametrize(("m", "k", "n"), SHAPES)
def test_pushforward_matches_finite_differences(rand, dtype, tol, inner, m, k, n):
    A, B, A_dot, B_dot = rand(2, m, k), rand(2, k, n), rand(2, m, k), rand(2, k, n)
    C_dot = matmul_pushforward_batched(A, B, A_dot, B_dot)
    assert C_dot.dtype == dtype
    assert C_dot.shape == (2, m, n)
    A64, B64, Ad64, Bd64 = (x.astype(complex) for x in (A, B, A_dot, B_dot))
    h = 1e-3  # the product is bilinear, so the central difference is exact up to rounding
    fd = ((A64 + h * Ad64) @ (B64 + h * Bd64) - (A64 - h * Ad64) @ (B64 - h * Bd64)) / (2 * h)
    assert_allclose(C_dot, fd, rtol=max(tol["rtol"], 1e-9), atol=max(tol["atol"], 1e-9))
    # adjoint: <C_bar, C_dot> = <A_bar, A_dot> + <B_bar, B_dot>
    C_bar = rand(2, m, n)
    A_bar, B_bar = matmul_pullback_batched(A, B, C_bar)
    lhs = inner(C_bar, C_dot)
    rhs = inner(A_bar, A_dot) + inner(B_bar, B_dot)
    assert lhs == pytest.approx(rhs, rel=10 * tol["rtol"], abs=10 * tol["atol"])


def test_batched_equals_per_matrix(rand):
    A, B, C_bar = rand(4, 4, 4), rand(4, 4, 4), rand(4, 4, 4)
    A_bar, B_bar = matmul_pullback_batched(A, B, C_bar)
    C_dot = matmul_pushforward_batched(A, B, C_bar, C_bar)
    for t in range(4):
        one = (A[t : t + 1], B[t : t + 1], C_bar[t : t + 1])
        A_t, B_t = matmul_pullback_batched(*one)
        np.testing.assert_array_equal(A_t[0], A_bar[t])
        np.testing.assert_array_equal(B_t[0], B_bar[t])
        np.testing.assert_array_equal(
            matmul_pushforward_batched(*one[:2], one[2], one[2])[0], C_dot[t]
        )


def test_inputs_not_mutated(rand):
    args = [rand(3, 4, 4) for _ in range(4)]
    copies = [x.copy() for x in args]
    matmul_pullback_batched(*args[:3])
    matmul_pushforward_batched(*args)
    for x, x0 in zip(args, copies, strict=True):
        np.testing.assert_array_equal(x, x0)


def test_outputs_are_independent_arrays(rand):
    A_bar, B_bar = matmul_pullback_batched(rand(2, 3, 3), rand(2, 3, 3), rand(2, 3, 3))
    B_before = B_bar.copy()
    A_bar[...] = 7.0  # the two outputs share one allocation but not one element
    np.testing.assert_array_equal(B_bar, B_before)
    assert A_bar.flags.c_contiguous
    assert B_bar.flags.c_contiguous


def test_nan_in_gives_nan_out(rand):
    A, B, C_bar = rand(2, 4, 4), rand(2, 4, 4), rand(2, 4, 4)
    C_bar[1, 0, 0] = np.nan
    A_bar, B_bar = matmul_pullback_batched(A, B, C_bar)
    assert np.isnan(A_bar[1, 0]).all()
    assert np.isnan(B_bar[1, :, 0]).all()
    assert np.isfinite(A_bar[0]).all()
    assert np.isfinite(B_bar[0]).all()
    assert np.isnan(matmul_pushforward_batched(A, B, C_bar, B)[1, 0]).all()


def test_empty_inner_dimension_gives_zeros(rand, dtype):
    A, B, C_bar = rand(2, 3, 0), rand(2, 0, 4), rand(2, 3, 4)
    A_bar, B_bar = matmul_pullback_batched(A, B, C_bar)
    assert A_bar.shape == (2, 3, 0)
    assert B_bar.shape == (2, 0, 4)
    np.testing.assert_array_equal(matmul_pushforward_batched(A, B, A, B), np.zeros((2, 3, 4)))


@pytest.mark.parametrize(("m", "k", "n"), [*SHAPES, (3, 0, 2)])
def test_forward_products_match_numpy(rand, dtype, tol, m, k, n):
    A, B, A_dot, B_dot = rand(3, m, k), rand(3, k, n), rand(3, m, k), rand(3, k, n)
    copies = [x.copy() for x in (A, B, A_dot, B_dot)]
    C = matmul_batched(A, B)
    C2, C_dot = matmul_with_pushforward_batched(A, B, A_dot, B_dot)
    for got in (C, C2, C_dot):
        assert got.dtype == dtype
        assert got.shape == (3, m, n)
        assert got.flags.c_contiguous
    A64, B64, Ad64, Bd64 = (x.astype(complex) for x in (A, B, A_dot, B_dot))
    assert_allclose(C, A64 @ B64, **tol)
    np.testing.assert_array_equal(C2, C)  # one product, one summation order
    assert_allclose(C_dot, Ad64 @ B64 + A64 @ Bd64, **tol)
    np.testing.assert_array_equal(C_dot, matmul_pushforward_batched(A, B, A_dot, B_dot))
    for x, x0 in zip((A, B, A_dot, B_dot), copies, strict=True):
        np.testing.assert_array_equal(x, x0)
    C2[...] = 7.0  # the two outputs share one allocation but not one element
    assert_allclose(C_dot, Ad64 @ B64 + A64 @ Bd64, **tol)


def test_forward_products_nan_in_gives_nan_out(rand):
    A, B = rand(2, 4, 4), rand(2, 4, 4)
    A[1, 2, 0] = np.nan
    C = matmul_batched(A, B)
    assert np.isnan(C[1, 2]).all()
    assert np.isfinite(C[0]).all()
    _, C_dot = matmul_with_pushforward_batched(A, B, B, B)
    assert np.isnan(C_dot[1, 2]).all()


@pytest.mark.parametrize("shape", [(3, 5, 7), (1, 1, 1), (4, 16, 16)])
def test_adjoint_batched_is_a_conjugate_transposed_copy(rand, dtype, shape):
    X = rand(*shape)
    kept = X.copy()
    Y = adjoint_batched(X)
    assert Y.dtype == dtype
    assert Y.flags.c_contiguous
    assert not np.shares_memory(X, Y)
    np.testing.assert_array_equal(Y, X.conj().mT)
    np.testing.assert_array_equal(X, kept)


@pytest.mark.parametrize("pays", [True, False])
def test_adjoint_operand_copies_real_stacks_of_small_matrices_only(rand, dtype, pays, monkeypatch):
    from kernels import crossovers, products

    monkeypatch.setattr(products, "adjoint_copy_pays", lambda: pays)

    top = crossovers.MATMUL_ADJOINT_COPY_MAX_N
    for X in (
        rand(3, 6, 5),
        rand(2, 2, 3, 4),
        rand(2, top + 1, 3),
        rand(6, 5),
        rand(3, 6, 5)[:, 1:],
    ):
        Y = adjoint_operand(X)
        np.testing.assert_array_equal(Y, X.conj().mT)
        copied = (
            pays
            and dtype.kind == "f"
            and X.ndim >= 3
            and X.size > 0
            and X.flags.c_contiguous
            and max(X.shape[-2:]) <= top
        )
        assert Y.flags.c_contiguous == copied
        if dtype.kind == "f" and not copied:
            assert np.shares_memory(X, Y)  # the view, as before


def test_the_copy_pays_exactly_on_the_small_gemm_cores(monkeypatch):
    from kernels import products

    for core, pays in [
        ("skylakex", True),
        ("sapphirerapids", True),
        ("haswell", False),
        ("zen", False),
        (None, False),
    ]:
        products.adjoint_copy_pays.cache_clear()
        monkeypatch.setattr(products, "numpy_openblas_core", lambda core=core: core)
        assert products.adjoint_copy_pays() is pays
    products.adjoint_copy_pays.cache_clear()


@pytest.mark.parametrize("dtype_", [np.float64, np.complex128])
def test_slp_compilation_gives_the_same_bits(dtype_):
    """kernels.products' stack kernels compile with SLP (jit_slp): the same bits as without."""
    import numba

    from kernels import _jit

    rng = np.random.default_rng(3)

    def rand(*shape):
        x = rng.standard_normal(shape)
        return (x + 1j * rng.standard_normal(shape) if dtype_ == np.complex128 else x).astype(
            dtype_
        )

    A, B, A_dot, B_dot, C_bar = (
        rand(50, 4, 4),
        rand(50, 4, 4),
        rand(50, 4, 4),
        rand(50, 4, 4),
        rand(50, 4, 4),
    )
    for kernel, args in [
        (matmul_with_pushforward_batched, (A, B, A_dot, B_dot)),
        (matmul_pullback_batched, (A, B, C_bar)),
    ]:
        plain = numba.njit(kernel.py_func, **_jit._OPTIONS)  # Numba's default: no SLP
        for got, want in zip(kernel(*args), plain(*args), strict=True):
            np.testing.assert_array_equal(got, want)
