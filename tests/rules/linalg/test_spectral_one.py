"""One small matrix: eigh, svd, svdvals, det and slogdet on their single-matrix lanes.

* The forwards of ``np.linalg.eigh`` and ``np.linalg.svd`` call numpy's LAPACK drivers
  (``syevd``/``heevd``, ``gesdd``) through scipy's raw wrappers: the outputs must be numpy's bit
  for bit, eigenvector and singular-vector signs and phases included (the pullbacks of vector
  cotangents depend on them), on random, Hermitian, degenerate, tiny, strided and transposed
  inputs; NaN input must raise numpy's error.
* Their pullbacks take one compiled call (``kernels.spectral_checked``) that also decides
  whether the general path would return the same; each case runs both lanes (the general one
  by switching the lane off) and compares cotangents and errors, and checks that the fast
  lane really took the case (a spy on the kernel's flag).
* det, slogdet and scipy's svdvals: the fast lane against the general path (crossover lowered).
"""

import numpy as np
import pytest
import scipy.linalg as sla

import rules.linalg.determinant as rdet
import rules.linalg.eigh as reigh
import rules.linalg.scipy_svd as rscipy_svd
import rules.linalg.svd as rsvd
from kernels import crossovers, spectral_checked
from kernels import eigh as keigh
from rules import frule, rrule
from rules.linalg._spectral import (
    GaugeError,
    TieError,
    default_rtol,
    gauge_rtol,
    lapack_eigh_vectors,
    lapack_svd_vectors,
)
from rules.testing import check_rrule
from tangents import NoTangent, Tangent, Thunk, ZeroTangent

EighResult = type(np.linalg.eigh(np.eye(1)))


def _hermitian(randn, dtype, n):
    X = randn(dtype, n, n)
    return (X + X.conj().T).astype(dtype)


def _degenerate(randn, dtype, n):
    Q = np.linalg.qr(randn(dtype, n, n))[0]
    w = np.round(np.linspace(-1, 1, n))  # repeated values
    return ((Q * w) @ Q.conj().T).astype(dtype)


def _inputs(randn, dtype, n):
    A = randn(dtype, n, n)
    big = randn(dtype, 2 * n, 2 * n)
    return {
        "random": A,
        "hermitian": _hermitian(randn, dtype, n),
        "degenerate": _degenerate(randn, dtype, n),
        "tiny": (1e-30 * A).astype(dtype),
        "transposed": A.T,  # Fortran order
        "strided": big[::2, 1::2],
    }


def _same(ours, theirs):
    assert type(ours) is type(theirs)
    for x, y in zip(ours, theirs, strict=True):
        assert x.dtype == y.dtype
        assert x.shape == y.shape
        assert x.flags.c_contiguous == y.flags.c_contiguous
        np.testing.assert_array_equal(x, y)  # bit for bit (NaN nowhere)


# --- the forwards are numpy's, bit for bit -------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 13, 32])
def test_eigh_forward_is_numpys_bit_for_bit(randn, dtype, n):
    for A in _inputs(randn, dtype, n).values():
        for UPLO in ("L", "U"):
            pair = lapack_eigh_vectors(A, UPLO)
            assert pair is not None
            _same(EighResult(*pair), np.linalg.eigh(A, UPLO))
            _same(rrule(np.linalg.eigh, A, UPLO)[0], np.linalg.eigh(A, UPLO))


@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5), (6, 2), (8, 8), (32, 32)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_forward_is_numpys_bit_for_bit(randn, dtype, shape, full_matrices):
    n = max(shape)
    for A in _inputs(randn, dtype, n).values():
        A = A[: shape[0], : shape[1]]
        factors = lapack_svd_vectors(A, full_matrices)
        assert factors is not None
        expected = np.linalg.svd(A, full_matrices=full_matrices)
        _same(type(expected)(*factors), expected)
        _same(rrule(np.linalg.svd, A, full_matrices)[0], expected)


