import numpy as np
import pytest

from kernels import crossovers
from rules import frule, rrule
from rules.testing import check_frule, check_rrule
from tangents import Diagonal, LowerTriangular, NoTangent, Tangent, UpperTriangular, ZeroTangent

SHAPES = [(4, 4), (3, 4, 4), (2, 1, 3, 3)]
LARGE = [(20, 20), (2, 20, 20), (40, 40)]  # beyond the kernels' crossovers


@pytest.fixture(params=["kernels", "gufunc", "lapack"])
def path(request, monkeypatch):
    """Run with the crossovers as they are, det of every stack on numpy's gufuncs (the mid-size
    path), or with every size on the LAPACK path."""
    if request.param == "gufunc":
        monkeypatch.setattr(crossovers, "DET_STACK_MAX_N", 0)
    if request.param == "lapack":
        for name in (
            "DET_STACK_MAX_N",
            "DET_SINGLE_MAX_N",
            "SLOGDET_STACK_MAX_N",
            "DET_GUFUNC_STACK_MAX_N",
        ):
            monkeypatch.setattr(crossovers, name, 0)
    return request.param


def well_conditioned(randn, dtype, *shape):
    n = shape[-1]
    return (randn(dtype, *shape) + 2 * np.sqrt(n) * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("shape", SHAPES)
def test_det(randn, dtype, shape, path):
    a = well_conditioned(randn, dtype, *shape) / np.sqrt(shape[-1])  # det of moderate size
    check_rrule(np.linalg.det, a)
    check_frule(np.linalg.det, a)


@pytest.mark.parametrize("shape", SHAPES)
def test_slogdet(randn, dtype, shape, path):
    a = well_conditioned(randn, dtype, *shape)
    check_rrule(np.linalg.slogdet, a)
    check_frule(np.linalg.slogdet, a)


def test_forward_equals_numpy_within_rounding(randn, dtype):
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for shape in SHAPES + LARGE:
        a = well_conditioned(randn, dtype, *shape) / np.sqrt(shape[-1])
        a[..., 0, :] *= -1  # negative determinants too
        y, _ = rrule(np.linalg.det, a)
        expected = np.linalg.det(a)
        assert type(y) is type(expected)
        assert y.dtype == expected.dtype
        np.testing.assert_allclose(y, expected, rtol=tol, atol=0)
        (sign, logabsdet), _ = rrule(np.linalg.slogdet, a)
        want = np.linalg.slogdet(a)
        assert type(sign) is type(want.sign)
        assert logabsdet.dtype == want.logabsdet.dtype
        np.testing.assert_allclose(sign, want.sign, rtol=tol, atol=tol)
        np.testing.assert_allclose(logabsdet, want.logabsdet, rtol=tol, atol=tol)


# Singular matrices: exact finite differences (det is a polynomial) against the adjugate.
SINGULAR = [
    np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]]),  # rank 2: the cofactor matrix
    np.array([[0.0, 1], [0, 0]]),  # rank 1 with two zero pivots under partial pivoting
    np.array([[1.0, 2], [2, 4]]),
    np.ones((3, 3)),  # rank 1 < n - 1: adj = 0
]


@pytest.mark.parametrize("a", SINGULAR, ids=["rank2of3", "jordan", "rank1of2", "rank1of3"])
def test_det_at_singular_matrices_is_the_adjugate(a, path):
    check_rrule(np.linalg.det, a)
    check_frule(np.linalg.det, a)
    _, pullback = rrule(np.linalg.det, a)
    a_bar = pullback(1.0)[1]
    assert np.isfinite(a_bar).all()
    if np.linalg.matrix_rank(a) == a.shape[0] - 1:
        assert np.abs(a_bar).max() > 0.5  # the cofactors, not zero
    if a.shape == (3, 3) and np.linalg.matrix_rank(a) == 2:  # JAX's probe: the cofactor matrix
        np.testing.assert_allclose(a_bar, [[4, 4, -4], [-2, -2, 2], [0, 0, 0]], atol=1e-12)


def test_det_at_large_singular_matrices(randn):
    rng = np.random.default_rng(1)
    u, v = rng.standard_normal((2, 30, 29))
    a = u @ v.T  # rank 29 of 30: the LAPACK path, one zero pivot or the SVD fallback
    _, pullback = rrule(np.linalg.det, a)
    a_bar = pullback(1.0)[1]
    u_s, s, vh = np.linalg.svd(a)
    # adj(A) = det(V^H) det(U) s_1 ... s_29 v_30 u_30^T for rank n - 1
    adj = np.linalg.det(vh) * np.linalg.det(u_s) * np.prod(s[:-1]) * np.outer(vh[-1], u_s[:, -1])
    np.testing.assert_allclose(a_bar, adj.T, rtol=1e-6, atol=1e-6 * np.abs(adj).max())


