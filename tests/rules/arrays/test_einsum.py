"""einsum: explicit and implicit subscripts, repeated labels, ellipsis, broadcasting."""

import numpy as np
import pytest

import rules  # noqa: F401  (registers the rules)
from rules import frule, rrule
from rules.arrays.einsum import explicit_subscripts
from rules.testing import check_frule, check_rrule
from tangents import NoTangent, Thunk, ZeroTangent, unthunk

CASES = [
    ("ij,jk->ik", [(2, 3), (3, 2)]),
    ("ij,jk", [(2, 3), (3, 2)]),  # implicit output
    ("ba", [(2, 3)]),  # implicit: a transpose
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->i", [(2, 3)]),  # j summed within the only operand
    ("ii->i", [(3, 3)]),  # diagonal
    ("ii", [(3, 3)]),  # trace
    ("iij->ji", [(2, 2, 3)]),
    ("ii,i->i", [(3, 3), (3,)]),
    ("i,i->", [(3,), (3,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("ij,k->ijk", [(2, 2), (2,)]),
    ("ij,ij,ij->", [(2, 3), (2, 3), (2, 3)]),
    ("ijk,ikl->ijl", [(2, 2, 3), (2, 3, 2)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (3, 2)]),  # batch broadcasting through ...
    ("...ij,...jk", [(1, 2, 3), (2, 3, 2)]),
    ("...,...->...", [(2, 3), (3,)]),
    ("i...->...", [(2, 3)]),
    ("ij,jk->ik", [(2, 1), (3, 2)]),  # a size-1 label broadcast against 3
    ("i,->i", [(3,), ()]),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize(("subscripts", "shapes"), CASES, ids=[c[0] for c in CASES])
def test_einsum(rng, subscripts, shapes, dtype, make_array):
    operands = [make_array(s, dtype) for s in shapes]
    check_rrule(np.einsum, subscripts, *operands)
    check_frule(np.einsum, subscripts, *operands)


def test_optimize_is_passed_through(rng, make_array):
    a, b, c = (make_array(s, np.float64) for s in [(2, 3), (3, 4), (4, 2)])
    check_rrule(np.einsum, "ij,jk,kl->il", a, b, c, optimize=True)
    check_frule(np.einsum, "ij,jk,kl->il", a, b, c, optimize="greedy")


def test_python_scalar_operand(rng, make_array):
    x = make_array((3,), np.float64)
    check_rrule(np.einsum, "i,->i", x, 2.5)
    assert isinstance(unthunk(rrule(np.einsum, "i,->i", x, 2.5)[1](np.ones(3))[3]), float)


def test_cotangents_are_thunks_and_subscripts_get_no_tangent(rng, make_array):
    a, b = make_array((2, 3), np.float64), make_array((3,), np.float64)
    _, pullback = rrule(np.einsum, "ij,j->i", a, b)
    f_bar, s_bar, a_bar, _ = pullback(np.ones(2))
    assert f_bar is NoTangent()
    assert s_bar is NoTangent()
    assert isinstance(a_bar, Thunk)
    assert not a_bar.evaluated


def test_frule_with_one_zero_tangent(rng, make_array):
    a, b = make_array((2, 3), np.float64), make_array((3,), np.float64)
    b_dot = make_array((3,), np.float64)
    _, y_dot = frule((NoTangent(), NoTangent(), ZeroTangent(), b_dot), np.einsum, "ij,j->i", a, b)
    np.testing.assert_allclose(y_dot, a @ b_dot)


def test_explicit_subscripts():
    x, y = np.ones((2, 3, 4)), np.ones((4, 5))
    assert explicit_subscripts("...ij,jk", (x, y)) == (["aij", "jk"], "aik")
    assert explicit_subscripts("ba", (np.ones((2, 3)),)) == (["ba"], "ab")
    assert explicit_subscripts("bA", (np.ones((2, 3)),)) == (["bA"], "Ab")  # ASCII, as numpy
    assert explicit_subscripts("a...,...->...", (x, np.ones(4))) == (["abc", "c"], "bc")
    assert explicit_subscripts("Ba,a", (np.ones((2, 3)), np.ones(3))) == (["Ba", "a"], "B")


def test_sublist_form_has_no_rule(rng, make_array):
    a = make_array((2, 2), np.float64)
    assert rrule(np.einsum, a, [0, 1], [1, 0]) is None


def test_out_is_refused(rng, make_array):
    a = make_array((2, 2), np.float64)
    with pytest.raises(ValueError, match="out"):
        rrule(np.einsum, "ij->ji", a, out=np.empty((2, 2)))