def test_forwards_leave_numpys_path_alone_outside_the_lane(randn):
    A = randn(np.float64, 4, 4)
    assert lapack_eigh_vectors(A, "l") is None  # numpy's path then (it accepts lower case)
    assert lapack_eigh_vectors(A.astype(np.complex64), "L") is None
    assert lapack_eigh_vectors(np.stack([A, A]), "L") is None
    assert lapack_eigh_vectors(randn(np.float64, 33, 33), "L") is None
    assert lapack_svd_vectors(A.astype(np.int64), True) is None
    assert lapack_svd_vectors(np.zeros((0, 3)), True) is None


@pytest.mark.parametrize(
    ("bad", "where"),
    # not inf at (0, 0): gesdd does not return on np.eye(4) with it, in numpy's call too
    [(np.nan, (2, 1)), (np.nan, (0, 0)), (np.nan, (3, 0)), (np.inf, (2, 1)), (np.inf, (3, 0))],
)
def test_non_finite_input_is_numpys_error_or_numpys_nan(dtype, bad, where):
    """numpy raises exactly when LAPACK's info != 0; otherwise it returns LAPACK's NaN."""
    A = np.eye(4, dtype=dtype)
    A[where] = A[where[::-1]] = bad
    for function in (np.linalg.eigh, np.linalg.svd):  # numpy's path: its error, or its NaN
        try:
            with np.errstate(all="ignore"):
                expected = function(A)
        except np.linalg.LinAlgError:
            with pytest.raises(np.linalg.LinAlgError, match=function.__name__):
                rrule(function, A)
        else:
            with np.errstate(all="ignore"):
                ours = rrule(function, A)[0]
            for x, y in zip(ours, expected, strict=True):
                np.testing.assert_array_equal(x, y)


# --- the pullbacks: fast lane against the general path -------------------------------------------


@pytest.fixture
def flags(monkeypatch):
    """The ``ok`` flags the checked kernels returned (a spy that still returns their result)."""
    seen = []
    for name in ("eigh_pullback_checked", "svd_pullback_checked"):
        factory = getattr(spectral_checked, name)

        def spying(n, factory=factory):
            kernel = factory(n)

            def spy(*args):
                ok = kernel(*args)
                seen.append(ok)
                return ok

            return spy

        monkeypatch.setattr(spectral_checked, name, spying)
    return seen


def _general(monkeypatch, module, function, *args):
    with monkeypatch.context() as patch:
        patch.setattr(module, "checked_lane", lambda *a: None)
        return rrule(function, *args)


def _both(monkeypatch, module, function, A, y_bar):
    """``(fast, general)``: each a cotangent of ``A``, or the exception the pullback raised."""
    results = []
    for pullback in (rrule(function, A)[1], _general(monkeypatch, module, function, A)[1]):
        try:
            results.append(pullback(y_bar)[1])
        except (GaugeError, TieError) as error:
            results.append(type(error))
    return results


def _agree(fast, general):
    if isinstance(general, type):
        assert fast is general
        return
    assert fast.dtype == general.dtype
    assert fast.shape == general.shape
    np.testing.assert_array_equal(fast, general)


def _eigh_cotangents(randn, rng, w, V, dtype):
    n = len(w)
    X = randn(dtype, n, n)
    if dtype.kind == "c":  # no phase component: Im diag(V^H V_bar) = 0
        M = V.conj().T @ X
        X = V @ (M - 1j * np.diag(np.diag(M).imag))
    return (randn(w.dtype, n), np.ascontiguousarray(X, dtype=dtype))


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_eigh_pullback_lanes_agree(monkeypatch, flags, randn, rng, dtype, n):
    A = _hermitian(randn, dtype, n)
    w, V = np.linalg.eigh(A)
    y_bar = _eigh_cotangents(randn, rng, w, V, dtype)
    fast, general = _both(monkeypatch, reigh, np.linalg.eigh, A, y_bar)
    assert flags == [True]  # the fast lane returned it
    _agree(fast, general)


