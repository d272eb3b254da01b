"""Registry conventions: None as a zero, require_rrule/require_frule, missing protocol operations."""

import numpy as np
import pytest

from rules import MissingRuleError, require_frule, require_rrule, rrule
from tangents import NoTangent


def no_rule_here(x):
    return x


# --- require_rrule / require_frule --------------------------------------------------------------


def test_require_rrule_names_the_function_and_how_to_register():
    assert rrule(no_rule_here, 1.0) is None  # rrule itself keeps returning None
    with pytest.raises(
        MissingRuleError, match=r"no rrule is registered for \S*no_rule_here; register one"
    ):
        require_rrule(no_rule_here, 1.0)
    with pytest.raises(LookupError, match=r"no frule is registered for \S*no_rule_here"):
        require_frule((NoTangent(), 1.0), no_rule_here, 1.0)


def test_require_rrule_returns_what_rrule_returns(rng):
    x = rng.standard_normal(3)
    y, pullback = require_rrule(np.sin, x)
    np.testing.assert_array_equal(y, np.sin(x))
    np.testing.assert_allclose(pullback(np.ones(3))[1], np.cos(x))
    y, y_dot = require_frule((NoTangent(), np.ones(3)), np.sin, x)
    np.testing.assert_allclose(y_dot, np.cos(x))


def test_a_rule_that_declines_is_named_as_declining():
    def picky(x):
        return x

    rrule.register(picky)(lambda x: None)
    try:
        with pytest.raises(MissingRuleError, match="declined"):
            require_rrule(picky, 1.0)
    finally:
        rrule.unregister(picky)
