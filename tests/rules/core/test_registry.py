import numpy as np
import pytest

from rules import frule, is_zero_cotangent, non_differentiable, rrule, split_cotangent
from rules.core.registry import function_name
from tangents import NoTangent, Tangent, Thunk, ZeroTangent


def square(x):
    return x * x


def test_unknown_functions_have_no_rules():
    def nothing(x):
        return x

    assert rrule(nothing, 1.0) is None
    assert frule((NoTangent(), 1.0), nothing, 1.0) is None
    assert nothing not in rrule


def test_lookup_by_function_object(registered):
    @registered(rrule, square)
    def square_rrule(x):
        def square_pullback(y_bar):
            return NoTangent(), 2 * x * y_bar

        return square(x), square_pullback

    y, pullback = rrule(square, 3.0)
    assert y == 9.0
    assert pullback(1.0) == (NoTangent(), 6.0)
    assert square in rrule


def test_registering_twice_raises_unless_overriding(registered):
    registered(rrule, square)(lambda x: None)
    with pytest.raises(ValueError, match="already registered"):
        rrule.register(square)(lambda x: None)
    rrule.register(square, override=True)(lambda x: (x, lambda y_bar: (NoTangent(), y_bar)))
    assert rrule(square, 2.0)[0] == 2.0


def test_unhashable_keys_are_rejected_at_registration():
    with pytest.raises(TypeError):
        rrule.register([])


def test_zero_cotangents_short_circuit_the_pullback(registered):
    calls = []

    @registered(rrule, square)
    def square_rrule(x):
        def square_pullback(y_bar):
            calls.append(y_bar)
            return NoTangent(), 2 * x * y_bar

        return square(x), square_pullback

    _, pullback = rrule(square, np.ones(2))
    assert pullback(ZeroTangent()) == (NoTangent(), ZeroTangent())
    assert pullback(NoTangent()) == (NoTangent(), ZeroTangent())
    assert calls == []
    pullback(np.ones(2))
    assert len(calls) == 1


def test_keyword_arguments_pass_through_and_are_not_differentiated(registered):
    def scale(x, *, factor):
        return factor * x

    @registered(rrule, scale)
    def scale_rrule(x, *, factor):
        def scale_pullback(y_bar):
            return NoTangent(), factor * y_bar

        return scale(x, factor=factor), scale_pullback

    y, pullback = rrule(scale, 2.0, factor=3.0)
    assert y == 6.0
    assert pullback(1.0) == (NoTangent(), 3.0)  # no cotangent for factor


def test_frule_takes_tangents_first_and_checks_their_count(registered):
    @registered(frule, square)
    def square_frule(tangents, x):
        _, x_dot = tangents
        return square(x), 2 * x * x_dot

    assert frule((NoTangent(), 1.0), square, 3.0) == (9.0, 6.0)
    assert frule((NoTangent(), ZeroTangent()), square, 3.0) == (9.0, ZeroTangent())
    with pytest.raises(ValueError, match="tuple of 2 tangents"):
        frule((1.0,), square, 3.0)


def test_callable_objects_carry_a_structural_tangent():
    class Scale:
        def __init__(self, factor):
            self.factor = factor

        def __call__(self, x):
            return self.factor * x

    @rrule.register_call(Scale)
    def scale_rrule(scale, x):
        def scale_pullback(y_bar):
            return Tangent(Scale, factor=np.sum(x * y_bar)), scale.factor * y_bar

        return scale(x), scale_pullback

    try:
        _, pullback = rrule(Scale(2.0), np.ones(3))
        f_bar, x_bar = pullback(np.ones(3))
        assert f_bar.factor == 3.0
        np.testing.assert_array_equal(x_bar, 2.0 * np.ones(3))
        assert (
            pullback(ZeroTangent())[0] is ZeroTangent()
        )  # an object with fields: zero, not NoTangent
    finally:
        rrule.unregister(Scale)


