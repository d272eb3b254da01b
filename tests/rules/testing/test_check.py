"""The rule checker itself: it passes correct rules and catches each kind of broken one."""

import collections
import dataclasses
import functools

import numpy as np
import pytest
import scipy.sparse as sp

from rules import frule, rrule, split_cotangent
from rules.testing import RuleCheckError, check_frule, check_rrule, rand_tangent
from rules.testing.results import tolerances
from tangents import (
    Diagonal,
    Hermitian,
    LowerTriangular,
    NoTangent,
    NotImplementedTangent,
    ProjectTo,
    Symmetric,
    Tangent,
    Thunk,
    UpperTriangular,
    ZeroTangent,
    unthunk,
)


@pytest.fixture
def rule_for():
    """Register an rrule (and optionally an frule) for a test's own function; undone afterwards."""
    added = []

    def register(f, rrule_fn=None, frule_fn=None):
        if rrule_fn is not None:
            rrule.register(f)(rrule_fn)
            added.append((rrule, f))
        if frule_fn is not None:
            frule.register(f)(frule_fn)
            added.append((frule, f))

    yield register
    for table, f in added:
        table.unregister(f)


# --- a few correct rules pass --------------------------------------------------------------------


def sin(x):
    return np.sin(x)


def sin_rrule(x):
    def sin_pullback(y_bar):
        return NoTangent(), np.conj(np.cos(x)) * unthunk(y_bar)

    return sin(x), sin_pullback


def sin_frule(tangents, x):
    return sin(x), np.cos(x) * unthunk(tangents[1])


def matmul(A, B):
    return A @ B


def matmul_rrule(A, B):
    project_A, project_B = ProjectTo(A), ProjectTo(B)

    def matmul_pullback(C_bar):
        C_bar = unthunk(C_bar)
        return NoTangent(), project_A(C_bar @ B.conj().T), project_B(A.conj().T @ C_bar)

    return A @ B, matmul_pullback


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_correct_elementwise_rule_passes(rng, rule_for, dtype):
    rule_for(sin, sin_rrule, sin_frule)
    x = (rng.standard_normal((2, 3)) + (0.5j if dtype == np.complex128 else 0)).astype(dtype)
    report = check_rrule(sin, x)
    assert report.errors["argument 0 (ndarray (2, 3)) vs finite differences"] < 1e-6
    check_frule(sin, x)


def test_correct_matrix_rule_passes(rng, rule_for):
    rule_for(matmul, matmul_rrule)
    check_rrule(matmul, rng.standard_normal((2, 3)), rng.standard_normal((3, 4)))
    check_rrule(
        matmul,
        rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2)),
        rng.standard_normal((2, 2)),
    )


@dataclasses.dataclass
class Polar:
    r: float
    theta: float


@dataclasses.dataclass
class Cartesian:
    x: float
    y: float


def to_cartesian(p):
    return Cartesian(p.r * np.cos(p.theta), p.r * np.sin(p.theta))


def to_cartesian_rrule(p):
    def to_cartesian_pullback(c_bar):
        c_bar = unthunk(c_bar)
        x_bar, y_bar = c_bar.x, c_bar.y
        r_bar = np.cos(p.theta) * x_bar + np.sin(p.theta) * y_bar
        theta_bar = p.r * (-np.sin(p.theta) * x_bar + np.cos(p.theta) * y_bar)
        return NoTangent(), Tangent(Polar, r=r_bar, theta=theta_bar)

    return to_cartesian(p), to_cartesian_pullback


def test_dataclass_valued_function_passes(rule_for):
    rule_for(to_cartesian, to_cartesian_rrule)
    check_rrule(to_cartesian, Polar(2.0, 0.3))
    check_rrule(to_cartesian, Polar(2.0, 0.3), output_tangent=Tangent(Cartesian, y=1.0))


class Scaled:
    """A callable object with a field: its cotangent is checked too."""

    def __init__(self, factor):
        self.factor = factor

    def __call__(self, x):
        return self.factor * np.sin(x)


