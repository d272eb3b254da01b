"""Elementwise ufunc rules: every row of the table on float64, float32 and (where numpy defines
it) complex128, broadcasting, Python scalars, the operator functions and degenerate points."""

import operator
import re

import numpy as np
import pytest

import rules  # noqa: F401  (registers the rules)
from rules import frule, rrule
from rules.testing import check_frule, check_rrule
from tangents import NoTangent, ZeroTangent

# function: the interval its real test inputs are drawn from (smooth there)
UNARY = {
    np.negative: (-2, 2),
    np.positive: (-2, 2),
    np.square: (-2, 2),
    np.sqrt: (0.5, 2),
    np.cbrt: (0.5, 2),
    np.reciprocal: (0.5, 2),
    np.exp: (-1, 1),
    np.exp2: (-1, 1),
    np.expm1: (-1, 1),
    np.log: (0.5, 2),
    np.log2: (0.5, 2),
    np.log10: (0.5, 2),
    np.log1p: (-0.5, 1),
    np.sin: (-2, 2),
    np.cos: (-2, 2),
    np.tan: (-1, 1),
    np.arcsin: (-0.8, 0.8),
    np.arccos: (-0.8, 0.8),
    np.arctan: (-2, 2),
    np.sinh: (-1, 1),
    np.cosh: (-1, 1),
    np.tanh: (-1, 1),
    np.arcsinh: (-2, 2),
    np.arccosh: (1.5, 3),
    np.arctanh: (-0.8, 0.8),
    np.deg2rad: (-90, 90),
    np.rad2deg: (-2, 2),
}

BINARY = {
    np.add: ((-2, 2), (-2, 2)),
    np.subtract: ((-2, 2), (-2, 2)),
    np.multiply: ((-2, 2), (-2, 2)),
    np.divide: ((-2, 2), (0.5, 2)),
    np.power: ((0.5, 2), (-1.5, 2.5)),
    np.float_power: ((0.5, 2), (-1.5, 2.5)),
    np.logaddexp: ((-2, 2), (-2, 2)),
    np.logaddexp2: ((-2, 2), (-2, 2)),
    np.arctan2: ((0.5, 2), (-2, 2)),
    np.hypot: ((-2, 2), (0.5, 2)),
}

OPERATORS = {
    operator.add: np.add,
    operator.sub: np.subtract,
    operator.mul: np.multiply,
    operator.truediv: np.divide,
    operator.pow: np.power,
}


def complex_defined(f):
    return any(t.endswith("->D") for t in f.types)


