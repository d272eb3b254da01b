"""The registry's checks before a rule runs (issue 14, items 1, 4, 7, 8, 9 and 10's last bullet)."""

import re
from collections import namedtuple

import numpy as np
import pytest
import scipy.linalg as sla

from rules import frule, rrule
from rules.core.checks import match_fields, named, plain_parts
from rules.core.registry import function_name
from tangents import NoTangent, Tangent, Thunk, ZeroTangent


@pytest.fixture
def A():
    return np.random.default_rng(0).standard_normal((3, 3)) + 3 * np.eye(3)


@pytest.fixture
def spd(A):
    return A @ A.T + 3 * np.eye(3)


# --- item 1: a Tangent of another type is matched by name or refused, never read by position -----


def test_qr_cotangent_of_another_namedtuple_is_matched_by_field_name(A):
    rng = np.random.default_rng(1)
    Q_bar, R_bar = rng.standard_normal((2, 3, 3))
    _, pullback = rrule(np.linalg.qr, A)
    expected = pullback((Q_bar, R_bar))[1]
    Swapped = namedtuple("Swapped", "R Q")
    np.testing.assert_array_equal(pullback(Tangent(Swapped, R=R_bar, Q=Q_bar))[1], expected)
    np.testing.assert_array_equal(pullback(Tangent(Swapped, R_bar, Q_bar))[1], expected)
    np.testing.assert_array_equal(pullback(Tangent(dict, {"R": R_bar, "Q": Q_bar}))[1], expected)
    np.testing.assert_array_equal(
        pullback(Thunk(lambda: Tangent(Swapped, R_bar, Q_bar)))[1], expected
    )
    # a dict naming one output only: the other is a zero
    only_R = pullback(Tangent(dict, {"R": R_bar}))[1]
    np.testing.assert_array_equal(only_R, pullback((ZeroTangent(), R_bar))[1])


def test_a_tangent_whose_names_do_not_fit_is_refused_naming_the_output_type(A):
    _, pullback = rrule(np.linalg.qr, A)
    Other = namedtuple("Other", "X Y")
    with pytest.raises(TypeError, match=r"np\.linalg\.qr pullback.*QRResult with fields Q, R"):
        pullback(Tangent(Other, np.eye(3), np.eye(3)))
    with pytest.raises(TypeError, match=r"np\.linalg\.qr pullback.*QRResult"):
        pullback(Tangent(dict, {"Q": np.eye(3), "X": np.eye(3)}))


def test_a_plain_tuple_output_refuses_named_components(A):
    y, pullback = rrule(sla.qr, A)
    assert type(y) is tuple
    with pytest.raises(TypeError, match=r"scipy\.linalg\.qr pullback.*components by position"):
        pullback(Tangent(dict, {"R": np.eye(3), "Q": np.eye(3)}))
    # Tangent(tuple, ...) is read by position, like a tuple
    np.testing.assert_array_equal(
        pullback(Tangent(tuple, np.eye(3), 2 * np.eye(3)))[1],
        pullback((np.eye(3), 2 * np.eye(3)))[1],
    )


def test_match_fields_leaves_the_right_type_and_non_tangents_alone():
    Pair = namedtuple("Pair", "a b")
    t = Tangent(Pair, 1.0, 2.0)
    assert match_fields("f", "x", t, Pair(0.0, 0.0)) is t
    assert match_fields("f", "x", (1.0, 2.0), Pair(0.0, 0.0)) == (1.0, 2.0)


def test_frule_tangent_of_a_tuple_argument_is_matched_by_name(spd):
    c_and_lower = sla.cho_factor(spd)
    b = np.arange(3.0)
    c_dot = np.random.default_rng(2).standard_normal((3, 3))
    Swapped = namedtuple("Swapped", "lower c")  # field names that fit no tuple: refused
    expected = frule(
        (NoTangent(), (c_dot, NoTangent()), ZeroTangent()), sla.cho_solve, c_and_lower, b
    )
    got = frule(
        (NoTangent(), Tangent(tuple, c_dot, NoTangent()), ZeroTangent()),
        sla.cho_solve,
        c_and_lower,
        b,
    )
    np.testing.assert_array_equal(got[1], expected[1])
    with pytest.raises(TypeError, match=r"scipy\.linalg\.cho_solve pushforward"):
        frule(
            (NoTangent(), Tangent(Swapped, NoTangent(), c_dot), ZeroTangent()),
            sla.cho_solve,
            c_and_lower,
            b,
        )