def test_callable_object_with_fields_passes():
    @rrule.register_call(Scaled)
    def scaled_rrule(f, x):
        def scaled_pullback(y_bar):
            return Tangent(Scaled, factor=np.sum(np.sin(x) * y_bar)), f.factor * np.cos(x) * y_bar

        return f(x), scaled_pullback

    try:
        check_rrule(Scaled(1.5), np.array([0.1, 0.7]))
    finally:
        rrule.unregister(Scaled)


def eigvalsh(A):
    return np.linalg.eigvalsh(A)


def eigvalsh_rrule(A):
    w, V = np.linalg.eigh(A)
    project_A = ProjectTo(A)

    def eigvalsh_pullback(w_bar):
        return NoTangent(), project_A((V * unthunk(w_bar)) @ V.conj().T)

    return w, eigvalsh_pullback


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_symmetric_inputs_are_differenced_symmetrically(rng, rule_for, dtype):
    rule_for(eigvalsh, eigvalsh_rrule)
    A = rng.standard_normal((3, 3)) + (
        1j * rng.standard_normal((3, 3)) if dtype == np.complex128 else 0
    )
    A = A + A.conj().T
    check_rrule(eigvalsh, A, symmetric=[0])


def unsymmetrised_rrule(A):
    w, V = np.linalg.eigh(A)

    def pullback(w_bar):
        return NoTangent(), np.triu(
            2 * (V * w_bar) @ V.T
        )  # only the triangle eigh reads... wrongly

    return w, pullback


def test_an_unsymmetrised_cotangent_is_caught(rng, rule_for):
    rule_for(eigvalsh, unsymmetrised_rrule)
    A = rng.standard_normal((3, 3))
    with pytest.raises(RuleCheckError, match=r"argument 0.*finite differences"):
        check_rrule(eigvalsh, A + A.T, symmetric=[0])


def test_multi_output_rule_with_partial_zeros(rng, rule_for):
    def polar(z):
        return np.abs(z), np.angle(z)

    def polar_rrule(z):
        r, theta = polar(z)

        def polar_pullback(y_bar):
            r_bar, theta_bar = (unthunk(c) for c in split_cotangent(y_bar, 2))
            z_bar = ZeroTangent()
            if not isinstance(r_bar, ZeroTangent):
                z_bar = z_bar + r_bar * z / r
            if not isinstance(theta_bar, ZeroTangent):
                z_bar = z_bar + theta_bar * 1j * z / r**2
            return NoTangent(), z_bar

        return (r, theta), polar_pullback

    rule_for(polar, polar_rrule)
    check_rrule(polar, np.array([1.0 + 2.0j, -0.5 + 0.3j]))


# --- broken rules are caught ---------------------------------------------------------------------


def test_no_rule_registered():
    def lonely(x):
        return x

    with pytest.raises(RuleCheckError, match="no rrule"):
        check_rrule(lonely, 1.0)
    with pytest.raises(RuleCheckError, match="no frule"):
        check_frule(lonely, 1.0)


def test_sign_error(rng, rule_for):
    def bad_rrule(x):
        return sin(x), lambda y_bar: (NoTangent(), -np.cos(x) * y_bar)

    rule_for(sin, bad_rrule)
    with pytest.raises(
        RuleCheckError, match=r"argument 0 \(ndarray \(3,\)\) vs finite differences: worst error"
    ):
        check_rrule(sin, rng.standard_normal(3))


def test_sign_error_in_an_frule(rng, rule_for):
    rule_for(sin, None, lambda tangents, x: (sin(x), -np.cos(x) * tangents[1]))
    with pytest.raises(RuleCheckError, match="output tangent vs finite differences"):
        check_frule(sin, rng.standard_normal(3))


def test_missing_transpose(rng, rule_for):
    def bad_rrule(A, B):
        return A @ B, lambda C_bar: (NoTangent(), C_bar @ B, A.T @ C_bar)

    rule_for(matmul, bad_rrule)
    with pytest.raises(RuleCheckError, match=r"argument 0 \(ndarray \(3, 3\)\)") as excinfo:
        check_rrule(matmul, rng.standard_normal((3, 3)), rng.standard_normal((3, 3)))
    assert "argument 1" not in str(excinfo.value).split("dot-product")[0]


