import operator

import numpy as np
import pytest

from kernels import crossovers
from rules import frule, rrule
from rules.linalg import products
from rules.testing import check_frule, check_rrule
from tangents import (
    Diagonal,
    LowerTriangular,
    NoTangent,
    Symmetric,
    UpperTriangular,
    ZeroTangent,
)

SHAPES = [
    ((3, 4), (4, 2)),  # single matrices
    ((5, 3, 3), (5, 3, 3)),  # a stack: the kernel path
    ((3, 6, 5), (3, 5, 7)),  # a stack above its crossover: BLAS, by a copy of B^T (real)
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
    generic = products._pullback_formula(A, B, C_bar)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for got, want in zip(kernel[1:], generic, strict=True):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    _, C_dot = frule((NoTangent(), A, B), np.matmul, A, B)
    np.testing.assert_allclose(C_dot, A @ B + A @ B, rtol=tol, atol=tol)


@pytest.mark.parametrize("sides", [(4, 4, 4), (2, 3, 1), (5, 5, 5)])
def test_small_stacks_take_the_compiled_product(randn, dtype, monkeypatch, sides):
    m, k, n = sides
    A, B = randn(dtype, 7, m, k), randn(dtype, 7, k, n)
    A_dot, B_dot = randn(dtype, 7, m, k), randn(dtype, 7, k, n)
    calls = []
    for name in ("matmul_batched", "matmul_with_pushforward_batched"):
        original = getattr(products.kproducts, name)
        monkeypatch.setattr(
            products.kproducts, name, lambda *a, f=original, name=name: calls.append(name) or f(*a)
        )
    C, _ = rrule(np.matmul, A, B)
    C_f, C_dot = frule((NoTangent(), A_dot, B_dot), np.matmul, A, B)
    small = max(sides) <= products.crossovers.MATMUL_STACK_MAX_N
    assert calls == (["matmul_batched", "matmul_with_pushforward_batched"] if small else [])
    tol = 1e-5 if dtype == np.float32 else 1e-13
    for got, want in [(C, A @ B), (C_f, A @ B), (C_dot, A_dot @ B + A @ B_dot)]:
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    check_rrule(np.matmul, A, B)
    check_frule(np.matmul, A, B)
    # not C-contiguous, or tangents of another layout: numpy's product, the same numbers
    _, C_dot_f = frule((NoTangent(), np.asfortranarray(A_dot), B_dot), np.matmul, A, B)
    np.testing.assert_allclose(C_dot_f, C_dot, rtol=tol, atol=tol)
    C_t, _ = rrule(np.matmul, A.transpose(0, 2, 1).copy().transpose(0, 2, 1), B)
    np.testing.assert_allclose(C_t, C, rtol=tol, atol=tol)


@pytest.mark.parametrize("pays", [True, False])
def test_real_stacks_above_the_crossover_multiply_by_a_copy_of_the_adjoint(
    randn, dtype, pays, monkeypatch
):
    """``C_bar B^H`` by ``kernels.products.adjoint_operand(B)``: a C-ordered copy when real and
    the copy pays on numpy's OpenBLAS core."""
    A, B = randn(dtype, 3, 6, 5), randn(dtype, 3, 5, 7)
    C_bar = randn(dtype, 3, 6, 7)
    copies = []
    original = products.kproducts.adjoint_batched
    monkeypatch.setattr(
        products.kproducts, "adjoint_batched", lambda X: copies.append(X.shape) or original(X)
    )
    monkeypatch.setattr(products.kproducts, "adjoint_copy_pays", lambda: pays)
    _, A_bar, B_bar = rrule(np.matmul, A, B)[1](C_bar)
    assert copies == ([(3, 5, 7)] if pays and dtype.kind == "f" else [])
    tol = 1e-5 if dtype == np.float32 else 1e-13
    for got, want in [(A_bar, C_bar @ B.conj().mT), (B_bar, A.conj().mT @ C_bar)]:
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    # an empty side: empty cotangents, no copy to make
    A, B = randn(dtype, 3, 6, 0), randn(dtype, 3, 0, 7)
    _, A_bar, B_bar = rrule(np.matmul, A, B)[1](randn(dtype, 3, 6, 7))
    assert (A_bar.shape, B_bar.shape, A_bar.dtype) == (A.shape, B.shape, dtype)
    _, A_bar, B_bar = rrule(np.matmul, B.mT.copy(), A.mT.copy())[1](randn(dtype, 3, 7, 6))
    assert (A_bar.shape, B_bar.shape) == ((3, 7, 0), (3, 0, 6))


@pytest.mark.parametrize("operands", ["owned", "transposed", "A and its transpose"])
@pytest.mark.parametrize("real", [np.float64, np.float32])
def test_plain_real_matrices_agree_with_the_general_path(randn, real, operands):
    # the plain-matrix fast path (ndarray.dot) against the general pullback and pushforward
    A, B = randn(real, 4, 3), randn(real, 3, 5)
    if operands == "transposed":
        A, B = randn(real, 3, 4).T, randn(real, 5, 3).T
    elif operands == "A and its transpose":
        B = A.T
    C_bar, A_dot, B_dot = randn(real, *(A @ B).shape), randn(real, *A.shape), randn(real, *B.shape)
    C, pullback = rrule(np.matmul, A, B)
    np.testing.assert_array_equal(C, np.matmul(A, B))  # the same bits as np.matmul
    general = products._matmul_rrule_general(A, B, C)
    tol = 1e-5 if real == np.float32 else 1e-13
    for got, want in zip(pullback(C_bar), general(C_bar), strict=True):
        if isinstance(want, np.ndarray):
            assert got.dtype == want.dtype == real
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    C2, C_dot = frule((NoTangent(), A_dot, B_dot), np.matmul, A, B)
    np.testing.assert_array_equal(C2, np.matmul(A, B))
    assert C_dot.dtype == real
    np.testing.assert_allclose(C_dot, A_dot @ B + A @ B_dot, rtol=tol, atol=tol)
    # cotangents the fast path does not take: another dtype (projected back), a zero
    A_bar = pullback(C_bar.astype(np.complex128))[1]
    assert A_bar.dtype == real
    np.testing.assert_allclose(A_bar, C_bar @ B.T, rtol=tol, atol=tol)
    assert isinstance(pullback(ZeroTangent())[1], ZeroTangent)
    _, C_dot = frule((NoTangent(), ZeroTangent(), B_dot), np.matmul, A, B)
    np.testing.assert_allclose(C_dot, A @ B_dot, rtol=tol, atol=tol)


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


# --- dot, vdot, inner, outer, kron ---------------------------------------------------------------

DOT_SHAPES = [
    ((3, 4), (4, 2)),  # matrices: the algebra path
    ((4,), (4,)),  # vectors: inner product without conjugation
    ((3, 4), (4,)),
    ((4,), (4, 3)),
    ((2, 3, 4), (5, 4, 2)),  # N-D: sum over a's last axis and b's second-to-last
    ((2, 3, 4), (4,)),
    ((4,), (2, 4, 3)),
    ((), (3, 2)),  # a scalar operand: a product
    ((3,), ()),
]


@pytest.mark.parametrize(("a_shape", "b_shape"), DOT_SHAPES)
def test_dot(randn, dtype, a_shape, b_shape):
    a, b = randn(dtype, *a_shape), randn(dtype, *b_shape)
    check_rrule(np.dot, a, b)
    check_frule(np.dot, a, b)


@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [((3, 4), (2, 4)), ((4,), (4,)), ((2, 3, 4), (5, 4)), ((4,), (2, 3, 4)), ((), (3, 2))],
)
def test_inner(randn, dtype, a_shape, b_shape):
    a, b = randn(dtype, *a_shape), randn(dtype, *b_shape)
    check_rrule(np.inner, a, b)
    check_frule(np.inner, a, b)