@pytest.mark.parametrize("n", [1, 2, 4, 6])
def test_svd_pullback_lanes_agree(monkeypatch, flags, randn, dtype, n):
    A = randn(dtype, n, n)
    U, s, Vh = np.linalg.svd(A)
    X = randn(dtype, n, n)
    if dtype.kind == "c":  # no common phase: Im diag(U^H U_bar + V^H V_bar) = 0
        X = X - 1j * np.diag(np.diag(X).imag)
    y_bar = (np.ascontiguousarray(U @ X), randn(s.dtype, n), np.ascontiguousarray(X.conj().T @ Vh))
    fast, general = _both(monkeypatch, rsvd, np.linalg.svd, A, y_bar)
    assert flags == [True]
    _agree(fast, general)


def test_eigh_pullback_hands_ties_gauge_and_nan_to_the_general_path(monkeypatch, flags, randn, rng):
    dtype = np.dtype(np.complex128)
    A = _hermitian(randn, dtype, 4)
    w, V = np.linalg.eigh(A)
    w_bar, V_bar = _eigh_cotangents(randn, rng, w, V, dtype)
    phase = V * 1j  # the loss moves the phases: GaugeError
    nan = V_bar.copy()
    nan[0, 0] = np.nan
    for y_bar in [(w_bar, phase), (w_bar, nan), (w_bar.astype(np.float32), V_bar)]:
        fast, general = _both(monkeypatch, reigh, np.linalg.eigh, A, y_bar)
        _agree(fast, general)
    assert flags == [False, False]  # the third went to the general path unchecked (dtype)
    # ties: the identity (every pair tied), and a degenerate matrix with a coupling cotangent
    for A, V_bar in [(np.eye(4), randn(np.float64, 4, 4)), (_degenerate(randn, dtype, 4), None)]:
        w, V = np.linalg.eigh(A)
        V_bar = V @ _hermitian(randn, A.dtype, 4) if V_bar is None else V_bar
        fast, general = _both(monkeypatch, reigh, np.linalg.eigh, A, (w, V_bar))
        _agree(fast, general)
    assert flags[2:] == [False, False]


def test_eigh_pullback_structured_and_strided_cotangents(monkeypatch, randn, rng, dtype):
    A = _hermitian(randn, dtype, 4)
    w, V = np.linalg.eigh(A)
    w_bar, V_bar = _eigh_cotangents(randn, rng, w, V, dtype)
    reference = rrule(np.linalg.eigh, A)[1]((w_bar, V_bar))[1]
    for y_bar in [
        Tangent(EighResult, w_bar, V_bar),
        (w_bar, np.asfortranarray(V_bar)),
        [w_bar, V_bar],
        (ZeroTangent(), V_bar),
    ]:
        fast, general = _both(monkeypatch, reigh, np.linalg.eigh, A, y_bar)
        _agree(fast, general)
        if not isinstance(y_bar[0] if isinstance(y_bar, tuple) else None, ZeroTangent):
            tol = 1e-4 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(fast, reference, rtol=tol, atol=tol)


def test_svd_pullback_hands_ties_zeros_and_nan_to_the_general_path(monkeypatch, flags, randn):
    for A in [np.eye(4), np.diag([3.0, 2.0, 1.0, 0.0]), np.diag([3.0, 2.0, 2.0, 1.0])]:
        y_bar = (randn(np.float64, 4, 4), randn(np.float64, 4), randn(np.float64, 4, 4))
        fast, general = _both(monkeypatch, rsvd, np.linalg.svd, A, y_bar)
        _agree(fast, general)
    A = randn(np.complex128, 4, 4)
    U, s, Vh = np.linalg.svd(A)
    nan = randn(np.complex128, 4, 4)
    nan[1, 1] = np.nan
    for y_bar in [(U * 1j, s, np.zeros_like(Vh)), (nan, s, Vh)]:  # GaugeError, NaN
        fast, general = _both(monkeypatch, rsvd, np.linalg.svd, A, y_bar)
        _agree(fast, general)
    assert flags == [False] * 5


