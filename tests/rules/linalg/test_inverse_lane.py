"""``np.linalg.inv``'s forward lane: one plain real matrix and a plain tangent, no rule plumbing.

Each case runs ``frule`` twice, on the lane and with the lane switched off (the general rule), and
compares primal and tangent bit for bit; a spy checks that the lane took the call, or declined it.
The tangent is also checked against central differences of ``np.linalg.inv`` itself.
"""

import numpy as np
import pytest

import rules.linalg.inverse as rules_inverse
from rules import frule
from tangents import NoTangent, ZeroTangent

REAL = [np.float64, np.float32]


@pytest.fixture
def lane(monkeypatch):
    """The lane's answers so far: True where it returned a result, False where it declined."""
    answers = []
    original = rules_inverse.inv_frule_lane

    def spy(tangents, *args, **kwargs):
        result = original(tangents, *args, **kwargs)
        answers.append(result is not None)
        return result

    monkeypatch.setitem(frule._lanes, np.linalg.inv, spy)
    return answers


def _general(monkeypatch, tangents, a):
    with monkeypatch.context() as patch:
        patch.delitem(frule._lanes, np.linalg.inv)
        return frule(tangents, np.linalg.inv, a)


def _matrix(rng, dtype, n):
    return (rng.standard_normal((n, n)) + 2 * np.sqrt(n) * np.eye(n)).astype(dtype)


def _same(ours, reference):
    for x, y in zip(ours, reference, strict=True):
        assert type(x) is type(y) is np.ndarray
        assert x.dtype == y.dtype
        assert x.shape == y.shape
        assert x.flags.c_contiguous
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("n", [1, 2, 4, 7, 32])
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_the_lane_matches_the_rule_bit_for_bit(monkeypatch, lane, rng, dtype, n, layout):
    a = _matrix(rng, dtype, n)
    if layout == "F":
        a = np.asfortranarray(a)
    elif layout == "strided":
        a = np.repeat(a, 2, axis=1)[:, ::2]
    a_dot = rng.standard_normal((n, n)).astype(dtype)
    ours = frule((NoTangent(), a_dot), np.linalg.inv, a)
    assert lane == [True]
    reference = _general(monkeypatch, (NoTangent(), a_dot), a)
    assert lane == [True]  # the general rule ran without the lane
    _same(ours, reference)
    a_copy = a.copy()
    frule((NoTangent(), a_dot), np.linalg.inv, a)
    np.testing.assert_array_equal(a, a_copy)  # the input is never written


def test_the_lane_against_finite_differences(lane, rng):
    # d/dt inv(A + t A_dot) at 0, by central differences of np.linalg.inv itself
    a, a_dot = _matrix(rng, np.float64, 4), rng.standard_normal((4, 4))
    y, y_dot = frule((NoTangent(), a_dot), np.linalg.inv, a)
    assert lane == [True]
    h = 1e-6
    fd = (np.linalg.inv(a + h * a_dot) - np.linalg.inv(a - h * a_dot)) / (2 * h)
    np.testing.assert_allclose(y, np.linalg.inv(a), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(y_dot, fd, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("dtype", REAL)
def test_singular_raises_naming_inv_and_nan_stays_nan(monkeypatch, lane, dtype):
    singular = np.array([[1.0, 2.0], [2.0, 4.0]], dtype)
    with pytest.raises(np.linalg.LinAlgError, match=r"np\.linalg\.inv"):
        frule((NoTangent(), np.ones_like(singular)), np.linalg.inv, singular)
    with pytest.raises(np.linalg.LinAlgError, match=r"np\.linalg\.inv"):
        _general(monkeypatch, (NoTangent(), np.ones_like(singular)), singular)
    bad = np.eye(3, dtype=dtype)
    bad[1, 2] = np.nan
    with np.errstate(invalid="ignore"):
        ours = frule((NoTangent(), np.ones_like(bad)), np.linalg.inv, bad)
        reference = _general(monkeypatch, (NoTangent(), np.ones_like(bad)), bad)
    assert lane[0] is True
    for x, y in zip(ours, reference, strict=True):
        np.testing.assert_array_equal(np.isnan(x), np.isnan(y))
        assert np.isnan(x).any()


def test_what_the_lane_declines(monkeypatch, lane, rng):
    a = _matrix(rng, np.float64, 3)
    cases = [
        ((None, rng.standard_normal((3, 3))), a),  # no f_dot: the registry's checks
        ((NoTangent(), ZeroTangent()), a),  # a zero tangent
        ((NoTangent(), rng.standard_normal((3, 3)).astype(np.float32)), a),  # another dtype
        ((NoTangent(), rng.standard_normal((3, 3)) + 0j), a + 0j),  # complex
        ((NoTangent(), rng.standard_normal((2, 3, 3))), np.stack([a, a])),  # a stack
        ((NoTangent(), np.zeros((0, 0))), np.zeros((0, 0))),  # nothing to factor
    ]
    for tangents, primal in cases:
        lane.clear()
        ours = frule(tangents, np.linalg.inv, primal)
        assert lane == [False]
        reference = _general(monkeypatch, tangents, primal)
        np.testing.assert_array_equal(ours[0], reference[0])
        if isinstance(reference[1], np.ndarray):
            np.testing.assert_array_equal(ours[1], reference[1])
        else:
            assert type(ours[1]) is type(reference[1])
