"""maximum, minimum, fmax, fmin, clip, where: selection weights, ties split evenly, NaN."""

import numpy as np
import pytest

import rules  # noqa: F401  (registers the rules)
from rules import frule, rrule
from rules.testing import check_frule, check_rrule
from tangents import NoTangent

SELECTIONS = [np.maximum, np.minimum, np.fmax, np.fmin]


def distinct(rng, shape, dtype=np.float64):
    """Entries at least 0.1 apart, so that no finite-difference step crosses a tie."""
    values = rng.permutation(np.arange(np.prod(shape), dtype=float)).reshape(shape) / 5
    if np.issubdtype(dtype, np.complexfloating):
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("f", SELECTIONS, ids=lambda f: f.__name__)
def test_selections(rng, f, dtype):
    both = distinct(rng, (2, 2, 3), dtype)
    a, b = both[0], both[1]
    check_rrule(f, a, b)
    check_frule(f, a, b)
    check_rrule(f, a, b[0])  # broadcasting (2, 3) with (3,)
    check_frule(f, a[:1], b)


@pytest.mark.parametrize("f", SELECTIONS, ids=lambda f: f.__name__)
def test_selection_with_a_python_scalar(rng, f):
    a = distinct(rng, (2, 3)) + 0.05
    check_rrule(f, a, 0.5)
    check_frule(f, 0.5, a)


@pytest.mark.parametrize("f", SELECTIONS, ids=lambda f: f.__name__)
def test_ties_split_evenly(f):
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([1.0, 0.0, 5.0])
    _, pullback = rrule(f, a, b)
    _, a_bar, b_bar = pullback(np.array([2.0, 2.0, 2.0]))
    assert a_bar[0] == b_bar[0] == 1.0
    assert a_bar[1:].sum() + b_bar[1:].sum() == 4.0
    _, y_dot = frule((NoTangent(), np.array([1.0, 0, 0]), np.array([3.0, 0, 0])), f, a, b)
    assert y_dot[0] == 2.0  # the mean of the tied tangents


def test_nan_is_selected_by_maximum_not_by_fmax():
    a = np.array([np.nan, 1.0])
    b = np.array([1.0, np.nan])
    _, pullback = rrule(np.maximum, a, b)
    _, a_bar, b_bar = pullback(np.ones(2))
    np.testing.assert_array_equal(a_bar, [1.0, 0.0])
    np.testing.assert_array_equal(b_bar, [0.0, 1.0])
    _, pullback = rrule(np.fmax, a, b)
    _, a_bar, b_bar = pullback(np.ones(2))
    np.testing.assert_array_equal(a_bar, [0.0, 1.0])
    np.testing.assert_array_equal(b_bar, [1.0, 0.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_clip(rng, dtype):
    a = distinct(rng, (2, 3), dtype) - 0.5  # entries -0.5, -0.3, ..., 0.5
    lo = np.array([-0.2, 0.0, 0.2], dtype)  # each bound 0.1 from every entry
    hi = np.full(3, 0.4, dtype)
    check_rrule(np.clip, a, lo, hi)
    check_frule(np.clip, a, lo, hi)
    check_rrule(np.clip, a, -0.2, 0.4)
    check_rrule(np.clip, a, None, 0.4)
    check_frule(np.clip, a, -0.2, None)
    check_rrule(np.clip, a, 0, 1)  # Python int bounds: constants


def test_clip_keyword_bounds_are_constants(rng):
    a = distinct(rng, (2, 3)) - 0.5
    check_rrule(np.clip, a, min=-0.2, max=0.4)
    check_frule(np.clip, a, min=-0.2)
    y, pullback = rrule(np.clip, a, min=-0.2, max=0.4)
    assert len(pullback(np.ones_like(y))) == 2
    # numpy's own keyword names a_min=/a_max= bound the result too (HIPS autograd's test_clip)
    check_rrule(np.clip, a, a_min=-0.2, a_max=0.4)
    check_frule(np.clip, a, -0.2, a_max=0.4)


def test_clip_at_a_bound_splits_between_the_input_and_the_bound():
    a = np.array([0.0, 0.5, 1.0])
    _, pullback = rrule(np.clip, a, np.zeros(3), np.ones(3))
    _, a_bar, lo_bar, hi_bar = pullback(np.ones(3))
    np.testing.assert_array_equal(a_bar, [0.5, 1.0, 0.5])
    np.testing.assert_array_equal(lo_bar, [0.5, 0.0, 0.0])
    np.testing.assert_array_equal(hi_bar, [0.0, 0.0, 0.5])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_where(rng, dtype):
    condition = np.array([[True, False, True], [False, False, True]])
    x = distinct(rng, (2, 3), dtype)
    y = distinct(rng, (3,), dtype)
    check_rrule(np.where, condition, x, y)
    check_frule(np.where, condition, x, y)
    check_rrule(np.where, condition, x, 0.5)
    check_rrule(np.where, condition[0], 2.0, y)


def test_where_with_one_argument_is_not_differentiable():
    _, pullback = rrule(np.where, np.array([True, False]))
    assert pullback(np.ones(1)) == (NoTangent(), NoTangent())
