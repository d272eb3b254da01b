"""Norms. Inputs are built away from the kinks (entries away from 0, no near ties), since the
checker's finite differences step 1e-3 of the largest entry; the kinks have their own tests."""

import numpy as np
import pytest

from kernels import crossovers
from rules import frule, rrule
from rules.linalg import norms
from rules.testing import check_frule, check_rrule
from tangents import Diagonal, NoTangent, UpperTriangular, ZeroTangent

INF = np.inf


@pytest.fixture
def spread(rng):
    """``spread(dtype, shape, axis)``: entries ``(1 + pi(j) + 0.1 u) * phase`` along ``axis``.

    ``pi`` is a random permutation of the positions ``j`` along ``axis`` (a tuple of axes is
    taken as one), ``u`` uniform in [0, 1): moduli along ``axis``, and sums of moduli over the
    other axis of a matrix, are at least 0.9 apart, and every entry is at least 1 from 0.
    """

    def spread(dtype, shape, axis):
        axes = axis if isinstance(axis, tuple) else (axis,)
        axes = tuple(a % len(shape) for a in axes)
        along = [shape[a] for a in axes]
        base = 1.0 + rng.permutation(int(np.prod(along))).reshape(along)
        base = np.expand_dims(base, [a for a in range(len(shape)) if a not in axes])
        modulus = base + 0.1 * rng.random(shape)
        if np.dtype(dtype).kind == "c":
            return (modulus * np.exp(2j * np.pi * rng.random(shape))).astype(dtype)
        return (modulus * rng.choice([-1.0, 1.0], shape)).astype(dtype)

    return spread


@pytest.fixture
def svd_spread(rng):
    """``svd_spread(dtype, *shape)``: ``U diag(s) V^H`` with singular values 3, 2, 1, ... (stacks too)."""

    def unitary(dtype, *shape):
        X = rng.standard_normal(shape) + (
            1j * rng.standard_normal(shape) if np.dtype(dtype).kind == "c" else 0
        )
        return np.linalg.qr(X)[0]

    def svd_spread(dtype, *shape):
        *batch, m, n = shape
        k = min(m, n)
        U, V = unitary(dtype, *batch, m, k), unitary(dtype, *batch, n, k)
        s = np.arange(k, 0, -1, dtype=float) + 0.5
        return ((U * s) @ V.conj().swapaxes(-1, -2)).astype(dtype)

    return svd_spread


VECTOR_ORDS = [None, 2, 1, INF, -INF, 0, 3, 0.5, -1, 2.5]


@pytest.mark.parametrize("ord", VECTOR_ORDS, ids=str)
def test_vector_norms(spread, dtype, ord):
    v = spread(dtype, (5,), 0)
    check_rrule(np.linalg.norm, v, fkwargs={"ord": ord})
    check_frule(np.linalg.norm, v, fkwargs={"ord": ord})
    S = spread(dtype, (2, 3, 4), 1)
    check_rrule(np.linalg.norm, S, ord=ord, axis=1)
    check_frule(np.linalg.norm, S, ord=ord, axis=1)
    S = spread(dtype, (2, 3, 4), -1)
    check_rrule(np.linalg.norm, S, ord=ord, axis=-1, keepdims=True)
    check_frule(np.linalg.norm, S, ord=ord, axis=-1, keepdims=True)


@pytest.mark.parametrize("ord", [2, 1, INF, -INF, 3], ids=str)
def test_vector_norm_over_several_axes(spread, dtype, ord):
    S = spread(dtype, (2, 3, 4), (0, 2))
    for keepdims in (False, True):
        check_rrule(np.linalg.vector_norm, S, ord=ord, axis=(0, 2), keepdims=keepdims)
        check_frule(np.linalg.vector_norm, S, ord=ord, axis=(0, 2), keepdims=keepdims)
    S = spread(dtype, (2, 3, 4), (0, 1, 2))
    check_rrule(np.linalg.vector_norm, S, fkwargs={"ord": ord})
    check_rrule(np.linalg.norm, S)  # ord None, axis None: the 2-norm of everything