def test_missing_conjugate(rng, rule_for):
    def square(z):
        return z * z

    def bad_rrule(z):
        return square(z), lambda y_bar: (NoTangent(), 2 * z * y_bar)  # needs conj(2 z)

    rule_for(square, bad_rrule)
    z = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    with pytest.raises(RuleCheckError, match="vs finite differences"):
        check_rrule(square, z)
    check_rrule(square, z.real)  # the same rule is right for real inputs


def test_float32_answered_in_float64(rng, rule_for):
    def bad_rrule(x):
        return sin(x), lambda y_bar: (NoTangent(), np.cos(x).astype(np.float64) * y_bar)

    rule_for(sin, bad_rrule)
    x = rng.standard_normal(3).astype(np.float32)
    with pytest.raises(
        RuleCheckError, match="has dtype float64; the primal's tangent dtype is float32"
    ):
        check_rrule(sin, x)


def test_pullback_that_mutates_its_input(rng, rule_for):
    def bad_rrule(x):
        def pullback(y_bar):
            y_bar *= np.cos(x)  # writes into the output tangent it was given
            return NoTangent(), y_bar

        return sin(x), pullback

    rule_for(sin, bad_rrule)
    with pytest.raises(RuleCheckError, match="output tangent: was modified in place"):
        check_rrule(sin, rng.standard_normal(3))


def test_rule_that_mutates_an_argument(rng, rule_for):
    def bad_rrule(x):
        y = sin(x)
        x[0] = 0.0
        return y, lambda y_bar: (NoTangent(), np.cos(x) * y_bar)

    rule_for(sin, bad_rrule)
    with pytest.raises(RuleCheckError, match="an input: was modified in place"):
        check_rrule(sin, rng.standard_normal(3))


def test_tuple_of_the_wrong_length(rng, rule_for):
    rule_for(sin, lambda x: (sin(x), lambda y_bar: (np.cos(x) * y_bar,)))
    with pytest.raises(RuleCheckError, match="returned 1 cotangents; expected 2"):
        check_rrule(sin, rng.standard_normal(3))


def test_pullback_not_returning_a_tuple(rng, rule_for):
    rule_for(sin, lambda x: (sin(x), lambda y_bar: [NoTangent(), np.cos(x) * y_bar]))
    with pytest.raises(RuleCheckError, match="must return a tuple"):
        check_rrule(sin, rng.standard_normal(3))


def test_rule_that_ignores_an_argument(rng, rule_for):
    def mul(a, b):
        return a * b

    def bad_rrule(a, b):
        return mul(a, b), lambda y_bar: (NoTangent(), b * y_bar, ZeroTangent())

    rule_for(mul, bad_rrule)
    with pytest.raises(
        RuleCheckError, match=r"argument 1 \(ndarray \(3,\)\) vs finite differences"
    ):
        check_rrule(mul, rng.standard_normal(3), rng.standard_normal(3))


def test_wrong_primal_output(rng, rule_for):
    rule_for(sin, lambda x: (np.cos(x), lambda y_bar: (NoTangent(), np.cos(x) * y_bar)))
    with pytest.raises(RuleCheckError, match="primal output"):
        check_rrule(sin, rng.standard_normal(3))


def test_pullbacks_never_see_a_thunk_of_the_whole_cotangent(rng, rule_for):
    def picky_rrule(x):
        def pullback(y_bar):
            if not isinstance(y_bar, np.ndarray):
                raise TypeError("ndarray only")
            return NoTangent(), np.cos(x) * y_bar

        return sin(x), pullback

    rule_for(sin, picky_rrule)
    check_rrule(sin, rng.standard_normal(3))  # the registry evaluates the checker's Thunk(y_bar)