@pytest.mark.parametrize(("a_shape", "b_shape"), [((3,), (4,)), ((2, 3), (4,)), ((), (3,))])
def test_outer(randn, dtype, a_shape, b_shape):
    a, b = randn(dtype, *a_shape), randn(dtype, *b_shape)
    check_rrule(np.outer, a, b)
    check_frule(np.outer, a, b)


@pytest.mark.parametrize(("a_shape", "b_shape"), [((6,), (6,)), ((2, 3), (3, 2))])
def test_vdot(randn, dtype, a_shape, b_shape):
    a, b = randn(dtype, *a_shape), randn(dtype, *b_shape)
    check_rrule(np.vdot, a, b)
    check_frule(np.vdot, a, b)


def test_vdot_conjugates_its_first_argument(randn):
    a, b = randn(np.complex128, 3), randn(np.complex128, 3)
    _, pullback = rrule(np.vdot, a, b)
    y_bar = 0.5 - 2j
    _, a_bar, b_bar = pullback(y_bar)
    np.testing.assert_allclose(a_bar, np.conj(y_bar) * b)
    np.testing.assert_allclose(b_bar, y_bar * a)
    check_rrule(np.vdot, randn(np.float64, 3), b)  # a real operand of a complex product
    check_frule(np.vdot, a, randn(np.float32, 3))


