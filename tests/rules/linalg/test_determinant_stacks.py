"""The stack paths of det and slogdet (rules/linalg/_determinant_stacks.py): the kept LU.

det's pullback and pushforward take ``det conj(det) A^-H`` from the forward's partial-pivoting
LU where the pivots pass a test, and the complete-pivoting adjugate elsewhere. The tests force
either path (``pivot_tolerance``: 0 sends every matrix with nonzero, in-range pivots to the
kept LU, inf sends every matrix to the complete-pivoting kernel) and compare both with exact
cofactors computed in rational arithmetic from the floats themselves.
"""

from fractions import Fraction

import numpy as np
import pytest

from kernels import crossovers
from kernels import determinant as kdet
from rules import frule, rrule
from rules.linalg import _determinant_stacks as stacks
from rules.testing import check_frule, check_rrule


@pytest.fixture(params=["default", "kept-lu", "complete"])
def tolerance(request, monkeypatch):
    """The pivot test as it is, accepting all nonzero pivots (tau = 0), or refusing all."""
    if request.param == "kept-lu":
        monkeypatch.setattr(stacks, "pivot_tolerance", lambda dtype: 0.0)
    if request.param == "complete":
        monkeypatch.setattr(stacks, "pivot_tolerance", lambda dtype: np.inf)
    return request.param


def _det_exact(M):
    """The determinant of a list of lists of Fractions, exactly (Gaussian elimination)."""
    M, d, n = [row[:] for row in M], Fraction(1), len(M)
    for k in range(n):
        p = next((i for i in range(k, n) if M[i][k] != 0), None)
        if p is None:
            return Fraction(0)
        if p != k:
            M[k], M[p], d = M[p], M[k], -d
        d *= M[k][k]
        for i in range(k + 1, n):
            f = M[i][k] / M[k][k]
            for j in range(k, n):
                M[i][j] -= f * M[k][j]
    return d


def adjugate_exact(a):
    """``adj(a)`` of a float matrix, from its cofactors in exact arithmetic, rounded once."""
    n = a.shape[0]
    M = [[Fraction(float(x)) for x in row] for row in a]
    adj = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            minor = [[M[r][c] for c in range(n) if c != i] for r in range(n) if r != j]
            adj[i, j] = float((-1) ** (i + j) * _det_exact(minor))
    return adj


def mixed_stack(rng, n):
    """Random, graded, nearly singular, exactly rank n - 1 and n - 2, and tiny-first-pivot."""
    mats = []
    for _ in range(3):
        mats.append(rng.standard_normal((n, n)))
        scale = 10.0 ** rng.uniform(-4, 4, (2, n))
        mats.append(scale[0][:, None] * rng.standard_normal((n, n)) * scale[1])
        for s_min in (1e-8, 1e-13):
            u, _, vt = np.linalg.svd(rng.standard_normal((n, n)))
            s = np.ones(n)
            s[-1] = s_min
            mats.append((u * s) @ vt)
        for rank in (n - 1, n - 2):  # small integers: exact in floating point
            mats.append(
                rng.integers(-3, 4, (n, rank)).astype(float) @ rng.integers(-3, 4, (rank, n))
            )
        a = rng.standard_normal((n, n))
        a[:, 0] *= 1e-9  # partial pivoting puts a tiny pivot first
        mats.append(a)
    return np.array(mats)


@pytest.mark.parametrize("n", [4, 5])
def test_det_derivatives_are_the_exact_adjugate(rng, n, tolerance):
    A = mixed_stack(rng, n)
    A0 = A.copy()
    bar = rng.standard_normal(len(A))
    A_dot = rng.standard_normal(A.shape)
    _, pullback = rrule(np.linalg.det, A)
    A_bar = pullback(bar)[1]
    _, d_dot = frule((None, A_dot), np.linalg.det, A)
    np.testing.assert_array_equal(A, A0)
    for t, a in enumerate(A):
        adj = adjugate_exact(a)
        scale = max(np.abs(adj).max(), np.abs(a).max() ** (n - 1))
        err = np.abs(A_bar[t] - bar[t] * adj.T).max() / scale
        assert err <= 1e-13, (t, err)
        err_dot = abs(d_dot[t] - np.sum(adj * A_dot[t].T)) / (scale * np.abs(A_dot[t]).sum())
        assert err_dot <= 1e-13, (t, err_dot)