def test_pullback_that_rejects_thunked_components(rng, rule_for):
    def pair(x):
        return np.sin(x), np.cos(x)

    def picky_rrule(x):
        def pullback(y_bar):
            s_bar, c_bar = y_bar
            if not isinstance(s_bar, np.ndarray | ZeroTangent):
                raise TypeError("ndarray components only")
            c_bar = unthunk(c_bar)
            c_bar = np.zeros_like(x) if isinstance(c_bar, ZeroTangent) else c_bar
            s_bar = np.zeros_like(x) if isinstance(s_bar, ZeroTangent) else s_bar
            return NoTangent(), np.cos(x) * s_bar - np.sin(x) * c_bar

        return pair(x), pullback

    rule_for(pair, picky_rrule)
    x = rng.standard_normal(3)
    check_rrule(pair, x)
    _, pullback = rrule(pair, x)
    with pytest.raises(TypeError, match="ndarray components only"):
        pullback((Thunk(lambda: np.ones(3)), np.ones(3)))


def test_wrong_structure_for_a_structured_input(rng, rule_for):
    def trace_of(D):
        return float(np.trace(np.asarray(D)))

    def dense_rrule(D):
        return trace_of(D), lambda y_bar: (NoTangent(), y_bar * np.eye(D.shape[0]))

    rule_for(trace_of, dense_rrule)
    with pytest.raises(
        RuleCheckError, match="is a ndarray; ProjectTo of the primal gives a Diagonal"
    ):
        check_rrule(trace_of, Diagonal(rng.standard_normal(3)))


def test_non_perturbable_arguments_need_a_zero(rng, rule_for):
    def shift(x, n):
        return np.roll(x, n)

    rule_for(
        shift, lambda x, n: (shift(x, n), lambda y_bar: (NoTangent(), np.roll(y_bar, -n), 1.0))
    )
    with pytest.raises(RuleCheckError, match=r"argument 1 .int.: has no tangent space"):
        check_rrule(shift, rng.standard_normal(4), 1)


def test_not_implemented_cotangents_are_reported_not_failed(rng, rule_for):
    def mul(a, b):
        return a * b

    rule_for(
        mul,
        lambda a, b: (
            mul(a, b),
            lambda y_bar: (NoTangent(), b * y_bar, NotImplementedTangent("b")),
        ),
    )
    report = check_rrule(mul, rng.standard_normal(2), rng.standard_normal(2))
    assert report.not_implemented == ["argument 1 (ndarray (2,))"]


# --- rand_tangent --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("primal", "kind", "dtype"),
    [
        (np.zeros((2, 3), np.float32), np.ndarray, np.float32),
        (np.zeros(2, np.complex128), np.ndarray, np.complex128),
        (np.arange(3), np.ndarray, np.float64),
        (1.5, float, None),
        (1j, complex, None),
        (np.float32(1), np.float32, None),
        (Diagonal(np.ones(3)), Diagonal, np.float64),
        (Symmetric(np.eye(3), uplo="L"), Symmetric, np.float64),
        (Hermitian(np.eye(3, dtype=complex)), Hermitian, np.complex128),
        (UpperTriangular(np.eye(3, dtype=np.float32)), UpperTriangular, np.float32),
        (sp.csr_array(np.eye(3)), sp.csr_array, np.float64),
        (Polar(1.0, 2.0), Tangent, None),
        ((1.0, np.zeros(2)), Tangent, None),
    ],
)
def test_rand_tangent_types(primal, kind, dtype):
    t = rand_tangent(primal, np.random.default_rng(1))
    assert isinstance(t, kind)
    if dtype is not None:
        assert t.dtype == dtype
    assert ProjectTo(primal)(t) is t  # already in the tangent space


def test_rand_tangent_structure():
    t = rand_tangent(Symmetric(np.eye(3), uplo="U"), 0)
    dense = np.asarray(t)
    np.testing.assert_allclose(dense, dense.T)
    s = rand_tangent(sp.csr_array(np.eye(3)), 0)
    assert s.nnz == 3
    h = np.asarray(rand_tangent(Hermitian(np.eye(2, dtype=complex)), 0))
    np.testing.assert_allclose(h, h.conj().T)


def test_rand_tangent_of_things_without_tangent_space():
    for x in (True, 3, "s", None, np.ones(2, dtype=bool)):
        assert rand_tangent(x, 0) is NoTangent()