@pytest.mark.parametrize("ord", [None, "fro", 1, -1, INF, -INF], ids=str)
def test_matrix_norms(spread, dtype, ord):
    axis = -2 if ord in (INF, -INF) else -1  # rows (columns) far apart in size
    M = spread(dtype, (3, 4), axis)
    check_rrule(np.linalg.norm, M, fkwargs={"ord": ord})
    check_frule(np.linalg.norm, M, fkwargs={"ord": ord})
    S = spread(dtype, (2, 3, 4), 2 if ord in (INF, -INF) else 0)
    check_rrule(np.linalg.norm, S, fkwargs={"ord": ord}, axis=(2, 0))
    check_frule(np.linalg.norm, S, fkwargs={"ord": ord}, axis=(2, 0))
    S = spread(dtype, (5, 3, 3), axis)
    check_rrule(np.linalg.matrix_norm, S, fkwargs={"ord": ord}, keepdims=True)
    check_frule(np.linalg.matrix_norm, S, fkwargs={"ord": ord}, keepdims=True)


@pytest.mark.parametrize("ord", ["nuc", 2, -2], ids=str)
def test_spectral_norms(svd_spread, dtype, ord):
    check_rrule(np.linalg.norm, svd_spread(dtype, 3, 4), ord=ord)
    check_frule(np.linalg.norm, svd_spread(dtype, 4, 3), ord=ord)
    S = np.moveaxis(svd_spread(dtype, 2, 3, 4), 0, 1)  # matrices over axes (0, 2)
    check_rrule(np.linalg.norm, S, ord=ord, axis=(0, 2), keepdims=True)
    check_frule(np.linalg.norm, S, ord=ord, axis=(0, 2), keepdims=True)
    S = svd_spread(dtype, 5, 3, 3)  # the svd kernel path
    check_rrule(np.linalg.matrix_norm, S, ord=ord)
    check_frule(np.linalg.matrix_norm, S, ord=ord)


def test_svd_kernel_path_agrees_with_the_formula(svd_spread, rng, dtype, monkeypatch):
    S = svd_spread(dtype, 6, 3, 3)
    y_bar = rng.standard_normal(6).astype(np.result_type(dtype, np.float32))
    U, _, Vh = np.linalg.svd(S)
    calls = []
    kernel = norms.ksvd.svdvals_pullback_batched
    monkeypatch.setattr(
        norms.ksvd, "svdvals_pullback_batched", lambda *a: calls.append(1) or kernel(*a)
    )
    columns = {"nuc": slice(None), 2: slice(0, 1), -2: slice(2, 3)}
    for ord, pick in columns.items():
        _, pullback = rrule(np.linalg.matrix_norm, S, ord=ord)
        n_calls = len(calls)
        want = (U[..., pick] * y_bar[:, None, None]) @ Vh[..., pick, :]
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(pullback(y_bar)[1], want, rtol=tol, atol=tol)
        assert len(calls) == n_calls + 1  # the kernel was taken, not the numpy formula
    assert crossovers.SVD_LOOPS_MAX_N >= 3


def test_primal_is_numpys(spread, rng):
    x = spread(np.float64, (4, 5, 3), 1)
    for ord in (INF, -INF, 1, 3):
        for kwargs in ({"axis": 1}, {"axis": (0, 2)}, {"axis": 1, "keepdims": True}):
            y, _ = rrule(np.linalg.vector_norm, x, ord=ord, **kwargs)
            np.testing.assert_array_equal(y, np.linalg.vector_norm(x, ord=ord, **kwargs))
    for ord in (1, -1, INF, -INF, "fro"):
        for kwargs in ({"axis": (1, 2)}, {"axis": (2, 0), "keepdims": True}):
            y, _ = rrule(np.linalg.norm, x, ord, **kwargs)
            np.testing.assert_array_equal(y, np.linalg.norm(x, ord, **kwargs))
    for ord in ("nuc", 2, -2):
        y, _ = rrule(np.linalg.norm, x, ord, axis=(1, 2))
        np.testing.assert_allclose(y, np.linalg.norm(x, ord, axis=(1, 2)), rtol=1e-14)