def test_slogdet_complex_sign(randn):
    a = randn(np.complex128, 3, 3) + 3 * np.eye(3)
    sign_bar = 0.3 - 0.7j
    result_type = type(np.linalg.slogdet(a))
    check_rrule(np.linalg.slogdet, a, output_tangent=Tangent(result_type, sign=sign_bar))
    _, pullback = rrule(np.linalg.slogdet, a)
    np.testing.assert_allclose(  # a plain tuple works as the cotangent too
        pullback((sign_bar, ZeroTangent()))[1],
        pullback(Tangent(result_type, sign=sign_bar, logabsdet=ZeroTangent()))[1],
    )


def test_slogdet_real_sign_is_constant(randn):
    a = well_conditioned(randn, np.float64, 3, 3)
    _, pullback = rrule(np.linalg.slogdet, a)
    assert pullback((1.0, ZeroTangent()))[1] == ZeroTangent()
    _, y_dot = frule((NoTangent(), a), np.linalg.slogdet, a)
    assert y_dot.sign == ZeroTangent()


def test_slogdet_at_singular_matrices_is_not_finite(path):
    for a in (np.ones((3, 3)), np.ones((2, 3, 3))):
        (sign, logabsdet), pullback = rrule(np.linalg.slogdet, a)
        assert np.all(sign == 0)
        assert np.all(logabsdet == -np.inf)
        assert not np.isfinite(
            pullback((np.zeros(np.shape(sign)), np.ones(np.shape(sign))))[1]
        ).all()


def test_kernel_path_agrees_with_the_formula(randn, dtype):
    tol = 1e-4 if dtype == np.float32 else 1e-11
    for shape in [(5, 4, 4), (4, 4), (20, 20)]:
        a = well_conditioned(randn, dtype, *shape) / np.sqrt(shape[-1])
        bar = randn(dtype, *shape[:-2])
        d, pullback = rrule(np.linalg.det, a)
        formula = (bar * np.conj(d))[..., None, None] * np.linalg.inv(a).conj().mT
        np.testing.assert_allclose(pullback(bar)[1], formula, rtol=tol, atol=tol)
        (sign, _), pullback = rrule(np.linalg.slogdet, a)
        s_bar, l_bar = (
            randn(dtype, *shape[:-2]),
            randn(np.float64, *shape[:-2]).astype(bar.real.dtype),
        )
        c = l_bar + 1j * np.imag(np.conj(sign) * s_bar) if dtype == np.complex128 else l_bar
        formula = np.asarray(c)[..., None, None] * np.linalg.inv(a).conj().mT
        np.testing.assert_allclose(pullback((s_bar, l_bar))[1], formula, rtol=tol, atol=tol)


@pytest.mark.parametrize("kind", [Diagonal, UpperTriangular, LowerTriangular])
def test_structured_inputs(randn, kind):
    M = well_conditioned(randn, np.float64, 3, 3)
    M = kind(np.diagonal(M).copy()) if kind is Diagonal else kind(M)
    for f in (np.linalg.det, np.linalg.slogdet):
        check_rrule(f, M)
        _, pullback = rrule(f, M)
        assert type(pullback(rrule(f, M)[0])[1]) is kind


def test_bad_input():
    for f in (np.linalg.det, np.linalg.slogdet):
        with pytest.raises(np.linalg.LinAlgError, match=r"np.linalg.\w*det.*square.*\(2, 3\)"):
            rrule(f, np.ones((2, 3)))
    _, pullback = rrule(np.linalg.det, np.eye(3))
    with pytest.raises(ValueError, match=r"det pullback.*\(2,\).*\(\)"):
        pullback(np.ones(2))
    _, pullback = rrule(np.linalg.det, np.stack([np.eye(3)] * 2))
    with pytest.raises(ValueError, match=r"det pullback.*\(3,\).*\(2,\)"):
        pullback(np.ones(3))