def test_checked_kernels_flag_exactly_what_the_general_path_checks(randn, dtype):
    n = 4
    A = _hermitian(randn, dtype, n)
    w, V = np.linalg.eigh(A)
    kernel = spectral_checked.eigh_pullback_checked(n)
    rtol, grtol = default_rtol(n, w.dtype), gauge_rtol(w.dtype)
    w_bar = randn(w.dtype, n)
    assert kernel(w, V, w_bar, np.zeros_like(V), rtol, grtol, np.empty_like(V))
    tied = w.copy()
    tied[1] = tied[0]
    assert not kernel(tied, V, w_bar, np.zeros_like(V), rtol, grtol, np.empty_like(V))
    nan_w = w.copy()
    nan_w[2] = np.nan
    assert not kernel(nan_w, V, w_bar, np.zeros_like(V), rtol, grtol, np.empty_like(V))
    U, s, Vh = np.linalg.svd(randn(dtype, n, n))
    kernel = spectral_checked.svd_pullback_checked(n)
    zeros = np.zeros_like(U)
    assert kernel(U, s, Vh, zeros, s, zeros, rtol, grtol, np.empty_like(U))
    zero_s = s.copy()
    zero_s[-1] = 0
    assert not kernel(U, zero_s, Vh, zeros, s, zeros, rtol, grtol, np.empty_like(U))


def test_fast_lanes_against_finite_differences(flags, randn):
    """Sign-invariant losses of real 4x4 factors, through the fast lanes: the cotangent's inner
    product with a direction against central differences of the loss along it.

    (``rules.testing.check_rrule`` fixes the gauge by wrapping the function, whose traced inner
    call takes the general path; here the pullback is the fast lane's, as the spy confirms.)
    """
    A, D = _hermitian(randn, np.float64, 4), _hermitian(randn, np.float64, 4)
    w_bar, G = randn(np.float64, 4), randn(np.float64, 4, 4)

    def eigh_loss(X):
        w, V = np.linalg.eigh(X)
        return w_bar @ w + np.sum(G * V * V)  # V * V: invariant under column signs

    _w, V = np.linalg.eigh(A)
    A_bar = rrule(np.linalg.eigh, A)[1]((w_bar, 2 * G * V))[1]
    h = 1e-6
    fd = (eigh_loss(A + h * D) - eigh_loss(A - h * D)) / (2 * h)
    np.testing.assert_allclose(np.sum(A_bar * D), fd, rtol=1e-6, atol=1e-8)

    A, D = randn(np.float64, 4, 4), randn(np.float64, 4, 4)
    s_bar, H = randn(np.float64, 4), randn(np.float64, 4, 4)

    def svd_loss(X):
        U, s, Vh = np.linalg.svd(X)
        return s_bar @ s + np.sum(G * U * U) + np.sum(H * Vh * Vh)

    U, _s, Vh = np.linalg.svd(A)
    A_bar = rrule(np.linalg.svd, A)[1]((2 * G * U, s_bar, 2 * H * Vh))[1]
    fd = (svd_loss(A + h * D) - svd_loss(A - h * D)) / (2 * h)
    np.testing.assert_allclose(np.sum(A_bar * D), fd, rtol=1e-6, atol=1e-8)
    assert flags == [True, True]


@pytest.mark.parametrize("n", [1, 4, 8, 9])
def test_eigh_pushforward_lane_agrees_with_the_general_path(monkeypatch, randn, dtype, n):
    calls = []
    factory = reigh.eigh_pushforward_one
    monkeypatch.setattr(reigh, "eigh_pushforward_one", lambda n: calls.append(n) or factory(n))
    A, A_dot = _hermitian(randn, dtype, n), randn(dtype, n, n)
    (w, V), tangent = frule((NoTangent(), A_dot), np.linalg.eigh, A)
    w_dot, V_dot = reigh.eigh_pushforward_array(w, V, A_dot)  # the general path's arrays
    np.testing.assert_array_equal(tangent[0], w_dot)
    np.testing.assert_array_equal(tangent[1], V_dot)
    assert tangent[0].dtype == w.dtype
    assert tangent[1].dtype == V.dtype
    assert calls == ([n] if n <= 8 else [])
    fortran = np.asfortranarray(A_dot)  # the general path, unless it is C-ordered too (n = 1)
    _, strided = frule((NoTangent(), fortran), np.linalg.eigh, A)
    np.testing.assert_array_equal(strided[1], V_dot)
    stack = np.stack([A, A])  # a stack: the general path (the batched kernels)
    _, stacked = frule((NoTangent(), np.stack([A_dot, A_dot])), np.linalg.eigh, stack)
    assert stacked[1].shape == (2, n, n)
    assert calls == ([n] * (1 + fortran.flags.carray) if n <= 8 else [])