def test_constant_positions_are_not_differenced(rng, rule_for):
    def gather(x, idx):
        return x[idx]

    def gather_rrule(x, idx):
        def gather_pullback(y_bar):
            y_bar = unthunk(y_bar)
            x_bar = np.zeros_like(x)
            np.add.at(x_bar, idx, y_bar)
            return NoTangent(), x_bar, NoTangent()

        return gather(x, idx), gather_pullback

    rule_for(gather, gather_rrule)
    check_rrule(gather, rng.standard_normal(4), np.array([0, 2, 2]), constant=[1])
    with pytest.raises(ValueError, match="constant= names"):
        check_rrule(gather, rng.standard_normal(4), np.array([0]), constant=[5])


def test_constant_components_of_a_tuple_argument(rng, rule_for):
    def gather_pair(pair, scale):
        x, idx = pair
        return scale * x[idx]

    def gather_pair_rrule(pair, scale):
        x, idx = pair

        def gather_pair_pullback(y_bar):
            y_bar = unthunk(y_bar)
            x_bar = np.zeros_like(x)
            np.add.at(x_bar, idx, scale * y_bar)
            return NoTangent(), Tangent(tuple, x_bar, NoTangent()), np.vdot(x[idx], y_bar)

        return gather_pair(pair, scale), gather_pair_pullback

    rule_for(gather_pair, gather_pair_rrule)
    pair = (rng.standard_normal(4), np.array([0, 2, 2]))
    check_rrule(gather_pair, pair, 1.5, constant=[(0, 1)])
    with pytest.raises(IndexError):  # otherwise the indices are moved as real numbers
        check_rrule(gather_pair, pair, 1.5)
    with pytest.raises(ValueError, match="component 5 of argument 0"):
        check_rrule(gather_pair, pair, 1.5, constant=[(0, 5)])
    with pytest.raises(ValueError, match="constant= names"):
        check_rrule(gather_pair, pair, 1.5, constant=[(3, 0)])


def test_list_outputs_are_checked(rng, rule_for):
    def halves(x):
        return [x[:2] * 2.0, x[2:]]

    def wrong_rrule(x):
        def halves_pullback(y_bar):
            first, second = (unthunk(v) for v in unthunk(y_bar))
            first, second = (np.zeros(2) if v is ZeroTangent() else v for v in (first, second))
            return NoTangent(), np.concatenate([first, second])  # forgets the factor 2

        return halves(x), halves_pullback

    rule_for(halves, wrong_rrule)
    with pytest.raises(RuleCheckError, match="finite differences"):
        check_rrule(halves, rng.standard_normal(4))


def test_dtype_classes_as_arguments_do_not_confuse_the_tolerances(rng, rule_for):
    def as_type(x, dtype):
        return x.astype(dtype)

    rule_for(
        as_type,
        lambda x, dtype: (
            as_type(x, dtype),
            lambda y_bar: (NoTangent(), unthunk(y_bar).astype(x.dtype)),
        ),
    )
    check_rrule(as_type, rng.standard_normal(3), np.float64)


# --- findings of the checker review ----------------------------------------------------------------


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


def spread(x):
    return np.std(x)


def spread_rrule(x):
    y = np.std(x)
    return y, lambda y_bar: (NoTangent(), unthunk(y_bar) * (x - x.mean()) / (x.size * y))


def spread_frule(tangents, x):
    y = np.std(x)
    return y, np.sum((x - x.mean()) * unthunk(tangents[1])) / (x.size * y)


def test_the_step_adapts_to_a_function_that_bends_on_a_tiny_scale(rng, rule_for):
    rule_for(spread, spread_rrule, spread_frule)
    x = 1.0 + 1e-3 * rng.standard_normal(5)  # std bends on the scale of the spread, 1e-3
    check_rrule(spread, x)
    check_frule(spread, x)


def root(x):
    return np.sqrt(x)