def test_zero_short_circuit_matches_the_normal_path_for_numpy_dispatchers():
    # numpy 2's np.sum / np.linalg.* are dispatcher objects with a __dict__, yet plain functions
    for f, x in [(np.sum, np.ones(3)), (np.linalg.det, np.eye(2))]:
        _, pullback = rrule(f, x)
        assert pullback(np.ones(np.shape(f(x))))[0] is NoTangent()
        assert pullback(ZeroTangent())[0] is NoTangent()


class _Slotted:
    __slots__ = ("factor",)

    def __init__(self, factor):
        self.factor = factor

    def __call__(self, x):
        return self.factor * x


class _PrivatelySlotted:
    __slots__ = ("__factor",)  # stored mangled, as _PrivatelySlotted__factor

    def __init__(self, factor):
        self.__factor = factor

    def __call__(self, x):
        return self.__factor * x


@pytest.mark.parametrize("cls", [_Slotted, _PrivatelySlotted], ids=["slot", "private slot"])
def test_a_callable_object_with_slots_gets_a_zero_cotangent(cls):
    @rrule.register_call(cls)
    def slotted_rrule(f, x):
        return f(x), lambda y_bar: (ZeroTangent(), 2.0 * y_bar)

    try:
        _, pullback = rrule(cls(2.0), np.ones(3))
        assert pullback(ZeroTangent())[0] is ZeroTangent()  # fields in __slots__: not NoTangent
    finally:
        rrule.unregister(cls)


def test_multi_output_cotangents():
    def two(x):
        return x, 2 * x

    parts = split_cotangent(Tangent(tuple, 1.0), 2)
    assert parts == (1.0, ZeroTangent())
    assert split_cotangent((1.0, NoTangent()), 2) == (1.0, NoTangent())
    assert split_cotangent(ZeroTangent(), 3) == (ZeroTangent(),) * 3
    eig = np.linalg.eigh(np.eye(2))
    named = split_cotangent(Tangent(type(eig), eigenvectors=np.ones((2, 2))), 2)
    assert named[0] is ZeroTangent()
    assert named[1].shape == (2, 2)
    with pytest.raises(ValueError, match="3 components"):
        split_cotangent((1.0, 2.0, 3.0), 2)
    with pytest.raises(TypeError, match="tuple or a Tangent"):
        split_cotangent(np.ones(2), 2)
    assert two(1.0) == (1.0, 2.0)


def test_is_zero_cotangent():
    assert is_zero_cotangent(ZeroTangent())
    assert is_zero_cotangent((ZeroTangent(), NoTangent()))
    assert is_zero_cotangent(Tangent(tuple, ZeroTangent(), ZeroTangent()))
    assert not is_zero_cotangent((ZeroTangent(), 1.0))
    assert not is_zero_cotangent(Thunk(lambda: ZeroTangent()))  # thunks are never run to find out
    assert not is_zero_cotangent(np.zeros(2))


def test_multi_output_pullback_with_partly_zero_cotangent(registered):
    def pair(x):
        return x, 2 * x

    @registered(rrule, pair)
    def pair_rrule(x):
        def pair_pullback(y_bar):
            a_bar, b_bar = split_cotangent(y_bar, 2)
            return NoTangent(), a_bar + 2 * b_bar

        return pair(x), pair_pullback

    _, pullback = rrule(pair, 1.0)
    assert pullback((ZeroTangent(), 1.0)) == (NoTangent(), 2.0)
    assert pullback(Tangent(tuple, 1.0, Thunk(lambda: 1.0))) == (NoTangent(), 3.0)
    assert pullback((ZeroTangent(), ZeroTangent()))[1] is ZeroTangent()


def test_non_differentiable(registered):
    def count_positive(x):
        return int(np.sum(x > 0))

    non_differentiable(count_positive)
    try:
        y, pullback = rrule(count_positive, np.array([1.0, -1.0]))
        assert y == 1
        assert pullback(1.0) == (NoTangent(), NoTangent())
        assert frule((NoTangent(), np.ones(2)), count_positive, np.ones(2)) == (2, NoTangent())
    finally:
        rrule.unregister(count_positive)
        frule.unregister(count_positive)


