"""One small matrix: the forwards that skip numpy's and scipy's wrappers, against LAPACK's path.

Each case runs the rule twice, once on the single-matrix path (the kernel on a stack of one, or
LAPACK called directly) and once with its crossover lowered to 0 (numpy's or scipy's call, as
before), and compares outputs, conventions and pullbacks. A spy checks that the path was taken.
"""

import warnings

import numpy as np
import pytest
import scipy.linalg as sla

import rules.linalg._spectral as spectral
import rules.linalg.qr as rules_qr
from kernels import crossovers
from kernels import lu_unpacked as klu_unpacked
from rules import rrule

TOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 2e-5, np.dtype(np.complex128): 1e-12}


def _spy(monkeypatch, owner, name):
    """Count the calls of ``owner.name`` (still calling it)."""
    calls = []
    original = getattr(owner, name)

    def spy(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)
    return calls


def _close(ours, reference, dtype):
    assert ours.dtype == reference.dtype
    assert ours.shape == reference.shape
    np.testing.assert_allclose(ours, reference, rtol=TOL[dtype], atol=TOL[dtype])


def _lapack_path(monkeypatch, *entries):
    for entry in entries:
        by_kind = isinstance(getattr(crossovers, entry), dict)
        monkeypatch.setattr(crossovers, entry, {"f": 0, "c": 0} if by_kind else 0)


def _rerun_on_lapack(monkeypatch, entries, function, *args, **kwargs):
    with monkeypatch.context() as patch:
        _lapack_path(patch, *entries)
        return rrule(function, *args, **kwargs)


# --- scipy.linalg.lu ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 4, 9])
def test_lu_single_matrix_takes_the_kernel_with_scipys_conventions(monkeypatch, randn, dtype, n):
    A = randn(dtype, n, n)
    calls = _spy(monkeypatch, klu_unpacked, "lu_batched")
    (perm, L, U), pullback = rrule(sla.lu, A, p_indices=True)
    assert calls
    p_ref, L_ref, U_ref = sla.lu(A, p_indices=True)
    np.testing.assert_array_equal(perm, p_ref)  # LAPACK's pivot choice
    assert perm.dtype == np.int32
    _close(L, L_ref, dtype)
    _close(U, U_ref, dtype)
    L_bar, U_bar = randn(dtype, n, n), randn(dtype, n, n)
    (_, ref_pullback) = _rerun_on_lapack(
        monkeypatch, ["LU_FORWARD_SINGLE_MAX_N"], sla.lu, A, p_indices=True
    )
    _close(pullback((None, L_bar, U_bar))[1], ref_pullback((None, L_bar, U_bar))[1], dtype)


def test_lu_single_matrix_all_output_forms(randn):
    A = randn(np.float64, 4, 4)
    P = rrule(sla.lu, A)[0][0]
    np.testing.assert_array_equal(P, sla.lu(A)[0])
    assert P.dtype == sla.lu(A)[0].dtype
    PL = rrule(sla.lu, A, permute_l=True)[0][0]
    np.testing.assert_allclose(PL, sla.lu(A, permute_l=True)[0], rtol=1e-12, atol=1e-12)


def test_lu_single_matrix_pivots_on_the_first_of_equal_magnitudes():
    A = np.array([[1.0, 2.0, 0.5], [-1.0, 3.0, 1.0], [1.0, -1.0, 2.0]])  # a tie in column 0
    perm = rrule(sla.lu, A, p_indices=True)[0][0]
    np.testing.assert_array_equal(perm, sla.lu(A, p_indices=True)[0])
    B = np.array([[0.0, 1.0], [0.0, 2.0]])  # a zero column: no swap, a zero pivot
    for ours, ref in zip(rrule(sla.lu, B)[0], sla.lu(B), strict=True):
        np.testing.assert_array_equal(ours, ref)


def test_lu_single_matrix_singular_and_non_finite_behave_as_before():
    S = np.array([[1.0, 2.0], [2.0, 4.0]])  # rank 1: the last pivot is zero, smooth there
    for ours, ref in zip(rrule(sla.lu, S)[0], sla.lu(S), strict=True):
        np.testing.assert_array_equal(ours, ref)
    Z = np.zeros((3, 3))
    _, pullback = rrule(sla.lu, Z)
    with pytest.raises(np.linalg.LinAlgError, match=r"scipy\.linalg\.lu pullback"):
        pullback((None, np.ones((3, 3)), np.ones((3, 3))))
    N = np.eye(3)
    N[1, 2] = np.nan
    with pytest.raises(ValueError, match="infs or NaNs"):
        rrule(sla.lu, N)
    for ours, ref in zip(
        rrule(sla.lu, N, check_finite=False)[0], sla.lu(N, check_finite=False), strict=True
    ):
        np.testing.assert_array_equal(ours, ref)


def test_lu_above_the_single_crossover_takes_scipy(monkeypatch, randn):
    monkeypatch.setattr(crossovers, "LU_FORWARD_SINGLE_MAX_N", {"f": 3, "c": 3})
    calls = _spy(monkeypatch, klu_unpacked, "lu_batched")
    A = randn(np.float64, 4, 4)
    for ours, ref in zip(rrule(sla.lu, A)[0], sla.lu(A), strict=True):
        np.testing.assert_array_equal(ours, ref)
    assert not calls


# --- scipy.linalg.lu_factor --------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (1, 1)])
def test_lu_factor_single_matrix_is_scipys(randn, dtype, shape):
    A = randn(dtype, *shape)
    (lu, piv), _ = rrule(sla.lu_factor, A)
    lu_ref, piv_ref = sla.lu_factor(A)
    np.testing.assert_array_equal(lu, lu_ref)  # the same getrf
    np.testing.assert_array_equal(piv, piv_ref)
    assert lu.dtype == lu_ref.dtype
    assert piv.dtype == piv_ref.dtype


