import re

import numpy as np
import pytest
import scipy.linalg as sla

from kernels import crossovers
from rules import frule, rrule
from rules.linalg import _systems
from rules.testing import check_frule, check_rrule
from tangents import Diagonal, NoTangent, Symmetric, UpperTriangular, ZeroTangent

SHAPES = [
    ((4, 4), (4,)),  # one matrix, a vector
    ((4, 4), (4, 2)),  # one matrix, a matrix
    ((3, 4, 4), (3, 4, 2)),  # a stack: the fused kernel
    ((3, 4, 4), (4,)),  # a stack and one vector (numpy 2: b is a vector)
    ((4, 4), (2, 4, 3)),  # one matrix, stacked right-hand sides: one system
    ((2, 1, 3, 3), (3, 3, 1)),  # broadcast batch axes
]


def well_conditioned(randn, dtype, *shape):
    n = shape[-1]
    return (randn(dtype, *shape) + 2 * np.sqrt(n) * np.eye(n)).astype(dtype)


@pytest.mark.parametrize(("a_shape", "b_shape"), SHAPES)
def test_numpy_solve(randn, dtype, a_shape, b_shape):
    a, b = well_conditioned(randn, dtype, *a_shape), randn(dtype, *b_shape)
    check_rrule(np.linalg.solve, a, b)
    check_frule(np.linalg.solve, a, b)


@pytest.fixture
def lapack_for_stacks(monkeypatch):
    """Stacks of any size take the per-matrix LAPACK path (one matrix always does)."""
    monkeypatch.setattr(crossovers, "SOLVE_STACK_MAX_N", 0)
    monkeypatch.setattr(crossovers, "SOLVE_GUFUNC_STACK_MAX_N", 0)


@pytest.fixture
def gufunc_for_stacks(monkeypatch):
    """Stacks of any size take numpy's batched solve (the mid-size path)."""
    monkeypatch.setattr(crossovers, "SOLVE_STACK_MAX_N", 0)


@pytest.mark.parametrize(("a_shape", "b_shape"), [((2, 4, 4), (4,)), ((2, 1, 3, 3), (3, 3, 1))])
def test_stacks_on_the_lapack_path(randn, dtype, lapack_for_stacks, a_shape, b_shape):
    a, b = well_conditioned(randn, dtype, *a_shape), randn(dtype, *b_shape)
    check_rrule(np.linalg.solve, a, b)
    check_frule(np.linalg.solve, a, b)


@pytest.mark.parametrize(("a_shape", "b_shape"), [((2, 4, 4), (4,)), ((2, 1, 3, 3), (3, 3, 1))])
def test_stacks_on_the_gufunc_path(randn, dtype, gufunc_for_stacks, a_shape, b_shape):
    a, b = well_conditioned(randn, dtype, *a_shape), randn(dtype, *b_shape)
    kept = a.copy(), b.copy()
    check_rrule(np.linalg.solve, a, b)
    check_frule(np.linalg.solve, a, b)
    np.testing.assert_array_equal(a, kept[0])
    np.testing.assert_array_equal(b, kept[1])
    a[0, 0] = 0  # a singular matrix: numpy's error, with the function and the shape
    with pytest.raises(
        np.linalg.LinAlgError, match=r"np.linalg.solve: singular.*" + re.escape(str(a_shape))
    ):
        rrule(np.linalg.solve, a, b)


def test_mid_size_stacks(randn):
    a, b = well_conditioned(randn, np.float64, 2, 20, 20), randn(np.float64, 2, 20, 3)
    assert isinstance(_systems.factor("f", a), _systems.GufuncLU)
    check_rrule(np.linalg.solve, a, b)
    check_frule(np.linalg.solve, a, b)


