import numpy as np
import pytest

from rules import frule, rrule
from rules.linalg import least_squares  # noqa: F401  (registers the rules)
from rules.testing import check_frule, check_rrule
from tangents import Diagonal, NoTangent, Tangent, UpperTriangular, ZeroTangent

PINV_SHAPES = [(4, 4), (5, 3), (3, 5), (2, 4, 3), (3, 3, 3)]


def well_conditioned(randn, dtype, *shape):
    return (randn(dtype, *shape) + 3 * np.eye(*shape[-2:])).astype(dtype)


def rank_deficient(randn, dtype, m, n, r):
    return (randn(dtype, m, r) @ randn(dtype, r, n)).astype(dtype)


@pytest.mark.parametrize("shape", PINV_SHAPES)
def test_pinv(randn, dtype, shape):
    a = well_conditioned(randn, dtype, *shape)
    check_rrule(np.linalg.pinv, a)
    check_frule(np.linalg.pinv, a)


@pytest.mark.parametrize(("m", "n"), [(4, 4), (5, 3), (3, 5)])
def test_pinv_at_constant_lower_rank(randn, dtype, m, n):
    a = rank_deficient(randn, dtype, m, n, 2)
    # a cutoff far above the singular values that finite-difference steps create: rank 2 stays 2
    check_rrule(np.linalg.pinv, a, fkwargs={"rtol": 1e-3}, fd_step=1e-6)
    check_frule(np.linalg.pinv, a, fkwargs={"rtol": 1e-3}, fd_step=1e-6)


def test_pinv_hermitian(randn, dtype):
    q, _ = np.linalg.qr(randn(dtype, 4, 4))
    a = ((q * np.array([3.0, -2.0, 4.0, -1.5])) @ q.conj().T).astype(dtype)  # indefinite
    check_rrule(np.linalg.pinv, a, None, True, symmetric=[0])
    check_frule(np.linalg.pinv, a, None, True, symmetric=[0])


def test_pinv_forward_equals_numpy(randn, dtype):
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for shape in PINV_SHAPES:
        a = randn(dtype, *shape)
        y, _ = rrule(np.linalg.pinv, a)
        expected = np.linalg.pinv(a)
        assert y.dtype == expected.dtype
        np.testing.assert_allclose(y, expected, rtol=tol, atol=tol)
    a = rank_deficient(randn, dtype, 5, 4, 2)
    for options in ({"rcond": 1e-6}, {"rtol": 1e-6}, {"rtol": None}):
        np.testing.assert_allclose(
            rrule(np.linalg.pinv, a, **options)[0], np.linalg.pinv(a, **options), rtol=tol, atol=tol
        )


def test_pinv_user_tangent_types(randn, matrix_tangent):
    for shape in [(4, 4), (5, 3), (3, 5)]:
        a = rank_deficient(randn, np.float64, *shape, 2)
        y_bar = randn(np.float64, *shape[::-1])
        _, pullback = rrule(np.linalg.pinv, a)
        generic = pullback(matrix_tangent(y_bar))[1]
        assert type(generic) is matrix_tangent
        np.testing.assert_allclose(generic.values, pullback(y_bar)[1], rtol=1e-12, atol=1e-12)
        _, y_dot = frule((NoTangent(), matrix_tangent(a)), np.linalg.pinv, a)
        assert type(y_dot) is matrix_tangent


def test_pinv_full_rank_skips_terms_that_vanish(randn):
    # the skipped terms are zero: compare with the full formula
    for shape in [(4, 4), (5, 3), (3, 5)]:
        a = well_conditioned(randn, np.float64, *shape)
        y, pullback = rrule(np.linalg.pinv, a)
        y_bar = randn(np.float64, *shape[::-1])
        yh, ybh = y.T, y_bar.T
        full = (
            -yh @ y_bar @ yh
            + (np.eye(shape[0]) - a @ y) @ ybh @ y @ yh
            + yh @ y @ ybh @ (np.eye(shape[1]) - y @ a)
        )
        np.testing.assert_allclose(pullback(y_bar)[1], full, rtol=1e-10, atol=1e-10)


def test_pinv_structured_inputs(randn):
    for M in (
        Diagonal(randn(np.float64, 3) + 2),
        UpperTriangular(randn(np.float64, 3, 3) + 3 * np.eye(3)),
    ):
        check_rrule(np.linalg.pinv, M)
        _, pullback = rrule(np.linalg.pinv, M)
        assert type(pullback(np.ones((3, 3)))[1]) is type(M)


LSTSQ_SHAPES = [((6, 3), (6,)), ((6, 3), (6, 2)), ((4, 4), (4,)), ((3, 5), (3, 2))]


@pytest.mark.parametrize(("a_shape", "b_shape"), LSTSQ_SHAPES)
def test_lstsq(randn, dtype, a_shape, b_shape):
    a, b = well_conditioned(randn, dtype, *a_shape), randn(dtype, *b_shape)
    check_rrule(np.linalg.lstsq, a, b)
    check_frule(np.linalg.lstsq, a, b)