@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [((2, 3), (3, 2)), ((3,), (2,)), ((2, 3), (4,)), ((2,), (2, 3, 2)), ((), (3,))],
)
def test_kron(randn, dtype, a_shape, b_shape):
    a, b = randn(dtype, *a_shape), randn(dtype, *b_shape)
    check_rrule(np.kron, a, b)
    check_frule(np.kron, a, b)


@pytest.mark.parametrize("f", [np.dot, np.inner, np.outer, np.vdot, np.kron])
def test_products_of_structured_matrices(randn, f):
    D, X = Diagonal(randn(np.float64, 3)), randn(np.float64, 3, 3)
    check_rrule(f, D, X)
    check_frule(f, D, X)
    y, pullback = rrule(f, D, X)
    assert type(pullback(np.ones(np.shape(y)))[1]) is Diagonal
    S = Symmetric(randn(np.float64, 3, 3))
    check_rrule(f, X, S)
    assert type(rrule(f, X, S)[1](np.ones(np.shape(y)))[2]) is Symmetric


@pytest.mark.parametrize("f", [np.dot, np.inner])
def test_a_low_rank_cotangent_stays_low_rank(randn, low_rank, f):
    a, b = (
        randn(np.complex128, 4, 3),
        randn(np.complex128, 3, 5) if f is np.dot else randn(np.complex128, 5, 3),
    )
    _, pullback = rrule(f, a, b)
    y_bar = low_rank(randn(np.complex128, 4, 1), randn(np.complex128, 5, 1))
    _, a_bar, b_bar = pullback(y_bar)
    assert type(a_bar) is low_rank
    assert type(b_bar) is low_rank
    _, a_want, b_want = pullback(y_bar.dense())
    np.testing.assert_allclose(a_bar.dense(), a_want, atol=1e-12)
    np.testing.assert_allclose(b_bar.dense(), b_want, atol=1e-12)
    # the pushforward: a low-rank tangent of either operand gives a low-rank tangent of y
    m, n = b.shape
    for a_dot, b_dot in [
        (low_rank(randn(np.complex128, 4, 1), randn(np.complex128, 3, 1)), ZeroTangent()),
        (ZeroTangent(), low_rank(randn(np.complex128, m, 1), randn(np.complex128, n, 1))),
    ]:
        _, y_dot = frule((NoTangent(), a_dot, b_dot), f, a, b)
        assert type(y_dot) is low_rank
        dense = [t if isinstance(t, ZeroTangent) else t.dense() for t in (a_dot, b_dot)]
        _, want = frule((NoTangent(), *dense), f, a, b)
        np.testing.assert_allclose(y_dot.dense(), want, atol=1e-12)


def test_outer_takes_a_low_rank_cotangent(randn, low_rank):
    a, b = randn(np.float64, 4), randn(np.float64, 5)
    _, pullback = rrule(np.outer, a, b)
    y_bar = low_rank(randn(np.float64, 4, 2), randn(np.float64, 5, 2))
    got, want = pullback(y_bar), pullback(y_bar.dense())
    for g, w in zip(got[1:], want[1:], strict=True):
        np.testing.assert_allclose(g, w, atol=1e-12)


def test_kron_refuses_a_tangent_type_it_cannot_index(randn, low_rank):
    _, pullback = rrule(np.kron, randn(np.float64, 2, 2), randn(np.float64, 2, 2))
    with pytest.raises(TypeError, match=r"np\.kron's pullback"):
        pullback(low_rank(np.ones((4, 1)), np.ones((4, 1))))


@pytest.mark.parametrize("f", [np.dot, np.inner, np.vdot, np.kron, np.outer])
def test_mismatched_products_name_the_function_and_shapes(randn, f):
    a, b = randn(np.float64, 2, 3), randn(np.float64, 4, 5)
    name = f.__name__
    if f in (np.kron, np.outer):  # any shapes fit; a wrong cotangent does not
        _, pullback = rrule(f, a, b)
        with pytest.raises(ValueError, match=rf"np.{name} pullback.*\(3, 3\)"):
            pullback(np.ones((3, 3)))
        return
    with pytest.raises(ValueError, match=rf"np.{name}.*\(2, 3\).*\(4, 5\)"):
        rrule(f, a, b)
    with pytest.raises(ValueError, match=rf"np.{name}.*\(2, 3\).*\(4, 5\)"):
        frule((NoTangent(), a, b), f, a, b)


