"""Every refusal of the driver: raised when it happens, naming what and why, never a silent zero."""

import math

import numpy as np
import pytest

from rules.autodiff import (
    EscapedTraceError,
    InPlaceError,
    NoRuleError,
    TracedConversionError,
    TracedKeywordError,
    grad,
    jvp,
    primitive,
    vjp,
)


def test_a_function_without_a_rule_raises_when_traced_naming_it():
    reached = []

    def f(x):
        y = np.unwrap(x)  # no rule
        reached.append(True)
        return np.sum(np.abs(y))

    with pytest.raises(NoRuleError, match=r"np\.unwrap .*rrule\.register\(np\.unwrap\)"):
        grad(f)(np.ones(4))
    assert not reached  # raised at the call, not later in the sweep


def test_forward_mode_names_the_missing_frule():
    with pytest.raises(NoRuleError, match=r"np\.unwrap .*frule"):
        jvp(lambda x: np.unwrap(x), (np.ones(4),), (np.ones(4),))


def test_ufunc_methods_have_no_rules():
    with pytest.raises(NoRuleError, match=r"np\.add\.reduce"):
        grad(lambda x: np.add.reduce(x))(np.ones(3))
    with pytest.raises(NoRuleError, match=r"np\.maximum\.accumulate"):
        grad(lambda x: np.sum(np.maximum.accumulate(x)))(np.ones(3))


def test_a_plain_function_of_ones_own_without_a_rule_under_primitive_raises():
    @primitive
    def mine(x):
        return x * 2

    with pytest.raises(NoRuleError, match="mine"):
        grad(lambda x: np.sum(mine(x)))(np.ones(2))
    np.testing.assert_array_equal(mine(np.ones(2)), 2 * np.ones(2))  # plain inputs: just f


@pytest.mark.parametrize(
    ("convert", "how"),
    [
        (np.asarray, r"np\.asarray"),
        (np.array, r"np\.asarray/np\.array"),
        (lambda x: np.array([x[0], x[1]]), r"np\.stack"),
        (lambda x: float(x[0]), r"float\(\)"),
        (lambda x: int(x[0]), r"int\(\)"),
        (lambda x: complex(x[0]), r"complex\(\)"),
        (lambda x: math.exp(x[0]), r"float\(\)"),
        (lambda x: x[0].item(), r"\.item\(\)"),
        (lambda x: x.tolist(), r"\.tolist\(\)"),
        (lambda x: np.float64(x[0]), "traced value"),
        (lambda x: list(range(10))[x[0]], "index"),
    ],
)
def test_conversions_that_would_drop_the_trace_raise(convert, how):
    def f(x):
        return np.sum(convert(x)) * 1.0 + np.sum(x)

    with pytest.raises(TracedConversionError, match=how):
        grad(f)(np.array([1.0, 2.0]))


def test_in_place_writes_raise_or_are_correct(fd):
    x0 = np.array([1.0, 2.0, 3.0])

    def item_assignment(x):
        x[0] = 5.0
        return np.sum(x)

    def out_argument(x):
        buffer = np.zeros(3)
        np.multiply(x, 2.0, out=buffer)
        return np.sum(buffer)

    def out_function(x):
        buffer = np.zeros(())
        np.sum(x, out=buffer)
        return buffer

    def augmented_into_plain(x):
        buffer = np.zeros(3)
        buffer += x
        return np.sum(buffer)

    def setitem_into_plain(x):
        buffer = np.zeros(3)
        buffer[:2] = x[:2]
        return np.sum(buffer)

    def scalar_setitem_into_plain(x):  # numpy itself refuses a traced scalar element
        buffer = np.zeros(3)
        buffer[0] = x[0]
        return np.sum(buffer)

    def sort_in_place(x):
        x.sort()
        return np.sum(x)

    for f, error in [
        (item_assignment, InPlaceError),
        (out_argument, InPlaceError),
        (out_function, InPlaceError),
        (augmented_into_plain, InPlaceError),
        (setitem_into_plain, TracedConversionError),
        (scalar_setitem_into_plain, ValueError),
        (sort_in_place, InPlaceError),
    ]:
        with pytest.raises(error):
            grad(f)(x0.copy())

    def augmented_on_traced(x):  # x += y rebinds x to x + y: traced, correct
        y = x * 1.0
        y += x**2
        y *= 3.0
        return np.sum(y)

    np.testing.assert_allclose(grad(augmented_on_traced)(x0), fd.grad(augmented_on_traced, (x0,)))


def test_a_traced_keyword_argument_raises():
    a, w = np.arange(3.0), np.ones(3)
    with pytest.raises(TracedKeywordError, match=r"np\.average .*'weights'"):
        grad(lambda w: np.average(a, weights=w), 0)(w)
    # positionally it is differentiated: d/dw of sum(a w) / sum(w)
    g = grad(lambda w: np.average(a, None, w))(w)
    np.testing.assert_allclose(g, (a * 3 - np.sum(a)) / 9)


def test_a_traced_value_kept_past_its_trace_raises():
    cache = {}

    def f(x):
        if "scale" not in cache:
            cache["scale"] = np.sum(x)  # escapes into a cache
        return cache["scale"] * np.sum(x)

    grad(f)(np.ones(2))
    with pytest.raises(EscapedTraceError, match="escaped"):
        grad(f)(np.ones(2))


def test_grad_needs_a_real_scalar():
    with pytest.raises(TypeError, match=r"real scalar, got shape \(2,\)"):
        grad(lambda x: x * 2)(np.ones(2))
    with pytest.raises(TypeError, match="real scalar, got dtype complex128"):
        grad(lambda x: np.sum(x) * 1j)(np.ones(2))
    with pytest.raises(TypeError, match="real scalar, got a str"):
        grad(lambda x: "no")(np.ones(2))


def test_arguments_must_be_differentiable_structures():
    with pytest.raises(TypeError, match="cannot differentiate with respect to a object"):
        grad(lambda o: 1.0)(object())
    with pytest.raises(ValueError, match="argnums 3"):
        grad(lambda x: np.sum(x), 3)(np.ones(2))


def test_a_cotangent_of_the_wrong_shape_is_refused():
    _, pullback = vjp(lambda x: x * 2, np.ones(3))
    with pytest.raises(ValueError, match=r"shape \(2,\) for an output of shape \(3,\)"):
        pullback(np.ones(2))


def test_closure_constants_are_constants_and_gradients_are_not_silently_zero(fd):
    c = np.array([1.0, -2.0, 0.5])

    def f(w):
        scaled = c * w  # a closure constant: its own derivative is not asked for
        return np.sum(scaled * w)

    w = np.array([0.3, 0.4, -1.0])
    np.testing.assert_allclose(grad(f)(w), fd.grad(f, (w,)))
    assert np.all(grad(f)(w) != 0)


def test_a_rule_that_declines_its_arguments_is_named_as_such(registered):
    from rules import rrule

    def picky(x):
        return x * 2

    @registered(rrule, picky)
    def picky_rrule(x):
        return None  # a rule may decline arguments it does not cover

    with pytest.raises(NoRuleError, match=r"rrule of .*picky does not apply to these arguments"):
        grad(lambda x: np.sum(primitive(picky)(x)))(np.ones(2))