def test_lstsq_rank_deficient(randn, dtype):
    a = randn(dtype, 6, 4)
    a[:, 3] = a[:, 2]  # exactly rank 3 in every precision
    b = randn(dtype, 6, 2)
    # rcond far above the singular values that finite-difference steps create: the rank stays
    # 3 and the fourth singular value stays zero, as the rule assumes. Near a rank drop the
    # differences themselves are only O(h) accurate (|eps| eps terms), hence the small step.
    options = {"fkwargs": {"rcond": 1e-2}, "fd_step": 1e-6, "rtol": 1e-4}
    check_rrule(np.linalg.lstsq, a, b, **options)
    check_frule(np.linalg.lstsq, a, b, **options)
    _, pullback = rrule(np.linalg.lstsq, a, b, rcond=1e-2)
    s_bar = np.array([0.0, 0.0, 0.0, 1.0])  # only the dropped singular value: no cotangent
    a_bar = pullback(Tangent(tuple, ZeroTangent(), ZeroTangent(), NoTangent(), s_bar))[1]
    np.testing.assert_array_equal(a_bar, 0)


def test_lstsq_forward_equals_numpy(randn, dtype):
    tol = 1e-5 if dtype == np.float32 else 1e-11
    cases = [*LSTSQ_SHAPES, ((6, 4), (6,))]
    for a_shape, b_shape in cases:
        a, b = randn(dtype, *a_shape), randn(dtype, *b_shape)
        got, _ = rrule(np.linalg.lstsq, a, b)
        want = np.linalg.lstsq(a, b)
        assert type(got[2]) is type(want[2])
        assert got[2] == want[2]
        for g, w in zip(got, want, strict=True):
            assert np.shape(g) == np.shape(w)
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def test_lstsq_partial_cotangents(randn):
    a, b = randn(np.float64, 6, 3), randn(np.float64, 6)
    for parts in [
        (np.ones(3), ZeroTangent(), NoTangent(), ZeroTangent()),
        (ZeroTangent(), np.ones(1), NoTangent(), ZeroTangent()),
        (ZeroTangent(), ZeroTangent(), NoTangent(), np.ones(3)),
    ]:
        check_rrule(np.linalg.lstsq, a, b, output_tangent=Tangent(tuple, *parts))


@pytest.mark.parametrize(("a_shape", "rcond"), [((6, 3), None), ((3, 5), None), ((5, 4), 0.1)])
def test_lstsq_takes_a_low_rank_cotangent_of_x(randn, low_rank, a_shape, rcond):
    a, b = randn(np.complex128, *a_shape), randn(np.complex128, a_shape[0], 4)
    if rcond:
        a[:, -1] = a[:, 0]  # rank deficient: every term of the pullback is there
    _, pullback = rrule(np.linalg.lstsq, a, b, rcond=rcond)
    x_bar = low_rank(randn(np.complex128, a_shape[1], 1), randn(np.complex128, 4, 1))
    zeros = (ZeroTangent(), NoTangent(), ZeroTangent())
    _, a_bar, b_bar = pullback((x_bar, *zeros))
    assert type(a_bar) is low_rank  # the algebra path: still factored
    assert type(b_bar) is low_rank
    _, a_want, b_want = pullback((x_bar.dense(), *zeros))
    np.testing.assert_allclose(a_bar.dense(), a_want, atol=1e-12)
    np.testing.assert_allclose(b_bar.dense(), b_want, atol=1e-12)
    with pytest.raises(TypeError, match=r"lstsq's rules \(elementwise weights\)"):
        pullback((x_bar, ZeroTangent(), NoTangent(), np.ones(min(a_shape))))  # s needs weights


def test_bad_input():
    with pytest.raises(np.linalg.LinAlgError, match=r"lstsq.*\(2, 3, 3\)"):
        rrule(np.linalg.lstsq, np.ones((2, 3, 3)), np.ones(3))
    with pytest.raises(np.linalg.LinAlgError, match=r"lstsq.*\(3, 2\).*\(4,\)"):
        rrule(np.linalg.lstsq, np.ones((3, 2)), np.ones(4))
    with pytest.raises(np.linalg.LinAlgError, match=r"pinv.*\(3,\)"):
        rrule(np.linalg.pinv, np.ones(3))
    with pytest.raises(ValueError, match="rtol"):
        rrule(np.linalg.pinv, np.eye(2), 1e-3, rtol=1e-3)
    _, pullback = rrule(np.linalg.pinv, np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"pinv pullback.*\(2, 3\).*\(3, 2\)"):
        pullback(np.ones((2, 3)))
    _, pullback = rrule(np.linalg.lstsq, np.eye(3), np.ones(3))
    with pytest.raises(ValueError, match=r"lstsq.*\(2,\).*\(3,\)"):
        pullback((np.ones(2), ZeroTangent(), NoTangent(), ZeroTangent()))


def test_nan_raises_as_the_svd_does():
    a = np.eye(3)
    a[1, 1] = np.nan
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.pinv(a)  # numpy's SVD does not converge on NaN: the rule raises the same
    with pytest.raises(np.linalg.LinAlgError):
        rrule(np.linalg.pinv, a)
    # np.linalg.lstsq itself does not return on this input (gelsd loops); the rule raises
    with pytest.raises(np.linalg.LinAlgError):
        rrule(np.linalg.lstsq, a, np.ones(3))