def test_forward_equals_numpy_within_rounding(randn, dtype):
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for a_shape, b_shape in [*SHAPES, ((30, 30), (30, 2)), ((2, 30, 30), (30,))]:
        a, b = well_conditioned(randn, dtype, *a_shape), randn(dtype, *b_shape)
        x, _ = rrule(np.linalg.solve, a, b)
        expected = np.linalg.solve(a, b)
        assert x.dtype == expected.dtype
        assert x.shape == expected.shape
        np.testing.assert_allclose(x, expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("a_shape", [(30, 30), (4, 4), (3, 4, 4), (2, 40, 40)])
def test_the_pullback_reuses_the_forward_factorization(randn, monkeypatch, a_shape):
    a, b = well_conditioned(randn, np.float64, *a_shape), randn(np.float64, a_shape[-1], 2)
    x, pullback = rrule(np.linalg.solve, a, b)

    def refuse(*args, **kwargs):
        raise AssertionError("the pullback factored again")

    for owner, name in [
        (_systems.BatchedLU, "__init__"),
        (_systems.LapackLU, "__init__"),
        (_systems, "lapack_functions"),
        (_systems.klu, "lu_factor_batched"),
        (np.linalg, "solve"),
        (np.linalg, "inv"),
    ]:
        monkeypatch.setattr(owner, name, refuse)
    assert np.isfinite(pullback(np.ones(x.shape))[1]).all()


@pytest.mark.parametrize("a_shape", [(4, 4), (5, 4, 4)])
def test_kernel_path_agrees_with_the_formula(randn, dtype, a_shape):
    a, b = well_conditioned(randn, dtype, *a_shape), randn(dtype, *a_shape[:-1], 3)
    x_bar = randn(dtype, *a_shape[:-1], 3)
    _, pullback = rrule(np.linalg.solve, a, b)
    kernel = pullback(x_bar)[1:]
    b_bar = np.linalg.inv(a).conj().mT @ x_bar
    a_bar = -b_bar @ np.linalg.solve(a, b).conj().mT
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(kernel[0], a_bar, rtol=tol, atol=tol)
    np.testing.assert_allclose(kernel[1], b_bar, rtol=tol, atol=tol)


def test_user_tangent_types_reach_the_generic_path(randn, matrix_tangent):
    a, b = well_conditioned(randn, np.float64, 3, 3), randn(np.float64, 3, 2)
    x_bar = randn(np.float64, 3, 2)
    _, pullback = rrule(np.linalg.solve, a, b)
    _, a_bar, b_bar = pullback(matrix_tangent(x_bar))
    expected = pullback(x_bar)
    assert type(a_bar) is matrix_tangent
    assert type(b_bar) is matrix_tangent
    np.testing.assert_allclose(a_bar.values, expected[1], rtol=1e-12)
    np.testing.assert_allclose(b_bar.values, expected[2], rtol=1e-12)
    _, x_dot = frule((NoTangent(), matrix_tangent(a), ZeroTangent()), np.linalg.solve, a, b)
    assert type(x_dot) is matrix_tangent


@pytest.mark.parametrize("assume_a", [None, "gen", "sym", "her", "pos"])
@pytest.mark.parametrize("lower", [False, True])
def test_scipy_solve(spd, randn, dtype, assume_a, lower):
    a, b = spd(dtype, 4, 4), randn(dtype, 4, 2)
    symmetric = [0] if assume_a in ("sym", "her", "pos") else []
    if assume_a == "sym" and dtype == np.complex128:  # complex symmetric: a Symmetric input
        a = Symmetric(randn(dtype, 4, 4) + 4 * np.eye(4))
        symmetric = []
    check_rrule(sla.solve, a, b, lower, symmetric=symmetric, assume_a=assume_a)
    check_frule(sla.solve, a, b, lower, symmetric=symmetric, assume_a=assume_a)


@pytest.mark.parametrize("assume_a", ["gen", "sym", "her", "pos"])
@pytest.mark.parametrize("path", ["kernels", "lapack"])
def test_scipy_solve_stacked(spd, randn, monkeypatch, assume_a, path):
    # one matrix takes LAPACK's getrf/potrf/sytrf/hetrf (test_scipy_solve); stacks too here
    if path == "lapack":
        monkeypatch.setattr(crossovers, "SOLVE_STACK_MAX_N", 0)
        monkeypatch.setattr(crossovers, "SOLVE_GUFUNC_STACK_MAX_N", 0)
    dtype = np.complex128
    if assume_a == "sym":  # complex symmetric, broadcast against a stack of right-hand sides
        a = Symmetric(randn(dtype, 3, 3) + 3 * np.eye(3))
        check_rrule(sla.solve, a, randn(dtype, 2, 3, 2), assume_a=assume_a, lower=True)
        return
    a = spd(dtype, 2, 3, 3)
    symmetric = [0] if assume_a != "gen" else []
    check_rrule(sla.solve, a, randn(dtype, 3), symmetric=symmetric, assume_a=assume_a)
    check_frule(sla.solve, a, randn(dtype, 3), symmetric=symmetric, assume_a=assume_a)


@pytest.mark.parametrize(
    "assume_a", ["banded", "diagonal", "tridiagonal", "upper triangular", "lower triangular"]
)
def test_scipy_solve_other_structures(randn, assume_a):
    a, b = well_conditioned(randn, np.float64, 4, 4), randn(np.float64, 4, 2)
    check_rrule(sla.solve, a, b, assume_a=assume_a)
    check_frule(sla.solve, a, b, assume_a=assume_a)


def test_scipy_solve_transposed(randn):
    a, b = well_conditioned(randn, np.float64, 4, 4), randn(np.float64, 4)
    check_rrule(sla.solve, a, b, transposed=True)
    check_frule(sla.solve, a, b, transposed=True)
    check_rrule(sla.solve, a, b, assume_a="upper triangular", transposed=True)


def test_structured_inputs(randn):
    d = randn(np.float64, 4) + 3
    b = randn(np.float64, 4, 2)
    check_rrule(np.linalg.solve, Diagonal(d), b)
    _, pullback = rrule(np.linalg.solve, Diagonal(d), b)
    assert type(pullback(np.ones((4, 2)))[1]) is Diagonal
    U = UpperTriangular(well_conditioned(randn, np.float64, 4, 4))
    check_rrule(np.linalg.solve, U, b)
    check_frule(np.linalg.solve, U, b)


def test_bad_input(randn):
    with pytest.raises(np.linalg.LinAlgError, match=r"np.linalg.solve.*square.*\(2, 3\)"):
        rrule(np.linalg.solve, np.ones((2, 3)), np.ones(2))
    with pytest.raises(np.linalg.LinAlgError, match=r"np.linalg.solve.*singular.*\(3, 3\)"):
        rrule(np.linalg.solve, np.ones((3, 3)), np.ones(3))
    with pytest.raises(np.linalg.LinAlgError, match=r"np.linalg.solve.*singular.*\(2, 30, 30\)"):
        rrule(np.linalg.solve, np.ones((2, 30, 30)), np.ones(30))
    with pytest.raises(ValueError, match=r"np.linalg.solve.*\(3, 3\).*\(4,\)"):
        rrule(np.linalg.solve, np.eye(3), np.ones(4))
    with pytest.raises(ValueError, match=r"np.linalg.solve.*\(2, 3, 3\).*\(4, 3, 1\)"):
        rrule(np.linalg.solve, np.ones((2, 3, 3)), np.ones((4, 3, 1)))
    _, pullback = rrule(np.linalg.solve, np.eye(3), np.ones(3))
    with pytest.raises(ValueError, match=r"solve pullback.*\(2,\).*\(3,\)"):
        pullback(np.ones(2))
    with pytest.raises(np.linalg.LinAlgError, match=r"scipy.linalg.solve.*positive definite"):
        rrule(sla.solve, -np.eye(2), np.ones(2), assume_a="pos")
    with pytest.raises(ValueError, match="not a recognized"):
        rrule(sla.solve, np.eye(2), np.ones(2), assume_a="circulant")
    with pytest.raises(ValueError, match="overwrite_a"):
        rrule(sla.solve, np.eye(2), np.ones(2), overwrite_a=True)
    with pytest.raises(ValueError, match="infs or NaNs"):
        rrule(sla.solve, np.full((2, 2), np.nan), np.ones(2))


def test_nan_in_nan_out():
    a = np.eye(3)
    a[1, 1] = np.nan
    x, pullback = rrule(np.linalg.solve, a, np.ones(3))
    assert np.isnan(x).any()
    assert np.isnan(pullback(np.ones(3))[1]).any()
    _, x_dot = frule((NoTangent(), np.eye(3), np.ones(3)), np.linalg.solve, a, np.ones(3))
    assert np.isnan(x_dot).any()
    x, _ = rrule(sla.solve, a, np.ones(3), check_finite=False)
    assert np.isnan(x).any()


def test_empty_systems():
    for a_shape, b_shape in [((0, 0), (0,)), ((3, 0, 0), (3, 0, 2)), ((0, 3, 3), (3,))]:
        a, b = np.zeros(a_shape), np.zeros(b_shape)
        x, pullback = rrule(np.linalg.solve, a, b)
        assert x.shape == np.linalg.solve(a, b).shape
        _, a_bar, b_bar = pullback(np.ones(x.shape))
        assert a_bar.shape == a_shape
        assert b_bar.shape == b_shape