def test_the_default_test_sends_only_suspicious_matrices_to_complete_pivoting(rng, monkeypatch):
    A = mixed_stack(rng, 5)
    calls = []
    real = kdet.det_pullback_batched

    def spy(stack, bar):
        calls.append(len(stack))
        return real(stack, bar)

    monkeypatch.setattr(kdet, "det_pullback_batched", spy)
    _, pullback = rrule(np.linalg.det, A)
    pullback(np.ones(len(A)))
    assert 0 < calls[0] < len(A)  # the singular and nearly singular ones, not all
    calls.clear()
    _, pullback = rrule(np.linalg.det, rng.standard_normal((30, 5, 5)) + 5 * np.eye(5))
    pullback(np.ones(30))
    assert calls == []


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_det_agrees_with_the_complete_pivoting_kernel(rng, dtype, tolerance):
    n = 6
    A = mixed_stack(rng, n)
    if dtype == np.complex128:
        A = A + 1j * mixed_stack(rng, n)
    A = A.astype(dtype)
    bar = (rng.standard_normal(len(A)) + (1j if dtype == np.complex128 else 0)).astype(dtype)
    A_dot = rng.standard_normal(A.shape).astype(dtype)
    _, pullback = rrule(np.linalg.det, A)
    A_bar = pullback(bar)[1]
    _, d_dot = frule((None, A_dot), np.linalg.det, A)
    assert A_bar.dtype == dtype
    assert d_dot.dtype == dtype
    want = kdet.det_pullback_batched(A, bar)
    want_dot = kdet.det_pushforward_batched(A, A_dot)
    rtol = 1e-3 if dtype == np.float32 else 1e-11
    for t in range(len(A)):
        scale = max(np.abs(want[t]).max(), np.abs(A[t]).max() ** (n - 1) * abs(bar[t]))
        np.testing.assert_allclose(A_bar[t], want[t], rtol=0, atol=rtol * scale)
        np.testing.assert_allclose(d_dot[t], want_dot[t], rtol=0, atol=rtol * scale * 10)


def test_det_checker_on_stacks_with_singular_matrices(rng, tolerance):
    A = np.stack(
        [
            rng.standard_normal((3, 3)),
            [[1.0, 2, 3], [2, 4, 6], [1, 0, 1]],  # rank 2: the cofactor matrix
            [[0.0, 1, 0], [0, 0, 1], [0, 0, 0]],  # rank 2, two zero pivots (partial pivoting)
            np.ones((3, 3)),  # rank 1: adj = 0
        ]
    )
    check_rrule(np.linalg.det, A)
    check_frule(np.linalg.det, A)


@pytest.mark.parametrize("n", [4, 16])
def test_det_matches_lapack_on_well_conditioned_stacks(rng, n, monkeypatch):
    A = rng.standard_normal((40, n, n)) + 2 * np.sqrt(n) * np.eye(n)
    bar = rng.standard_normal(40)
    _, pullback = rrule(np.linalg.det, A)
    A_bar = pullback(bar)[1]
    d = np.linalg.det(A)
    want = (bar * d)[:, None, None] * np.linalg.inv(A).swapaxes(-1, -2)
    np.testing.assert_allclose(A_bar, want, rtol=1e-11, atol=1e-11 * np.abs(want).max())
    monkeypatch.setattr(crossovers, "DET_STACK_MAX_N", 0)  # the gufunc path
    np.testing.assert_allclose(
        rrule(np.linalg.det, A)[1](bar)[1], A_bar, rtol=1e-11, atol=1e-11 * np.abs(want).max()
    )


def test_det_nan_in_nan_out(tolerance):
    A = np.stack([np.eye(3), np.full((3, 3), np.nan)])
    y, pullback = rrule(np.linalg.det, A)
    assert y[0] == 1
    assert np.isnan(y[1])
    A_bar = pullback(np.ones(2))[1]
    np.testing.assert_allclose(A_bar[0], np.eye(3))
    assert np.isnan(A_bar[1]).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_slogdet_stack_path_agrees_with_lapack(rng, dtype, monkeypatch):
    A = rng.standard_normal((9, 5, 5)) + 3 * np.eye(5)
    if dtype == np.complex128:
        A = A + 1j * rng.standard_normal(A.shape)
    A = A.astype(dtype)
    A_dot = rng.standard_normal(A.shape).astype(dtype)
    s_bar = (rng.standard_normal(9) * (1 + 1j if dtype == np.complex128 else 1)).astype(dtype)
    l_bar = rng.standard_normal(9).astype(A.real.dtype)

    def run():
        y, pullback = rrule(np.linalg.slogdet, A)
        _, y_dot = frule((None, A_dot), np.linalg.slogdet, A)
        return y, pullback((s_bar, l_bar))[1], y_dot

    (sign, log), A_bar, y_dot = run()
    monkeypatch.setattr(crossovers, "SLOGDET_STACK_MAX_N", 0)
    (sign0, log0), A_bar0, y_dot0 = run()
    rtol = 1e-4 if dtype == np.float32 else 1e-12
    assert A_bar.dtype == dtype
    assert log.dtype == A.real.dtype
    np.testing.assert_allclose(sign, sign0, rtol=rtol)
    np.testing.assert_allclose(log, log0, rtol=rtol)
    np.testing.assert_allclose(A_bar, A_bar0, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(y_dot.logabsdet, y_dot0.logabsdet, rtol=rtol, atol=rtol)
    if dtype == np.complex128:
        np.testing.assert_allclose(y_dot.sign, y_dot0.sign, rtol=rtol, atol=rtol)
    check_rrule(np.linalg.slogdet, A[:3].astype(np.float64 if dtype == np.float32 else dtype))
