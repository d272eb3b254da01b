"""The finite-difference references: accurate for functions that bend sharply, near the edge of
their domain, and on inputs of any size (1e-6, 1e6, or both in one input)."""

import numpy as np
import pytest

from rules.testing import RuleCheckError, check_frule, check_rrule
from tangents import NoTangent, unthunk


def spread(x):
    return np.std(x)


def spread_rrule(x):
    y = np.std(x)
    return y, lambda y_bar: (NoTangent(), unthunk(y_bar) * (x - x.mean()) / (x.size * y))


def spread_frule(tangents, x):
    y = np.std(x)
    return y, np.sum((x - x.mean()) * unthunk(tangents[1])) / (x.size * y)


def test_the_step_adapts_to_a_function_that_bends_on_a_tiny_scale(rng, rule_for):
    rule_for(spread, spread_rrule, spread_frule)
    x = 1.0 + 1e-3 * rng.standard_normal(5)  # std bends on the scale of the spread, 1e-3
    check_rrule(spread, x)
    check_frule(spread, x)


def root(x):
    return np.sqrt(x)


@pytest.mark.parametrize("error", [0.0, 1e-4])
def test_the_step_adapts_to_small_entries_next_to_large_ones(rule_for, error):
    rule_for(
        root, lambda x: (root(x), lambda y_bar: (NoTangent(), (0.5 + error) * y_bar / root(x)))
    )
    x = np.array([0.004, 0.3, 2.0, 5.0])  # a step of 1e-3 * 5 would leave sqrt's domain
    if error:
        with pytest.raises(RuleCheckError, match=r"argument 0 \(ndarray \(4,\)\) vs finite diff"):
            check_rrule(root, x)
    else:
        check_rrule(root, x)


def arcsin(x):
    return np.arcsin(x)


def test_a_step_out_of_the_domain_is_halved_not_reported(rule_for):
    rule_for(
        arcsin,
        lambda x: (arcsin(x), lambda y_bar: (NoTangent(), unthunk(y_bar) / np.sqrt(1 - x**2))),
    )
    # every first step, 1e-3 * max(1, |x|) or 1e-3 * |x|, takes 0.9999 past 1: arcsin gives nan
    check_rrule(arcsin, np.array([0.9999, -0.99995, 0.3]))


def reciprocal(x):
    return 1.0 / x


def log(x):
    return np.log(x)


def elementwise_rules(f, derivative, error):
    """An rrule and an frule for ``f`` whose derivative is off by the factor ``1 + error``."""

    def f_rrule(x):
        return f(x), lambda y_bar: (NoTangent(), unthunk(y_bar) * (1.0 + error) * derivative(x))

    def f_frule(tangents, x):
        return f(x), (1.0 + error) * derivative(x) * unthunk(tangents[1])

    return f_rrule, f_frule


def reciprocal_rules(error):
    return elementwise_rules(reciprocal, lambda x: -1.0 / x**2, error)


@pytest.mark.parametrize("check", [check_rrule, check_frule])
@pytest.mark.parametrize(
    ("f", "derivative", "size"),
    [
        # 1 / x bends on the scale of x: a step of 1e-3 would cross the pole at 0
        (reciprocal, lambda x: -1.0 / x**2, 1e-6),
        # log(1e6 + 1e-3) - log(1e6 - 1e-3) keeps 3 of log's 16 digits: a relative error of
        # 1e-6 in the finite differences
        (log, lambda x: 1.0 / x, 1e6),
    ],
)
@pytest.mark.parametrize("error", [0.0, 1e-4])
def test_the_step_is_relative_to_the_size_of_the_input(
    rng, rule_for, check, f, derivative, size, error
):
    rule_for(f, *elementwise_rules(f, derivative, error))
    x = size * (1.0 + rng.random(4))
    # atol=0: the derivatives of 1e-12 and 1e-6 are below the default atol
    if error:
        with pytest.raises(RuleCheckError, match="vs finite differences"):
            check(f, x, atol=0.0)
    else:
        check(f, x, atol=0.0)


@pytest.mark.parametrize("check", [check_rrule, check_frule])
@pytest.mark.parametrize("error", [0.0, 1e-4])
def test_a_direction_through_entries_of_very_different_sizes(rule_for, check, error):
    # no one step fits both 1e-6 (moved by 1e-3 * 3e6 it crosses the pole) and 3e6 (moved by
    # 1e-3 * 1e-6 it drowns in round-off): the frule's random direction and the dot-product test
    # are split into parts of similar size
    rule_for(reciprocal, *reciprocal_rules(error))
    x = np.array([1e-6, 2e-6, 1e6, 3e6, 0.5])
    if error:
        with pytest.raises(RuleCheckError, match="vs finite differences"):
            check(reciprocal, x, atol=0.0)
    else:
        check(reciprocal, x, atol=0.0)


def test_a_tiny_entry_of_a_function_that_bends_on_the_scale_one(rule_for):
    # a step relative to 1e-20 alone would be all round-off for exp: step * max(1, |x|) stays
    def exp(x):
        return np.exp(x)

    rule_for(
        exp,
        lambda x: (exp(x), lambda y_bar: (NoTangent(), unthunk(y_bar) * exp(x))),
        lambda tangents, x: (exp(x), exp(x) * unthunk(tangents[1])),
    )
    x = np.array([1e-20, -1e-12, 0.0, 0.7])
    check_rrule(exp, x)
    check_frule(exp, x)
