"""The fused single-matrix kernels (lu_single, qr_single, triangular_single) against the batched ones.

Each fused kernel calls the batched kernels on a stack of one from compiled code, so the results
agree bit for bit; the status codes replace the rules' numpy checks and are tested here.
"""

import numpy as np
import pytest
import scipy.linalg as sla
from numpy.testing import assert_array_equal

from kernels.lu import lu_pullback_batched, lu_pushforward_batched
from kernels.lu_single import plu_single, plu_single_jvp, plu_single_pullback
from kernels.lu_unpacked import plu_batched
from kernels.qr import qr_pullback_batched, qr_pushforward_batched
from kernels.qr_forward import qr_batched
from kernels.qr_single import qr_single, qr_single_jvp, qr_single_pullback
from kernels.triangular import (
    solve_triangular_batched,
    solve_triangular_pullback_batched,
    solve_triangular_pushforward_batched,
)
from kernels.triangular_single import (
    solve_triangular_single,
    solve_triangular_single_jvp,
    solve_triangular_single_pullback,
)

RNG = np.random.default_rng(7)


def _randn(dtype, *shape):
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [2, 3, 4, 5, 9])
def test_plu_single_is_the_batched_kernels_on_a_stack_of_one(dtype, n):
    A, L_bar, U_bar, A_dot = (_randn(dtype, n, n) for _ in range(4))
    F, status = plu_single(A)
    assert status == 0
    P, perm, L, U, _ = plu_batched(A[None])
    for got, want in zip(F, (P[0], L[0], U[0]), strict=True):
        assert_array_equal(got, want)
    assert_array_equal(F[0], sla.lu(A)[0])
    A_bar = plu_single_pullback(F, L_bar, U_bar)
    assert_array_equal(A_bar, lu_pullback_batched(L, U, perm, L_bar[None], U_bar[None])[0])
    L_dot, U_dot = lu_pushforward_batched(L, U, perm, A_dot[None])
    G, status = plu_single_jvp(A, A_dot, False)
    assert status == 0
    for got, want in zip(G, (P[0], L[0], U[0], L_dot[0], U_dot[0]), strict=True):
        assert_array_equal(got, want)
    G, status = plu_single_jvp(A, A_dot, True)
    rows = perm[0]
    for got, want in zip(G, (L[0][rows], U[0], L_dot[0][rows], U_dot[0]), strict=True):
        assert_array_equal(got, want)


def test_plu_single_status():
    A = _randn(np.float64, 4, 4)
    for bad in (np.nan, np.inf):
        X = A.copy()
        X[2, 1] = bad
        assert plu_single(X)[1] == -1
        assert plu_single_jvp(X, A, False)[1] == -1
    X = A.copy()
    X[:, 0] = 0  # the first pivot is zero
    assert plu_single(X)[1] == 1
    assert plu_single_jvp(X, A, True)[1] == 1
    X = np.array([[4.0, 1, 0, 0], [1, 4, 1, 0], [0, 1, 4, 0], [1, 1, 1, 0]])
    assert plu_single(X)[1] == 4  # the last pivot only
    assert plu_single(X)[1] == plu_batched(X[None])[4][0]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("n", [1, 2, 4, 7])
def test_qr_single_is_the_batched_kernels_on_a_stack_of_one(dtype, n):
    A, Q_bar, R_bar, A_dot = (_randn(dtype, n, n) for _ in range(4))
    F, status = qr_single(A)
    assert status == 0
    Q, R = qr_batched(A[None])
    assert_array_equal(F[0], Q[0])
    assert_array_equal(F[1], R[0])
    want = qr_pullback_batched(Q, R, Q_bar[None], R_bar[None])[0]
    assert_array_equal(qr_single_pullback(F, Q_bar, R_bar), want)
    Q_dot, R_dot = qr_pushforward_batched(Q, R, A_dot[None])
    G, status = qr_single_jvp(A, A_dot)
    assert status == 0
    for got, want in zip(G, (Q[0], R[0], Q_dot[0], R_dot[0]), strict=True):
        assert_array_equal(got, want)


