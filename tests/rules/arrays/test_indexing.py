"""x[idx], take, take_along_axis, sort: basic slices, repeated integer indices, masks."""

import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rules  # noqa: F401  (registers the rules)
from rules import frule, rrule
from rules.testing import check_frule, check_rrule
from tangents import InplaceableThunk, NoTangent, add_inplace, unthunk

DTYPES = [np.float64, np.float32, np.complex128]


# Index arguments are given as Python ints, slices, lists and tuples, or bool arrays: the checker
# treats an integer *ndarray* argument as a real number to perturb (DESIGN.md section 3), which
# an index is not. Integer ndarray indices are checked directly below.
INDICES = [
    1,
    -1,
    (1, 2),
    np.s_[1:],
    np.s_[:, ::2],
    np.s_[..., 1],
    np.s_[None, 0, 1:3],
    [0, 2, 0],  # a repeated index
    ([1, 1, 0], [2, 2, 3]),  # a repeated entry
    (slice(None), [3, 0, 3, 3]),
    np.array([[True, False, True, True], [False, True, False, False], [True] * 4]),
    np.array([True, False, True]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index", INDICES, ids=str)
def test_getitem(rng, index, dtype, make_array):
    x = make_array((3, 4), dtype)
    check_rrule(operator.getitem, x, index)
    check_frule(operator.getitem, x, index)


def test_repeated_integer_indices_accumulate(rng, make_array):
    x = make_array((4,))
    index = np.array([0, 2, 0, 0])
    y, pullback = rrule(operator.getitem, x, index)
    _, x_bar, index_bar = pullback(np.array([1.0, 2.0, 3.0, 4.0]))
    assert index_bar is NoTangent()
    np.testing.assert_array_equal(unthunk(x_bar), [8.0, 0.0, 2.0, 0.0])
    # dot-product test with an integer-ndarray index
    x_dot = make_array((4,))
    _, y_dot = frule((NoTangent(), x_dot, NoTangent()), operator.getitem, x, index)
    y_bar = make_array(y.shape)
    _, x_bar, _ = pullback(y_bar)
    np.testing.assert_allclose(np.vdot(y_bar, y_dot), np.vdot(unthunk(x_bar), x_dot))


def test_getitem_cotangent_scatters_into_an_accumulator(rng, make_array):
    x = make_array((2, 3), np.float32)
    _, pullback = rrule(operator.getitem, x, ([0, 0], [1, 1]))
    _, x_bar, _ = pullback(np.array([1.0, 2.0], np.float32))
    assert isinstance(x_bar, InplaceableThunk)
    acc = np.ones((2, 3), np.float32)
    assert add_inplace(acc, x_bar) is acc  # written in place, without forming the dense value
    np.testing.assert_array_equal(acc, [[1, 4, 1], [1, 1, 1]])
    assert unthunk(x_bar).dtype == np.float32


def test_basic_index_scatters_with_plain_addition(rng, make_array):
    x = make_array((3, 4))
    _, pullback = rrule(operator.getitem, x, np.s_[1:, ::2])
    acc = np.zeros((3, 4))
    add_inplace(acc, pullback(np.ones((2, 2)))[1])
    np.testing.assert_array_equal(acc, [[0, 0, 0, 0], [1, 0, 1, 0], [1, 0, 1, 0]])


def test_integer_input_gets_float64_cotangent():
    x = np.arange(6).reshape(2, 3)
    check_rrule(operator.getitem, x, (0, [1, 1]))
    assert unthunk(rrule(operator.getitem, x, 0)[1](np.ones(3))[1]).dtype == np.float64


def test_getitem_of_other_containers_has_no_rule():
    assert rrule(operator.getitem, (1.0, 2.0), 0) is None
    assert rrule(operator.getitem, {"a": 1.0}, "a") is None
    assert frule((NoTangent(), (1.0,), NoTangent()), operator.getitem, [1.0], 0) is None


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("indices", "options"),
    [
        ([3, 0, 3], {}),
        ([[0, 2], [2, 2]], {"axis": 1}),
        (1, {"axis": 0}),
        ([-1, 5], {"axis": 1, "mode": "wrap"}),
        ([-1, 7, 1], {"axis": -1, "mode": "clip"}),
        ([7, -3], {"mode": "wrap"}),
    ],
    ids=str,
)
def test_take(rng, indices, options, dtype, make_array):
    a = make_array((2, 4), dtype)
    check_rrule(np.take, a, indices, **options)
    check_frule(np.take, a, indices, **options)


def test_take_accumulates_repeats(rng, make_array):
    a = make_array((2, 3))
    _, pullback = rrule(np.take, a, np.array([2, 2, 5]))
    _, a_bar, indices_bar = pullback(np.array([1.0, 1.0, 3.0]))
    assert indices_bar is NoTangent()
    np.testing.assert_array_equal(unthunk(a_bar), [[0, 0, 2], [0, 0, 3]])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("indices", "axis"),
    [
        ([[0, 0, 2], [1, 2, 1]], 1),
        ([[1, 0, 1]], 0),
        ([[2], [0]], -1),
        ([5, 0, 5, 1], None),
    ],
    ids=str,
)
def test_take_along_axis(rng, indices, axis, dtype, make_array):
    arr = make_array((2, 3), dtype)
    # By keyword: the checker would perturb an integer-ndarray positional argument.
    check_rrule(np.take_along_axis, arr, indices=np.array(indices), axis=axis)
    check_frule(np.take_along_axis, arr, indices=np.array(indices), axis=axis)