def draw(rng, interval, shape, dtype):
    x = rng.uniform(*interval, size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        # A small imaginary part keeps clear of the branch cuts on the real axis.
        x = x + 1j * rng.uniform(0.1, 0.3, size=shape)
    return np.asarray(x).astype(dtype)


def dtypes_of(f):
    return [np.float64, np.float32] + ([np.complex128] if complex_defined(f) else [])


@pytest.mark.parametrize(("f", "dtype"), [(f, d) for f in UNARY for d in dtypes_of(f)], ids=str)
def test_unary(rng, f, dtype):
    x = draw(rng, UNARY[f], (2, 3), dtype)
    check_rrule(f, x)
    check_frule(f, x)


@pytest.mark.parametrize(("f", "dtype"), [(f, d) for f in BINARY for d in dtypes_of(f)], ids=str)
def test_binary_with_broadcasting(rng, f, dtype):
    a_interval, b_interval = BINARY[f]
    a = draw(rng, a_interval, (2, 3), dtype)
    b = draw(rng, b_interval, (3,), dtype)
    check_rrule(f, a, b)
    check_frule(f, a, b)
    check_rrule(f, a[:, :1], b)  # both inputs broadcast: (2, 1) with (3,)
    check_frule(f, a[:, :1], b)


@pytest.mark.parametrize("f", list(BINARY), ids=str)
def test_python_scalars_mixed_with_arrays(rng, f):
    a_interval, b_interval = BINARY[f]
    a = draw(rng, a_interval, (3,), np.float64)
    b = draw(rng, b_interval, (3,), np.float64)
    scalar_a, scalar_b = float(np.mean(a_interval)), float(np.mean(b_interval)) + 0.25
    check_rrule(f, a, scalar_b)
    check_rrule(f, scalar_a, b)
    check_frule(f, a, scalar_b)
    _, pullback = rrule(f, a, scalar_b)
    assert isinstance(pullback(np.ones(3))[2], float)


def test_float32_stays_float32_with_python_scalars(rng):
    x = rng.uniform(0.5, 2, 3).astype(np.float32)
    y, pullback = rrule(np.power, x, 2.5)
    assert y.dtype == np.float32
    _, x_bar, p_bar = pullback(np.ones(3, np.float32))
    assert x_bar.dtype == np.float32
    assert isinstance(p_bar, float)
    _, y_dot = frule((NoTangent(), np.ones(3, np.float32), 0.0), np.power, x, 2.5)
    assert y_dot.dtype == np.float32


def test_python_int_exponent_is_a_constant(rng):
    x = rng.uniform(0.5, 2, 3)
    check_rrule(np.power, x, 3)
    assert rrule(np.power, x, 3)[1](np.ones(3))[2] is NoTangent()
    check_rrule(np.add, x, 1)
    assert rrule(np.add, x, 1)[1](np.ones(3))[2] is NoTangent()


def test_integer_arrays_get_float64_cotangents(rng):
    n = np.array([1, 2, 3])
    x = rng.uniform(0.5, 2, 3)
    check_rrule(np.multiply, n, x)
    check_rrule(np.sin, n)
    _, pullback = rrule(np.power, x, n)
    _, _, n_bar = pullback(np.ones(3))
    assert n_bar.dtype == np.float64
    _, pullback = rrule(np.power, n, 2.5)
    np.testing.assert_allclose(pullback(np.ones(3))[1], 2.5 * n**1.5)


@pytest.mark.parametrize("op", list(OPERATORS), ids=str)
def test_operators_share_the_ufunc_rules(rng, op):
    a_interval, b_interval = BINARY[OPERATORS[op]]
    a = draw(rng, a_interval, (2, 3), np.float64)
    b = draw(rng, b_interval, (3,), np.float64)
    check_rrule(op, a, b)
    check_frule(op, a, b)
    check_rrule(op, a, float(np.mean(b_interval)))


@pytest.mark.parametrize("op", [operator.neg, operator.pos])
def test_unary_operators(rng, op):
    x = rng.standard_normal((2, 3))
    check_rrule(op, x)
    check_frule(op, x)
    check_rrule(op, x + 1j)


def test_operators_have_no_rule_for_non_numbers():
    assert rrule(operator.add, [1.0], [2.0]) is None
    assert frule((NoTangent(), (1.0,), (1.0,)), operator.add, (1.0,), (2.0,)) is None
    assert rrule(operator.mul, "ab", 2) is None


def test_sqrt_at_zero_is_infinite_without_warning():
    _, pullback = rrule(np.sqrt, np.array([0.0, 4.0]))
    _, x_bar = pullback(np.ones(2))  # filterwarnings=error: a warning would fail here
    np.testing.assert_array_equal(x_bar, [np.inf, 0.25])


def test_power_at_a_zero_base():
    x = np.array([0.0, 0.0, 2.0])
    p = np.array([2.0, 0.0, 3.0])
    _, pullback = rrule(np.power, x, p)
    _, x_bar, p_bar = pullback(np.ones(3))
    np.testing.assert_array_equal(x_bar, [0.0, 0.0, 12.0])
    np.testing.assert_allclose(p_bar, [0.0, 0.0, 8 * np.log(2.0)])


def test_power_of_a_negative_base_uses_log_abs():
    x = np.array([-2.0])
    _, pullback = rrule(np.power, x, np.array([2.0]))
    _, x_bar, p_bar = pullback(np.ones(1))
    np.testing.assert_allclose(x_bar, [-4.0])
    np.testing.assert_allclose(p_bar, [4 * np.log(2.0)])


@pytest.mark.parametrize("f", [np.hypot, np.arctan2])
def test_origin_gives_zero_partials(f):
    zero = np.zeros(2)
    _, pullback = rrule(f, zero, zero)
    _, a_bar, b_bar = pullback(np.ones(2))
    np.testing.assert_array_equal(a_bar, 0.0)
    np.testing.assert_array_equal(b_bar, 0.0)
    _, y_dot = frule((NoTangent(), np.ones(2), np.ones(2)), f, zero, zero)
    np.testing.assert_array_equal(y_dot, 0.0)


def test_out_is_refused(rng):
    x = rng.standard_normal(3)
    with pytest.raises(ValueError, match="out"):
        rrule(np.add, x, x, out=np.empty(3))


@pytest.mark.parametrize(
    ("f", "n_args"), [(np.add, 2), (np.subtract, 2), (np.negative, 1), (np.positive, 1)]
)
def test_linear_rules_take_a_user_tangent_type(rng, user_tangent, f, n_args):
    x = rng.standard_normal(3)
    _, pullback = rrule(f, *(x,) * n_args)
    y_bar = user_tangent(np.arange(3.0))
    for x_bar in pullback(y_bar)[1:]:
        assert isinstance(x_bar, user_tangent)  # the algebra path: never made an ndarray


def test_broadcasting_refuses_a_user_tangent_type_by_name(rng, user_tangent):
    # Summing over broadcast axes needs an array: a TypeError naming the rule, no conversion.
    _, pullback = rrule(np.subtract, rng.standard_normal((2, 3)), rng.standard_normal(3))
    with pytest.raises(TypeError, match=r"np\.subtract's pullback \(summing over broadcast"):
        pullback(user_tangent(np.ones((2, 3))))


def test_broadcasting_a_user_tangent_type_is_refused_by_name(rng, user_tangent):
    # Only the broadcast operand moves: its tangent would have to be broadcast, which needs an
    # array. A TypeError naming the rule, never a silent np.broadcast_to of the user's type.
    x, b = rng.standard_normal((2, 3)), rng.standard_normal(3)
    with pytest.raises(TypeError, match=r"np\.add's frule \(broadcasting a tangent\)"):
        frule((NoTangent(), ZeroTangent(), user_tangent(np.ones(3))), np.add, x, b)


@pytest.mark.parametrize(
    ("f", "n_args", "bad"),
    [
        (np.sin, 1, (2, 3)),  # summed away before: 2 cos(x)
        (np.exp, 1, (1,)),  # broadcast before
        (np.multiply, 2, (2, 3)),
        (np.add, 2, (2, 3)),
        (np.negative, 1, (5, 3)),
        (operator.mul, 2, (2, 3)),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_a_cotangent_of_the_wrong_shape_is_refused(f, n_args, bad):
    x = np.array([0.1, 0.2, 0.3])
    _, pullback = rrule(f, *(x,) * n_args)
    name = f"{'operator' if f is operator.mul else 'np'}.{f.__name__}"
    message = re.escape(f"{name} pullback: the cotangent has shape {bad}, expected (3,)")
    with pytest.raises(ValueError, match=message):
        pullback(np.ones(bad))
