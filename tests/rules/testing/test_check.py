"""The rule checker itself: it passes correct rules and catches each kind of broken one."""

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from rules import rrule, split_cotangent
from rules.testing import RuleCheckError, check_frule, check_rrule, rand_tangent
from tangents import (
    Diagonal,
    Hermitian,
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


def test_a_value_failure_names_the_worst_entry_with_got_and_want(rng, rule_for):
    x = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])

    def bad_rrule(x):
        def pullback(y_bar):
            x_bar = np.cos(x) * y_bar
            x_bar[1, 2] += 1.0  # one wrong entry
            return NoTangent(), x_bar

        return sin(x), pullback

    rule_for(sin, bad_rrule)
    y_bar = np.ones((2, 3))
    want = np.cos(0.6)
    with pytest.raises(RuleCheckError) as error:
        check_rrule(sin, x, output_tangent=y_bar)
    message = str(error.value)
    assert "worst error 1 at entry (1, 2)" in message
    assert f"got {want + 1:.6g}, want {want:.6g}" in message


def test_an_in_place_modification_is_reported_before_the_failures_it_causes(rng, rule_for):
    def bad_rrule(x):
        def pullback(y_bar):
            y_bar *= 2.0  # writes into the cotangent: the values are then wrong too
            return NoTangent(), np.cos(x) * y_bar

        return sin(x), pullback

    rule_for(sin, bad_rrule)
    with pytest.raises(RuleCheckError) as error:
        check_rrule(sin, rng.standard_normal(3))
    lines = str(error.value).splitlines()
    assert "output tangent: was modified in place" in lines[1]
    assert any("worst error" in line for line in lines[2:])  # the values it made wrong