def test_take_along_axis_positional_indices(rng, make_array):
    arr = make_array((2, 3))
    indices = np.array([[0, 0], [2, 2]])
    _, pullback = rrule(np.take_along_axis, arr, indices, 1)
    _, arr_bar, indices_bar, _ = pullback(np.ones((2, 2)))
    assert indices_bar is NoTangent()
    np.testing.assert_array_equal(unthunk(arr_bar), [[2, 0, 0], [0, 0, 2]])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort(rng, dtype, axis, make_array):
    a = make_array((3, 4), dtype)
    check_rrule(np.sort, a, axis=axis)
    check_frule(np.sort, a, axis=axis)


def test_sort_with_ties_assigns_in_original_order():
    a = np.array([2.0, 1.0, 2.0])
    _, pullback = rrule(np.sort, a)
    np.testing.assert_array_equal(pullback(np.array([10.0, 20.0, 30.0]))[1], [20.0, 10.0, 30.0])


def test_a_user_tangent_type_is_refused_by_name(rng, user_tangent, make_array):
    _, pullback = rrule(operator.getitem, make_array((3,)), 1)
    with pytest.raises(TypeError, match="getitem's pullback"):
        pullback(user_tangent(np.ones(())))


@st.composite
def array_and_integer_index(draw):
    """A (2, n) array and an integer index into its last axis, often with repeats."""
    n = draw(st.integers(1, 4))
    picks = draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=6))
    seed = draw(st.integers(0, 2**32 - 1))
    return np.random.default_rng(seed).standard_normal((2, n)), np.array(picks)


@settings(max_examples=40, deadline=None)
@given(array_and_integer_index())
def test_getitem_pullback_is_the_adjoint_of_indexing(case):
    # <y_bar, x_dot[idx]> == <x_bar, x_dot>: the scatter is the transpose of the gather,
    # repeated and negative indices included.
    x, index = case
    rng = np.random.default_rng(index.size)
    y, pullback = rrule(operator.getitem, x, (slice(None), index))
    x_dot, y_bar = rng.standard_normal(x.shape), rng.standard_normal(y.shape)
    x_bar = unthunk(pullback(y_bar)[1])
    np.testing.assert_allclose(np.vdot(y_bar, x_dot[:, index]), np.vdot(x_bar, x_dot))
