"""rules.core.cotangents: which cotangents become arrays, and which are a user's own tangent type."""

import numpy as np
import pytest
import scipy.sparse as sp

from rules.core.cotangents import as_array_cotangent, conj, is_user_tangent
from tangents import (
    AbstractTangent,
    Diagonal,
    NotImplementedTangent,
    Tangent,
    Thunk,
    ZeroTangent,
)


class Mine(AbstractTangent):
    """A user's tangent type that happens to subclass the library's root class."""


class Plain:
    """A user's tangent type that does not."""


@pytest.mark.parametrize(
    "dx",
    [
        np.ones(2),
        1.5,
        np.float32(2),
        Diagonal(np.ones(2)),
        sp.csr_array(np.eye(2)),
        ZeroTangent(),
        Thunk(lambda: np.ones(2)),
        NotImplementedTangent("test"),
        Tangent(tuple, 1.0),
    ],
    ids=lambda dx: type(dx).__name__,
)
def test_the_library_s_own_tangents_are_not_user_types(dx):
    assert not is_user_tangent(dx)


@pytest.mark.parametrize("cls", [Mine, Plain])
def test_user_types_are_refused_by_name_never_converted(cls):
    assert is_user_tangent(cls())
    with pytest.raises(TypeError, match=rf"np\.thing's pullback needs an ndarray.*{cls.__name__}"):
        as_array_cotangent(cls(), "np.thing's pullback")


def test_arrays_structured_and_sparse_become_arrays():
    np.testing.assert_array_equal(as_array_cotangent(Diagonal(np.ones(2)), "x"), np.eye(2))
    np.testing.assert_array_equal(as_array_cotangent(sp.csr_array(np.eye(2)), "x"), np.eye(2))
    x = np.ones(3)
    assert as_array_cotangent(Thunk(lambda: x), "x") is x


def test_conj_keeps_weak_scalars_and_real_arrays():
    x = np.ones(3, np.float32)
    assert conj(x) is x  # no copy for a real ndarray
    assert type(conj(2.0)) is float  # weak types stay weak
    assert type(conj(2)) is int
    assert conj(1 + 2j) == 1 - 2j
    assert type(conj(1 + 2j)) is complex
    np.testing.assert_array_equal(conj(np.array([1j])), [-1j])
    assert conj(np.float32(3)).dtype == np.float32
    assert (conj(x) * 2.0).dtype == np.float32