# --- item 4: object arrays are refused by every rule, in the registry --------------------------


OBJECT_CASES = [
    np.linalg.qr,
    sla.expm,
    sla.lu,
    sla.lu_factor,
    sla.cho_factor,
    sla.sqrtm,
    sla.logm,
    np.linalg.inv,
    np.linalg.det,
    np.linalg.eigh,
    np.linalg.svd,
]


@pytest.mark.parametrize("f", OBJECT_CASES, ids=lambda f: f.__name__)
def test_object_arrays_are_refused_by_rrule_and_frule(f, spd):
    obj = spd.astype(object)
    name = function_name(f).replace(".", r"\.")
    with pytest.raises(TypeError, match=rf"{name}: argument 0 is an array of dtype object"):
        rrule(f, obj)
    with pytest.raises(TypeError, match=rf"{name}: argument 0 is an array of dtype object"):
        frule((NoTangent(), np.eye(3)), f, obj)


def test_object_arrays_inside_a_list_argument_are_refused(A):
    with pytest.raises(TypeError, match=r"np\.linalg\.multi_dot: argument 0"):
        rrule(np.linalg.multi_dot, [A, A.astype(object)])


def test_object_cotangents_are_refused(A):
    _, pullback = rrule(np.linalg.inv, A)
    with pytest.raises(
        TypeError, match=r"np\.linalg\.inv pullback: the cotangent is an array of dtype object"
    ):
        pullback(np.eye(3).astype(object))


# --- item 7: cotangents of the wrong type name the function ------------------------------------


@pytest.mark.parametrize("bad", [1.0, [1.0, 2.0], (1.0,)], ids=["float", "list", "tuple"])
@pytest.mark.parametrize(
    ("f", "args"),
    [
        (np.linalg.inv, lambda A, spd: (A,)),
        (sla.solve, lambda A, spd: (A, np.ones((3, 2)))),
        (np.linalg.pinv, lambda A, spd: (A,)),
    ],
    ids=["inv", "solve", "pinv"],
)
def test_number_list_or_tuple_cotangent_of_a_matrix_output(f, args, bad, A, spd):
    _, pullback = rrule(f, *args(A, spd))
    name = re.escape(f"{function_name(f)} pullback: the cotangent is a")
    with pytest.raises(TypeError, match=name):
        pullback(bad)


def test_cho_factor_cotangent_components_are_checked(spd):
    _, pullback = rrule(sla.cho_factor, spd)
    with pytest.raises(
        TypeError, match=r"scipy\.linalg\.cho_factor pullback: the cotangent of output 0"
    ):
        pullback((1.0, NoTangent()))
    with pytest.raises(TypeError, match=r"scipy\.linalg\.cho_factor pullback"):
        pullback(1.0)


def test_a_number_for_a_one_element_array_is_accepted():
    x = np.array([2.0])
    _, pullback = rrule(np.sum, x, keepdims=True)
    np.testing.assert_array_equal(pullback(3.0)[1], [3.0])


# --- item 10, last bullet: components of piecewise-constant outputs are shape-checked too --------


def test_wrong_shape_cotangent_of_a_piecewise_constant_output(A):
    _, pullback = rrule(np.linalg.slogdet, A)
    with pytest.raises(
        ValueError,
        match=r"np\.linalg\.slogdet pullback: the cotangent of sign has shape \(2,\)",
    ):
        pullback((np.ones(2), 1.0))
    _, pullback = rrule(sla.lu, A)
    with pytest.raises(
        ValueError,
        match=r"scipy\.linalg\.lu pullback: the cotangent of output 0 has shape \(2, 2\)",
    ):
        pullback((np.ones((2, 2)), np.eye(3), np.eye(3)))


# --- item 8: frule tangents are checked in the registry ----------------------------------------


def test_frule_number_tangent_for_a_matrix_names_the_function(A):
    with pytest.raises(
        TypeError, match=r"np\.linalg\.qr pushforward: the tangent of argument 0 is a float"
    ):
        frule((NoTangent(), 1.0), np.linalg.qr, A)


