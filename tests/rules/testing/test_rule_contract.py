"""The checker enforces a rule's whole contract, not only its derivative.

The primal output has ``f(*args)``'s type, dtype, shape and structure; cotangents have exactly
``ProjectTo``'s shape and structure (``uplo`` included); inputs (down to their attributes) are not
mutated and the returned primal is not overwritten; a rule's reused buffers cannot hide a
mishandled zero or thunk; tolerances follow every input's precision; empty arrays work.
"""

import collections
import dataclasses
import functools

import numpy as np
import pytest
import scipy.sparse as sp

from rules.testing import RuleCheckError, check_frule, check_rrule, rand_tangent
from rules.testing.results import tolerances
from tangents import (
    Diagonal,
    LowerTriangular,
    NoTangent,
    Symmetric,
    Tangent,
    Thunk,
    ZeroTangent,
    unthunk,
)


def sin(x):
    return np.sin(x)


class SlottedScale:
    """A callable with a ``__slots__`` field: ``ProjectTo`` gives it a structural tangent."""

    __slots__ = ("factor",)

    def __init__(self, factor):
        self.factor = factor

    def __call__(self, x):
        return self.factor * x


def apply(g, x):
    return g(x)


def test_a_slotted_callable_argument_has_the_tangent_space_projection_gives_it(rng, rule_for):
    g, x = SlottedScale(1.5), rng.standard_normal(3)
    assert isinstance(rand_tangent(g, 0), Tangent)  # one notion of "has fields" for both

    def ignoring_rrule(g, x):
        return apply(g, x), lambda y_bar: (NoTangent(), NoTangent(), g.factor * unthunk(y_bar))

    rule_for(apply, ignoring_rrule)
    with pytest.raises(RuleCheckError, match=r"argument 0 \(SlottedScale\) vs finite differences"):
        check_rrule(apply, g, x)


def test_a_slotted_callable_argument_with_a_right_cotangent_passes(rng, rule_for):
    def apply_rrule(g, x):
        def apply_pullback(y_bar):
            y_bar = unthunk(y_bar)
            return NoTangent(), Tangent(SlottedScale, factor=float(x @ y_bar)), g.factor * y_bar

        return apply(g, x), apply_pullback

    rule_for(apply, apply_rrule)
    check_rrule(apply, SlottedScale(1.5), rng.standard_normal(3))


def test_float32_primal_output_computed_in_float64_is_caught(rng, rule_for):
    def float64_rrule(x):
        return np.sin(x.astype(np.float64)), lambda y_bar: (NoTangent(), np.cos(x) * y_bar)

    def float64_frule(tangents, x):
        x64 = x.astype(np.float64)
        return np.sin(x64), np.cos(x64) * unthunk(tangents[1])

    rule_for(sin, float64_rrule, float64_frule)
    x = rng.standard_normal(4).astype(np.float32)
    with pytest.raises(
        RuleCheckError, match=r"primal output: has dtype float64; f\(\*args\) gives float32"
    ):
        check_rrule(sin, x)
    with pytest.raises(RuleCheckError, match="primal output: has dtype float64") as excinfo:
        check_frule(sin, x)
    # the output tangent is judged against f's output, not against the rule's own float64 one
    assert "output tangent: has dtype float64; the primal's tangent dtype is float32" in str(
        excinfo.value
    )


def test_primal_output_of_the_wrong_type_or_structure_is_caught(rng, rule_for):
    def pair(x):
        return np.sin(x), np.cos(x)

    def list_rrule(x):
        def pair_pullback(y_bar):
            s_bar, c_bar = (unthunk(v) for v in unthunk(y_bar))
            s_bar = np.zeros_like(x) if isinstance(s_bar, ZeroTangent) else s_bar
            c_bar = np.zeros_like(x) if isinstance(c_bar, ZeroTangent) else c_bar
            return NoTangent(), np.cos(x) * s_bar - np.sin(x) * c_bar

        return outputs(x), pair_pullback

    rule_for(pair, list_rrule)
    x = rng.standard_normal(3)
    outputs = lambda x: [np.sin(x), np.cos(x)]
    with pytest.raises(
        RuleCheckError, match=r"primal output: is a list; f\(\*args\) gives a tuple"
    ):
        check_rrule(pair, x)
    outputs = lambda x: (np.sin(x), np.cos(x)[:, None])
    with pytest.raises(
        RuleCheckError,
        match=r"primal output: has a component 1 that has shape \(3, 1\); f\(\*args\) gives \(3,\)",
    ):
        check_rrule(pair, x)
    outputs = pair
    check_rrule(pair, x)


