"""Registry conventions: None as a zero, require_rrule/require_frule, missing protocol operations."""

import numpy as np
import pytest
import scipy.linalg as sla

from rules import MissingRuleError, frule, require_frule, require_rrule, rrule, split_cotangent
from tangents import AbstractTangent, NoTangent, ZeroTangent


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


# --- None is a zero everywhere -------------------------------------------------------------------


def test_none_components_of_a_multi_output_cotangent_are_zeros(rng):
    A = rng.standard_normal((3, 3))
    A = A + A.T
    _, pullback = rrule(np.linalg.eigh, A)
    V_bar = rng.standard_normal((3, 3))
    with_none = pullback((None, V_bar))[1]
    np.testing.assert_array_equal(with_none, pullback((ZeroTangent(), V_bar))[1])
    w_bar = rng.standard_normal(3)
    np.testing.assert_array_equal(pullback([w_bar, None])[1], pullback((w_bar, ZeroTangent()))[1])
    _, pullback = rrule(np.linalg.slogdet, A)
    np.testing.assert_array_equal(pullback((None, 1.0))[1], pullback((ZeroTangent(), 1.0))[1])
    assert split_cotangent((None, 1.0), 2) == (ZeroTangent(), 1.0)


def test_a_whole_none_cotangent_and_none_tangents_are_zeros(rng):
    x = rng.standard_normal(3)
    _, pullback = rrule(np.sin, x)
    assert pullback(None) == (NoTangent(), ZeroTangent())
    _, y_dot = frule((None, None), np.sin, x)
    assert y_dot is ZeroTangent()
    _, y_dot = frule((None, np.ones(3)), np.sin, x)
    np.testing.assert_allclose(y_dot, np.cos(x))
    _, y_dot = frule((None, np.ones(3), None), np.multiply, x, x)
    np.testing.assert_allclose(y_dot, x)


def test_a_tuple_argument_gets_a_structural_tangent(rng):
    # cho_solve((c, lower), b): the cotangent of the tuple is Tangent(tuple, c_bar, NoTangent())
    a = rng.standard_normal((3, 3))
    factor = sla.cho_factor(a @ a.T + 3 * np.eye(3))
    _, pullback = rrule(sla.cho_solve, factor, rng.standard_normal(3))
    _, factor_bar, _ = pullback(np.ones(3))
    assert factor_bar.primal_type is tuple
    assert factor_bar[0].shape == (3, 3)
    assert factor_bar[1] is NoTangent()


# --- a user's tangent type lacking a protocol operation -----------------------------------------


class NoTranspose(AbstractTangent):
    """``@`` and ``shape`` but no ``mT``: not enough for np.inner's generic path."""

    def __init__(self, data):
        self.data = data

    @property
    def shape(self):
        return self.data.shape

    def __matmul__(self, M):
        return NoTranspose(self.data @ M)

    def __rmatmul__(self, M):
        return NoTranspose(M @ self.data)


def test_a_missing_protocol_operation_names_the_rule_and_the_operation(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    _, pullback = rrule(np.inner, a, b)
    with pytest.raises(TypeError, match=r"np.inner's pullback .*`t.mT`.*NoTranspose.*`mT`"):
        pullback(NoTranspose(np.ones((2, 2))))
    tangents = (NoTangent(), NoTranspose(np.ones((2, 3))), NoTranspose(np.ones((2, 3))))
    with pytest.raises(TypeError, match=r"np.inner's frule .*`t.mT`"):
        frule(tangents, np.inner, a, b)


def test_other_attribute_errors_are_not_renamed():
    def broken(x):
        return x

    def broken_rrule(x):
        return x, lambda y_bar: (NoTangent(), y_bar.no_such_thing)

    rrule.register(broken)(broken_rrule)
    try:
        _, pullback = rrule(broken, np.ones(2))
        with pytest.raises(AttributeError, match="no_such_thing"):
            pullback(np.ones(2))
    finally:
        rrule.unregister(broken)


# --- deferred rule modules ------------------------------------------------------------------------


def test_deferred_modules_that_load_each_other_are_imported_once(monkeypatch):
    import sys

    from rules.core import deferred

    loaded = []

    def import_module(name):
        loaded.append(name)
        if name == "first.rules":  # registering a rule loads the other ready modules
            deferred.load_deferred()

    monkeypatch.setattr(deferred, "DEFERRED", {"first.rules": "trigger", "second.rules": "trigger"})
    monkeypatch.setattr(deferred.importlib, "import_module", import_module)
    monkeypatch.setitem(sys.modules, "trigger", object())
    assert rrule(no_rule_here, 1.0) is None
    assert loaded == ["first.rules", "second.rules"]
    assert deferred.DEFERRED == {}


# --- rules for bound methods ----------------------------------------------------------------------


def test_a_method_rule_receives_the_instance_and_returns_its_cotangent_first():
    class Scaler:
        __slots__ = ("factor",)

        def __init__(self, factor):
            self.factor = factor

        def apply(self, x):
            return self.factor * x

    @rrule.register_method(Scaler, "apply")
    def apply_rrule(scaler, x):
        def apply_pullback(y_bar):
            return np.sum(y_bar * x), scaler.factor * y_bar  # (cotangent of scaler, of x)

        return scaler.apply(x), apply_pullback

    @frule.register_method(Scaler, "apply")
    def apply_frule(tangents, scaler, x):
        factor_dot, x_dot = tangents
        return scaler.apply(x), factor_dot * x + scaler.factor * x_dot

    scaler, x = Scaler(3.0), np.array([1.0, 2.0])
    y, pullback = rrule(scaler.apply, x)  # a new bound method at each access: found by type
    np.testing.assert_array_equal(y, [3.0, 6.0])
    factor_bar, x_bar = pullback(np.ones(2))
    assert factor_bar == 3.0
    np.testing.assert_array_equal(x_bar, [3.0, 3.0])
    _, y_dot = frule((1.0, np.zeros(2)), scaler.apply, x)
    np.testing.assert_array_equal(y_dot, x)
    assert rrule(Scaler(1.0).__init__, 2.0) is None  # other methods have no rule
    with pytest.raises(ValueError, match=r"Scaler.apply is already registered"):
        rrule.register_method(Scaler, "apply")(apply_rrule)
