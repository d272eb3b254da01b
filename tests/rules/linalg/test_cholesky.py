import numpy as np
import pytest
import scipy.linalg as sla

from rules import frule, rrule
from rules.linalg import cholesky
from rules.testing import check_frule, check_rrule
from tangents import Hermitian, NoTangent, Symmetric, Tangent, ZeroTangent


@pytest.mark.parametrize("shape", [(4, 4), (3, 4, 4)])
@pytest.mark.parametrize("upper", [False, True])
def test_numpy_cholesky(spd, dtype, shape, upper):
    A = spd(dtype, *shape)
    check_rrule(np.linalg.cholesky, A, symmetric=[0], upper=upper)
    check_frule(np.linalg.cholesky, A, symmetric=[0], upper=upper)


def test_large_matrices_take_the_blocked_path(spd):
    A = spd(np.float64, 60, 60)
    check_rrule(np.linalg.cholesky, A, symmetric=[0])
    check_frule(np.linalg.cholesky, A, symmetric=[0])


@pytest.mark.parametrize("lower", [False, True])
def test_scipy_cholesky_and_cho_factor(spd, dtype, lower):
    A = spd(dtype, 4, 4)
    check_rrule(sla.cholesky, A, lower, symmetric=[0])
    check_frule(sla.cholesky, A, lower, symmetric=[0])
    check_rrule(sla.cho_factor, A, lower, symmetric=[0])
    check_frule(sla.cho_factor, A, lower, symmetric=[0])


@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("rhs", [(4,), (4, 2)])
def test_cho_solve(spd, randn, dtype, lower, rhs):
    c, _ = sla.cho_factor(spd(dtype, 4, 4), lower=lower)
    b = randn(dtype, *rhs)
    check_rrule(sla.cho_solve, (c, lower), b)
    check_frule(sla.cho_solve, (c, lower), b)


@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize(
    ("c_shape", "b_shape"),
    [
        ((3, 3), (4, 3, 2)),  # one factor, a stack of right-hand sides: A_bar summed over it
        ((4, 3, 3), (3,)),  # a stack of factors, one vector
        ((4, 3, 3), (3, 2)),
        ((4, 3, 3), (4, 3, 1)),
        ((2, 1, 3, 3), (1, 4, 3, 2)),  # batch axes broadcast both ways
    ],
)
def test_cho_factor_and_cho_solve_on_stacks(spd, randn, dtype, lower, c_shape, b_shape):
    A = spd(dtype, *c_shape)
    c_and_lower = sla.cho_factor(A, lower=lower)  # a stack: lower is a bool array (scipy 1.17)
    b = randn(dtype, *b_shape)
    check_rrule(sla.cho_solve, c_and_lower, b, constant=[(0, 1)])
    check_frule(sla.cho_solve, c_and_lower, b, constant=[(0, 1)])
    if len(c_shape) > 2:
        check_rrule(sla.cho_factor, A, lower, symmetric=[0])
        check_frule(sla.cho_factor, A, lower, symmetric=[0])


def test_cho_solve_refuses_mixed_lower_flags_and_mismatched_b(spd, randn):
    c, _ = sla.cho_factor(spd(np.float64, 2, 3, 3))
    with pytest.raises(ValueError, match=r"cho_solve: the factors of a stack must all be lower"):
        rrule(sla.cho_solve, (c, np.array([True, False])), randn(np.float64, 3))
    with pytest.raises(
        ValueError, match=r"cho_solve: c of shape \(2, 3, 3\) and b of shape \(2, 3\)"
    ):
        rrule(sla.cho_solve, (c, False), randn(np.float64, 2, 3))


def test_cho_solve_frule_refuses_a_user_tangent_type_by_name(spd, randn, user_tangent):
    c_and_lower = sla.cho_factor(spd(np.float64, 3, 3))
    b = randn(np.float64, 3)
    message = r"cho_solve's frule \(triangular parts, LAPACK\).*UserTangent"
    with pytest.raises(TypeError, match=message):  # b's tangent
        frule((NoTangent(), ZeroTangent(), user_tangent(np.ones(3))), sla.cho_solve, c_and_lower, b)
    c_dot = Tangent(tuple, user_tangent(np.ones((3, 3))), NoTangent())
    with pytest.raises(TypeError, match=message):  # the factor's tangent
        frule((NoTangent(), c_dot, ZeroTangent()), sla.cho_solve, c_and_lower, b)


def test_structured_inputs(spd):
    check_rrule(np.linalg.cholesky, Symmetric(spd(np.float64, 4, 4), uplo="L"))
    H = Hermitian(spd(np.complex128, 3, 3))
    check_rrule(np.linalg.cholesky, H)
    _, pullback = rrule(np.linalg.cholesky, H)
    assert type(pullback(np.ones((3, 3)))[1]) is Hermitian


def test_kernel_path_agrees_with_the_formula(spd, randn, dtype):
    L = np.linalg.cholesky(spd(dtype, 5, 4, 4))
    L_bar = randn(dtype, 5, 4, 4)
    tol = 1e-4 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(
        cholesky.cholesky_pullback_array(L, L_bar),
        cholesky._pullback_formula(L, L_bar),
        rtol=tol,
        atol=tol,
    )
    L1 = np.linalg.cholesky(spd(dtype, 60, 60))
    L1_bar = randn(dtype, 60, 60)
    np.testing.assert_allclose(
        cholesky.cholesky_pullback_array(L1, L1_bar),
        cholesky._pullback_formula(L1, L1_bar),
        rtol=tol,
        atol=tol,
    )


