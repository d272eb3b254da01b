import copy
import functools
import pickle

import numpy as np
import pytest

from tangents import InplaceableThunk, Thunk, ZeroTangent, unthunk


def counting_thunk(value):
    calls = []

    def compute():
        calls.append(1)
        return value

    return Thunk(compute), calls


def test_thunk_runs_at_most_once_however_often_it_is_used():
    x = np.arange(3.0)
    t, calls = counting_thunk(x)
    assert calls == []
    results = [unthunk(t), t + 1.0, 2.0 * t, t @ x, -t, np.asarray(t), t.real]
    assert len(calls) == 1
    assert results[0] is x
    np.testing.assert_array_equal(results[1], x + 1.0)
    assert results[3] == x @ x


def test_unthunk_leaves_other_values_alone():
    x = np.ones(2)
    assert unthunk(x) is x
    assert unthunk(ZeroTangent()) is ZeroTangent()
    assert unthunk(3.0) == 3.0


def test_unthunk_unwraps_nested_thunks_fully():
    x = np.ones(2)
    t = Thunk(lambda: Thunk(lambda: Thunk(lambda: x)))
    assert unthunk(t) is x


def test_transpose_and_conjugate_stay_lazy():
    a = np.array([[1 + 2j, 3j], [4.0, 5 - 1j]])
    t, calls = counting_thunk(a)
    lazy = [t.T, t.mT, t.conj()]
    assert calls == []
    assert all(isinstance(v, Thunk) for v in lazy)
    np.testing.assert_array_equal(unthunk(lazy[0]), a.T)
    np.testing.assert_array_equal(unthunk(lazy[2]), a.conj())
    assert len(calls) == 1


def test_thunk_needs_a_callable():
    with pytest.raises(TypeError, match="function of no arguments"):
        Thunk(np.ones(2))


def test_thunk_repr_shows_state():
    t = Thunk(lambda: 1.5)
    assert repr(t).startswith("Thunk(<function")
    unthunk(t)
    assert repr(t) == "Thunk(<evaluated: 1.5>)"


def test_inplaceable_thunk_value_and_action():
    value = np.array([1.0, 2.0])

    def add_fn(acc):
        acc += value
        return acc

    it = InplaceableThunk(add_fn, lambda: value)
    assert unthunk(it) is value
    acc = np.zeros(2)
    assert it.add_fn(acc) is acc
    np.testing.assert_array_equal(acc, value)
    np.testing.assert_array_equal(it + np.ones(2), value + 1)


def test_inplaceable_thunk_needs_add_fn():
    with pytest.raises(TypeError, match="add_fn"):
        InplaceableThunk(None, Thunk(lambda: 1.0))


def _ones():
    return np.ones(2)


@pytest.mark.parametrize(
    "duplicate",
    [
        copy.copy,
        copy.deepcopy,
        *(
            functools.partial(lambda t, p: pickle.loads(pickle.dumps(t, protocol=p)), p=p)
            for p in range(pickle.HIGHEST_PROTOCOL + 1)
        ),
    ],
    ids=["copy", "deepcopy", *(f"pickle{p}" for p in range(pickle.HIGHEST_PROTOCOL + 1))],
)
def test_copies_and_pickles_of_an_unevaluated_thunk_still_compute_their_value(duplicate):
    # Issue 14, item 2: the unset sentinel used to be copied as a new object(), which the copy
    # then returned as its value (and ZeroTangent() + copy carried on).
    th = duplicate(Thunk(_ones))
    assert not th.evaluated
    np.testing.assert_array_equal(unthunk(th), np.ones(2))
    np.testing.assert_array_equal(unthunk(ZeroTangent() + duplicate(Thunk(_ones))), np.ones(2))
    evaluated = Thunk(_ones)
    unthunk(evaluated)
    copied = duplicate(evaluated)
    assert copied.evaluated
    np.testing.assert_array_equal(unthunk(copied), np.ones(2))


def test_pickling_a_thunk_of_a_lambda_refuses():
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(Thunk(lambda: 1.0))