def test_dot_pullback_checks_the_cotangent_shape(randn):
    _, pullback = rrule(np.dot, randn(np.float64, 2, 3), randn(np.float64, 3, 4))
    with pytest.raises(ValueError, match=r"np.dot pullback.*\(4, 2\).*\(2, 4\)"):
        pullback(np.ones((4, 2)))


def test_products_refuse_out(randn):
    a = randn(np.float64, 2, 2)
    with pytest.raises(ValueError, match="out"):
        rrule(np.dot, a, a, out=np.empty((2, 2)))


def test_products_nan_in_nan_out(randn):
    a, b = randn(np.float64, 3, 3), randn(np.float64, 3, 3)
    a[0, 0] = np.nan
    for f in (np.dot, np.inner, np.kron, np.outer):
        y, pullback = rrule(f, a, b)
        b_bar = pullback(np.ones(np.shape(y)))[2]
        assert np.isnan(b_bar).any()


# --- np.trace (the rule lives in rules/diagonals.py): structured inputs and stacks ---------------


@pytest.mark.parametrize("kind", [Diagonal, Symmetric, UpperTriangular, LowerTriangular])
def test_trace_of_structured_matrices(randn, kind):
    M = kind(randn(np.float64, 3)) if kind is Diagonal else kind(randn(np.float64, 3, 3))
    check_rrule(np.trace, M)
    check_frule(np.trace, M)
    _, pullback = rrule(np.trace, M)
    assert type(pullback(1.0)[1]) is kind


def test_trace_of_stacks(randn, dtype):
    A = randn(dtype, 4, 3, 3)
    check_rrule(np.trace, A, axis1=-2, axis2=-1)
    check_frule(np.trace, A, axis1=-2, axis2=-1)
    D = Diagonal(randn(np.float64, 4, 3))
    check_rrule(np.trace, D, axis1=-2, axis2=-1)
    _, pullback = rrule(np.trace, D, axis1=-2, axis2=-1)
    assert type(pullback(np.ones(4))[1]) is Diagonal


def test_the_lane_takes_real_stacks_above_the_kernels(randn, dtype):
    """Real ``(b, m, k) @ (b, k, n)`` stacks above the crossover: numpy's matmul in the lane."""
    A, B = randn(dtype, 3, 6, 5), randn(dtype, 3, 5, 7)
    A_dot, B_dot = randn(dtype, 3, 6, 5), randn(dtype, 3, 5, 7)
    got = products.matmul_frule_lane((NoTangent(), A_dot, B_dot), A, B)
    if dtype.kind == "c":
        assert got is None  # the general rule
        return
    C, C_dot = got
    np.testing.assert_array_equal(C, A @ B)
    np.testing.assert_array_equal(C_dot, A_dot @ B + A @ B_dot)
    assert C_dot.dtype == dtype
    # broadcast batch axes and stacks within the kernels' crossover are not the lane's
    assert products.matmul_frule_lane((NoTangent(), A_dot[:1], B_dot), A[:1], B) is None
    small = randn(dtype, 3, 4, 4)
    got = products.matmul_frule_lane((NoTangent(), small, small), small, small)
    assert got is not None  # the compiled product and tangent in one pass
    np.testing.assert_allclose(got[1], 2 * small @ small, rtol=1e-5)


def test_the_lane_of_one_matrix_and_an_equal_dtype_of_another_object():
    """The lane knows numpy's own dtype objects; an equal one (an unpickled array's) takes the rule."""
    import pickle

    rng = np.random.default_rng(0)
    A, B, A_dot, B_dot = (rng.standard_normal((4, 4)) for _ in range(4))
    expected = (A @ B, A_dot @ B + A @ B_dot)
    got = products.matmul_frule_lane((NoTangent(), A_dot, B_dot), A, B)
    for x, y in zip(got, expected, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-14)
    A_unpickled = pickle.loads(pickle.dumps(A))
    assert A_unpickled.dtype == A.dtype
    assert A_unpickled.dtype is not A.dtype  # else this test shows nothing
    assert products.matmul_frule_lane((NoTangent(), A_dot, B_dot), A_unpickled, B) is None
    got = frule((NoTangent(), A_dot, B_dot), np.matmul, A_unpickled, B)
    for x, y in zip(got, expected, strict=True):
        assert x.dtype == np.float64
        np.testing.assert_allclose(x, y, rtol=1e-14)


