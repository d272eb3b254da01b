import pickle

import numpy as np
import pytest

from tangents import NotImplementedTangent, NotImplementedTangentError, Thunk, ZeroTangent


@pytest.fixture
def ni():
    return NotImplementedTangent("Hessian of foo: see issue 12")


def test_repr_round_trips(ni):
    again = eval(repr(ni), {"NotImplementedTangent": NotImplementedTangent})
    assert again == ni
    assert pickle.loads(pickle.dumps(ni)) == ni


def test_wins_addition_and_scaling(ni):
    x = np.ones(2)
    assert ni + x is ni
    assert x + ni is ni
    assert ni * 2.0 is ni
    assert 2.0 * ni is ni
    assert -ni is ni
    assert ni.conj() is ni


def test_the_left_one_wins_between_two(ni):
    other = NotImplementedTangent("other")
    assert ni + other is ni
    assert other + ni is other


def test_a_zero_factor_beats_it(ni):
    assert ni * ZeroTangent() is ZeroTangent()
    assert ZeroTangent() * ni is ZeroTangent()


def test_a_thunk_added_to_it_is_never_run(ni):
    calls = []
    t = Thunk(lambda: calls.append(1))
    assert ni + t is ni
    assert t + ni is ni
    assert calls == []


@pytest.mark.parametrize(
    ("use", "words"),
    [
        (lambda ni: ni - np.ones(2), "subtract"),
        (lambda ni: np.ones(2) - ni, "subtract"),
        (lambda ni: ni / 2.0, "divide"),
        (lambda ni: np.ones(2) / ni, "divide"),
        (lambda ni: np.asarray(ni), "array"),
        (lambda ni: float(ni), "number"),
        (lambda ni: complex(ni), "number"),
        (lambda ni: int(ni), "number"),
        (lambda ni: bool(ni), "truth value"),
    ],
)
def test_using_its_value_raises_with_the_info(ni, use, words):
    with pytest.raises(NotImplementedTangentError, match=words) as excinfo:
        use(ni)
    assert "Hessian of foo: see issue 12" in str(excinfo.value)
