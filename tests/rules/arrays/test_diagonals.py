"""diagonal, trace, diag (both directions), triu, tril."""

import numpy as np
import pytest

import rules  # noqa: F401  (registers the rules)
from rules import rrule
from rules.testing import check_frule, check_rrule

DTYPES = [np.float64, np.float32, np.complex128]


CASES = [
    (np.diagonal, (3, 4), (), {}),
    (np.diagonal, (3, 4), (1,), {}),
    (np.diagonal, (3, 4), (-2,), {}),
    (np.diagonal, (2, 3, 3), (0, 1, 2), {}),
    (np.diagonal, (3, 2, 4), (), {"offset": 1, "axis1": 2, "axis2": 0}),
    (np.trace, (3, 3), (), {}),
    (np.trace, (3, 4), (1,), {}),
    (np.trace, (2, 3, 3), (), {"axis1": 1, "axis2": 2}),
    (np.diag, (3,), (), {}),
    (np.diag, (3,), (-1,), {}),
    (np.diag, (3, 4), (), {}),
    (np.diag, (3, 4), (2,), {}),
    (np.triu, (3, 4), (), {}),
    (np.triu, (2, 3, 3), (1,), {}),
    (np.tril, (3, 4), (-1,), {}),
    (np.tril, (4,), (), {}),
    (np.triu, (4,), (1,), {}),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("f", "shape", "args", "kwargs"), CASES, ids=lambda v: getattr(v, "__name__", str(v))
)
def test_diagonals(rng, f, shape, args, kwargs, dtype, make_array):
    x = make_array(shape, dtype)
    check_rrule(f, x, *args, **kwargs)
    check_frule(f, x, *args, **kwargs)


def test_trace_cotangent_is_the_scaled_identity():
    _, pullback = rrule(np.trace, np.ones((3, 3)))
    np.testing.assert_array_equal(pullback(2.0)[1], 2 * np.eye(3))


def test_integer_matrix():
    n = np.arange(9).reshape(3, 3)
    check_rrule(np.diagonal, n)
    assert rrule(np.trace, n)[1](1.0)[1].dtype == np.float64
