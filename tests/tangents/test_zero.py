import copy
import pickle

import numpy as np
import pytest

from tangents import AbstractTangent, AbstractZero, NoTangent, ZeroTangent

ZEROS = [ZeroTangent, NoTangent]


@pytest.mark.parametrize("cls", ZEROS)
def test_zero_is_a_singleton(cls):
    assert cls() is cls()
    assert isinstance(cls(), AbstractZero)
    assert isinstance(cls(), AbstractTangent)


@pytest.mark.parametrize("cls", ZEROS)
def test_zero_stays_a_singleton_through_pickle_and_copy(cls):
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(cls(), protocol=protocol)) is cls()
    assert copy.copy(cls()) is cls()
    assert copy.deepcopy([cls()])[0] is cls()


def test_the_two_zeros_are_different():
    assert ZeroTangent() is not NoTangent()
    assert ZeroTangent() != NoTangent()


@pytest.mark.parametrize("cls", ZEROS)
def test_zero_repr_round_trips(cls):
    assert eval(repr(cls()), {cls.__name__: cls}) is cls()


@pytest.mark.parametrize("cls", ZEROS)
def test_linear_views_of_a_zero_are_the_zero(cls):
    z = cls()
    assert z.T is z
    assert z.mT is z
    assert z.real is z
    assert z.imag is z
    assert z.conj() is z
    assert +z is z


@pytest.mark.parametrize("cls", ZEROS)
def test_zero_converts_to_numeric_zero(cls):
    assert float(cls()) == 0.0
    assert complex(cls()) == 0j
    assert int(cls()) == 0


@pytest.mark.parametrize("cls", ZEROS)
def test_zero_refuses_to_become_an_array(cls):
    with pytest.raises(TypeError, match="no shape"):
        np.asarray(cls())


def test_strong_zero_absorbs_nan_and_inf():
    assert ZeroTangent() * float("nan") is ZeroTangent()
    assert float("inf") * ZeroTangent() is ZeroTangent()
    assert np.full(3, np.nan) * ZeroTangent() is ZeroTangent()
    assert np.float32("nan") * ZeroTangent() is ZeroTangent()


def test_numpy_operands_defer_to_the_zero():
    x = np.arange(6.0).reshape(2, 3)
    for z in (ZeroTangent(), NoTangent()):
        assert x + z is x
        assert z + x is x
        assert x - z is x
    assert x @ ZeroTangent() is ZeroTangent()
    assert ZeroTangent() @ x is ZeroTangent()
    assert np.float64(2.0) * ZeroTangent() is ZeroTangent()
    assert np.float32(2.0) + ZeroTangent() == np.float32(2.0)
