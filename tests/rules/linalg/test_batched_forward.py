"""Which forward a rule takes for a stack: the batched kernels up to their crossovers, else LAPACK."""

import numpy as np
import pytest
import scipy.linalg as sla

from kernels import crossovers
from kernels.eigh_forward import eigh_batched
from kernels.eigh_tridiagonal import eigh_tridiagonal_batched
from kernels.qr_forward import qr_batched
from kernels.svd_bidiagonal import svd_bidiagonal_batched
from kernels.svd_forward import svd_batched
from rules import rrule
from rules.core.dispatch import forward_stack

EIGH_N = crossovers.EIGH_FORWARD_STACK_MAX_N
SVD_N = crossovers.SVD_FORWARD_STACK_MAX_N
QR_N = crossovers.QR_FORWARD_STACK_MAX_N


def test_forward_stack_selects_plain_small_stacks(monkeypatch, rng):
    monkeypatch.setattr(crossovers, "TEST_FORWARD_STACK_MAX_N", {"f": 4, "c": 2}, raising=False)
    entry = "TEST_FORWARD_STACK_MAX_N"
    A = rng.standard_normal((2, 3, 4, 4))
    assert forward_stack(A, entry).shape == (6, 4, 4)
    assert forward_stack(A[0, 0], entry) is None  # one matrix: LAPACK
    assert forward_stack(rng.standard_normal((2, 5, 4)), entry) is None  # above the crossover
    assert forward_stack(A.astype(np.complex128), entry) is None  # complex crossover 2
    assert forward_stack(A.astype(np.complex64), entry) is None  # no kernel dtype
    assert forward_stack(np.zeros((0, 4, 4)), entry) is None
    assert forward_stack(A.tolist(), entry) is None
    assert forward_stack(A[..., :1, :1], entry, min_n=2) is None  # below min_n


def test_stacks_take_the_kernels(rng):
    A = rng.standard_normal((5, 4, 4))
    H = A + A.mT
    (w, V), _ = rrule(np.linalg.eigh, H)
    for ours, kernel in zip((w, V), eigh_batched(H), strict=True):
        np.testing.assert_array_equal(ours, kernel)
    (w, V), _ = rrule(np.linalg.eigh, H, "U")
    np.testing.assert_array_equal(V, eigh_batched(H, lower=False)[1])
    y, _ = rrule(np.linalg.svd, A)
    for ours, kernel in zip(y, svd_batched(A), strict=True):
        np.testing.assert_array_equal(ours, kernel)
    for mode in ("reduced", "complete"):
        y, _ = rrule(np.linalg.qr, A, mode)
        for ours, kernel in zip(y, qr_batched(A, mode), strict=True):
            np.testing.assert_array_equal(ours, kernel)
    y, _ = rrule(sla.qr, A)  # scipy's 'full' is numpy's 'complete'
    np.testing.assert_array_equal(y[0], qr_batched(A, "complete")[0])


@pytest.mark.parametrize("kind", ["f", "c"])
def test_larger_eigh_stacks_take_tridiagonal_qr(monkeypatch, rng, kind):
    dtype = np.float64 if kind == "f" else np.complex128
    jacobi_n = crossovers.EIGH_JACOBI_STACK_MAX_N[kind]
    for n in (jacobi_n + 1, EIGH_N[kind]):
        A = rng.standard_normal((3, n, n)).astype(dtype)
        if kind == "c":
            A = A + 1j * rng.standard_normal((3, n, n))
        H = A + A.conj().mT
        for uplo in ("L", "U"):
            (w, V), _ = rrule(np.linalg.eigh, H, uplo)
            w_k, V_k = eigh_tridiagonal_batched(H, lower=uplo == "L")
            np.testing.assert_array_equal(w, w_k)
            np.testing.assert_array_equal(V, V_k)
        y, _ = rrule(sla.eigh, H)
        np.testing.assert_array_equal(y[1], eigh_tridiagonal_batched(H)[1])
        np.testing.assert_array_equal(rrule(np.linalg.eigvalsh, H)[0], w_k)
    A = rng.standard_normal((2, n + 1, n + 1)) + (0j if kind == "c" else 0)
    H = A + A.conj().mT  # above the entry: LAPACK
    np.testing.assert_array_equal(rrule(np.linalg.eigh, H)[0][1], np.linalg.eigh(H)[1])
    limits = dict(crossovers.EIGH_JACOBI_STACK_MAX_N, **{kind: jacobi_n + 2})
    monkeypatch.setattr(crossovers, "EIGH_JACOBI_STACK_MAX_N", limits)  # read per call
    H = H[..., : jacobi_n + 2, : jacobi_n + 2]
    (w, V), _ = rrule(np.linalg.eigh, H)
    np.testing.assert_array_equal(V, eigh_batched(H)[1])


