import itertools

import numpy as np
import pytest
import scipy.linalg as sla

from kernels import crossovers
from kernels import triangular as ktri
from rules import frule, rrule
from rules.linalg import triangular
from rules.testing import check_frule, check_rrule
from tangents import LowerTriangular, NoTangent, UpperTriangular

# every (lower, trans, unit_diagonal); trans also as scipy's letters
FLAGS = list(itertools.product([True, False], [0, 1, 2], [False, True]))
IDS = [f"{'lower' if lo else 'upper'}-trans{tr}{'-unit' if u else ''}" for lo, tr, u in FLAGS]


def triangular_system(randn, dtype, a_shape, b_shape):
    n = a_shape[-1]
    return (randn(dtype, *a_shape) + 3 * np.eye(n)).astype(dtype), randn(dtype, *b_shape)


@pytest.mark.parametrize(("lower", "trans", "unit_diagonal"), FLAGS, ids=IDS)
def test_flags(randn, lower, trans, unit_diagonal):
    a, b = triangular_system(randn, np.float64, (4, 4), (4, 2))
    flags = {"trans": trans, "lower": lower, "unit_diagonal": unit_diagonal}
    check_rrule(sla.solve_triangular, a, b, **flags)
    check_frule(sla.solve_triangular, a, b, **flags)


# the other dtypes on fewer flags (kernels/test_triangular.py covers every flag in every dtype)
@pytest.mark.parametrize(("lower", "trans", "unit_diagonal"), [(True, 2, False), (False, 1, True)])
def test_flags_in_every_dtype(randn, dtype, lower, trans, unit_diagonal):
    a, b = triangular_system(randn, dtype, (4, 4), (4, 2))
    flags = {"trans": trans, "lower": lower, "unit_diagonal": unit_diagonal}
    check_rrule(sla.solve_triangular, a, b, **flags)
    check_frule(sla.solve_triangular, a, b, **flags)


@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [((4, 4), (4,)), ((3, 4, 4), (3, 4, 2)), ((3, 4, 4), (4,)), ((4, 4), (2, 4, 3))],
)
def test_shapes(randn, dtype, a_shape, b_shape):
    a, b = triangular_system(randn, dtype, a_shape, b_shape)
    check_rrule(sla.solve_triangular, a, b, "C", True)
    check_frule(sla.solve_triangular, a, b, "C", True)


def test_stacks_take_the_matmul_pullback(randn, dtype, monkeypatch):
    """Stacks from ``kernels.triangular.MATMUL_PULLBACK_MIN_N`` on (lowered here: cheap)."""
    monkeypatch.setattr(ktri, "MATMUL_PULLBACK_MIN_N", 1)
    monkeypatch.setattr(ktri, "MATMUL_PULLBACK_MIN_K", 1)
    calls = []
    matmul = ktri.solve_triangular_pullback_matmul

    def spy(*args):
        calls.append(args)
        return matmul(*args)

    monkeypatch.setattr(ktri, "solve_triangular_pullback_matmul", spy)
    a, b = triangular_system(randn, dtype, (3, 4, 4), (3, 4, 2))
    flags = [(0, True, False), (1, False, True), (2, True, False)]
    for trans, lower, unit in flags:
        check_rrule(sla.solve_triangular, a, b, trans, lower, unit)
    assert {(c[4], c[3], c[5]) for c in calls} == set(flags)  # each flag set took the path


def test_large_systems_take_the_blas_path(randn, dtype, monkeypatch):
    monkeypatch.setattr(
        crossovers, "SOLVE_TRIANGULAR_KERNEL_MAX_SIZE", 0
    )  # BLAS for every size: cheap to check
    a, b = triangular_system(randn, dtype, (4, 4), (2, 4, 3))
    check_rrule(sla.solve_triangular, a, b, 1, True)
    check_frule(sla.solve_triangular, a, b, 2, False)
    a, b = triangular_system(randn, dtype, (2, 4, 4), (4,))
    check_rrule(sla.solve_triangular, a, b, 0, True, True)


def test_forward_equals_scipy_within_rounding(randn, dtype):
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for a_shape, b_shape in [((4, 4), (4,)), ((3, 4, 4), (3, 4, 2)), ((40, 40), (40, 40))]:
        a, b = triangular_system(randn, dtype, a_shape, b_shape)
        a = (a + a_shape[-1] * np.eye(a_shape[-1])).astype(dtype)
        for trans in (0, "T", 2):
            x, _ = rrule(sla.solve_triangular, a, b, trans, lower=True)
            expected = sla.solve_triangular(a, b, trans, lower=True)
            assert x.dtype == expected.dtype
            np.testing.assert_allclose(x, expected, rtol=tol, atol=tol)


def test_cotangent_lives_on_the_triangle(randn):
    a, b = triangular_system(randn, np.float64, (4, 4), (4, 2))
    _, pullback = rrule(sla.solve_triangular, a, b, lower=True, unit_diagonal=True)
    a_bar = pullback(np.ones((4, 2)))[1]
    np.testing.assert_array_equal(a_bar, np.tril(a_bar, -1))