@pytest.mark.parametrize(
    ("f", "args", "position"),
    [
        (np.linalg.cholesky, lambda A, spd: (spd,), 0),
        (np.linalg.solve, lambda A, spd: (A, np.ones((3, 2))), 0),
        (np.linalg.solve, lambda A, spd: (A, np.ones((3, 2))), 1),
        (sla.solve_triangular, lambda A, spd: (np.triu(A), np.ones(3)), 1),
        (np.linalg.inv, lambda A, spd: (A,), 0),
        (np.linalg.pinv, lambda A, spd: (A,), 0),
        (sla.expm, lambda A, spd: (A,), 0),
    ],
    ids=["cholesky", "solve-a", "solve-b", "solve_triangular-b", "inv", "pinv", "expm"],
)
def test_frule_wrong_shape_tangent_names_the_function_and_shapes(f, args, position, A, spd):
    primal = args(A, spd)
    tangents = [NoTangent()] + [ZeroTangent()] * len(primal)
    tangents[1 + position] = np.ones((1, 3))
    expected = re.escape(
        f"{function_name(f)} pushforward: the tangent of argument {position} has shape (1, 3)"
    )
    with pytest.raises(ValueError, match=expected):
        frule(tuple(tangents), f, *primal)


# --- item 9: errors from inside a rule name it, keeping their type and chain -------------------


def inverse(a):
    return np.linalg.inv(a)


def test_errors_from_inside_a_rule_are_named_and_chained(registered):
    name = re.escape(function_name(inverse))

    @registered(rrule, inverse)
    def inverse_rrule(a):
        y = np.linalg.inv(a)  # numpy's own LinAlgError for a singular matrix

        def inverse_pullback(y_bar):
            return NoTangent(), -(y.T @ y_bar @ y.T) + np.linalg.inv(np.zeros((2, 2)))

        return y, inverse_pullback

    with pytest.raises(np.linalg.LinAlgError, match=rf"^{name}: Singular matrix$") as info:
        rrule(inverse, np.zeros((2, 2)))
    assert isinstance(info.value.__cause__, np.linalg.LinAlgError)
    assert str(info.value.__cause__) == "Singular matrix"
    _, pullback = rrule(inverse, np.eye(2))
    with pytest.raises(np.linalg.LinAlgError, match=rf"^{name} pullback: Singular matrix$"):
        pullback(np.eye(2))


def test_errors_that_name_the_rule_are_not_wrapped(A):
    with pytest.raises(np.linalg.LinAlgError) as info:
        rrule(np.linalg.inv, np.zeros((3, 3)))
    assert info.value.__cause__ is None or "np.linalg.inv" not in str(info.value.__cause__)
    assert str(info.value).count("np.linalg.inv") == 1


def test_named_keeps_the_type_and_gives_up_on_odd_constructors():
    renamed = named(KeyError("k"), "f", " pullback")
    assert type(renamed) is KeyError
    assert "f pullback" in str(renamed)
    assert named(ValueError("f: already named"), "f", "") is None
    odd = UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
    assert named(odd, "the_rule", "") is None
    assert odd.__notes__ == ["raised in the_rule"]  # named in the traceback instead


def test_plain_parts_takes_numpy_scalar_outputs_with_0d_cotangents():
    y = (np.float64(1.0), np.zeros(3))
    assert plain_parts(y, (np.asarray(2.0), np.ones(3)), 2)
    assert not plain_parts(y, (np.ones(1), np.ones(3)), 2)  # shape (1,) for a scalar output
    for scalar in (2.0, np.float64(2.0), np.float32(2.0), 2.0j, np.complex128(2.0)):
        assert plain_parts(y, (scalar, np.ones(3)), 2)  # a scalar for a scalar output
        assert not plain_parts(y, (np.asarray(2.0), scalar), 2)  # for an output of shape (3,)
    assert not plain_parts(y, (True, np.ones(3)), 2)  # not a number the checks pass as is
    assert not plain_parts(y, (2, np.ones(3)), 2)
    assert not plain_parts((1.0, np.zeros(3)), (np.asarray(2.0), np.ones(3)), 2)  # Python float
    assert not plain_parts(y, (np.asarray(2.0, dtype=object), np.ones(3)), 2)


def test_slogdet_cotangent_errors_unchanged():
    _, pullback = rrule(np.linalg.slogdet, np.eye(3))
    with pytest.raises(ValueError, match="shape"):
        pullback((np.zeros(2), np.asarray(1.0)))
    A_bar = pullback((np.asarray(0.0), np.asarray(2.0)))[1]
    np.testing.assert_array_equal(A_bar, 2 * np.eye(3))
    for y_bar in [(0.0, 2.0), (np.float64(0.0), np.float64(2.0)), (0.0, np.float32(2.0))]:
        np.testing.assert_array_equal(pullback(y_bar)[1], A_bar)  # scalars: the hot path
    with pytest.raises(ValueError, match="shape"):
        pullback((np.zeros(2), 2.0))