@pytest.mark.parametrize(
    ("sides", "tiled"),
    [
        ((8, 8, 8), True),
        ((16, 12, 4), True),
        ((4, 8, 20), True),
        ((6, 6, 6), False),  # a side not a multiple of 4: numpy's matmul
        ((max(crossovers.MATMUL_TILED_MAX_N.values()) + 4, 4, 4), False),  # above every dtype's
    ],
)
def test_real_stacks_of_sides_in_fours_take_the_tiled_kernels(
    randn, dtype, monkeypatch, sides, tiled
):
    """Forward, pullback and pushforward (the lane and the general rule) through
    ``kernels.tiled_products`` within ``MATMUL_TILED_MAX_N`` of their dtype, the same numbers."""
    m, k, n = sides
    # the general table (not the small-gemm cores' MATMUL_TILED_SMALL_GEMM_MAX_N)
    monkeypatch.setattr(products.ktiled._blas_core, "small_gemm_core", lambda: False)
    A, B, C_bar = randn(dtype, 3, m, k), randn(dtype, 3, k, n), randn(dtype, 3, m, n)
    A_dot, B_dot = randn(dtype, 3, m, k), randn(dtype, 3, k, n)
    calls = []
    for name in ktiled_names:
        original = getattr(products.ktiled, name)
        monkeypatch.setattr(
            products.ktiled, name, lambda *a, f=original, name=name: calls.append(name) or f(*a)
        )
    C, pullback = rrule(np.matmul, A, B)
    _, A_bar, B_bar = pullback(C_bar)
    C_f, C_dot = frule((NoTangent(), A_dot, B_dot), np.matmul, A, B)  # the lane
    C_dot_general = products._PUSHFORWARD(A, B, A_dot, B_dot, n=max(sides))
    limits = (
        crossovers.MATMUL_TILED_MAX_N
        if products.ktiled.WIDE
        else crossovers.MATMUL_TILED_NARROW_MAX_N
    )
    limit = limits.get(dtype.char, 0)
    expected = tiled and max(sides) <= limit
    assert calls == (ktiled_names if expected else [])
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for got, want in [
        (C, A @ B),
        (C_f, A @ B),
        (A_bar, C_bar @ B.conj().mT),
        (B_bar, A.conj().mT @ C_bar),
        (C_dot, A_dot @ B + A @ B_dot),
        (C_dot_general, A_dot @ B + A @ B_dot),
    ]:
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(sides))
    if expected and dtype == np.float64:  # against finite differences, through the kernels
        check_rrule(np.matmul, A, B)
        check_frule(np.matmul, A, B)


ktiled_names = [
    "matmul_tiled",
    "matmul_pullback_tiled",
    "matmul_with_pushforward_tiled",
    "matmul_pushforward_tiled",
]


@pytest.mark.parametrize("contiguous", [True, False])
def test_pushforward_of_larger_matrices_adds_inside_gemm(randn, dtype, monkeypatch, contiguous):
    """Above ``MATMUL_PUSHFORWARD_ADD_MAX_N`` (lowered here) the lane adds ``A B_dot`` inside
    gemm for C-ordered real operands; the tangent is the same to rounding, and correct."""
    monkeypatch.setattr(crossovers, "MATMUL_PUSHFORWARD_ADD_MAX_N", 2)
    calls = []
    original = products.gemm_accumulate_c
    monkeypatch.setattr(products, "gemm_accumulate_c", lambda *a: calls.append(1) or original(*a))
    A, B, A_dot = randn(dtype, 3, 4), randn(dtype, 4, 5), randn(dtype, 3, 4)
    B_dot = randn(dtype, 4, 5) if contiguous else randn(dtype, 5, 4).T
    C, C_dot = frule((NoTangent(), A_dot, B_dot), np.matmul, A, B)
    np.testing.assert_array_equal(C, A @ B)
    assert len(calls) == (1 if contiguous and dtype in (np.float64, np.float32) else 0)
    assert C_dot.dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(C_dot, A_dot @ B + A @ B_dot, rtol=tol, atol=tol)
    if dtype == np.float64:
        check_frule(np.matmul, A, B)


@pytest.mark.parametrize(
    ("a_shape", "b_shape"), [((0, 200), (200, 5)), ((5, 200), (200, 0)), ((200, 3), (3, 0))]
)
def test_pushforward_of_empty_products_above_the_add_crossover(a_shape, b_shape):
    # found in review: scipy's gemm refused an empty C_dot
    A, B = np.ones(a_shape), np.ones(b_shape)
    C, C_dot = frule((NoTangent(), np.ones(a_shape), np.ones(b_shape)), np.matmul, A, B)
    assert C.shape == C_dot.shape == (a_shape[0], b_shape[1])
    np.testing.assert_array_equal(C_dot, 2 * (A @ B))