def test_a_cotangent_with_an_extra_trailing_axis_is_caught(rng, rule_for):
    def column_rrule(x):
        return sin(x), lambda y_bar: (NoTangent(), (np.cos(x) * unthunk(y_bar))[:, None])

    def column_frule(tangents, x):
        return sin(x), (np.cos(x) * unthunk(tangents[1]))[:, None]

    rule_for(sin, column_rrule, column_frule)
    x = rng.standard_normal(4)
    with pytest.raises(
        RuleCheckError,
        match=r"argument 0 \(ndarray \(4,\)\): cotangent has shape \(4, 1\); ProjectTo of the "
        r"primal gives shape \(4,\)",
    ):
        check_rrule(sin, x)
    with pytest.raises(RuleCheckError, match=r"output tangent: has shape \(4, 1\)"):
        check_frule(sin, x)


def test_a_pullback_that_overwrites_the_returned_primal_is_caught(rng, rule_for):
    def double(x):
        return 2.0 * x

    def overwriting_rrule(x):
        y = 2.0 * x

        def double_pullback(y_bar):
            y[...] = 0.0  # reuses the output's memory as scratch space
            return NoTangent(), 2.0 * unthunk(y_bar)

        return y, double_pullback

    rule_for(double, overwriting_rrule)
    with pytest.raises(RuleCheckError, match="the primal output y: was modified in place"):
        check_rrule(double, rng.standard_normal(3))


def pair(x):
    return np.sin(x), np.cos(x)


def test_a_pullback_reusing_one_buffer_cannot_hide_mishandled_zeros(rng, rule_for):
    def buffered_rrule(x):
        buffer = np.empty_like(x)

        def pair_pullback(y_bar):
            s_bar, c_bar = (unthunk(v) for v in unthunk(y_bar))
            s_bar = np.zeros_like(x) if isinstance(s_bar, ZeroTangent) else s_bar
            c_bar = np.ones_like(x) if isinstance(c_bar, ZeroTangent) else c_bar  # wrong: ones
            np.subtract(np.cos(x) * s_bar, np.sin(x) * c_bar, out=buffer)
            return NoTangent(), buffer

        return pair(x), pair_pullback

    rule_for(pair, buffered_rrule)
    with pytest.raises(
        RuleCheckError, match=r"output component 1 as ZeroTangent\(\) vs as zeros: cotangent 0"
    ):
        check_rrule(pair, rng.standard_normal(3))


def test_an_frule_reusing_one_buffer_cannot_hide_mishandled_thunks(rng, rule_for):
    def buffered_frule(tangents, x):
        x_dot = tangents[1]
        x_dot = np.zeros_like(x) if isinstance(x_dot, Thunk) else x_dot  # wrong: drops thunks
        np.multiply(np.cos(x), x_dot, out=buffer)
        return sin(x), buffer

    rule_for(sin, None, buffered_frule)
    x = rng.standard_normal(3)
    buffer = np.empty_like(x)
    with pytest.raises(RuleCheckError, match="thunked input tangents vs plain ones: worst error"):
        check_frule(sin, x)


@dataclasses.dataclass(slots=True)
class SlottedBox:
    v: np.ndarray


class PlainSlots:
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v


def squared_norm(box):
    return float(np.sum(box.v**2))


@pytest.mark.parametrize("box_type", [SlottedBox, PlainSlots])
@pytest.mark.parametrize("mutation", ["write into the field", "rebind the field"])
def test_a_pullback_mutating_a_slotted_input_is_caught(rng, rule_for, box_type, mutation):
    calls = []

    def mutating_rrule(box):
        def squared_norm_pullback(y_bar):
            calls.append(y_bar)
            v_bar = 2 * unthunk(y_bar) * box.v
            if len(calls) == 2 and mutation == "write into the field":
                box.v[0] += 1.0  # after the first (checked) cotangent, so only mutation shows
            elif len(calls) == 2:
                box.v = box.v + 1.0
            return NoTangent(), Tangent(box_type, v=v_bar)

        return squared_norm(box), squared_norm_pullback

    rule_for(squared_norm, mutating_rrule)
    with pytest.raises(RuleCheckError, match="an input: was modified in place"):
        check_rrule(squared_norm, box_type(rng.standard_normal(3)))


