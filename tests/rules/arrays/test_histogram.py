"""np.histogram and np.histogram_bin_edges: edges through the extremes, weights, density."""

import numpy as np
import pytest

import rules  # noqa: F401  (registers the rules)
from rules import rrule
from rules.testing import check_frule, check_rrule


@pytest.mark.parametrize("bins", [10, 3, "auto", np.array([-2.0, 0.0, 0.5, 3.0])], ids=str)
def test_bin_edges(rng, bins):
    a = rng.standard_normal((3, 4))
    check_rrule(np.histogram_bin_edges, a, bins)
    check_frule(np.histogram_bin_edges, a, bins)


@pytest.mark.parametrize("density", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("range_", [None, (-3.0, 3.0)], ids=["extremes", "range"])
def test_histogram(rng, density, weighted, range_):
    a = rng.standard_normal(12)
    weights = rng.uniform(0.5, 1.5, 12) if weighted else None
    check_rrule(np.histogram, a, 4, range_, density, weights)
    check_frule(np.histogram, a, 4, range_, density, weights)


def test_float32_and_one_entry(rng):
    check_rrule(np.histogram, rng.standard_normal(7).astype(np.float32), 3)
    check_rrule(np.histogram_bin_edges, np.array([0.3]), 3)  # edges at 0.3 -+ 1/2


def test_counts_give_the_input_no_cotangent(rng):
    a = rng.standard_normal(6)
    _, pullback = rrule(np.histogram, a, 3, (-4.0, 4.0))
    a_bar = pullback((np.ones(3), np.zeros(4)))[1]
    np.testing.assert_array_equal(a_bar, np.zeros(6))