def test_cotangent_is_symmetric(spd, randn):
    A = spd(np.float64, 4, 4)
    _, pullback = rrule(np.linalg.cholesky, A)
    A_bar = pullback(randn(np.float64, 4, 4))[1]
    np.testing.assert_allclose(A_bar, A_bar.T, atol=1e-14)


def test_bad_input():
    with pytest.raises(np.linalg.LinAlgError, match=r"np.linalg.cholesky.*square.*\(2, 3\)"):
        rrule(np.linalg.cholesky, np.ones((2, 3)))
    with pytest.raises(
        np.linalg.LinAlgError, match=r"np.linalg.cholesky.*positive definite.*\(2, 2\)"
    ):
        rrule(np.linalg.cholesky, -np.eye(2))
    _, pullback = rrule(np.linalg.cholesky, np.eye(3))
    with pytest.raises(ValueError, match=r"cholesky pullback.*\(2, 2\).*\(3, 3\)"):
        pullback(np.ones((2, 2)))
    with pytest.raises(ValueError, match="overwrite_a"):
        rrule(sla.cholesky, np.eye(2), overwrite_a=True)


def test_cho_factor_errors_name_the_function_and_the_shape():
    for rule in (rrule, lambda f, A: frule((NoTangent(), np.ones(A.shape)), f, A)):
        with pytest.raises(np.linalg.LinAlgError, match=r"scipy.linalg.cho_factor.*\(2, 3\)"):
            rule(sla.cho_factor, np.ones((2, 3)))
        with pytest.raises(
            np.linalg.LinAlgError,
            match=r"scipy.linalg.cho_factor: .*not positive definite.*\(2, 3, 3\)",
        ):
            rule(sla.cho_factor, -np.stack([np.eye(3)] * 2))


def test_nan_in_nan_out():
    A = np.eye(3)
    A[1, 1] = np.nan
    L, pullback = rrule(np.linalg.cholesky, A)
    assert np.isnan(L).any()
    assert np.isnan(pullback(np.ones((3, 3)))[1]).any()
    _, L_dot = frule((NoTangent(), np.eye(3)), np.linalg.cholesky, A)
    assert np.isnan(L_dot).any()


@pytest.mark.parametrize(
    ("f", "args"),
    [
        (sla.cholesky, lambda A: (A,)),
        (sla.cho_factor, lambda A: (A,)),
        (sla.cho_solve, lambda A: ((np.eye(3), True), A[:, 0])),
        (sla.solve, lambda A: (np.eye(3), A[:, 0])),
        (sla.inv, lambda A: (A,)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_scipy_options_are_checked_alike(spd, f, args):
    # one check (rules.linalg._systems.check_scipy_options) for every scipy rule
    name = f"scipy.linalg.{f.__name__}"
    A = spd(np.float64, 3, 3)
    bad = A.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match=rf"{name}: array must not contain infs or NaNs"):
        rrule(f, *args(bad))
    if f is sla.cho_solve:  # a NaN in the factor, too
        with pytest.raises(ValueError, match=rf"{name}: array must not contain infs or NaNs"):
            rrule(f, (bad, True), A[:, 0])
    overwrite = "overwrite_b" if f in (sla.cho_solve,) else "overwrite_a"
    with pytest.raises(ValueError, match=rf"{name}: overwrite_a/overwrite_b=True"):
        rrule(f, *args(A), **{overwrite: True})
    if f in (sla.cholesky, sla.cho_factor, sla.cho_solve):  # the rules taking **kwargs
        with pytest.raises(TypeError, match=rf"{name} got unexpected keyword.*'bogus'"):
            rrule(f, *args(A), bogus=1)


@pytest.mark.parametrize("n", [1, 4, 64, 65])
@pytest.mark.parametrize("upper", [False, True])
def test_small_factor_reads_numpys_triangle_and_keeps_the_input(spd, randn, dtype, n, upper):
    # up to crossovers.CHOLESKY_FORWARD_SINGLE_MAX_N one matrix goes to LAPACK directly; it must read the triangle numpy reads
    A = spd(dtype, n, n) + np.triu(randn(dtype, n, n), 1)  # garbage in the upper triangle
    A = A.T.copy() if upper else A  # ... or in the lower one, when numpy reads the upper
    before = A.copy()
    F, _ = rrule(np.linalg.cholesky, A, upper=upper)
    expected = np.linalg.cholesky(A, upper=upper)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(F, expected, rtol=rtol, atol=rtol * np.abs(expected).max())
    assert F.dtype == dtype
    assert F.flags.c_contiguous
    assert F.flags.writeable
    assert np.array_equal(A, before)
    F_scipy, _ = rrule(sla.cholesky, A, lower=not upper)
    np.testing.assert_allclose(F_scipy, sla.cholesky(A, lower=not upper), rtol=rtol, atol=rtol)