def test_cotangents_are_fitted_to_positional_options(registered):
    def scaled_sum(x, axis=None, scale=1.0):
        return scale * np.sum(x, axis=axis)

    @registered(rrule, scaled_sum)
    def scaled_sum_rrule(x, axis=None, scale=1.0):
        def scaled_sum_pullback(y_bar):
            x_bar = scale * np.broadcast_to(
                np.expand_dims(y_bar, axis) if axis is not None else y_bar, x.shape
            )
            return NoTangent(), x_bar, NoTangent(), np.sum(np.sum(x, axis=axis) * y_bar)

        return scaled_sum(x, axis, scale), scaled_sum_pullback

    x = np.ones((2, 3))
    assert len(rrule(scaled_sum, x)[1](1.0)) == 2  # scale passed by keyword or not at all: dropped
    assert len(rrule(scaled_sum, x, None, scale=2.0)[1](1.0)) == 3
    assert len(rrule(scaled_sum, x, 0, 2.0)[1](np.ones(3))) == 4


def test_trailing_cotangents_left_out_become_no_tangent(registered):
    def take_first(x, n):
        return x[:n]

    @registered(rrule, take_first)
    def take_first_rrule(x, n):
        def take_first_pullback(y_bar):
            x_bar = np.zeros_like(x)
            x_bar[:n] = y_bar
            return NoTangent(), x_bar  # nothing for the index n

        return take_first(x, n), take_first_pullback

    cotangents = rrule(take_first, np.arange(4.0), 2)[1](np.ones(2))
    assert len(cotangents) == 3
    assert cotangents[2] is NoTangent()


def test_deferred_rule_modules_load_on_the_first_lookup_that_needs_them(monkeypatch):
    import sys

    from rules.core import deferred

    loaded = []
    monkeypatch.setattr(deferred, "DEFERRED", {"json": "not.imported.yet"})
    monkeypatch.setattr(deferred.importlib, "import_module", lambda name: loaded.append(name))

    def nothing(x):
        return x

    assert rrule(nothing, 1.0) is None
    assert loaded == []  # the trigger module is not in use
    monkeypatch.setitem(sys.modules, "not.imported.yet", object())
    assert rrule(nothing, 1.0) is None
    assert loaded == ["json"]
    assert deferred.DEFERRED == {}


