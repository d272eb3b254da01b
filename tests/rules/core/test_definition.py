"""scalar_rule: rrule and frule from partial derivatives, broadcasting, complex, projection."""

import numpy as np
import pytest

from rules import frule, rrule, scalar_rule
from rules.testing import check_frule, check_rrule
from tangents import Diagonal, NoTangent, NotImplementedTangent, Tangent, Thunk, ZeroTangent


def sin(x):
    return np.sin(x)


def mul(a, b):
    return np.multiply(a, b)


def power(x, p):
    return np.power(x, p)


@pytest.fixture(autouse=True)
def scalar_rules():
    scalar_rule(sin, lambda x, y: np.cos(x))
    scalar_rule(mul, lambda a, b, y: (b, a))
    scalar_rule(power, lambda x, p, y: (p * np.power(x, p - 1), np.log(x) * y))
    yield
    for f in (sin, mul, power):
        rrule.unregister(f)
        frule.unregister(f)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_unary(rng, dtype):
    x = (rng.standard_normal((3, 2)) + (1j if dtype == np.complex128 else 0)).astype(dtype)
    check_rrule(sin, x)
    check_frule(sin, x)


@pytest.mark.parametrize(
    ("shape_a", "shape_b"), [((3, 2), (2,)), ((1, 2), (3, 1)), ((), (2, 2)), ((2, 1, 3), (4, 1))]
)
def test_broadcasting_sums_back_to_each_input(rng, shape_a, shape_b):
    a = np.asarray(rng.standard_normal(shape_a))
    b = np.asarray(rng.standard_normal(shape_b))
    check_rrule(mul, a, b)
    check_frule(mul, a, b)
    _, pullback = rrule(mul, a, b)
    _, a_bar, b_bar = pullback(np.ones(np.broadcast_shapes(shape_a, shape_b)))
    assert np.shape(a_bar) == shape_a
    assert np.shape(b_bar) == shape_b


def test_python_scalars_mixed_with_arrays(rng):
    x = rng.standard_normal(3)
    check_rrule(mul, x, 2.5)
    check_rrule(mul, 2.5, x)
    _, pullback = rrule(mul, x, 2.5)
    assert isinstance(pullback(np.ones(3))[2], float)


def test_python_int_arguments_are_constants(rng):
    x = rng.uniform(0.5, 2.0, 3)
    _, pullback = rrule(power, x, 3)
    assert pullback(np.ones(3))[2] is NoTangent()
    check_rrule(power, x, 3)
    check_rrule(power, x, np.array([1.5, 2.0, 2.5]))  # a float exponent is differentiated


def test_complex_convention_conjugates_the_partial():
    z = np.array([1.0 + 1.0j])
    _, pullback = rrule(mul, z, z)
    _, a_bar, _ = pullback(np.ones(1))
    np.testing.assert_allclose(a_bar, np.conj(z))


def test_dtype_preserved(rng):
    x = rng.standard_normal(4).astype(np.float32)
    _, pullback = rrule(mul, x, 3.0)
    assert pullback(np.ones(4))[1].dtype == np.float32
    _, x_dot = frule((NoTangent(), np.ones(4, np.float32), 0.0), mul, x, 3.0)
    assert x_dot.dtype == np.float32


def test_out_and_where_are_refused(rng):
    x = rng.standard_normal(2)
    with pytest.raises(ValueError, match="out"):
        rrule(mul, x, x, out=np.empty(2))


def test_partials_of_the_wrong_arity_are_reported(rng):
    def bad(a, b):
        return a + b

    scalar_rule(bad, lambda a, b, y: 1.0)
    try:
        _, pullback = rrule(bad, 1.0, 2.0)
        with pytest.raises(ValueError, match="tuple of 2"):
            pullback(1.0)
    finally:
        rrule.unregister(bad)
        frule.unregister(bad)


def test_a_user_tangent_type_is_refused_by_name(rng, user_tangent):
    # An elementwise product is not part of the tangent algebra: a TypeError naming the rule,
    # not numpy's anonymous "unsupported operand" and never a silent conversion.
    x = rng.standard_normal(3)
    _, pullback = rrule(mul, x, x)
    with pytest.raises(TypeError, match=r"mul's pullback \(an elementwise product\).*UserTangent"):
        pullback(user_tangent(np.ones(3)))
    with pytest.raises(TypeError, match=r"sin's frule \(an elementwise product\).*UserTangent"):
        frule((NoTangent(), user_tangent(np.ones(3))), sin, x)


def test_structured_cotangents_are_made_dense(rng):
    x = rng.standard_normal((3, 3))
    _, pullback = rrule(sin, x)
    d = np.arange(1.0, 4.0)
    np.testing.assert_allclose(pullback(Diagonal(d))[1], np.cos(x) * np.diag(d))
    _, y_dot = frule((NoTangent(), Thunk(lambda: ZeroTangent())), sin, x)
    assert y_dot is ZeroTangent()


def test_a_not_implemented_partial_survives_broadcasting(rng):
    # ChainRulesCore allows a NotImplemented partial; summing it over broadcast axes crashed.
    def shifted(order, x):
        return x + np.sin(order)

    scalar_rule(shifted, lambda order, x, y: (NotImplementedTangent("order"), np.ones_like(y)))
    try:
        order, x = rng.standard_normal(3), rng.standard_normal((2, 3))
        _, pullback = rrule(shifted, order, x)
        _, order_bar, x_bar = pullback(np.ones((2, 3)))
        assert isinstance(order_bar, NotImplementedTangent)
        np.testing.assert_array_equal(x_bar, np.ones((2, 3)))
        report = check_rrule(shifted, order, x)
        assert report.not_implemented == ["argument 0 (ndarray (3,))"]
        check_frule(shifted, order, x, constant=[0])
        _, y_dot = frule((NoTangent(), np.ones(3), np.ones((2, 3))), shifted, order, x)
        assert isinstance(y_dot, NotImplementedTangent)  # the order moved: its partial is missing
    finally:
        rrule.unregister(shifted)
        frule.unregister(shifted)


def sincos(x):
    return np.sin(x), np.cos(x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_several_outputs(rng, dtype):
    scalar_rule(sincos, lambda x, y: (y[1], -y[0]), outputs=2)
    try:
        x = (rng.standard_normal((2, 3)) + (1j if dtype == np.complex128 else 0)).astype(dtype)
        check_rrule(sincos, x)
        check_frule(sincos, x)
        _, pullback = rrule(sincos, x)
        g = np.ones((2, 3), dtype)
        np.testing.assert_allclose(pullback((g, ZeroTangent()))[1], np.conj(np.cos(x)) * g)
        np.testing.assert_allclose(
            pullback(Tangent(tuple, ZeroTangent(), g))[1], -np.conj(np.sin(x)) * g
        )
    finally:
        rrule.unregister(sincos)
        frule.unregister(sincos)


def test_several_outputs_need_one_row_per_output(rng):
    scalar_rule(sincos, lambda x, y: np.cos(x), outputs=2)
    try:
        _, pullback = rrule(sincos, np.ones(2))
        with pytest.raises(ValueError, match="tuple of 2 rows"):
            pullback((np.ones(2), np.ones(2)))
    finally:
        rrule.unregister(sincos)
        frule.unregister(sincos)