# --- eigvalsh and svdvals: one compiled call for a plain cotangent -----------------------------


@pytest.mark.parametrize("real", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 2, 4, 9, 16, 17])
def test_eigvalsh_pullback_lane_is_the_kernels_bits(monkeypatch, randn, real, n):
    dtype = np.dtype(real)
    A = _hermitian(randn, dtype, n)
    seen = []  # the eigenvectors the compiled lane was called with
    factory = spectral_checked.eigvalsh_pullback_one

    def spying(order):
        kernel = factory(order)

        def spy(V, w_bar, out):
            seen.append(V)
            kernel(V, w_bar, out)

        return spy

    monkeypatch.setattr(reigh, "eigvalsh_pullback_one", spying)
    w, pullback = rrule(np.linalg.eigvalsh, A)
    w_bar = randn(w.dtype, n)
    A_bar = pullback(w_bar)[1]
    assert A_bar.dtype == dtype
    assert A_bar.shape == (n, n)
    np.testing.assert_array_equal(A_bar, A_bar.T)  # exactly symmetric
    if keigh.eigvalsh_uses_loops(n, dtype):  # the compiled lane, up to the crossover only
        assert len(seen) == 1
        # the same bits as the kernels' own one-matrix pullback of the same eigenvectors
        np.testing.assert_array_equal(A_bar, keigh.eigvalsh_pullback(seen[0], w_bar))
    else:
        assert seen == []
    V = np.linalg.eigh(A)[1]
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(A_bar, (V * w_bar) @ V.T, rtol=tol, atol=tol)
    # a strided cotangent (the general pullback) and a thunk (evaluated first): the same values
    strided = np.stack([w_bar, w_bar], axis=1)[:, 0]
    for other in (strided, Thunk(lambda: w_bar)):
        np.testing.assert_allclose(pullback(other)[1], A_bar, rtol=tol, atol=tol)


def test_eigvalsh_pullback_lane_against_finite_differences(rng):
    # one plain float64 matrix on the compiled lane: <A_bar, A_dot> against central differences
    # of np.linalg.eigvalsh itself, computed without any rule
    n = 6
    X = rng.standard_normal((n, n))
    A = X + X.T
    E = rng.standard_normal((n, n))
    A_dot = E + E.T
    c = rng.standard_normal(n)
    h = 1e-6
    up, down = np.linalg.eigvalsh(A + h * A_dot), np.linalg.eigvalsh(A - h * A_dot)
    fd = c @ (up - down) / (2 * h)
    A_bar = rrule(np.linalg.eigvalsh, A)[1](c)[1]
    assert np.sum(A_bar * A_dot) == pytest.approx(fd, rel=1e-7, abs=1e-9)


@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5), (6, 2), (7, 7)])
def test_svdvals_pullback_lane_is_the_kernels_bits(monkeypatch, randn, shape):
    dtype = np.dtype(np.float64)
    A = randn(dtype, *shape)
    calls = []
    factory = spectral_checked.svdvals_pullback_one

    def spying(m, n):
        calls.append((m, n))
        return factory(m, n)

    monkeypatch.setattr(rsvd, "svdvals_pullback_one", spying)
    s, pullback = rrule(np.linalg.svd, A, compute_uv=False)
    assert calls == ([shape] if max(shape) <= crossovers.SVD_LOOPS_MAX_N else [])
    U, _, Vh = np.linalg.svd(A, full_matrices=False)
    s_bar = randn(s.dtype, len(s))
    A_bar = pullback(s_bar)[1]
    assert A_bar.shape == shape
    assert A_bar.dtype == dtype
    np.testing.assert_allclose(A_bar, (U * s_bar) @ Vh, rtol=1e-12, atol=1e-12)
    strided = np.stack([s_bar, s_bar], axis=1)[:, 0]  # same values, not C-ordered: general path
    np.testing.assert_allclose(pullback(strided)[1], A_bar, rtol=1e-12, atol=1e-12)