def test_kernel_path_agrees_with_the_formula(randn, dtype):
    tol = 1e-4 if dtype == np.float32 else 1e-12
    for a_shape, b_shape in [((4, 4), (4, 3)), ((40, 40), (40, 40))]:
        a, b = triangular_system(randn, dtype, a_shape, b_shape)
        a = (a + a_shape[-1] * np.eye(a_shape[-1])).astype(dtype)
        x_bar = randn(dtype, *b_shape)
        x, pullback = rrule(sla.solve_triangular, a, b, 2, False)
        a_bar, b_bar = pullback(x_bar)[1:3]
        T = np.triu(a)  # op(T) = T^H: B_bar = T^-1 X_bar, T_bar = triu((-B_bar X^H)^H)
        np.testing.assert_allclose(b_bar, np.linalg.solve(T, x_bar), rtol=tol, atol=tol)
        np.testing.assert_allclose(a_bar, np.triu(-(x @ b_bar.conj().T)), rtol=tol, atol=tol)


@pytest.mark.parametrize("kind", [UpperTriangular, LowerTriangular])
def test_structured_inputs(randn, kind):
    a, b = triangular_system(randn, np.float64, (4, 4), (4, 2))
    lower = kind is LowerTriangular
    check_rrule(sla.solve_triangular, kind(a), b, lower=lower)
    check_frule(sla.solve_triangular, kind(a), b, lower=lower)
    _, pullback = rrule(sla.solve_triangular, kind(a), b, lower=lower)
    assert type(pullback(np.ones((4, 2)))[1]) is kind


def test_bad_input():
    with pytest.raises(np.linalg.LinAlgError, match=r"solve_triangular.*square.*\(2, 3\)"):
        rrule(sla.solve_triangular, np.ones((2, 3)), np.ones(2))
    with pytest.raises(np.linalg.LinAlgError, match=r"solve_triangular.*singular.*\(3, 3\)"):
        rrule(sla.solve_triangular, np.ones((3, 3)) - np.eye(3), np.ones(3))
    with pytest.raises(ValueError, match=r"solve_triangular.*\(3, 3\).*\(4,\)"):
        rrule(sla.solve_triangular, np.eye(3), np.ones(4))
    with pytest.raises(ValueError, match="trans"):
        rrule(sla.solve_triangular, np.eye(3), np.ones(3), trans="X")
    with pytest.raises(ValueError, match="overwrite_b"):
        rrule(sla.solve_triangular, np.eye(3), np.ones(3), overwrite_b=True)
    _, pullback = rrule(sla.solve_triangular, np.eye(3), np.ones(3))
    with pytest.raises(ValueError, match=r"solve_triangular pullback.*\(2,\).*\(3,\)"):
        pullback(np.ones(2))


def test_nan_in_nan_out():
    a = np.eye(3)
    a[1, 1] = np.nan
    x, pullback = rrule(sla.solve_triangular, a, np.ones(3), check_finite=False)
    assert np.isnan(x).any()
    assert np.isnan(pullback(np.ones(3))[1]).any()
    _, x_dot = frule(
        (NoTangent(), np.eye(3), np.ones(3)),
        sla.solve_triangular,
        a,
        np.ones(3),
        check_finite=False,
    )
    assert np.isnan(x_dot).any()


