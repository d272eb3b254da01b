"""The kernel path of ``scipy.linalg.expm``'s rules against the numpy path, and its checks.

The numpy path is forced by lowering the crossovers (``monkeypatch``); both compute in double
with the same degree ``m``, scalings ``s`` and product chain, so they agree to rounding error.
"""

import numpy as np
import pytest
import scipy.linalg as sla

from kernels import crossovers
from rules import frule, rrule
from rules.linalg import expm as expm_rules
from rules.testing import check_frule, check_rrule
from tangents import NoTangent


def numpy_path(monkeypatch):
    monkeypatch.setattr(crossovers, "EXPM_SINGLE_MAX_N", 0)
    monkeypatch.setattr(crossovers, "EXPM_STACK_MAX_N", 0)


def both_paths(monkeypatch, A, G):
    """``(X, A_bar, X_dot)`` on the kernel path, then on the numpy path."""
    results = []
    for force in (False, True):
        if force:
            numpy_path(monkeypatch)
        else:
            assert expm_rules._Kernel.start(A) is not None  # the kernel path is taken
        X, pullback = rrule(sla.expm, A)
        A_bar = pullback(G)[1]
        X2, X_dot = frule((NoTangent(), G), sla.expm, A)
        np.testing.assert_array_equal(X, X2)
        results.append((X, A_bar, X_dot))
    return results


def assert_close(a, b, rtol):
    assert a.dtype == b.dtype
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * np.abs(b).max())


def matrices(rng, dtype, shape, norms):
    """Random matrices of ``dtype`` (complex parts both random) with the given 1-norms."""
    A = np.triu(np.ones(shape[-2:])) + 0.3 * rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        A = A + 0.3j * rng.standard_normal(shape)
    A = A * (np.asarray(norms) / np.linalg.norm(A, 1, axis=(-2, -1)))[..., None, None]
    return A.astype(dtype)


# one scale per Pade branch, as in test_expm.py: the degrees 3, 5, 7, 9, 13 and s = 0, 1, > 1
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize(
    ("norm", "degree"), [(0.005, 3), (0.1, 5), (0.6, 7), (1.5, 9), (4.0, 13), (8.0, 13), (40.0, 13)]
)
def test_kernel_agrees_with_numpy_path(rng, monkeypatch, dtype, norm, degree):
    A = np.triu(np.ones((4, 4))) + np.diag(np.arange(4.0)) + 0.1 * rng.standard_normal((4, 4))
    if dtype == np.complex128:
        A = A + 0.1j * rng.standard_normal((4, 4))
    A *= norm / np.linalg.norm(A, 1)
    G = matrices(rng, dtype, (4, 4), 1.0)
    kernel = expm_rules._Kernel.start(A)
    assert kernel.m == expm_rules._pade(A).m == degree
    assert kernel.s[0] == expm_rules._pade(A).s == {4.0: 0, 8.0: 1, 40.0: 3}.get(norm, 0)
    (X, A_bar, X_dot), (X_np, A_bar_np, X_dot_np) = both_paths(monkeypatch, A, G)
    for ours, theirs in ((X, X_np), (A_bar, A_bar_np), (X_dot, X_dot_np)):
        assert_close(ours, theirs, 1e-13)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32])
@pytest.mark.parametrize("shape", [(3, 4, 4), (2, 35, 3, 3), (5, 8, 8)])
def test_stacks_with_a_scaling_per_matrix(rng, monkeypatch, dtype, shape):
    # norms from 0.5 to 60: s = 0 for the first matrices and up to 4 for the last, in one stack
    norms = np.geomspace(0.5, 60.0, int(np.prod(shape[:-2]))).reshape(shape[:-2])
    A, G = matrices(rng, dtype, shape, norms), matrices(rng, dtype, shape, 1.0)
    s = expm_rules._Kernel.start(A).s
    assert s.min() == 0 < s.max()
    np.testing.assert_array_equal(s, expm_rules._pade(A).s.ravel())
    A0, G0 = A.copy(), G.copy()
    kernel, numpy = both_paths(monkeypatch, A, G)
    rtol = 1e-6 if dtype == np.float32 else 1e-13
    for ours, theirs in zip(kernel, numpy, strict=True):
        assert ours.dtype == dtype  # float32 stays float32
        assert_close(ours, theirs, rtol)
    np.testing.assert_array_equal(A, A0)  # inputs not mutated
    np.testing.assert_array_equal(G, G0)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize(("shape", "norm"), [((4, 4), 0.3), ((4, 4), 30.0), ((3, 3, 3), 12.0)])
def test_kernel_path_passes_the_checks(rng, dtype, shape, norm):
    A = matrices(rng, dtype, shape, norm)
    assert expm_rules._Kernel.start(A) is not None
    check_rrule(sla.expm, A)
    check_frule(sla.expm, A)


def test_layouts_and_read_only_input(rng, monkeypatch):
    A = matrices(rng, np.float64, (2, 5, 5), [1.0, 20.0])
    G = matrices(rng, np.float64, (2, 5, 5), 1.0)
    want = both_paths(monkeypatch, A, G)[1]
    monkeypatch.undo()
    fortran, strided = np.asfortranarray(A), np.repeat(A, 2, axis=0)[::2]
    read_only = A.copy()
    read_only.flags.writeable = False
    for B in (fortran, strided, read_only):
        X, pullback = rrule(sla.expm, B)
        assert_close(X, want[0], 1e-13)
        assert_close(pullback(np.asfortranarray(G))[1], want[1], 1e-13)


def test_nan_in_nan_out_on_both_paths(rng, monkeypatch):
    A = matrices(rng, np.float64, (3, 4, 4), 1.0)
    A[1, 0, 2] = np.nan
    G = np.ones_like(A)
    for X, A_bar, X_dot in both_paths(monkeypatch, A, G):
        for Y in (X, A_bar, X_dot):
            assert np.isnan(Y[1]).all()
            assert np.isfinite(Y[[0, 2]]).all()


class Subclass(np.ndarray):
    """An ndarray subclass: not a plain ndarray, so it does not take the kernel path."""


def test_other_tangent_types_after_a_kernel_forward(rng):
    # the numpy path's forward is rebuilt from the kernel's (one matrix's user tangent types take
    # it: test_expm.py's test_generic_path_agrees_with_the_array_path)
    A = matrices(rng, np.float64, (2, 4, 4), [1.0, 30.0])
    G = matrices(rng, np.float64, (2, 4, 4), 1.0)
    _, pullback = rrule(sla.expm, A)
    want = pullback(G)[1]
    assert_close(np.asarray(pullback(G.view(Subclass))[1]), want, 1e-13)
    kernel = expm_rules._Kernel.start(A)
    pade = kernel.pade()  # the numpy path's forward at the same A, recovered from the kernel's
    assert pade.m == kernel.m
    np.testing.assert_array_equal(pade.s, kernel.s)
    assert_close(pade.X, kernel.X, 1e-13)
