"""The seed's promises, end to end: zeros skip pullbacks, thunks stay lazy, accumulation writes
only into the driver's own buffers, and a user's tangent type flows through a whole program."""

import numpy as np
import pytest

from rules.autodiff import grad, primitive, vjp
from tangents import InplaceableThunk, NoTangent, Thunk


def _counting_rule(registered, f, counts, key, scale=2.0):
    from rules import rrule

    @registered(rrule, f)
    def rule(x):
        def pullback(y_bar):
            counts[key] = counts.get(key, 0) + 1
            return NoTangent(), scale * y_bar

        return f(x), pullback


def test_a_call_whose_cotangent_is_zero_is_skipped(registered):
    counts = {}

    @primitive
    def double(x):
        return 2.0 * x

    @primitive
    def twice(x):
        return 2.0 * x

    _counting_rule(registered, double, counts, "double")
    _counting_rule(registered, twice, counts, "twice")

    def only_imaginary(x):  # np.imag of a real value: its pullback gives ZeroTangent()
        return np.sum(np.imag(double(twice(x)))) + np.sum(x)

    def used(x):
        return np.sum(double(twice(x)))

    x = np.ones(3)
    np.testing.assert_allclose(grad(only_imaginary)(x), np.ones(3))
    assert counts == {}  # neither pullback ran: a zero reached double, nothing reached twice
    np.testing.assert_allclose(grad(used)(x), 4 * np.ones(3))
    assert counts == {"double": 1, "twice": 1}  # the counter counts


def test_cotangents_of_arguments_not_in_argnums_are_not_computed(registered):
    from rules import rrule

    evaluated = {"a": 0, "b": 0}

    def pair(a, b):
        return a * b

    @registered(rrule, pair)
    def pair_rrule(a, b):
        def pair_pullback(y_bar):
            def a_bar():
                evaluated["a"] += 1
                return y_bar * b

            def b_bar():
                evaluated["b"] += 1
                return y_bar * a

            return NoTangent(), Thunk(a_bar), Thunk(b_bar)

        return pair(a, b), pair_pullback

    traced_pair = primitive(pair)
    a, b = np.array([1.0, 2.0]), np.array([3.0, 5.0])

    def loss(a, b):
        return np.sum(traced_pair(a, b) ** 2)

    np.testing.assert_allclose(grad(loss, 0)(a, b), 2 * a * b * b)
    assert evaluated == {"a": 1, "b": 0}  # b's thunk was never evaluated
    grad(loss, (0, 1))(a, b)
    assert evaluated == {"a": 2, "b": 1}


def test_accumulation_never_writes_into_arrays_it_did_not_make(registered):
    from rules import rrule

    G = np.array([1.0, 2.0, 3.0])  # a rule's pullback returns this very array every time

    def leak(x):
        return x * 1.0

    @registered(rrule, leak)
    def leak_rrule(x):
        return leak(x), lambda y_bar: (NoTangent(), G)

    traced_leak = primitive(leak)
    g = grad(lambda x: sum(np.sum(traced_leak(x)) for _ in range(4)))(np.zeros(3))
    np.testing.assert_allclose(g, 4 * G)
    np.testing.assert_array_equal(G, [1.0, 2.0, 3.0])

    y_bar = np.array([1.0, 1.0])
    _, pullback = vjp(lambda x: x + x + x, np.zeros(2))  # add passes y_bar on to both operands
    (x_bar,) = pullback(y_bar)
    np.testing.assert_array_equal(x_bar, [3.0, 3.0])
    np.testing.assert_array_equal(y_bar, [1.0, 1.0])
    assert x_bar is not y_bar


def test_inplaceable_thunks_add_into_the_drivers_buffer(registered):
    from rules import rrule

    calls = {"add_fn": 0, "value": 0}

    def pick(x):
        return x[0]

    @registered(rrule, pick)
    def pick_rrule(x):
        def pick_pullback(y_bar):
            def add_fn(acc):
                calls["add_fn"] += 1
                acc[0] += y_bar
                return acc

            def value():
                calls["value"] += 1
                out = np.zeros_like(x)
                out[0] = y_bar
                return out

            return NoTangent(), InplaceableThunk(add_fn, Thunk(value))

        return pick(x), pick_pullback

    traced_pick = primitive(pick)
    g = grad(lambda x: traced_pick(x) + 2.0 * traced_pick(x) + 3.0 * traced_pick(x))(np.ones(2))
    np.testing.assert_allclose(g, [6.0, 0.0])
    assert calls == {"add_fn": 3, "value": 0}  # scattered straight into one buffer


def test_repeated_getitem_uses_one_buffer(rng):
    x = rng.standard_normal(50)
    g = grad(lambda x: sum(x[i] ** 2 for i in range(50)))(x)
    np.testing.assert_allclose(g, 2 * x)


class Scaled:
    """A user's tangent type: the matrix ``s * M`` for a fixed ``M``, kept as the number ``s``."""

    __array_ufunc__ = None

    def __init__(self, s, M, log):
        self.s, self.M, self.log = s, M, log
        self.shape = M.shape

    def __add__(self, other):
        if isinstance(other, Scaled) and other.M is self.M:
            self.log.append("+")
            return Scaled(self.s + other.s, self.M, self.log)
        return NotImplemented

    __radd__ = __add__

    def __neg__(self):
        self.log.append("neg")
        return Scaled(-self.s, self.M, self.log)

    def __mul__(self, c):
        if np.ndim(c) == 0:
            self.log.append("*")
            return Scaled(self.s * c, self.M, self.log)
        return NotImplemented

    __rmul__ = __mul__

    def __matmul__(self, other):
        self.log.append("@")
        return self.s * (self.M @ other)

    def __rmatmul__(self, other):
        self.log.append("r@")
        return self.s * (other @ self.M)

    @property
    def mT(self):
        self.log.append("mT")
        return Scaled(self.s, self.M.T, self.log)

    T = mT

    def conj(self):
        return self

    def __array__(self, dtype=None, copy=None):
        raise AssertionError("a user tangent was converted to an ndarray")


def test_a_user_tangent_flows_through_a_composed_program(rng):
    n = 4
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    M = rng.standard_normal((n, n))
    log = []

    def program(A, B):
        return -np.linalg.inv(np.eye(n) + A @ B)  # matmul, add, inv, negative

    _, pullback = vjp(program, A, B)
    A_bar, B_bar = pullback(Scaled(0.5, M, log))
    assert log[0] == "neg"  # negative's pullback applied -t to the user's type itself
    assert "r@" in log or "@" in log  # inv's generic pullback multiplied it
    _, dense_pullback = vjp(program, A, B)
    A_want, B_want = dense_pullback(0.5 * M)
    np.testing.assert_allclose(A_bar, A_want, rtol=1e-12)
    np.testing.assert_allclose(B_bar, B_want, rtol=1e-12)


def test_the_pullback_can_be_called_again(rng):
    A = rng.standard_normal((3, 3))
    _, pullback = vjp(lambda A: np.tanh(A) @ A, A)
    first = pullback(np.ones((3, 3)))[0]
    again = pullback(np.ones((3, 3)))[0]
    np.testing.assert_array_equal(first, again)
    twice = pullback(2 * np.ones((3, 3)))[0]
    np.testing.assert_allclose(twice, 2 * first)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_projection_keeps_dtype_through_accumulation(dtype):
    x = np.ones(3, dtype=dtype)
    g = grad(lambda x: np.sum(np.real(x * np.conj(x))) + np.sum(np.real(x)))(x)
    assert g.dtype == dtype
    np.testing.assert_allclose(g, 2 * x + 1, rtol=1e-6)