def test_nan_in_nan_out(path):
    for shape in [(3, 3), (2, 3, 3), (20, 20)]:
        a = np.broadcast_to(np.eye(shape[-1]), shape).copy()
        a[..., 1, 1] = np.nan
        d, pullback = rrule(np.linalg.det, a)
        assert np.isnan(d).any()
        assert np.isnan(pullback(np.ones(np.shape(d)))[1]).any()
        _, d_dot = frule((NoTangent(), np.ones(shape)), np.linalg.det, a)
        assert np.isnan(d_dot).any()
        (_, logabsdet), pullback = rrule(np.linalg.slogdet, a)
        assert np.isnan(logabsdet).any()
        assert np.isnan(
            pullback((np.zeros(np.shape(logabsdet)), np.ones(np.shape(logabsdet))))[1]
        ).any()


@pytest.mark.parametrize("shape", [(3, 3), (14, 14), (40, 40), (2, 3, 3), (2, 20, 20), (2, 40, 40)])
def test_complex_nan_in_nan_out_quietly(shape, path):
    # tests run with warnings as errors: complex pivots divided by their modulus must not warn
    a = np.broadcast_to(np.eye(shape[-1]) * (1 + 1j), shape).copy()
    a[..., 1, 0] = np.nan
    d, pullback = rrule(np.linalg.det, a)
    assert np.isnan(d).all()
    assert np.isnan(pullback(np.ones(np.shape(d), complex))[1]).any()
    _, d_dot = frule((NoTangent(), np.ones(shape, complex)), np.linalg.det, a)
    assert np.isnan(d_dot).all()
    (sign, logabsdet), pullback = rrule(np.linalg.slogdet, a)
    assert np.isnan(sign).all()
    assert np.isnan(pullback((np.ones(np.shape(sign), complex), np.ones_like(logabsdet)))[1]).any()
    frule((NoTangent(), np.ones(shape, complex)), np.linalg.slogdet, a)  # no warning either


def test_empty_matrices():
    y, pullback = rrule(np.linalg.det, np.zeros((0, 0)))
    assert y == np.linalg.det(np.zeros((0, 0)))
    assert pullback(1.0)[1].shape == (0, 0)
    (sign, logabsdet), pullback = rrule(np.linalg.slogdet, np.zeros((2, 0, 0)))
    np.testing.assert_array_equal(sign, [1, 1])
    assert pullback((sign, logabsdet))[1] == ZeroTangent()  # nothing to differentiate


def test_mid_size_stacks_take_the_gufuncs(randn, dtype, monkeypatch):
    a = well_conditioned(randn, dtype, 3, 20, 20) / np.sqrt(20)
    a[1] = np.ones((20, 20))  # rank one in the middle: the exact LAPACK path takes over
    a[2, 0] = a[2, 1]  # rank n - 1: the cofactors
    kept = a.copy()
    calls = []
    inverse = np.linalg.inv
    monkeypatch.setattr(np.linalg, "inv", lambda x: calls.append(x.shape) or inverse(x))
    check_rrule(np.linalg.det, a[[0]])
    check_frule(np.linalg.det, a[[0]])
    assert calls  # the gufunc path ran
    check_rrule(np.linalg.det, a)
    check_frule(np.linalg.det, a)
    np.testing.assert_array_equal(a, kept)


