"""``np.linalg.solve`` of one plain system: the lane that skips the general rule's machinery.

Each case runs the rule twice, once on the lane and once with the lane switched off (the general
rule, as before), and compares outputs, cotangents and tangents; a spy checks which one ran.
Finite differences for the lane are in ``test_solve.py`` (its 4x4 cases take the lane).
"""

import numpy as np
import pytest

import rules.linalg.solve as rules_solve
from kernels import crossovers
from rules import frule, rrule
from rules.linalg import _systems
from rules.testing import check_frule, check_rrule
from tangents import NoTangent, UpperTriangular, ZeroTangent


def _system(randn, dtype, n, k):
    a = (randn(dtype, n, n) + 2 * np.sqrt(n) * np.eye(n)).astype(dtype)
    return a, randn(dtype, *((n,) if k is None else (n, k)))


def _lane_calls(monkeypatch):
    calls = []
    original = rules_solve._one_system

    def spy(a, b):
        one = original(a, b)
        calls.append(one is not None)
        return one

    monkeypatch.setattr(rules_solve, "_one_system", spy)
    return calls


def _general(monkeypatch, *args):
    """``rrule(np.linalg.solve, *args)`` with the lane off."""
    with monkeypatch.context() as patch:
        patch.setattr(rules_solve, "_one_system", lambda a, b: None)
        y, pullback = rrule(np.linalg.solve, *args)
        return y, pullback


def _same(ours, reference):
    assert type(ours) is type(reference) is np.ndarray
    assert ours.dtype == reference.dtype
    assert ours.shape == reference.shape
    np.testing.assert_array_equal(ours, reference)


@pytest.mark.parametrize("k", [None, 1, 3])
@pytest.mark.parametrize("n", [1, 4, 9])
def test_the_lane_matches_the_general_rule_bit_for_bit(monkeypatch, randn, dtype, n, k):
    a, b = _system(randn, dtype, n, k)
    calls = _lane_calls(monkeypatch)
    x, pullback = rrule(np.linalg.solve, a, b)
    assert calls == [True]
    x_ref, pullback_ref = _general(monkeypatch, a, b)
    _same(x, x_ref)
    x_bar = randn(dtype, *x.shape)
    ours, reference = pullback(x_bar), pullback_ref(x_bar)
    assert ours[0] == NoTangent()
    for got, want in zip(ours[1:], reference[1:], strict=True):
        _same(got, want)
    assert ours[1].dtype == a.dtype
    assert ours[2].dtype == b.dtype


@pytest.mark.parametrize("k", [None, 2])
def test_the_lane_pushforward_matches_the_general_rule(monkeypatch, randn, dtype, k):
    a, b = _system(randn, dtype, 4, k)
    tangents = (NoTangent(), randn(dtype, 4, 4), randn(dtype, *b.shape))
    x, x_dot = frule(tangents, np.linalg.solve, a, b)
    with monkeypatch.context() as patch:
        patch.setattr(rules_solve, "_one_system", lambda a, b: None)
        x_ref, x_dot_ref = frule(tangents, np.linalg.solve, a, b)
    _same(x, x_ref)
    assert x_dot.dtype == x_dot_ref.dtype
    assert x_dot.shape == x_dot_ref.shape
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(x_dot, x_dot_ref, rtol=tol, atol=tol)
    for t in tangents[1:]:  # the tangents are inputs: never written
        assert np.isfinite(t).all()
    check_frule(np.linalg.solve, a, b)


def test_layouts_and_cotangent_dtypes(monkeypatch, randn):
    a, b = _system(randn, np.float64, 5, 2)
    for a_in, b_in in [(np.asfortranarray(a), b), (a[::-1, ::-1].T, b[::-1]), (a, b.T.copy().T)]:
        calls = _lane_calls(monkeypatch)
        x, pullback = rrule(np.linalg.solve, a_in, b_in)
        assert calls == [True]
        x_ref, pullback_ref = _general(monkeypatch, a_in, b_in)
        _same(x, x_ref)
        for x_bar in [np.ones(x.shape), np.ones(x.shape, np.float32), np.ones(x.shape) + 2j]:
            for got, want in zip(pullback(x_bar)[1:], pullback_ref(x_bar)[1:], strict=True):
                _same(got, want)
        a_copy, b_copy = a_in.copy(), b_in.copy()
        pullback(np.ones(x.shape))
        _same(a_in, a_copy)
        _same(b_in, b_copy)