def test_structured_inputs_get_structured_cotangents(rng):
    D = Diagonal(np.array([3.0, -1.0, 2.0]))
    for ord in (None, "fro", "nuc", 2, 1, INF):
        check_rrule(np.linalg.norm, D, fkwargs={"ord": ord})
        _, pullback = rrule(np.linalg.norm, D, ord)
        assert type(pullback(1.0)[1]) is Diagonal
    U = UpperTriangular(rng.standard_normal((3, 3)))
    check_rrule(np.linalg.norm, U)
    assert type(rrule(np.linalg.norm, U)[1](1.0)[1]) is UpperTriangular


def test_integer_input_gets_a_float_cotangent():
    x = np.array([3, -4])
    _, pullback = rrule(np.linalg.norm, x)
    np.testing.assert_allclose(pullback(1.0)[1], [0.6, -0.8])


# --- points where a norm is not differentiable ---------------------------------------------------


@pytest.mark.parametrize("ord", [None, 1, 2, INF, -INF, 3, 0.5, -1], ids=str)
def test_zero_vector_gets_zero_cotangent(dtype, ord):
    x = np.zeros(4, dtype=dtype)
    _, pullback = rrule(np.linalg.norm, x, ord)
    x_bar = pullback(1.0)[1]
    np.testing.assert_array_equal(x_bar, np.zeros(4))
    assert x_bar.dtype == dtype


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, INF], ids=str)
def test_zero_matrix_gets_zero_cotangent(ord):
    _, pullback = rrule(np.linalg.norm, np.zeros((3, 2)), ord)
    np.testing.assert_array_equal(pullback(1.0)[1], np.zeros((3, 2)))


def test_ties_split_evenly():
    _, pullback = rrule(np.linalg.norm, np.array([3.0, -3.0, 1.0, 2.0]), INF)
    np.testing.assert_allclose(pullback(2.0)[1], [1.0, -1.0, 0.0, 0.0])
    _, pullback = rrule(np.linalg.norm, np.array([1.0, -1.0, 3.0]), -INF)
    np.testing.assert_allclose(pullback(1.0)[1], [0.5, -0.5, 0.0])
    A = np.array([[1.0, -1.0], [2.0, 2.0]])  # column sums 3, 3 tie; row sums 2, 4 do not
    _, pullback = rrule(np.linalg.norm, A, 1)
    np.testing.assert_allclose(pullback(1.0)[1], np.sign(A) / 2)
    _, pullback = rrule(np.linalg.norm, A, INF)
    np.testing.assert_allclose(pullback(1.0)[1], [[0.0, 0.0], [1.0, 1.0]])


def test_zero_entries_of_the_one_and_p_norms():
    x = np.array([0.0, 2.0, -1.0])
    for ord, want in ((1, [0.0, 1.0, -1.0]), (0.5, [0.0, None, None])):
        _, pullback = rrule(np.linalg.norm, x, ord)
        got = pullback(1.0)[1]
        assert got[0] == 0.0
        assert np.isfinite(got).all()
        if ord == 1:
            np.testing.assert_allclose(got, want)
    _, pullback = rrule(np.linalg.norm, x, 0)  # the count of nonzeros is locally constant
    assert pullback(1.0)[1] is ZeroTangent()


