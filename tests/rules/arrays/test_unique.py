"""np.unique and the array-API unique functions: the values move with the entries they are."""

import numpy as np
import pytest

import rules  # noqa: F401  (registers the rules)
from rules import frule, rrule
from rules.testing import check_frule, check_rrule
from tangents import NoTangent

UNIQUE = [np.unique, np.unique_values, np.unique_counts, np.unique_inverse, np.unique_all]


# numpy returns unique_values of complex input in hash order, which jumps under any
# perturbation: as an ordered array it has no derivative (its rule is tested for real input)
CASES = [
    (f, dtype)
    for f in UNIQUE
    for dtype in (np.float64, np.float32, np.complex128)
    if not (f is np.unique_values and dtype is np.complex128)
]


@pytest.mark.parametrize(("f", "dtype"), CASES, ids=lambda c: getattr(c, "__name__", str(c)))
def test_values_away_from_ties(rng, f, dtype):
    x = rng.standard_normal((3, 4))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal((3, 4))
    x = x.astype(dtype)
    check_rrule(f, x)
    check_frule(f, x)


def test_the_flags_and_an_axis(rng):
    x = rng.standard_normal((3, 4))
    check_rrule(np.unique, x, True, True, True)
    check_frule(np.unique, x, True, True, True)
    check_rrule(np.unique, x, axis=1)
    check_frule(np.unique, x, axis=1)


def test_ties_share_the_cotangent_evenly():
    # at a tie only perturbations keeping the group together have a derivative (module docstring)
    x = np.array([1.0, 2.0, 1.0, 3.0, 1.0])
    y, pullback = rrule(np.unique, x)
    np.testing.assert_array_equal(y, [1.0, 2.0, 3.0])
    np.testing.assert_allclose(pullback(np.array([3.0, 1.0, 1.0]))[1], [1, 1, 1, 1, 1])
    # the pushforward is the group's mean tangent: moving the group together moves its value
    _, y_dot = frule((NoTangent(), np.array([1.0, 0.0, 1.0, 0.0, 1.0])), np.unique, x)
    np.testing.assert_allclose(y_dot, [1.0, 0.0, 0.0])


def test_equal_rows_along_an_axis():
    x = np.array([[1.0, 2.0], [0.0, 1.0], [1.0, 2.0]])
    y, pullback = rrule(np.unique, x, axis=0)
    assert y.shape == (2, 2)
    np.testing.assert_allclose(pullback(np.ones((2, 2)))[1], [[0.5, 0.5], [1, 1], [0.5, 0.5]])
