import dataclasses
import pickle
from collections import namedtuple

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tangents import NoTangent, Tangent, Thunk, ZeroTangent, canonicalize, construct


@dataclasses.dataclass
class Affine:
    W: np.ndarray
    b: float


@dataclasses.dataclass(frozen=True)
class Frozen:
    a: float
    b: float


PointNT = namedtuple("PointNT", ["x", "y"])


class Slotted:
    __slots__ = ("p", "q")

    def __init__(self, p, q):
        self.p, self.q = p, q


class Plain:
    def __init__(self, u, v):
        self.u, self.v = u, v


# --- construction and access ---------------------------------------------------------------------


def test_access_by_name_and_position_unthunks_and_fills_zeros():
    t = Tangent(Affine, b=Thunk(lambda: 2.0))
    assert t.b == 2.0
    assert t.W is ZeroTangent()
    assert t[0] is ZeroTangent()
    assert t[1] == 2.0
    assert t["b"] == 2.0
    assert t.primal_type is Affine
    assert isinstance(t.backing["b"], Thunk)  # the backing is as given


def test_tuple_tangents_by_position():
    t = Tangent(tuple, 1.0, Thunk(lambda: 2.0))
    assert t[1] == 2.0
    assert t.backing[0] == 1.0
    assert len(t) == 2
    assert list(t) == [1.0, 2.0]


def test_namedtuple_tangents_by_position_or_name():
    by_pos = Tangent(PointNT, 1.0, 2.0)
    by_name = Tangent(PointNT, y=2.0, x=1.0)
    assert by_pos.y == 2.0
    assert by_name[0] == 1.0
    assert by_pos == by_name
    assert Tangent(PointNT, y=2.0).x is ZeroTangent()


def test_dict_tangents():
    t = Tangent(dict, {"a": 1.0})
    assert t["a"] == 1.0
    assert t["missing"] is ZeroTangent()
    with pytest.raises(TypeError, match="one mapping"):
        Tangent(dict, a=1.0)


def test_unknown_field_is_an_error_for_declared_fields():
    t = Tangent(Affine, b=1.0)
    with pytest.raises(AttributeError, match="no field 'c'"):
        t.c


def test_positional_components_only_for_tuples():
    with pytest.raises(TypeError, match="by name"):
        Tangent(Affine, 1.0, 2.0)
    with pytest.raises(TypeError, match="not both"):
        Tangent(PointNT, 1.0, y=2.0)
    with pytest.raises(TypeError, match="primal's type"):
        Tangent(Affine(np.eye(2), 1.0), b=1.0)


def test_repr_round_trips():
    t = Tangent(Frozen, a=1.0, b=ZeroTangent())
    assert eval(repr(t), {"Tangent": Tangent, "Frozen": Frozen, "ZeroTangent": ZeroTangent}) == t


def test_pickle_round_trips():
    t = Tangent(Frozen, a=1.5)
    assert pickle.loads(pickle.dumps(t)) == t


def test_equality_treats_missing_as_zero_and_compares_arrays():
    assert Tangent(Frozen, a=1.0) == Tangent(Frozen, a=1.0, b=ZeroTangent())
    assert Tangent(Frozen, a=1.0) != Tangent(Frozen, a=2.0)
    assert Tangent(Affine, W=np.eye(2)) == Tangent(Affine, W=np.eye(2))
    assert Tangent(Affine, W=np.eye(2)) != Tangent(Affine, W=np.ones((2, 2)))
    assert Tangent(Frozen, a=1.0) != Tangent(PointNT, x=1.0)


# --- canonicalize --------------------------------------------------------------------------------


def test_canonicalize_fills_fields_in_primal_order():
    c = canonicalize(Tangent(Affine, b=1.0))
    assert list(c.backing) == ["W", "b"]
    assert c.backing["W"] is ZeroTangent()
    assert canonicalize(Tangent(PointNT, 1.0)).backing == {"x": 1.0, "y": ZeroTangent()}


def test_canonicalize_rejects_foreign_fields():
    with pytest.raises(ValueError, match="no field"):
        canonicalize(Tangent(Affine, c=1.0))


def test_canonicalize_leaves_undeclared_layouts_alone():
    for t in (Tangent(tuple, 1.0), Tangent(dict, {"k": 1.0}), Tangent(Plain, u=1.0)):
        assert canonicalize(t) is t


# --- primal + tangent ----------------------------------------------------------------------------

PRIMALS = {
    "tuple": ((1.0, 2.0), lambda a, b: Tangent(tuple, a, b), lambda p: list(p)),
    "namedtuple": (PointNT(1.0, 2.0), lambda a, b: Tangent(PointNT, x=a, y=b), lambda p: list(p)),
    "dataclass": (Frozen(1.0, 2.0), lambda a, b: Tangent(Frozen, a=a, b=b), lambda p: [p.a, p.b]),
    "dict": (
        {"k": 1.0, "j": 2.0},
        lambda a, b: Tangent(dict, {"k": a, "j": b}),
        lambda p: [p["k"], p["j"]],
    ),
    "slots": (Slotted(1.0, 2.0), lambda a, b: Tangent(Slotted, p=a, q=b), lambda p: [p.p, p.q]),
    "object": (Plain(1.0, 2.0), lambda a, b: Tangent(Plain, u=a, v=b), lambda p: [p.u, p.v]),
}