def test_qr_single_status():
    A = _randn(np.float64, 4, 4)
    A[:, 2] = 0
    assert qr_single(A)[1] == 3
    assert qr_single_jvp(A, A)[1] == 3
    A[1, 1] = np.nan
    assert np.isnan(qr_single(A)[0]).any()  # NaN in, NaN out, no status


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize(
    ("lower", "trans", "unit"), [(True, 0, False), (False, 1, True), (True, 2, True)]
)
@pytest.mark.parametrize("b_shape", [(4,), (4, 3)])
def test_solve_triangular_single_is_the_batched_kernels(dtype, lower, trans, unit, b_shape):
    T = _randn(dtype, 4, 4) + 3 * np.eye(4, dtype=dtype)
    B, X_bar, B_dot = (_randn(dtype, *b_shape) for _ in range(3))
    T_dot = _randn(dtype, 4, 4)
    X, status = solve_triangular_single(T, B, lower, trans, unit, True)
    assert status == 0
    k = B.size // 4
    X3 = solve_triangular_batched(T[None], B.reshape(1, 4, k), lower, trans, unit)
    assert_array_equal(X, X3.reshape(B.shape))
    T_bar, B_bar = solve_triangular_single_pullback(T, X, X_bar, lower, trans, unit)
    want = solve_triangular_pullback_batched(
        T[None], X3, X_bar.reshape(1, 4, k), lower, trans, unit
    )
    assert_array_equal(T_bar, want[0][0])
    assert_array_equal(B_bar, want[1].reshape(B.shape))
    X_j, X_dot, status = solve_triangular_single_jvp(T, B, T_dot, B_dot, lower, trans, unit, True)
    assert status == 0
    assert_array_equal(X_j, X)
    want = solve_triangular_pushforward_batched(
        T[None], X3, T_dot[None], B_dot.reshape(1, 4, k), lower, trans, unit
    )
    assert_array_equal(X_dot, want.reshape(B.shape))


def test_solve_triangular_single_status():
    T = np.tril(_randn(np.float64, 4, 4)) + 3 * np.eye(4)
    B = _randn(np.float64, 4, 2)
    for bad in (np.nan, -np.inf):
        for T_, B_ in ((T.copy(), B), (T, B.copy())):
            (T_ if T_ is not T else B_)[0, 1] = bad
            assert solve_triangular_single(T_, B_, True, 0, False, True)[1] == -1
            assert solve_triangular_single_jvp(T_, B_, T, B, True, 0, False, True)[2] == -1
            assert solve_triangular_single(T_, B_, True, 0, False, False)[1] == 0  # unchecked
    S = T.copy()
    S[2, 2] = 0
    assert solve_triangular_single(S, B, True, 0, False, True)[1] == 3
    assert solve_triangular_single(S, B, True, 0, True, True)[1] == 0  # the diagonal is not read


def test_the_fused_kernels_never_write_their_inputs():
    # the derivatives run the lane-block helpers on views of their inputs
    A, X_bar, Y_bar, A_dot = (_randn(np.float64, 4, 4) for _ in range(4))
    A += 3 * np.eye(4)
    F, _ = plu_single(A)
    QF, _ = qr_single(A)
    T = np.tril(A)
    X, _ = solve_triangular_single(T, X_bar, True, 0, False, True)
    calls = [
        lambda: plu_single_pullback(F, X_bar, Y_bar),
        lambda: plu_single_jvp(A, A_dot, False),
        lambda: plu_single_jvp(A, A_dot, True),
        lambda: qr_single_pullback(QF, X_bar, Y_bar),
        lambda: qr_single_jvp(A, A_dot),
        lambda: solve_triangular_single_pullback(T, X, Y_bar, True, 1, False),
        lambda: solve_triangular_single_jvp(T, X_bar, A_dot, Y_bar, True, 2, False, True),
    ]
    inputs = (A, X_bar, Y_bar, A_dot, F, QF, T, X)
    before = [x.copy() for x in inputs]
    for call in calls:
        call()
    for x, x0 in zip(inputs, before, strict=True):
        assert_array_equal(x, x0)