def test_scipy_special_rules_are_found_after_importing_scipy_special():
    # In a fresh process: in this one another test module may have imported rules.special
    # already (at collection), and then the deferred load would not be tested at all.
    import os
    import subprocess
    import sys
    from pathlib import Path

    import rules

    code = (
        "import sys\n"
        "import rules\n"
        "assert 'rules.special' not in sys.modules, 'rules.special was imported eagerly'\n"
        "import scipy.special\n"
        "assert rules.rrule(scipy.special.expit, 0.5) is not None\n"
        "assert 'rules.special' in sys.modules\n"
    )
    src = str(Path(rules.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": src}
    result = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr


def test_a_thunk_of_a_zero_short_circuits_too(registered):
    calls = []

    @registered(rrule, square)
    def square_rrule(x):
        def square_pullback(y_bar):
            calls.append(y_bar)
            return NoTangent(), 2 * x * y_bar

        return square(x), square_pullback

    _, pullback = rrule(square, np.ones(2))
    assert pullback(Thunk(lambda: ZeroTangent())) == (NoTangent(), ZeroTangent())
    assert calls == []
    np.testing.assert_array_equal(pullback(Thunk(lambda: np.ones(2)))[1], 2 * np.ones(2))


def test_zero_tangents_still_go_through_the_rules_checks():
    import scipy.linalg as sla

    S = np.asfortranarray(np.eye(3) * 2.0)
    with pytest.raises(ValueError, match="overwrite_a"):
        frule((NoTangent(), ZeroTangent()), sla.cholesky, S, overwrite_a=True)
    np.testing.assert_array_equal(S, np.eye(3) * 2.0)


def test_unregister_forgets_the_rule_entirely(registered):
    from rules.core import registry

    def cube(x):
        return x**3

    def cube_rrule(x):
        return cube(x), lambda y_bar: (NoTangent(), 3 * x**2 * y_bar)

    rrule.register(cube)(cube_rrule)
    rrule.unregister(cube)
    assert cube not in rrule
    assert cube_rrule not in rrule._positional
    assert registry.is_zero_cotangent([ZeroTangent(), NoTangent()])


def test_the_cotangent_of_an_array_output_must_have_its_shape(registered):
    calls = []

    def f(x):
        return 2 * x

    def f_rrule(x):
        def f_pullback(y_bar):
            calls.append(y_bar)
            return NoTangent(), 2 * y_bar

        return 2 * x, f_pullback

    registered(rrule, f)(f_rrule)
    _, pullback = rrule(f, np.ones(3))
    for bad in (np.ones((2, 3)), np.ones(1), np.ones(())):
        with pytest.raises(
            ValueError, match=r"f pullback: the cotangent has shape .*expected \(3,\)"
        ):
            pullback(bad)
    assert calls == []  # refused before the rule's pullback ran
    pullback(Thunk(lambda: np.ones(3)))  # shapeless cotangents and thunks of the right shape pass
    assert pullback(ZeroTangent())[1] == ZeroTangent()


def test_function_names_in_messages():
    import operator

    import scipy.linalg as sla

    assert function_name(np.sum) == "np.sum"
    assert function_name(np.linalg.solve) == "np.linalg.solve"
    assert function_name(sla.expm) == "scipy.linalg.expm"
    assert function_name(operator.getitem) == "operator.getitem"


def test_a_forward_lane_runs_first_and_falls_through_to_the_rule():
    def triple(x):
        return 3 * x

    calls = []

    def triple_frule(tangents, x):
        calls.append("rule")
        return triple(x), 3 * tangents[1]

    def triple_lane(tangents, x):
        if type(x) is not np.ndarray or type(tangents[1]) is not np.ndarray:
            return None
        calls.append("lane")
        if x.ndim == 0:
            raise ValueError("lane refuses scalars")
        return triple(x), 3 * tangents[1]

    frule.register(triple)(triple_frule)
    frule.register_lane(triple)(triple_lane)
    try:
        x = np.arange(3.0)
        _y, y_dot = frule((NoTangent(), np.ones(3)), triple, x)
        assert calls == ["lane"]
        np.testing.assert_array_equal(y_dot, 3 * np.ones(3))
        # not recognised by the lane: the registry's checks (None is a zero: no rule call)
        _, y_dot = frule((NoTangent(), None), triple, x)
        assert calls == ["lane"]
        assert y_dot == ZeroTangent()
        _, y_dot = frule((NoTangent(), 2.0), triple, 1.0)  # then the rule
        assert calls == ["lane", "rule"]
        assert y_dot == 6.0
        with pytest.raises(ValueError, match=r"^.*triple pushforward: lane refuses scalars"):
            frule((NoTangent(), np.ones(())), triple, np.ones(()))  # named like the rule's errors
        # a rule that replaces this one is not shortcut by the old rule's lane
        before = list(calls)
        frule.register(triple, override=True)(lambda tangents, x: (triple(x), "replacement"))
        assert frule((NoTangent(), np.ones(3)), triple, x)[1] == "replacement"
        assert calls == before  # neither the old lane nor the old rule ran
        assert triple not in frule._lanes
    finally:
        frule.unregister(triple)
    assert triple not in frule
    assert triple not in frule._lanes


def test_overriding_a_library_forward_rule_drops_its_lane():
    # A user's own frule for np.linalg.inv, whose library rule has a lane for one plain real
    # matrix: before, that lane kept answering plain calls and the user's rule never ran.
    rule, lane = frule._by_function[np.linalg.inv], frule._lanes[np.linalg.inv]
    A = np.eye(2)
    try:
        frule.register(np.linalg.inv, override=True)(lambda tangents, a: ("mine", "mine"))
        assert frule((NoTangent(), np.ones((2, 2))), np.linalg.inv, A) == ("mine", "mine")
    finally:
        frule.register(np.linalg.inv, override=True)(rule)
        frule.register_lane(np.linalg.inv)(lane)
    assert frule._lanes[np.linalg.inv] is lane
    _, Y_dot = frule((NoTangent(), np.ones((2, 2))), np.linalg.inv, A)
    np.testing.assert_array_equal(Y_dot, -np.ones((2, 2)))
