"""Fixtures for rule tests: registrations undone after each test, sample arrays, a user tangent type."""

import numpy as np
import pytest

from rules import frule, rrule


@pytest.fixture
def registered():
    """Register rules for a test's own functions; they are removed again afterwards."""
    added = []

    def register(table, f, **options):
        added.append((table, f))
        return table.register(f, **options)

    yield register
    for table, f in added:
        table.unregister(f)


@pytest.fixture
def tables():
    return rrule, frule


class UserTangent:
    """A tangent type of a user's own: ``+``, ``-``, scaling, ``.real``, ``.conj()``, a shape; no array.

    ``__array_ufunc__ = None`` makes numpy defer to it instead of building an object array.
    """

    __array_ufunc__ = None

    def __init__(self, values):
        self.values = values
        self.shape = values.shape

    def __add__(self, other):
        return UserTangent(self.values + other.values)

    def __neg__(self):
        return UserTangent(-self.values)

    def __mul__(self, scalar):
        return UserTangent(self.values * scalar)

    __rmul__ = __mul__

    @property
    def real(self):
        return UserTangent(self.values.real)

    def conj(self):
        return UserTangent(self.values.conj())


@pytest.fixture
def user_tangent():
    """The class of a user-defined tangent type, for generic-path tests."""
    return UserTangent


@pytest.fixture
def make_array(rng):
    """``make_array(shape, dtype=float64)``: standard normal entries (real and imaginary parts)."""

    def make(shape, dtype=np.float64):
        x = rng.standard_normal(shape)
        if np.issubdtype(dtype, np.complexfloating):
            x = x + 1j * rng.standard_normal(shape)
        return np.asarray(x).astype(dtype)

    return make