def test_a_rule_mutating_python_numbers_or_a_structured_input_is_caught(rng, rule_for):
    def total(values):
        return sum(values)

    def mutating_rrule(values):
        def total_pullback(y_bar):
            values[0] = 0.0
            return NoTangent(), Tangent(tuple, *[unthunk(y_bar)] * len(values))

        return total(values), total_pullback

    rule_for(total, mutating_rrule)
    with pytest.raises(RuleCheckError, match="an input: was modified in place"):
        check_rrule(total, [1.0, 2.0])

    def trace_of(S):
        return float(np.trace(S.dense()))

    def flipping_rrule(S):
        def trace_of_pullback(y_bar):
            S.uplo = "L"  # changes the matrix S stands for, not its stored array
            return NoTangent(), Symmetric(unthunk(y_bar) * np.eye(3), uplo="U")

        return trace_of(S), trace_of_pullback

    rule_for(trace_of, flipping_rrule)
    with pytest.raises(RuleCheckError, match="an input: was modified in place"):
        check_rrule(trace_of, Symmetric(rng.standard_normal((3, 3))))


def test_a_symmetric_cotangent_stored_the_other_way_round_is_caught(rng, rule_for):
    def trace_of_square(S):
        D = S.dense()
        return float(np.trace(D @ D))

    def trace_of_square_rrule(S):
        D = S.dense()
        return trace_of_square(S), lambda y_bar: (NoTangent(), Symmetric(2 * y_bar * D, uplo))

    rule_for(trace_of_square, trace_of_square_rrule)
    S = Symmetric(rng.standard_normal((3, 3)), uplo="U")
    uplo = "L"
    with pytest.raises(
        RuleCheckError,
        match=r"argument 0 \(Symmetric \(3, 3\)\): cotangent has uplo='L'; ProjectTo of the "
        r"primal gives uplo='U'",
    ):
        check_rrule(trace_of_square, S)
    uplo = "U"
    check_rrule(trace_of_square, S)


Point = collections.namedtuple("Point", "a b")


def test_a_tuple_tangent_for_a_namedtuple_argument_gets_a_message(rng, rule_for):
    def product(p):
        return p.a * p.b

    def product_rrule(p):
        def product_pullback(y_bar):
            y_bar = unthunk(y_bar)
            return NoTangent(), tangent_type(y_bar * p.b, y_bar * p.a)

        return product(p), product_pullback

    rule_for(product, product_rrule)
    p = Point(rng.standard_normal(3), rng.standard_normal(3))
    tangent_type = functools.partial(Tangent, tuple)
    with pytest.raises(
        RuleCheckError,
        match=r"argument 0 \(Point\): cotangent is rejected by ProjectTo of the primal \(a "
        r"tangent of tuple is not a cotangent for a Point\)",
    ) as excinfo:
        check_rrule(product, p)
    assert "finite differences" not in str(excinfo.value)  # the values are compared, and right
    tangent_type = functools.partial(Tangent, Point)
    check_rrule(product, p)


@pytest.mark.parametrize(
    "primal",
    [
        LowerTriangular(np.eye(3, dtype=np.float32)),
        Diagonal(np.ones(3, np.complex64)),
        sp.csr_array(np.eye(3, dtype=np.float32)),
        SlottedBox(np.ones(2, np.float32)),
        [1.0, (2.0, {"a": Symmetric(np.eye(2, dtype=np.float32))})],
    ],
    ids=["triangular", "diagonal", "sparse", "slotted", "nested"],
)
def test_single_precision_structured_and_sparse_inputs_get_single_tolerances(primal):
    assert tolerances((primal, np.float64), None, None) == (1e-3, 1e-5)


def test_a_float32_triangular_inverse_is_checked_with_float32_tolerances():
    rng = np.random.default_rng(13)  # an input whose float32 rounding exceeds 1e-9 absolute
    A = (rng.standard_normal((3, 3)) + 2 * np.sqrt(3) * np.eye(3)).astype(np.float32)
    check_rrule(np.linalg.inv, LowerTriangular(A))


def test_an_empty_float_array_takes_an_empty_cotangent_or_a_zero(rule_for):
    rule_for(sin, lambda x: (sin(x), lambda y_bar: (NoTangent(), x_bar)))
    x = np.zeros((2, 0), np.float32)
    for x_bar in (np.zeros((2, 0), np.float32), ZeroTangent(), NoTangent()):  # noqa: B007 (read by the rule)
        check_rrule(sin, x)
    wrong = {
        "has dtype float64; the primal's tangent dtype is float32": np.zeros((2, 0)),
        r"has shape \(3,\), the primal has shape \(2, 0\)": np.zeros(3, np.float32),
    }
    for message, x_bar in wrong.items():  # noqa: B007 (read by the rule)
        with pytest.raises(RuleCheckError, match=r"argument 0 \(ndarray \(2, 0\)\): .*" + message):
            check_rrule(sin, x)