@pytest.mark.parametrize("error", [0.0, 1e-4])
def test_the_step_adapts_to_small_entries_next_to_large_ones(rule_for, error):
    rule_for(
        root, lambda x: (root(x), lambda y_bar: (NoTangent(), (0.5 + error) * y_bar / root(x)))
    )
    x = np.array([0.004, 0.3, 2.0, 5.0])  # a step of 1e-3 * 5 would leave sqrt's domain
    if error:
        with pytest.raises(RuleCheckError, match=r"argument 0 \(ndarray \(4,\)\) vs finite diff"):
            check_rrule(root, x)
    else:
        check_rrule(root, x)


def arcsin(x):
    return np.arcsin(x)


def test_a_step_out_of_the_domain_is_halved_not_reported(rule_for):
    rule_for(
        arcsin,
        lambda x: (arcsin(x), lambda y_bar: (NoTangent(), unthunk(y_bar) / np.sqrt(1 - x**2))),
    )
    # every first step, 1e-3 * max(1, |x|) or 1e-3 * |x|, takes 0.9999 past 1: arcsin gives nan
    check_rrule(arcsin, np.array([0.9999, -0.99995, 0.3]))


def reciprocal(x):
    return 1.0 / x


def log(x):
    return np.log(x)


def elementwise_rules(f, derivative, error):
    """An rrule and an frule for ``f`` whose derivative is off by the factor ``1 + error``."""

    def f_rrule(x):
        return f(x), lambda y_bar: (NoTangent(), unthunk(y_bar) * (1.0 + error) * derivative(x))

    def f_frule(tangents, x):
        return f(x), (1.0 + error) * derivative(x) * unthunk(tangents[1])

    return f_rrule, f_frule


def reciprocal_rules(error):
    return elementwise_rules(reciprocal, lambda x: -1.0 / x**2, error)


@pytest.mark.parametrize("check", [check_rrule, check_frule])
@pytest.mark.parametrize(
    ("f", "derivative", "size"),
    [
        # 1 / x bends on the scale of x: a step of 1e-3 would cross the pole at 0
        (reciprocal, lambda x: -1.0 / x**2, 1e-6),
        # log(1e6 + 1e-3) - log(1e6 - 1e-3) keeps 3 of log's 16 digits: a relative error of
        # 1e-6 in the finite differences
        (log, lambda x: 1.0 / x, 1e6),
    ],
)
@pytest.mark.parametrize("error", [0.0, 1e-4])
def test_the_step_is_relative_to_the_size_of_the_input(
    rng, rule_for, check, f, derivative, size, error
):
    rule_for(f, *elementwise_rules(f, derivative, error))
    x = size * (1.0 + rng.random(4))
    # atol=0: the derivatives of 1e-12 and 1e-6 are below the default atol
    if error:
        with pytest.raises(RuleCheckError, match="vs finite differences"):
            check(f, x, atol=0.0)
    else:
        check(f, x, atol=0.0)


@pytest.mark.parametrize("check", [check_rrule, check_frule])
@pytest.mark.parametrize("error", [0.0, 1e-4])
def test_a_direction_through_entries_of_very_different_sizes(rule_for, check, error):
    # no one step fits both 1e-6 (moved by 1e-3 * 3e6 it crosses the pole) and 3e6 (moved by
    # 1e-3 * 1e-6 it drowns in round-off): the frule's random direction and the dot-product test
    # are split into parts of similar size
    rule_for(reciprocal, *reciprocal_rules(error))
    x = np.array([1e-6, 2e-6, 1e6, 3e6, 0.5])
    if error:
        with pytest.raises(RuleCheckError, match="vs finite differences"):
            check(reciprocal, x, atol=0.0)
    else:
        check(reciprocal, x, atol=0.0)


def test_a_tiny_entry_of_a_function_that_bends_on_the_scale_one(rule_for):
    # a step relative to 1e-20 alone would be all round-off for exp: step * max(1, |x|) stays
    def exp(x):
        return np.exp(x)

    rule_for(
        exp,
        lambda x: (exp(x), lambda y_bar: (NoTangent(), unthunk(y_bar) * exp(x))),
        lambda tangents, x: (exp(x), exp(x) * unthunk(tangents[1])),
    )
    x = np.array([1e-20, -1e-12, 0.0, 0.7])
    check_rrule(exp, x)
    check_frule(exp, x)
