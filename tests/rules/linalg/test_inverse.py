import numpy as np
import pytest
import scipy.linalg as sla

from kernels import crossovers
from rules import frule, rrule
from rules.linalg import inverse
from rules.testing import check_frule, check_rrule
from tangents import (
    AbstractZero,
    Diagonal,
    Hermitian,
    LowerTriangular,
    NoTangent,
    Symmetric,
    UpperTriangular,
    ZeroTangent,
)


def well_conditioned(randn, dtype, *shape):
    n = shape[-1]
    return (randn(dtype, *shape) + 2 * np.sqrt(n) * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("shape", [(4, 4), (3, 4, 4), (2, 3, 3), (6, 6), (2, 6, 6)])
def test_numpy_inv(randn, dtype, shape):
    a = well_conditioned(randn, dtype, *shape)
    check_rrule(np.linalg.inv, a)
    check_frule(np.linalg.inv, a)


def test_forward_equals_numpy_within_rounding(randn, dtype):
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for shape in [(4, 4), (3, 4, 4), (40, 40)]:
        a = well_conditioned(randn, dtype, *shape)
        y, _ = rrule(np.linalg.inv, a)
        expected = np.linalg.inv(a)
        assert y.dtype == expected.dtype
        assert y.flags.c_contiguous
        np.testing.assert_allclose(y, expected, rtol=tol, atol=tol)


def test_kernel_path_agrees_with_the_generic_path(randn, dtype, matrix_tangent):
    tol = 1e-4 if dtype == np.float32 else 1e-12
    for shape in [(4, 4), (5, 4, 4), (8, 8), (3, 8, 8)]:
        a = well_conditioned(randn, dtype, *shape)
        y_bar = randn(dtype, *shape)
        y, pullback = rrule(np.linalg.inv, a)
        kernel = pullback(y_bar)[1]
        generic = pullback(matrix_tangent(y_bar))[1]
        assert type(generic) is matrix_tangent
        np.testing.assert_allclose(kernel, generic.values, rtol=tol, atol=tol)
        _, y_dot = frule((NoTangent(), a), np.linalg.inv, a)
        np.testing.assert_allclose(y_dot, -y @ a @ y, rtol=tol, atol=tol)


@pytest.mark.parametrize("kind", [Diagonal, Symmetric, Hermitian, UpperTriangular, LowerTriangular])
def test_structured_inputs(randn, kind):
    dtype = np.complex128 if kind is Hermitian else np.float64
    M = well_conditioned(randn, dtype, 3, 3)
    M = kind(np.diagonal(M).copy()) if kind is Diagonal else kind(M)
    check_rrule(np.linalg.inv, M)
    check_frule(np.linalg.inv, M)
    _, pullback = rrule(np.linalg.inv, M)
    assert type(pullback(np.ones((3, 3)))[1]) is kind


@pytest.mark.parametrize(
    "assume_a", [None, "gen", "sym", "her", "pos", "upper triangular", "lower triangular"]
)
@pytest.mark.parametrize("lower", [False, True])
def test_scipy_inv(spd, randn, dtype, assume_a, lower):
    a = spd(dtype, 4, 4)
    symmetric = [0] if assume_a in ("sym", "her", "pos") else []
    if assume_a == "sym" and dtype == np.complex128:  # complex symmetric: a Symmetric input
        a, symmetric = Symmetric(randn(dtype, 4, 4) + 4 * np.eye(4)), []
    check_rrule(sla.inv, a, symmetric=symmetric, assume_a=assume_a, lower=lower)
    check_frule(sla.inv, a, symmetric=symmetric, assume_a=assume_a, lower=lower)


def test_scipy_inv_stacked(spd):
    a = spd(np.float64, 2, 3, 3)
    check_rrule(sla.inv, a)
    check_rrule(sla.inv, a, symmetric=[0], assume_a="pos")


def test_bad_input():
    with pytest.raises(np.linalg.LinAlgError, match=r"np.linalg.inv.*square.*\(2, 3\)"):
        rrule(np.linalg.inv, np.ones((2, 3)))
    with pytest.raises(np.linalg.LinAlgError, match=r"np.linalg.inv.*singular.*\(3, 3\)"):
        rrule(np.linalg.inv, np.ones((3, 3)))
    with pytest.raises(np.linalg.LinAlgError, match=r"np.linalg.inv.*singular.*\(2, 3, 3\)"):
        rrule(np.linalg.inv, np.ones((2, 3, 3)))
    with pytest.raises(np.linalg.LinAlgError, match=r"scipy.linalg.inv.*singular.*\(2, 2\)"):
        rrule(sla.inv, np.ones((2, 2)))
    _, pullback = rrule(np.linalg.inv, np.eye(3))
    with pytest.raises(ValueError, match=r"inv pullback.*\(2, 2\).*\(3, 3\)"):
        pullback(np.ones((2, 2)))
    with pytest.raises(NotImplementedError, match="diagonal"):
        rrule(sla.inv, np.eye(2), assume_a="diagonal")
    with pytest.raises(ValueError, match="overwrite_a"):
        rrule(sla.inv, np.eye(2), overwrite_a=True)


def test_nan_in_nan_out():
    for a in (np.eye(3), np.stack([np.eye(3)] * 2)):
        a[..., 1, 1] = np.nan
        y, pullback = rrule(np.linalg.inv, a)
        assert np.isnan(y).any()
        assert np.isnan(pullback(np.ones(a.shape))[1]).any()
        _, y_dot = frule((NoTangent(), np.ones(a.shape)), np.linalg.inv, a)
        assert np.isnan(y_dot).any()


def test_inputs_and_cotangents_stay_unmodified(randn):
    a = well_conditioned(randn, np.float64, 6, 6)
    y_bar = randn(np.float64, 6, 6)
    before = a.copy(), y_bar.copy()
    inverse.inv_pullback_array(np.linalg.inv(a), y_bar)
    np.testing.assert_array_equal(a, before[0])
    np.testing.assert_array_equal(y_bar, before[1])


@pytest.mark.parametrize("real", [np.float64, np.float32])
@pytest.mark.parametrize("matmul", [False, True])
def test_one_plain_real_matrix_agrees_with_the_kernel_path(randn, real, matmul, monkeypatch):
    # the plain fast path against the path choice of the general rule: two ndarray.dot and a
    # minus at 5x5, or with PLAIN_DOT_MAX_N lowered two matmul with the minus in place; each gives
    # exactly the bits of its own expression
    if matmul:
        monkeypatch.setattr(crossovers, "PLAIN_DOT_MAX_N", 0)
    a = randn(real, 5, 5) + 5 * np.eye(5, dtype=real)
    Y = np.linalg.inv(a)
    Y_bar, a_dot = randn(real, 5, 5), randn(real, 5, 5)
    tol = 1e-4 if real == np.float32 else 1e-12
    Y_rule, pullback = rrule(np.linalg.inv, a)
    a_bar = pullback(Y_bar)[1]
    assert a_bar.dtype == real
    assert a_bar.flags.c_contiguous
    by_matmul = -((Y_rule.T @ Y_bar) @ Y_rule.T)
    by_dots = -Y_rule.T.dot(Y_bar.dot(Y_rule.T))
    assert not np.array_equal(by_matmul, by_dots)  # so the bits tell the paths apart
    np.testing.assert_array_equal(a_bar, by_matmul if matmul else by_dots)
    np.testing.assert_allclose(a_bar, inverse.inv_pullback_array(Y, Y_bar), rtol=tol, atol=tol)
    np.testing.assert_allclose(a_bar, -Y.T @ Y_bar @ Y.T, rtol=tol, atol=tol)
    general = pullback(Y_bar.astype(np.complex128))[1]  # cast, by the general path
    np.testing.assert_allclose(a_bar, general, rtol=tol, atol=tol)
    _, Y_dot = frule((NoTangent(), a_dot), np.linalg.inv, a)
    assert Y_dot.dtype == real
    want = inverse.inv_pushforward_array(Y, a_dot)
    np.testing.assert_allclose(Y_dot, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(Y_dot, -Y @ a_dot @ Y, rtol=tol, atol=tol)
    with pytest.raises(ValueError, match="inv"):
        pullback(np.ones((5, 4), real))
    if real == np.float64:
        check_rrule(np.linalg.inv, a)


@pytest.mark.parametrize("real", [np.float64, np.float32])
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_the_plain_forward_is_the_general_one(randn, real, layout):
    """One plain real matrix skips the rule's plumbing: the same inverse, bit for bit, and the
    general pullback (projection included) for any cotangent that is not a plain ndarray."""
    a = randn(real, 6, 6) + 6 * np.eye(6, dtype=real)
    if layout == "F":
        a = np.asfortranarray(a)
    elif layout == "strided":
        a = np.repeat(a, 2, axis=1)[:, ::2]
    y, pullback = rrule(np.linalg.inv, a)
    _, Y = inverse._inverse("np.linalg.inv", a)
    assert y.dtype == real
    assert y.flags.c_contiguous
    np.testing.assert_array_equal(y, Y)
    Y_bar = randn(real, 6, 6)
    tol = 1e-4 if real == np.float32 else 1e-12
    want = -Y.T @ Y_bar @ Y.T
    for cotangent in (Y_bar, np.asfortranarray(Y_bar), Y_bar.astype(np.complex128)):
        a_bar = pullback(cotangent)[1]
        assert a_bar.dtype == real  # projected onto the real primal
        np.testing.assert_allclose(a_bar, want, rtol=tol, atol=tol)
    assert isinstance(pullback(ZeroTangent())[1], AbstractZero)
    with pytest.raises(np.linalg.LinAlgError, match=r"np\.linalg\.inv"):
        rrule(np.linalg.inv, np.zeros((3, 3), real))


@pytest.mark.parametrize("real", [np.float64, np.float32])
def test_one_small_plain_matrix_takes_one_compiled_call(randn, real, monkeypatch):
    """Up to INV_PLAIN_KERNEL_MAX_N the plain paths call kernels.solve's single-matrix kernels;
    a tangent that is not C-ordered, or a larger matrix, takes the dots; the numbers agree."""
    from kernels import solve as ksolve

    calls = []
    for name in ("inv_pullback", "inv_pushforward"):
        original = getattr(ksolve, name)
        monkeypatch.setattr(
            ksolve, name, lambda *a, f=original, name=name: calls.append(name) or f(*a)
        )
    tol = 1e-4 if real == np.float32 else 1e-12
    for n in (crossovers.INV_PLAIN_KERNEL_MAX_N, crossovers.INV_PLAIN_KERNEL_MAX_N + 1):
        calls.clear()
        a = randn(real, n, n) + n * np.eye(n, dtype=real)
        Y = np.linalg.inv(a)
        Y_bar, a_dot = randn(real, n, n), randn(real, n, n)
        _, pullback = rrule(np.linalg.inv, a)
        a_bar = pullback(Y_bar)[1]
        _, Y_dot = frule((NoTangent(), a_dot), np.linalg.inv, a)
        _, Y_dot_f = frule((NoTangent(), np.asfortranarray(a_dot)), np.linalg.inv, a)
        small = n <= crossovers.INV_PLAIN_KERNEL_MAX_N
        assert calls == (["inv_pullback", "inv_pushforward"] if small else [])
        for got in (a_bar, Y_dot, Y_dot_f):
            assert got.dtype == real
        np.testing.assert_allclose(a_bar, -Y.T @ Y_bar @ Y.T, rtol=tol, atol=tol)
        np.testing.assert_allclose(Y_dot, -Y @ a_dot @ Y, rtol=tol, atol=tol)
        np.testing.assert_allclose(Y_dot_f, Y_dot, rtol=tol, atol=tol)