def test_larger_real_svd_stacks_take_bidiagonal_qr(monkeypatch, rng):
    jacobi_n = crossovers.SVD_JACOBI_STACK_MAX_N["f"]
    top = SVD_N["f"]
    for shape in ((jacobi_n + 1,) * 2, (top, top), (top, jacobi_n + 1), (jacobi_n + 1, top)):
        A = rng.standard_normal((3, *shape))
        kernel = svd_bidiagonal_batched(A)
        for full in (True, False) if shape[0] == shape[1] else (False,):
            y, _ = rrule(np.linalg.svd, A, full)
            for ours, k in zip(y, kernel, strict=True):
                np.testing.assert_array_equal(ours, k)
        np.testing.assert_array_equal(rrule(np.linalg.svdvals, A)[0], kernel[1])
        np.testing.assert_array_equal(rrule(sla.svd, A, False)[0][2], kernel[2])
    A = rng.standard_normal((3, top, jacobi_n))  # the smaller side at the entry: Jacobi
    np.testing.assert_array_equal(rrule(np.linalg.svd, A, False)[0][0], svd_batched(A)[0])
    A = rng.standard_normal((3, jacobi_n + 2, jacobi_n + 1))  # full_matrices of a rectangle
    np.testing.assert_array_equal(rrule(np.linalg.svd, A)[0][0], np.linalg.svd(A)[0])
    A = rng.standard_normal((3, top + 1, jacobi_n + 1))  # above the entry: LAPACK
    np.testing.assert_array_equal(rrule(np.linalg.svd, A, False)[0][0], np.linalg.svd(A, False)[0])
    c = SVD_N["c"]  # complex: bidiagonal QR above its Jacobi entry, LAPACK above c
    A = rng.standard_normal((2, c, c)) + 1j * rng.standard_normal((2, c, c))
    for ours, k in zip(rrule(np.linalg.svd, A)[0], svd_bidiagonal_batched(A), strict=True):
        np.testing.assert_array_equal(ours, k)
    A = rng.standard_normal((2, c + 1, c + 1)).astype(np.complex128)
    np.testing.assert_array_equal(rrule(np.linalg.svd, A)[0][0], np.linalg.svd(A)[0])
    monkeypatch.setattr(crossovers, "SVD_JACOBI_STACK_MAX_N", {"f": 12, "c": 4})  # read per call
    A = rng.standard_normal((3, 10, 10))
    np.testing.assert_array_equal(rrule(np.linalg.svd, A)[0][0], svd_batched(A)[0])


def test_above_the_crossover_and_single_matrices_take_lapack(rng):
    n = max(EIGH_N["f"], SVD_N["f"], QR_N["f"]) + 1
    for A in (rng.standard_normal((2, n, n)), rng.standard_normal((4, 4))):
        H = A + A.mT
        np.testing.assert_array_equal(rrule(np.linalg.eigh, H)[0][1], np.linalg.eigh(H)[1])
        np.testing.assert_array_equal(rrule(np.linalg.svd, A)[0][0], np.linalg.svd(A)[0])
    A = rng.standard_normal((2, n, n))
    np.testing.assert_array_equal(rrule(np.linalg.qr, A)[0][0], np.linalg.qr(A)[0])


def test_single_matrices_above_their_crossover_take_lapack(monkeypatch, rng):
    monkeypatch.setattr(crossovers, "QR_FORWARD_SINGLE_MAX_N", {"f": 0, "c": 0})
    A = rng.standard_normal((4, 4))
    np.testing.assert_array_equal(rrule(np.linalg.qr, A)[0][0], np.linalg.qr(A)[0])


def test_forward_stack_takes_one_matrix_up_to_its_single_entry(monkeypatch, rng):
    monkeypatch.setattr(crossovers, "TEST_FORWARD_SINGLE_MAX_N", 4, raising=False)
    A = rng.standard_normal((4, 4))
    stack = forward_stack(A, "QR_FORWARD_STACK_MAX_N", single="TEST_FORWARD_SINGLE_MAX_N")
    assert stack.shape == (1, 4, 4)
    np.testing.assert_array_equal(stack[0], A)
    assert forward_stack(A, "QR_FORWARD_STACK_MAX_N") is None  # no single entry: LAPACK
    B = rng.standard_normal((5, 5))
    assert forward_stack(B, "QR_FORWARD_STACK_MAX_N", single="TEST_FORWARD_SINGLE_MAX_N") is None
    frozen = A.copy()
    frozen.flags.writeable = False  # a read-only array is copied (Numba would compile again)
    stack = forward_stack(frozen, "QR_FORWARD_STACK_MAX_N", single="TEST_FORWARD_SINGLE_MAX_N")
    assert stack.flags.writeable


def test_full_matrices_of_non_square_stacks_take_lapack(rng):
    A = rng.standard_normal((3, 4, 2))
    y, _ = rrule(np.linalg.svd, A)  # full_matrices=True: U is (4, 4), the kernel's is thin
    assert y.U.shape == (3, 4, 4)
    np.testing.assert_array_equal(y.U, np.linalg.svd(A)[0])


@pytest.mark.parametrize("function", [sla.eigh, sla.svd, sla.qr])
def test_scipy_check_finite_still_raises(rng, function):
    A = rng.standard_normal((3, 4, 4))
    A = A + A.mT
    A[1, 2, 2] = np.nan
    with pytest.raises(ValueError, match="infs or NaNs"):
        rrule(function, A)