def test_other_cotangents_take_the_general_rule(randn):
    a, b = _system(randn, np.float64, 4, 4)
    _x, pullback = rrule(np.linalg.solve, a, b)
    assert pullback(ZeroTangent())[1:] == (ZeroTangent(), ZeroTangent())
    U = np.triu(randn(np.float64, 4, 4))
    _, a_bar, b_bar = pullback(U)
    _, a_bar_structured, b_bar_structured = pullback(UpperTriangular(U))  # the algebra path
    np.testing.assert_allclose(np.asarray(a_bar_structured), a_bar, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(np.asarray(b_bar_structured), b_bar, rtol=1e-13, atol=1e-13)
    with pytest.raises(ValueError, match=r"solve pullback.*\(3,\).*\(4, 4\)"):
        pullback(np.ones(3))


def test_what_the_lane_does_not_take(monkeypatch, randn):
    calls = _lane_calls(monkeypatch)
    a, b = _system(randn, np.float64, 4, None)
    for args in [
        (a.astype(np.complex64), b.astype(np.complex64)),  # computed in complex128
        (a, b.astype(np.float32)),  # mixed dtypes: numpy's promotion
        (a.astype(int), b),
        (np.stack([a, a]), b),  # a stack
        (a, np.stack([b, b])[..., None]),  # stacked right-hand sides
    ]:
        x, pullback = rrule(np.linalg.solve, *args)
        np.testing.assert_allclose(x, np.linalg.solve(*args), rtol=1e-5)
        pullback(np.ones(x.shape))
    assert not any(calls)
    check_rrule(np.linalg.solve, a.astype(np.complex64), b.astype(np.complex64))


def test_singular_and_nan(randn):
    with pytest.raises(np.linalg.LinAlgError, match=r"np.linalg.solve.*singular.*\(3, 3\)"):
        rrule(np.linalg.solve, np.ones((3, 3)), np.ones(3))
    with pytest.raises(np.linalg.LinAlgError, match=r"np.linalg.solve.*singular"):
        frule((NoTangent(), np.eye(3), np.ones(3)), np.linalg.solve, np.ones((3, 3)), np.ones(3))
    a = np.eye(3)
    a[2, 0] = np.nan
    x, pullback = rrule(np.linalg.solve, a, np.ones(3))
    assert np.isnan(x).any()
    assert np.isnan(pullback(np.ones(3))[1]).any()


@pytest.mark.parametrize("k", [None, 3, 5])
def test_larger_matrix_right_hand_sides_solve_by_rows(monkeypatch, randn, dtype, k):
    """Above ``SOLVE_GETRS_MAX_N`` (lowered here) a C-ordered matrix right-hand side is solved
    by rows (``kernels._blas.lu_solve_rows``), in the lane and in the general rule alike: the
    same bits from both, C order as numpy's, correct against finite differences."""
    monkeypatch.setattr(crossovers, "SOLVE_GETRS_MAX_N", {"f": 2, "c": 2})
    calls = []
    original = _systems.lu_solve_rows
    monkeypatch.setattr(_systems, "lu_solve_rows", lambda *a: calls.append(1) or original(*a))
    a, b = _system(randn, dtype, 4, k)
    x, pullback = rrule(np.linalg.solve, a, b)
    x_bar = randn(dtype, *x.shape)
    _, a_bar, b_bar = pullback(x_bar)
    assert len(calls) == (0 if k is None else 2)
    if k is not None:
        assert x.flags.c_contiguous
        assert b_bar.flags.c_contiguous
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=tol, atol=tol)
    y, general = _general(monkeypatch, a, b)
    np.testing.assert_array_equal(x, y)
    for got, want in zip((a_bar, b_bar), general(x_bar)[1:], strict=True):
        np.testing.assert_array_equal(got, want)
    a_dot, b_dot = randn(dtype, 4, 4), randn(dtype, *b.shape)
    _, x_dot = frule((NoTangent(), a_dot, b_dot), np.linalg.solve, a, b)
    np.testing.assert_allclose(
        x_dot, np.linalg.solve(a, b_dot - a_dot @ np.linalg.solve(a, b)), rtol=tol, atol=tol
    )
    if dtype == np.float64:
        check_rrule(np.linalg.solve, a, b)
        check_frule(np.linalg.solve, a, b)
