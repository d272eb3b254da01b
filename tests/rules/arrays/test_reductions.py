"""sum, mean, prod, max/amax, min/amin, var, std, average: axes, keepdims, dtypes, degenerate points."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rules  # noqa: F401  (registers the rules)
from rules import frule, rrule
from rules.testing import check_frule, check_rrule
from tangents import NoTangent

SMOOTH = [np.sum, np.mean, np.prod, np.var, np.std, np.average]
EXTREMA = [np.max, np.amax, np.min, np.amin]
AXES = [
    {},
    {"axis": 1},
    {"axis": 0, "keepdims": True},
    {"axis": (0, -1)},
    {"axis": (0, 2), "keepdims": True},
]
DTYPES = [np.float64, np.float32, np.complex128]


def values(rng, dtype, shape=(2, 3, 2)):
    """Distinct entries (no ties for max/min), away from 0."""
    x = (rng.permutation(np.prod(shape)).reshape(shape) + 1.0) / 4
    x = x * rng.choice([-1, 1], shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.uniform(0.5, 1, shape)
    return x.astype(dtype)


@pytest.mark.parametrize("options", AXES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", SMOOTH, ids=lambda f: f.__name__)
def test_smooth_reductions(rng, f, dtype, options):
    x = values(rng, dtype)
    check_rrule(f, x, **options)
    check_frule(f, x, **options)


@pytest.mark.parametrize("options", AXES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)  # complex numbers compare lexicographically
@pytest.mark.parametrize("f", EXTREMA, ids=lambda f: f.__name__)
def test_extrema(rng, f, dtype, options):
    x = values(rng, dtype)
    check_rrule(f, x, **options)
    check_frule(f, x, **options)


@pytest.mark.parametrize("f", [np.sum, np.mean, np.prod, np.max, np.var, np.std, np.average])
def test_positional_axis_gets_no_tangent(rng, f):
    x = values(rng, np.float64)
    check_rrule(f, x, 1)
    check_frule(f, x, 1)
    _, pullback = rrule(f, x, 1)
    assert pullback(np.ones((2, 2)))[2] is NoTangent()


def test_integer_input_gets_a_float64_cotangent():
    n = np.arange(1, 7).reshape(2, 3)
    for f in (np.sum, np.mean, np.prod, np.max, np.var):
        check_rrule(f, n, axis=0)
        _, pullback = rrule(f, n, axis=0)
        assert pullback(np.ones(3))[1].dtype == np.float64


def test_python_scalar_input():
    check_rrule(np.sum, 2.5)
    assert isinstance(rrule(np.sum, 2.5)[1](1.0)[1], float)


# --- prod with zeros ------------------------------------------------------------------------------


@pytest.mark.parametrize("zeros", [[(0, 1)], [(0, 1), (1, 2)], [(0, 0), (0, 2)]], ids=str)
@pytest.mark.parametrize("options", [{}, {"axis": 1}, {"axis": 0, "keepdims": True}], ids=str)
def test_prod_with_zeros(rng, zeros, options):
    x = values(rng, np.float64, (2, 3))
    for index in zeros:
        x[index] = 0.0
    check_rrule(np.prod, x, **options)  # prod is a polynomial: finite differences are exact
    check_frule(np.prod, x, **options)


def test_prod_exclusive_products_without_division():
    x = np.array([2.0, 0.0, 3.0, 4.0])
    _, pullback = rrule(np.prod, x)
    np.testing.assert_array_equal(pullback(1.0)[1], [0.0, 24.0, 0.0, 0.0])
    _, pullback = rrule(np.prod, np.array([0.0, 5.0, 0.0]))
    np.testing.assert_array_equal(pullback(1.0)[1], [0.0, 0.0, 0.0])


def test_prod_with_initial(rng):
    x = values(rng, np.float64, (2, 3))
    check_rrule(np.prod, x, axis=1, initial=2.5)
    check_frule(np.prod, x, axis=1, initial=2.5)


# --- ties and NaN for max/min ---------------------------------------------------------------------


@pytest.mark.parametrize("f", EXTREMA, ids=lambda f: f.__name__)
def test_ties_share_the_cotangent_evenly(f):
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    if f in (np.min, np.amin):
        x = -x
    _, pullback = rrule(f, x, axis=1)
    _, x_bar = pullback(np.array([6.0, 6.0]))
    np.testing.assert_array_equal(x_bar, [[0.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    x_dot = np.array([[5.0, 1.0, 2.0], [3.0, 6.0, 9.0]])
    _, y_dot = frule((NoTangent(), x_dot), f, x, axis=1)
    np.testing.assert_array_equal(y_dot, [1.5, 6.0])  # the mean of the tied tangents


def test_max_of_all_entries_with_a_tie():
    x = np.array([[4.0, 1.0], [4.0, 4.0]])
    _, pullback = rrule(np.max, x)
    np.testing.assert_allclose(pullback(3.0)[1], [[1.0, 0.0], [1.0, 1.0]])


def test_max_with_nan_selects_the_nan():
    x = np.array([1.0, np.nan, 3.0])
    _, pullback = rrule(np.max, x)
    np.testing.assert_array_equal(pullback(1.0)[1], [0.0, 1.0, 0.0])


def test_max_below_initial_selects_nothing():
    x = np.array([1.0, 2.0])
    y, pullback = rrule(np.max, x, initial=5.0)
    assert y == 5.0
    np.testing.assert_array_equal(pullback(1.0)[1], [0.0, 0.0])


# --- var and std ----------------------------------------------------------------------------------


@pytest.mark.parametrize("f", [np.var, np.std])
def test_ddof_and_correction(rng, f):
    x = values(rng, np.float64, (2, 3))
    check_rrule(f, x, axis=1, ddof=1)
    check_frule(f, x, axis=1, ddof=1)
    check_rrule(f, x, correction=1)
    check_rrule(f, x, None, None, None, 1)  # ddof positional


def test_var_with_a_given_mean(rng):
    x = values(rng, np.float64, (2, 3))
    mean = np.mean(x, axis=1, keepdims=True)
    check_rrule(np.var, x, axis=1, mean=mean)


def test_std_of_constant_data_is_zero_not_nan():
    x = np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]])
    _, pullback = rrule(np.std, x, axis=1)
    _, x_bar = pullback(np.ones(2))
    np.testing.assert_array_equal(x_bar[0], 0.0)
    assert np.all(np.isfinite(x_bar))
    _, y_dot = frule((NoTangent(), np.ones((2, 3))), np.std, x, axis=1)
    assert y_dot[0] == 0.0


# --- average --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_average_with_positional_weights(rng, dtype):
    x = values(rng, dtype, (2, 3))
    w_row = np.abs(values(rng, dtype, (3,))) + 0.5
    check_rrule(np.average, x, 1, w_row)  # 1-D weights along the axis
    check_frule(np.average, x, 1, w_row)
    check_rrule(np.average, x, None, np.abs(values(rng, dtype, (2, 3))) + 0.5)
    check_rrule(np.average, x, 0, np.abs(values(rng, dtype, (2,))) + 0.5, keepdims=True)


def test_average_weights_by_keyword_are_constants(rng):
    x = values(rng, np.float64, (2, 3))
    w = np.array([1.0, 2.0, 3.0])
    check_rrule(np.average, x, axis=1, weights=w)
    check_frule(np.average, x, axis=1, weights=w)
    assert len(rrule(np.average, x, axis=1, weights=w)[1](np.ones(2))) == 2


def test_average_returned_is_refused(rng):
    with pytest.raises(ValueError, match="returned"):
        rrule(np.average, np.ones(3), returned=True)


@pytest.mark.parametrize("f", [np.sum, np.max, np.var])
def test_out_and_where_are_refused(f):
    x = np.ones(3)
    with pytest.raises(ValueError, match="out"):
        rrule(f, x, out=np.empty(()))
    with pytest.raises(ValueError, match="where"):
        rrule(f, x, where=np.array([True, False, True]))


@pytest.mark.parametrize("f", [np.sum, np.prod, np.max, np.var, np.average])
def test_a_user_tangent_type_is_refused_by_name(rng, user_tangent, f):
    x = values(rng, np.float64, (2, 3))
    _, pullback = rrule(f, x, axis=1)
    with pytest.raises(TypeError, match=rf"np\.{f.__name__}'s pullback"):
        pullback(user_tangent(np.ones(2)))
    with pytest.raises(TypeError, match=rf"np\.{f.__name__}'s frule"):
        frule((NoTangent(), user_tangent(np.ones((2, 3)))), f, x, axis=1)


@settings(max_examples=40, deadline=None)
@given(
    axes=st.sets(st.integers(0, 2), max_size=3),
    keepdims=st.booleans(),
    f=st.sampled_from([np.sum, np.mean, np.prod, np.max, np.var]),
)
def test_pullback_is_the_adjoint_of_the_pushforward_for_any_axes(axes, keepdims, f):
    rng = np.random.default_rng(len(axes))
    x = values(rng, np.float64)
    axis = tuple(sorted(axes))
    y, pullback = rrule(f, x, axis=axis, keepdims=keepdims)
    x_dot, y_bar = rng.standard_normal(x.shape), rng.standard_normal(np.shape(y))
    _, y_dot = frule((NoTangent(), x_dot), f, x, axis=axis, keepdims=keepdims)
    x_bar = pullback(y_bar)[1]
    np.testing.assert_allclose(np.vdot(y_bar, y_dot), np.vdot(x_bar, x_dot))


@pytest.mark.parametrize("f", [np.sum, np.mean, np.prod, np.max])
def test_a_cotangent_of_the_wrong_shape_is_refused_by_name(f):
    _, pullback = rrule(f, np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match=rf"np.{f.__name__} pullback.*\(3,\).*expected \(\)"):
        pullback(np.ones(3))
    _, pullback = rrule(f, np.ones((2, 3)), axis=0)
    with pytest.raises(ValueError, match=r"pullback.*\(2, 3\).*expected \(3,\)"):
        pullback(np.ones((2, 3)))