def test_lu_factor_single_matrix_singular_warns_and_non_finite_raises():
    S = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.warns(sla.LinAlgWarning, match="exactly zero"):
        (lu, _), _ = rrule(sla.lu_factor, S)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sla.LinAlgWarning)
        np.testing.assert_array_equal(lu, sla.lu_factor(S)[0])
    N = np.eye(2)
    N[0, 1] = np.inf
    with pytest.raises(ValueError, match="infs or NaNs"):
        rrule(sla.lu_factor, N)


# --- qr ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 5)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_single_matrix_takes_the_kernel_with_lapacks_signs(
    monkeypatch, randn, dtype, shape, mode
):
    A = randn(dtype, *shape)
    calls = _spy(monkeypatch, rules_qr, "qr_batched")
    fused = _spy(monkeypatch, rules_qr, "qr_single_into")  # square: kernels.qr_single's lane
    y, pullback = rrule(np.linalg.qr, A, mode)
    assert calls or fused
    ref = np.linalg.qr(A, mode)
    for ours, lapack in zip(
        y if mode != "r" else (y,), ref if mode != "r" else (ref,), strict=True
    ):
        _close(ours, lapack, dtype)  # the same signs: R's diagonal as LAPACK's
    y_bar = randn(dtype, *y.shape) if mode == "r" else tuple(randn(dtype, *x.shape) for x in y)
    _, ref_pullback = _rerun_on_lapack(
        monkeypatch, ["QR_FORWARD_SINGLE_MAX_N"], np.linalg.qr, A, mode
    )
    if mode == "complete" and shape[0] > shape[1]:
        return  # the extra columns of Q have no derivative
    _close(pullback(y_bar)[1], ref_pullback(y_bar)[1], dtype)


@pytest.mark.parametrize("mode", ["full", "economic", "r"])
def test_scipy_qr_single_matrix(monkeypatch, randn, mode):
    A = randn(np.float64, 5, 3)
    calls = _spy(monkeypatch, rules_qr, "qr_batched")
    y, _ = rrule(sla.qr, A, mode=mode)
    assert calls
    assert isinstance(y, tuple)
    for ours, ref in zip(y, sla.qr(A, mode=mode), strict=True):
        _close(ours, ref, np.dtype(np.float64))
    A[0, 0] = np.nan
    with pytest.raises(ValueError, match="infs or NaNs"):
        rrule(sla.qr, A, mode=mode)


def test_qr_single_matrix_nan_gives_nan(randn):
    A = randn(np.float64, 4, 4)
    A[2, 1] = np.nan
    Q, R = rrule(np.linalg.qr, A)[0]
    assert np.isnan(Q).any()
    assert np.isnan(R).any()


# --- eigvalsh and svdvals: LAPACK directly -----------------------------------------------------


@pytest.mark.parametrize("UPLO", ["L", "U"])
def test_eigvalsh_single_matrix_calls_lapack_directly(monkeypatch, randn, dtype, UPLO):
    X = randn(dtype, 5, 5)
    H = X + X.conj().T
    H[np.triu_indices(5, 1) if UPLO == "L" else np.tril_indices(5, -1)] = 7  # the unread triangle
    calls = _spy(monkeypatch, spectral, "_lapack")
    w, pullback = rrule(np.linalg.eigvalsh, H, UPLO)
    assert calls
    _close(w, np.linalg.eigvalsh(H, UPLO), dtype)
    assert np.all(np.diff(w) >= 0)  # ascending
    w_bar = randn(w.dtype, 5)
    _, ref_pullback = _rerun_on_lapack(
        monkeypatch, ["EIGH_VALUES_SINGLE_MAX_N"], np.linalg.eigvalsh, H, UPLO
    )
    _close(pullback(w_bar)[1], ref_pullback(w_bar)[1], dtype)


def test_eigvalsh_single_matrix_nan_raises_as_before():
    H = np.eye(3)
    H[2, 0] = np.nan
    with pytest.raises(np.linalg.LinAlgError, match=r"np\.linalg\.eigvalsh"):
        rrule(np.linalg.eigvalsh, H)


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (2, 5)])
def test_svdvals_single_matrix_calls_lapack_directly(monkeypatch, randn, dtype, shape):
    A = randn(dtype, *shape)
    calls = _spy(monkeypatch, spectral, "_lapack")
    s, pullback = rrule(np.linalg.svdvals, A)
    assert calls
    _close(s, np.linalg.svdvals(A), dtype)
    assert np.all(np.diff(s) <= 0)  # descending
    s_bar = randn(s.dtype, len(s))
    _, ref_pullback = _rerun_on_lapack(
        monkeypatch, ["SVD_VALUES_SINGLE_MAX_N"], np.linalg.svdvals, A
    )
    _close(pullback(s_bar)[1], ref_pullback(s_bar)[1], dtype)
    s2, _ = rrule(np.linalg.svd, A, compute_uv=False)
    _close(s2, s, dtype)


def test_svdvals_single_matrix_nan_raises_as_before():
    A = np.eye(3)
    A[0, 1] = np.nan
    with pytest.raises(np.linalg.LinAlgError, match="did not converge"):
        rrule(np.linalg.svdvals, A)


def test_eigh_and_svd_vectors_are_numpys(randn):
    A = randn(np.float64, 4, 4)
    H = A + A.T
    np.testing.assert_array_equal(rrule(np.linalg.eigh, H)[0][1], np.linalg.eigh(H)[1])
    np.testing.assert_array_equal(rrule(np.linalg.svd, A)[0][0], np.linalg.svd(A)[0])