# --- det, slogdet, scipy.linalg.svdvals ----------------------------------------------------------


def _scalar_bars(dtype):
    return [np.asarray(0.7, dtype), 0.7, dtype.type(0.7), np.asarray(0.7 + 0.2j)]


@pytest.mark.parametrize("n", [1, 3, 4, 12])
@pytest.mark.parametrize("real", [np.float64, np.float32])
def test_det_lane_agrees_with_the_general_path(randn, n, real):
    dtype = np.dtype(real)
    for A in [randn(dtype, n, n), np.zeros((n, n), dtype), randn(dtype, 2 * n, n)[::2]]:
        y, pullback = rrule(np.linalg.det, A)
        general_path = rdet._Det(A)  # what det_rrule did before its one-matrix lane
        assert type(y) is type(general_path.y)
        assert y == general_path.y
        for d_bar in _scalar_bars(dtype):
            ours, general = pullback(d_bar)[1], general_path.pullback(d_bar)
            assert ours.dtype == general.dtype == dtype
            np.testing.assert_array_equal(ours, general)


def test_det_lane_nan(monkeypatch):
    A = np.eye(3)
    A[1, 1] = np.nan
    y, pullback = rrule(np.linalg.det, A)
    assert np.isnan(y)
    assert np.isnan(pullback(1.0)[1]).any()


@pytest.mark.parametrize("real", [np.float64, np.float32])
def test_slogdet_lane_matches_numpy(randn, real):
    for A in [randn(real, 4, 4), np.diag([1.0, -2.0, 3.0]), -np.eye(3), np.zeros((3, 3))]:
        A = A.astype(real)
        (sign, logabsdet), (sign_np, logabsdet_np) = (
            rrule(np.linalg.slogdet, A)[0],
            np.linalg.slogdet(A),
        )
        assert type(sign) is type(sign_np)
        assert type(logabsdet) is type(logabsdet_np)
        assert sign == sign_np
        np.testing.assert_allclose(
            logabsdet, logabsdet_np, rtol=1e-5 if real is np.float32 else 1e-13
        )
        A_bar = rrule(np.linalg.slogdet, A)[1]((np.asarray(1.0), np.asarray(2.0)))[1]
        assert A_bar.dtype == A.dtype
        if sign_np:
            np.testing.assert_allclose(A_bar, 2 * np.linalg.inv(A).T, rtol=1e-5)


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (6, 2)])
def test_scipy_svdvals_lane_agrees_with_scipys_path(monkeypatch, randn, dtype, shape):
    A = randn(dtype, *shape)
    s, pullback = rrule(sla.svdvals, A)
    with monkeypatch.context() as patch:
        patch.setattr(rscipy_svd, "_single_values", lambda *args: None)
        s_general, pullback_general = rrule(sla.svdvals, A)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    # Weyl: a backward-stable SVD moves each singular value by about eps * s_max, so the
    # smallest ones agree to that absolute size, not relatively (the lane computes the vectors,
    # scipy's svdvals not: LAPACK takes another path for the values, and the bits differ)
    np.testing.assert_allclose(s, sla.svdvals(A), rtol=tol, atol=tol * s.max())
    assert s.dtype == s_general.dtype
    s_bar = randn(s.dtype, len(s))
    np.testing.assert_allclose(pullback(s_bar)[1], pullback_general(s_bar)[1], rtol=tol, atol=tol)
    check_rrule(sla.svdvals, A.astype(np.complex128 if dtype.kind == "c" else np.float64))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_scipy_svdvals_lane_keeps_check_finite(bad):
    A = np.eye(3)
    A[0, 2] = bad
    with pytest.raises(ValueError, match="infs or NaNs"):
        rrule(sla.svdvals, A)
    overflow = np.full((2, 2), 1e308)  # finite, but the lane's sum overflows: scipy's path
    assert np.allclose(rrule(sla.svdvals, overflow)[0], sla.svdvals(overflow))