@pytest.mark.parametrize(("lower", "trans", "unit_diagonal"), FLAGS, ids=IDS)
def test_the_array_formula_path_agrees_with_the_kernel_path(randn, lower, trans, unit_diagonal):
    a, b = triangular_system(randn, np.complex128, (3, 4, 4), (3, 4, 2))
    T, x_bar, T_dot, b_dot = a, randn(np.complex128, 3, 4, 2), randn(np.complex128, 3, 4, 4), b
    x, pullback = rrule(
        sla.solve_triangular, a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal
    )
    flags = (lower, trans, unit_diagonal)
    want = triangular._pullback_formula(T, x, x_bar, *flags)
    for got, expected in zip(pullback(x_bar)[1:3], want, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    _, x_dot = frule(
        (NoTangent(), T_dot, b_dot),
        sla.solve_triangular,
        a,
        b,
        trans=trans,
        lower=lower,
        unit_diagonal=unit_diagonal,
    )
    expected = triangular._pushforward_formula(T, x, T_dot, b_dot, *flags)
    np.testing.assert_allclose(x_dot, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("b_shape", [(5,), (5, 3)])
@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("trans", [0, 1, "C"])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("real", [np.float64, np.float32])
def test_frule_of_one_plain_system_agrees_with_the_stack_path(real, lower, trans, unit, b_shape):
    # the plain fast path against the general forward pass, which a stack of one takes
    from rules.linalg import triangular

    rng = np.random.default_rng(11)
    a = (rng.standard_normal((5, 5)) + 5 * np.eye(5)).astype(real)
    b, b_dot = (rng.standard_normal(b_shape).astype(real) for _ in range(2))
    a_dot = rng.standard_normal((5, 5)).astype(real)
    a_dot[(slice(0, 1), slice(4, 5)) if lower else (slice(4, 5), slice(0, 1))] = np.nan  # not read
    options = {"trans": trans, "lower": lower, "unit_diagonal": unit}
    x, x_dot = frule((NoTangent(), a_dot, b_dot), sla.solve_triangular, a, b, **options)
    assert x.dtype == x_dot.dtype == real
    forward = triangular._Triangular(a, b, trans, lower, unit)
    tol = 1e-4 if real == np.float32 else 1e-12
    np.testing.assert_allclose(x, forward.x, rtol=tol, atol=tol)
    np.testing.assert_allclose(x, sla.solve_triangular(a, b, **options), rtol=tol, atol=tol)
    np.testing.assert_allclose(x_dot, forward.pushforward(a_dot, b_dot), rtol=tol, atol=tol)
    singular = a.copy()
    singular[2, 2] = 0
    if unit:  # the diagonal is not read
        frule((NoTangent(), a_dot, b_dot), sla.solve_triangular, singular, b, **options)
    else:
        with pytest.raises(np.linalg.LinAlgError, match="solve_triangular"):
            frule((NoTangent(), a_dot, b_dot), sla.solve_triangular, singular, b, **options)
    with pytest.raises(ValueError, match="infs or NaNs"):
        frule((NoTangent(), a_dot, b_dot), sla.solve_triangular, a, b + np.inf, **options)


@pytest.mark.parametrize(("n", "b_shape"), [(40, (40, 30)), (200, (200,))])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("trans", [0, 1, "C"])
@pytest.mark.parametrize("lower", [False, True])
def test_frule_of_a_large_plain_system_matches_finite_differences(
    monkeypatch, lower, trans, unit, order, n, b_shape
):
    # above the fused lane: trsm and trmm from the right on the transposed problem (C order; F
    # order is copied by scipy's wrappers), trmm on the triangle of T_dot only; NaN in the
    # triangle that is not read must not reach X_dot
    calls = []
    plain = triangular._frule_plain
    monkeypatch.setattr(triangular, "_frule_plain", lambda *args: calls.append(1) or plain(*args))
    rng = np.random.default_rng(5)
    a = np.asarray(0.3 * rng.standard_normal((n, n)) / np.sqrt(n) + 2 * np.eye(n), order=order)
    b, b_dot = (rng.standard_normal(b_shape) for _ in range(2))
    a_dot = np.asarray(rng.standard_normal((n, n)), order=order)
    unread = np.triu(np.ones((n, n), bool), 1) if lower else np.tril(np.ones((n, n), bool), -1)
    a_dot[unread] = np.nan
    if unit:
        np.fill_diagonal(a_dot, np.nan)
    options = {"trans": trans, "lower": lower, "unit_diagonal": unit}
    x, x_dot = frule((NoTangent(), a_dot, b_dot), sla.solve_triangular, a, b, **options)
    assert calls, "the plain BLAS path was not taken"
    assert x_dot.shape == x.shape == b.shape
    assert x_dot.dtype == np.float64
    h = 1e-6

    def solve(sign):  # unread entries of a are never read: check_finite off for the NaN
        return sla.solve_triangular(
            a + sign * h * a_dot, b + sign * h * b_dot, check_finite=False, **options
        )

    np.testing.assert_allclose(x, sla.solve_triangular(a, b, **options), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(x_dot, (solve(1) - solve(-1)) / (2 * h), rtol=1e-6, atol=1e-7)
    singular = a.copy(order="K")
    singular[n // 2, n // 2] = 0
    if unit:  # the diagonal is not read
        frule((NoTangent(), a_dot, b_dot), sla.solve_triangular, singular, b, **options)
    else:
        with pytest.raises(np.linalg.LinAlgError, match=rf"solve_triangular.*\({n}, {n}\)"):
            frule((NoTangent(), a_dot, b_dot), sla.solve_triangular, singular, b, **options)
    assert len(calls) == 2


def test_check_finite_takes_huge_finite_entries():
    # the sum-of-squares test overflows here: the exact test must decide
    from rules.linalg._systems import _all_finite

    big = np.full((3, 3), 1e200)
    assert _all_finite(big)
    for bad in (np.inf, -np.inf, np.nan):
        x = big.copy()
        x[1, 2] = bad
        assert not _all_finite(x)
        assert not _all_finite(np.where(x == 1e200, 1.0, x))
    assert _all_finite(np.zeros((0, 3)))
    a = np.eye(3) * 1e200
    x, _ = frule((NoTangent(), np.eye(3), np.ones(3)), sla.solve_triangular, a, np.ones(3))
    np.testing.assert_allclose(x, 1e-200)