@pytest.mark.parametrize("real", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 4, 7])
def test_slogdet_of_one_real_matrix_agrees_with_the_stack_path(randn, real, n):
    # the one-matrix fast path (_slogdet_one.SlogdetOne) against the general forward pass on a stack of one
    from rules.linalg import _slogdet_one, determinant

    a = well_conditioned(randn, real, n, n)
    a[0] *= -1  # a negative determinant too
    one, stack = _slogdet_one.SlogdetOne(a), determinant._Slogdet(a[None])
    tol = 1e-4 if real == np.float32 else 1e-12
    for got, want in zip(one.y, stack.y, strict=True):
        assert type(got) is np.dtype(real).type
        np.testing.assert_allclose(got, want[0], rtol=tol)
    (sign, logabsdet), pullback = rrule(np.linalg.slogdet, a)
    np.testing.assert_allclose([sign, logabsdet], np.linalg.slogdet(a), rtol=tol)
    bar = np.asarray(0.7)
    want = stack.pullback((ZeroTangent(), bar[None]))[0]
    for y_bar in [
        (np.asarray(1.3), bar),
        [ZeroTangent(), bar],
        Tangent(type(one.y), logabsdet=bar),
        (None, 0.7),
        (ZeroTangent(), np.float64(0.7)),  # numpy and Python scalars: the pullback's fast path
        (ZeroTangent(), np.asarray(0.7 + 2j)),  # the real part is the real primal's cotangent
    ]:
        a_bar = pullback(y_bar)[1]
        assert a_bar.dtype == real
        assert a_bar.shape == (n, n)
        np.testing.assert_allclose(a_bar, want, rtol=tol, atol=tol)
    assert isinstance(pullback((np.asarray(1.0), ZeroTangent()))[1], ZeroTangent)
    half = pullback((None, np.asarray(0.5)))[1]
    for y_bar in [(None, np.float32(0.5)), (None, 0.5), (None, np.float64(0.5))]:
        np.testing.assert_array_equal(pullback(y_bar)[1], half)
    a_dot = randn(real, n, n)
    _y, y_dot = frule((NoTangent(), a_dot), np.linalg.slogdet, a)
    assert isinstance(y_dot.sign, ZeroTangent)
    assert type(y_dot.logabsdet) is np.dtype(real).type
    want_dot = stack.pushforward(a_dot[None]).logabsdet[0]
    np.testing.assert_allclose(y_dot.logabsdet, want_dot, rtol=tol, atol=tol)
    np.testing.assert_allclose(y_dot.logabsdet, np.trace(np.linalg.solve(a, a_dot)), rtol=tol)
    # a tangent of another dtype is cast to the primal's
    _, y_dot = frule((NoTangent(), a_dot.astype(np.complex128)), np.linalg.slogdet, a)
    np.testing.assert_allclose(y_dot.logabsdet, want_dot, rtol=tol, atol=tol)
    with pytest.raises(ValueError, match="slogdet"):
        pullback((ZeroTangent(), np.ones(3)))


@pytest.mark.parametrize("real", [np.float64, np.float32])
@pytest.mark.parametrize("singular", [False, True])
def test_det_frule_of_one_small_plain_matrix_agrees_with_the_forward_pass(randn, real, singular):
    from rules.linalg import determinant

    a = well_conditioned(randn, real, 4, 4)
    if singular:  # rank n - 1: the adjugate's tangent, exactly
        a[3] = a[0] + a[1]
    a_dot = randn(real, 4, 4)
    d, d_dot = frule((NoTangent(), a_dot), np.linalg.det, a)
    forward = determinant._Det(a)
    assert type(d) is type(d_dot) is type(forward.y)
    np.testing.assert_array_equal(d, forward.y)
    np.testing.assert_array_equal(d_dot, forward.pushforward(a_dot))
    _, d_dot_general = frule((NoTangent(), a_dot.astype(np.complex128)), np.linalg.det, a)
    np.testing.assert_allclose(d_dot, d_dot_general, rtol=1e-5)


def test_slogdet_of_one_4x4_matrix_takes_one_compiled_call(randn, monkeypatch):
    # C-ordered float64/float32 4x4: kernels.determinant.slogdet_inverse4 (spied); its pullback
    # agrees with the LAPACK path that a Fortran-ordered copy takes, and singular gives NaN
    from kernels import determinant as kdet

    calls = []
    kernel = kdet.slogdet_inverse4
    monkeypatch.setattr(kdet, "slogdet_inverse4", lambda a: calls.append(a.shape) or kernel(a))
    a = well_conditioned(randn, np.float64, 4, 4)
    (sign, logabsdet), pullback = rrule(np.linalg.slogdet, a)
    assert calls == [(4, 4)]
    (sign_f, logabsdet_f), pullback_f = rrule(np.linalg.slogdet, np.asfortranarray(a))
    assert calls == [(4, 4)]  # the Fortran-ordered matrix took getrf
    assert sign == sign_f
    np.testing.assert_allclose(logabsdet, logabsdet_f, rtol=1e-13)
    for y_bar in [(None, 0.7), (ZeroTangent(), np.asarray(0.7)), [np.asarray(2.0), 0.7]]:
        np.testing.assert_allclose(pullback(y_bar)[1], pullback_f(y_bar)[1], rtol=1e-12)
    assert isinstance(pullback((np.asarray(1.0), ZeroTangent()))[1], ZeroTangent)
    singular = np.array([[1.0, 2, 3, 4], [2, 4, 6, 8], [0, 1, 0, 1], [1, 0, 1, 0]])
    (sign, logabsdet), pullback = rrule(np.linalg.slogdet, singular)
    assert (sign, logabsdet) == (0.0, -np.inf)
    assert np.isnan(pullback((None, 1.0))[1]).all()
