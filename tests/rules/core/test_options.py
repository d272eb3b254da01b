"""rrule_with_options: cotangents fitted to the call; refuse; normalize_axes."""

import numpy as np
import pytest

from rules import rrule
from rules.core.options import (
    is_constant,
    normalize_axes,
    refuse,
    rrule_with_options,
    zero_tangent_array,
)
from tangents import NoTangent


def scaled_sum(x, axis=None, weights=None, keepdims=False):
    return np.sum(x if weights is None else weights * x, axis=axis, keepdims=keepdims)


@pytest.fixture
def rule():
    @rrule_with_options(scaled_sum)
    def scaled_sum_rrule(x, axis=None, weights=None, keepdims=False):
        y = scaled_sum(x, axis, weights, keepdims)

        def scaled_sum_pullback(y_bar):
            return NoTangent(), "x_bar", NoTangent(), "weights_bar"

        return y, scaled_sum_pullback

    yield scaled_sum_rrule
    rrule.unregister(scaled_sum)


def test_one_cotangent_per_positional_argument(rule):
    x = np.ones(3)
    assert rrule(scaled_sum, x)[1](1.0) == (NoTangent(), "x_bar")
    assert rrule(scaled_sum, x, 0)[1](1.0) == (NoTangent(), "x_bar", NoTangent())
    assert rrule(scaled_sum, x, 0, x)[1](1.0) == (NoTangent(), "x_bar", NoTangent(), "weights_bar")
    padded = rrule(scaled_sum, x, 0, x, True)[1](1.0)
    assert padded == (NoTangent(), "x_bar", NoTangent(), "weights_bar", NoTangent())


def test_keyword_arguments_are_not_differentiated(rule):
    _, pullback = rrule(scaled_sum, np.ones(3), weights=np.ones(3))
    assert pullback(1.0) == (NoTangent(), "x_bar")


def test_the_rule_keeps_its_name(rule):
    _, pullback = rrule(scaled_sum, np.ones(3))
    assert pullback.__qualname__.endswith("scaled_sum_pullback")


def test_refuse_names_the_options_that_are_set():
    refuse("f", out=None, returned=False)
    with pytest.raises(ValueError, match=r"f do not support the option\(s\) \['out'\]"):
        refuse("f", out=np.empty(1), returned=False)


def test_normalize_axes():
    assert normalize_axes(None, 3) == (0, 1, 2)
    assert normalize_axes(-1, 3) == (2,)
    assert normalize_axes((0, -1), 3) == (0, 2)
    with pytest.raises(np.exceptions.AxisError):
        normalize_axes(3, 3)


def test_zero_tangent_array():
    assert zero_tangent_array(np.arange(3)).dtype == np.float64
    z = zero_tangent_array(np.ones((2, 2), np.complex64))
    assert z.dtype == np.complex64
    assert z.flags.writeable


def test_constants_are_python_ints_bools_and_none():
    assert is_constant(3)
    assert is_constant(True)
    assert is_constant(None)
    assert not is_constant(3.0)
    assert not is_constant(np.int64(3))
    assert not is_constant(np.arange(3))