def test_spectral_norm_at_a_tie_is_the_average(rng):
    Q = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    P = np.linalg.qr(rng.standard_normal((3, 3)))[0]
    A = Q[:, :3] @ np.diag([2.0, 2.0, 1.0]) @ P.T
    _, pullback = rrule(np.linalg.norm, A, 2)
    np.testing.assert_allclose(pullback(1.0)[1], Q[:, :2] @ P[:, :2].T / 2, atol=1e-12)
    B = Q[:, :3] @ np.diag([3.0, 1.0, 1.0]) @ P.T
    _, pullback = rrule(np.linalg.norm, B, -2)
    np.testing.assert_allclose(pullback(1.0)[1], Q[:, 1:3] @ P[:, 1:3].T / 2, atol=1e-12)
    A_dot = rng.standard_normal((4, 3))  # the frule uses the same subgradient
    _, y_dot = frule((NoTangent(), A_dot), np.linalg.norm, A, ord=2)
    np.testing.assert_allclose(y_dot, np.sum(Q[:, :2] @ P[:, :2].T / 2 * A_dot))


def test_rank_deficient_nuclear_and_minus_two_norms(rng):
    u, v = rng.standard_normal(4), rng.standard_normal(3)
    A = np.outer(u, v)  # rank one
    _, pullback = rrule(np.linalg.norm, A, "nuc")
    want = np.outer(u, v) / (np.linalg.norm(u) * np.linalg.norm(v))  # U_r V_r^H, no null vectors
    np.testing.assert_allclose(pullback(1.0)[1], want, atol=1e-12)
    _, pullback = rrule(np.linalg.norm, A, -2)
    np.testing.assert_allclose(pullback(1.0)[1], np.zeros((4, 3)), atol=1e-12)


def test_frule_and_rrule_are_adjoint_at_kinks(rng):
    x, x_dot = np.array([3.0, -3.0, 1.0, 0.0]), rng.standard_normal(4)
    for ord in (1, INF, -INF, 0.5):
        _, y_dot = frule((NoTangent(), x_dot), np.linalg.norm, x, ord=ord)
        _, pullback = rrule(np.linalg.norm, x, ord)
        np.testing.assert_allclose(y_dot, np.dot(pullback(1.0)[1], x_dot))


# --- bad input, NaN ------------------------------------------------------------------------------


def test_bad_input(rng):
    x = rng.standard_normal((3, 4))
    with pytest.raises(ValueError, match=r"np.linalg.norm.*\(3, 4\)"):
        rrule(np.linalg.norm, x, "nuc", 0)  # no nuclear norm of vectors
    with pytest.raises(ValueError, match=r"np.linalg.norm.*\(3, 4\)"):
        rrule(np.linalg.norm, x, 3)  # no matrix 3-norm
    with pytest.raises(ValueError, match=r"np.linalg.norm.*\(3, 4\)"):
        rrule(np.linalg.norm, x, None, (0, 0))
    with pytest.raises(ValueError, match=r"np.linalg.matrix_norm.*\(4,\)"):
        rrule(np.linalg.matrix_norm, x[0])
    with pytest.raises(ValueError, match=r"np.linalg.vector_norm.*\(3, 4\)"):
        rrule(np.linalg.vector_norm, x, axis=2)
    _, pullback = rrule(np.linalg.norm, x, axis=1)
    with pytest.raises(ValueError, match=r"np.linalg.norm pullback.*\(4,\).*\(3,\)"):
        pullback(np.ones(4))


@pytest.mark.parametrize("ord", [None, 1, INF, 3], ids=str)
def test_nan_in_nan_out(ord):
    x = np.array([[1.0, np.nan, 2.0], [1.0, 2.0, 3.0]])
    _, pullback = rrule(np.linalg.norm, x, ord, 1)
    x_bar = pullback(np.ones(2))[1]
    assert np.isnan(x_bar[0]).any()
    assert np.isfinite(x_bar[1]).all()
    _, pullback = rrule(np.linalg.norm, np.array([1.0, np.inf]))  # inf in: y = inf, no warning
    assert np.isnan(pullback(1.0)[1][1])
    with pytest.raises(np.linalg.LinAlgError, match=r"np\.linalg\.norm"):  # as numpy's svd
        rrule(np.linalg.norm, x, 2)
