"""concatenate, stack, hstack, vstack, split: tuple cotangents, zeros, lists and ndarrays."""

import numpy as np
import pytest

import rules  # noqa: F401  (registers the rules)
from rules import frule, rrule
from rules.testing import check_frule, check_rrule
from tangents import NoTangent, Tangent, ZeroTangent

DTYPES = [np.float64, np.float32, np.complex128]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("shapes", "options"),
    [
        ([(2, 3), (1, 3)], {}),
        ([(2, 3), (2, 1), (2, 2)], {"axis": 1}),
        ([(2, 3), (2, 2)], {"axis": -1}),
        ([(2, 3), (4,)], {"axis": None}),
    ],
    ids=str,
)
def test_concatenate(rng, shapes, options, dtype, make_array):
    arrays = tuple(make_array(s, dtype) for s in shapes)
    check_rrule(np.concatenate, arrays, **options)
    check_frule(np.concatenate, arrays, **options)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_stack(rng, axis, dtype, make_array):
    arrays = tuple(make_array((2, 3), dtype) for _ in range(3))
    check_rrule(np.stack, arrays, axis)
    check_frule(np.stack, arrays, axis=axis)


STACKS = [
    (np.hstack, [(3,), (2,)]),
    (np.hstack, [(2, 3), (2, 1)]),
    (np.hstack, [(), ()]),
    (np.vstack, [(3,), (3,)]),
    (np.vstack, [(3,), (2, 3)]),
    (np.vstack, [(), ()]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("f", "shapes"), STACKS, ids=lambda v: v.__name__ if callable(v) else str(v)
)
def test_hstack_vstack(rng, f, shapes, dtype, make_array):
    arrays = tuple(make_array(s, dtype) for s in shapes)
    check_rrule(f, arrays)
    check_frule(f, arrays)


def test_mixed_dtypes_project_each_piece(rng, make_array):
    arrays = (make_array((2,), np.float32), np.arange(3))
    y, pullback = rrule(np.concatenate, arrays)
    assert y.dtype == np.float64
    (_, t) = pullback(np.ones(5))
    assert t[0].dtype == np.float32
    assert t[1].dtype == np.float64


def test_list_argument_gets_a_tuple_tangent(rng, make_array):
    a, b = make_array((2,)), make_array((3,))
    _, pullback = rrule(np.concatenate, [a, b])
    _, t = pullback(np.arange(5.0))
    assert isinstance(t, Tangent)
    assert t.primal_type is tuple
    np.testing.assert_array_equal(t[1], [2.0, 3.0, 4.0])
    _, y_dot = frule((NoTangent(), [np.ones(2), np.ones(3)]), np.concatenate, [a, b])
    np.testing.assert_array_equal(y_dot, np.ones(5))


def test_ndarray_argument_gets_an_ndarray_cotangent(rng, make_array):
    rows = make_array((3, 2))
    check_rrule(np.stack, rows, 1)
    check_rrule(np.concatenate, rows)
    _, pullback = rrule(np.concatenate, rows)
    assert pullback(np.ones(6))[1].shape == (3, 2)


def test_partly_zero_tangent_of_the_sequence(rng, make_array):
    arrays = (make_array((2,)), make_array((3,)))
    tangents = (NoTangent(), Tangent(tuple, ZeroTangent(), np.ones(3)))
    _, y_dot = frule(tangents, np.concatenate, arrays)
    np.testing.assert_array_equal(y_dot, [0, 0, 1, 1, 1])


# np.split returns a list, which the checker sees as having no tangent space; the checks run
# through a tuple-returning wrapper whose rules are np.split's own.
def split_tuple(x, indices_or_sections, axis=0):
    return tuple(np.split(x, indices_or_sections, axis))


@pytest.fixture
def split_tuple_rules(registered, tables):
    rrule_table, frule_table = tables

    @registered(rrule_table, split_tuple)
    def split_tuple_rrule(x, indices_or_sections, axis=0):
        ys, pullback = rrule(np.split, x, indices_or_sections, axis)
        return tuple(ys), pullback

    @registered(frule_table, split_tuple)
    def split_tuple_frule(tangents, x, indices_or_sections, axis=0):
        ys, ys_dot = frule(tangents, np.split, x, indices_or_sections, axis)
        return tuple(ys), ys_dot


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("sections", "axis"), [(2, 0), ([1, 3], 1), (3, -1)], ids=str)
def test_split(rng, split_tuple_rules, sections, axis, dtype, make_array):
    x = make_array((4, 6), dtype)
    check_rrule(split_tuple, x, sections, axis)
    check_frule(split_tuple, x, sections, axis)


def test_split_pullback_takes_lists_and_zeros(rng, make_array):
    x = make_array((4,))
    ys, pullback = rrule(np.split, x, 2)
    assert isinstance(ys, list)
    _, x_bar, _ = pullback([np.ones(2), ZeroTangent()])
    np.testing.assert_array_equal(x_bar, [1, 1, 0, 0])
    _, x_bar, _ = pullback(Tangent(tuple, ZeroTangent(), np.ones(2)))
    np.testing.assert_array_equal(x_bar, [0, 0, 1, 1])


def test_array_split(rng, make_array):
    x = make_array((5,))
    _, pullback = rrule(np.array_split, x, 2)
    _, x_bar, _ = pullback([np.ones(3), 2 * np.ones(2)])
    np.testing.assert_array_equal(x_bar, [1, 1, 1, 2, 2])
    _, ys_dot = frule((NoTangent(), np.arange(5.0), NoTangent()), np.array_split, x, 2)
    np.testing.assert_array_equal(ys_dot[1], [3.0, 4.0])