@pytest.mark.parametrize("kind", list(PRIMALS))
def test_primal_plus_tangent_builds_a_new_primal(kind):
    primal, make, read = PRIMALS[kind]
    before = read(primal)
    moved = primal + make(0.5, ZeroTangent())
    assert type(moved) is type(primal)
    assert read(moved) == [1.5, 2.0]
    assert read(primal) == before  # unchanged
    assert read(make(0.25, -1.0) + primal) == [1.25, 1.0]


@pytest.mark.parametrize("kind", list(PRIMALS))
@given(a=st.integers(-100, 100), b=st.integers(-100, 100))
def test_primal_plus_tangent_round_trips(kind, a, b):
    primal, make, read = PRIMALS[kind]
    moved = primal + make(float(a), float(b))
    back = moved + (-make(float(a), float(b)))
    assert read(back) == read(primal)


class Interval:
    """``__init__`` validates: lo <= hi."""

    def __init__(self, lo, hi):
        if lo > hi:
            raise ValueError(f"an Interval needs lo <= hi, got {lo} > {hi}")
        self.lo, self.hi = lo, hi


def test_default_construct_does_not_run_init_of_a_plain_class():
    moved = Interval(0.0, 1.0) + Tangent(Interval, lo=5.0)  # documented default: no __init__
    assert (moved.lo, moved.hi) == (5.0, 1.0)


def test_a_registered_construct_runs_init():
    class Checked(Interval):  # a class of its own: singledispatch has no unregister
        pass

    @construct.register(Checked)
    def _(primal, fields):
        return Checked(fields["lo"], fields["hi"])

    moved = Checked(0.0, 1.0) + Tangent(Checked, hi=0.5)
    assert type(moved) is Checked
    assert (moved.lo, moved.hi) == (0.0, 1.5)
    with pytest.raises(ValueError, match="lo <= hi"):
        Checked(0.0, 1.0) + Tangent(Checked, lo=5.0)


def test_no_tangent_component_leaves_the_field_alone():
    assert Frozen(1.0, 2.0) + Tangent(Frozen, a=NoTangent(), b=0.5) == Frozen(1.0, 2.5)


def test_primal_plus_tangent_of_another_type_is_an_error():
    with pytest.raises(TypeError, match="Frozen"):
        PointNT(1.0, 2.0) + Tangent(Frozen, a=1.0)
    with pytest.raises(ValueError, match="length"):
        (1.0, 2.0) + Tangent(tuple, 1.0)


def test_nested_structural_tangents():
    outer = Tangent(tuple, Tangent(Frozen, a=1.0), 2.0)
    total = outer + outer
    assert total[0] == Tangent(Frozen, a=2.0)
    assert ((Frozen(0.0, 0.0), 1.0) + outer) == (Frozen(1.0, 0.0), 3.0)


def test_scaling_negation_and_conjugation():
    t = Tangent(Frozen, a=1.0 + 1j, b=Thunk(lambda: 2.0))
    assert 2 * t == Tangent(Frozen, a=2.0 + 2j, b=4.0)
    assert t * 2 == 2 * t
    assert t / 2 == Tangent(Frozen, a=0.5 + 0.5j, b=1.0)
    assert -t == Tangent(Frozen, a=-1.0 - 1j, b=-2.0)
    assert t.conj() == Tangent(Frozen, a=1.0 - 1j, b=2.0)


# --- laws ----------------------------------------------------------------------------------------

small = st.integers(-1000, 1000).map(float)
component = st.one_of(st.just(ZeroTangent()), small)


@st.composite
def affine_tangents(draw):
    fields = {}
    if draw(st.booleans()):
        fields["W"] = np.array(draw(st.lists(small, min_size=4, max_size=4))).reshape(2, 2)
    if draw(st.booleans()):
        fields["b"] = draw(component)
    return Tangent(Affine, **fields)


arrays = st.lists(small, min_size=3, max_size=3).map(np.array)
array_or_zero = st.one_of(arrays, st.just(ZeroTangent()), st.just(NoTangent()))


def equal(x, y):
    if isinstance(x, Tangent) or isinstance(y, Tangent):
        return x == y
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        return np.array_equal(x, y)
    return x is y


@given(array_or_zero, array_or_zero, array_or_zero)
def test_add_is_associative_and_commutative_on_arrays(a, b, c):
    assert equal((a + b) + c, a + (b + c))
    assert equal(a + b, b + a)


@given(affine_tangents(), affine_tangents(), affine_tangents())
def test_add_is_associative_and_commutative_on_structural(a, b, c):
    assert (a + b) + c == a + (b + c)
    assert a + b == b + a


@given(st.one_of(arrays, affine_tangents()))
def test_zero_is_the_identity(x):
    assert ZeroTangent() + x is x
    assert x + ZeroTangent() is x
    assert equal(x - ZeroTangent(), x)


@given(
    st.integers(-10, 10), st.one_of(arrays, affine_tangents()), st.one_of(arrays, affine_tangents())
)
def test_scaling_distributes_over_addition(s, x, y):
    if isinstance(x, Tangent) != isinstance(y, Tangent):
        return
    assert equal(s * (x + y), s * x + s * y)


@given(affine_tangents())
def test_canonicalize_is_idempotent(t):
    once = canonicalize(t)
    assert canonicalize(once) == once
    assert list(canonicalize(once).backing) == list(once.backing)
    assert once == t
