import dataclasses
from collections import namedtuple

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tangents import (
    Diagonal,
    Hermitian,
    InplaceableThunk,
    LowerTriangular,
    NoTangent,
    NotImplementedTangent,
    Projector,
    ProjectTo,
    Symmetric,
    Tangent,
    Thunk,
    UpperTriangular,
    ZeroTangent,
    unthunk,
)

FLOATS = [np.float16, np.float32, np.float64]
COMPLEX = [np.complex64, np.complex128]


# --- scalars -------------------------------------------------------------------------------------


def test_python_scalars():
    assert ProjectTo(1.0)(2.5) == 2.5
    assert type(ProjectTo(1.0)(np.float32(2.5))) is float
    assert ProjectTo(1.0)(2.0 + 3.0j) == 2.0
    assert type(ProjectTo(3)(2)) is float  # integers are real numbers: float cotangent
    assert ProjectTo(1j)(2.0) == 2.0 + 0j
    assert type(ProjectTo(1j)(2.0)) is complex
    assert ProjectTo(True)(1.0) is NoTangent()


@pytest.mark.parametrize("dtype", [*FLOATS, *COMPLEX, np.int8, np.int64, np.uint16])
def test_numpy_scalars_keep_their_precision(dtype):
    primal = dtype(1)
    out = ProjectTo(primal)(np.float64(0.5) + 0.25j)
    expected = np.dtype(np.float64) if np.issubdtype(dtype, np.integer) else np.dtype(dtype)
    assert np.asarray(out).dtype == expected
    assert out.real == 0.5


def test_non_numeric_numpy_scalars_have_no_tangent():
    for primal in (np.bool_(True), np.str_("a"), np.datetime64("2026-01-01")):
        assert ProjectTo(primal)(1.0) is NoTangent()


def test_scalar_and_zero_d_array_are_interchangeable():
    assert ProjectTo(1.0)(np.array(2.0)) == 2.0
    assert ProjectTo(1.0)(np.array([[2.0]])) == 2.0  # trailing size-1 axes dropped
    out = ProjectTo(np.array(1.0))(2.0)
    assert isinstance(out, np.ndarray)
    assert out.shape == ()


def test_scalar_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"shape \(2,\).*shape \(\)"):
        ProjectTo(1.0)(np.ones(2))


# --- arrays --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [*FLOATS, *COMPLEX])
def test_fitting_array_is_returned_as_is(dtype):
    dx = np.ones((2, 3), dtype=dtype)
    assert ProjectTo(np.zeros((2, 3), dtype=dtype))(dx) is dx


def test_float64_cotangent_for_float32_primal_becomes_float32():
    out = ProjectTo(np.zeros(3, dtype=np.float32))(np.ones(3))
    assert out.dtype == np.float32


def test_complex_cotangent_for_real_primal_is_its_real_part():
    out = ProjectTo(np.zeros(2))(np.array([1 + 2j, 3 - 4j]))
    np.testing.assert_array_equal(out, [1.0, 3.0])
    assert out.dtype == np.float64


def test_real_cotangent_for_complex_primal_becomes_complex():
    out = ProjectTo(np.zeros(2, dtype=np.complex64))(np.ones(2))
    assert out.dtype == np.complex64


def test_integer_arrays_get_float64_and_bools_no_tangent():
    assert ProjectTo(np.arange(3))(np.ones(3, dtype=np.float32)).dtype == np.float64
    assert ProjectTo(np.ones(3, dtype=bool))(np.ones(3)) is NoTangent()


@pytest.mark.parametrize(
    ("primal_shape", "dx_shape"),
    [((3,), (3, 1)), ((3, 1), (3,)), ((2, 3), (2, 3, 1, 1)), ((), (1,)), ((1,), ())],
)
def test_trailing_singleton_axes_may_be_added_or_dropped(primal_shape, dx_shape):
    out = ProjectTo(np.zeros(primal_shape))(np.ones(dx_shape))
    assert out.shape == primal_shape


@pytest.mark.parametrize(
    ("primal_shape", "dx_shape"), [((3,), (1, 3)), ((3,), (4,)), ((2, 3), (3, 2)), ((), (2,))]
)
def test_other_shape_mismatches_raise_naming_both(primal_shape, dx_shape):
    with pytest.raises(ValueError, match="shape") as excinfo:
        ProjectTo(np.zeros(primal_shape))(np.ones(dx_shape))
    assert str(dx_shape) in str(excinfo.value)
    assert str(primal_shape) in str(excinfo.value)


def test_structured_and_sparse_cotangents_for_dense_primals_are_dense(rng):
    d = Diagonal(np.arange(3.0))
    out = ProjectTo(np.zeros((3, 3)))(d)
    assert type(out) is np.ndarray
    np.testing.assert_array_equal(out, np.diag(np.arange(3.0)))
    s = sp.csr_array(np.eye(3))
    np.testing.assert_array_equal(ProjectTo(np.zeros((3, 3)))(s), np.eye(3))


def test_lists_and_object_arrays_are_rejected():
    with pytest.raises(TypeError, match="ndarray"):
        ProjectTo(np.zeros(2))([1.0, 2.0])
    with pytest.raises(TypeError, match="object array"):
        ProjectTo(np.zeros(2))(np.array([1.0, None]))


def test_foreign_tangent_types_pass_unchanged_after_a_shape_check():
    class LowRank:
        shape = (3, 3)

    dx = LowRank()
    assert ProjectTo(np.zeros((3, 3)))(dx) is dx
    with pytest.raises(ValueError, match="shape"):
        ProjectTo(np.zeros((4, 4)))(dx)


# --- symbolic cotangents and thunks --------------------------------------------------------------

PRIMALS = {
    "float": 1.0,
    "array32": np.zeros(3, dtype=np.float32),
    "tuple": (1.0, np.zeros(2)),
    "diagonal": Diagonal(np.ones(3)),
    "sparse": sp.csr_array(np.eye(3)),
}


@pytest.mark.parametrize("name", list(PRIMALS))
def test_zeros_and_not_implemented_pass_through(name):
    project = ProjectTo(PRIMALS[name])
    ni = NotImplementedTangent("later")
    assert project(ZeroTangent()) is ZeroTangent()
    assert project(NoTangent()) is NoTangent()
    assert project(ni) is ni


def test_thunk_stays_lazy_with_projection_fused():
    calls = []

    def compute():
        calls.append(1)
        return np.ones(3)

    out = ProjectTo(np.zeros(3, dtype=np.float32))(Thunk(compute))
    assert isinstance(out, Thunk)
    assert calls == []
    assert unthunk(out).dtype == np.float32
    assert calls == [1]


def test_inplaceable_thunk_becomes_a_plain_thunk():
    it = InplaceableThunk(lambda acc: acc, lambda: np.ones(2))
    out = ProjectTo(np.zeros(2))(it)
    assert type(out) is Thunk
    np.testing.assert_array_equal(unthunk(out), np.ones(2))


# --- composites ----------------------------------------------------------------------------------


@dataclasses.dataclass
class Layer:
    W: np.ndarray
    name: str
    n: int


Pair = namedtuple("Pair", ["a", "b"])


def test_tuple_primal_gives_a_structural_tangent():
    project = ProjectTo((np.zeros(2, dtype=np.float32), 3, "label"))
    out = project((np.ones(2), 2.0, 5.0))
    assert isinstance(out, Tangent)
    assert out.primal_type is tuple
    assert out[0].dtype == np.float32
    assert type(out[1]) is float
    assert out[2] is NoTangent()
    with pytest.raises(ValueError, match="length 3"):
        project((1.0, 2.0))


def test_namedtuple_dataclass_and_dict_primals():
    out = ProjectTo(Pair(1.0, np.zeros(2)))(Tangent(Pair, b=np.ones(2) + 1j))
    assert out.b.dtype == np.float64
    assert out.a is ZeroTangent()
    layer = Layer(np.zeros((2, 2), dtype=np.float32), "dense", 4)
    out = ProjectTo(layer)(Tangent(Layer, W=np.ones((2, 2)), name=1.0))
    assert out.W.dtype == np.float32
    assert out.name is NoTangent()
    natural = ProjectTo(layer)(Layer(np.ones((2, 2)), "x", 1))
    assert isinstance(natural, Tangent)
    assert natural.W.dtype == np.float32
    out = ProjectTo({"w": np.zeros(2)})({"w": np.ones(2)})
    assert out.primal_type is dict
    with pytest.raises(ValueError, match="no component"):
        ProjectTo({"w": np.zeros(2)})(Tangent(dict, {"v": 1.0}))


def test_namedtuple_primal_takes_a_plain_tuple_cotangent():
    # multi-output rules return namedtuples (EighResult); users write plain tuples
    out = ProjectTo(Pair(np.zeros(2, dtype=np.float32), 1.0))((np.ones(2) + 1j, 2.0))
    assert isinstance(out, Tangent)
    assert out.primal_type is Pair
    assert out.a.dtype == np.float32
    assert out.b == 2.0
    assert ProjectTo(Pair(1.0, 2.0))([ZeroTangent(), 3.0]).a is ZeroTangent()
    with pytest.raises(ValueError, match=r"fields \['a', 'b'\].*1 components"):
        ProjectTo(Pair(1.0, 2.0))((1.0,))


def test_objects_with_attributes_project_per_attribute():
    class Model:
        def __init__(self):
            self.theta = np.zeros(2, dtype=np.float32)
            self.tag = "m"

    out = ProjectTo(Model())(Tangent(Model, theta=np.ones(2)))
    assert out.theta.dtype == np.float32


def test_all_no_tangent_parts_collapse_to_a_no_tangent_projector():
    project = ProjectTo((True, "x", np.arange(2) > 0))
    assert project((1.0, 2.0, 3.0)) is NoTangent()
    assert repr(project) == "ProjectTo(<NoTangent>)"


def test_unknown_types_project_with_identity():
    obj = object()
    assert ProjectTo(np.sin)(obj) is obj
    assert ProjectTo(object())(obj) is obj


def test_wrong_structural_cotangent_is_a_type_error():
    with pytest.raises(TypeError, match="Pair"):
        ProjectTo((1.0, 2.0))(Tangent(Pair, a=1.0))


# --- structured matrices -------------------------------------------------------------------------


def test_diagonal_keeps_only_the_diagonal(rng):
    dx = rng.standard_normal((3, 3))
    out = ProjectTo(Diagonal(np.ones(3, dtype=np.float32)))(dx)
    assert isinstance(out, Diagonal)
    np.testing.assert_allclose(out.diag, np.diag(dx).astype(np.float32))
    assert out.dtype == np.float32


@pytest.mark.parametrize("uplo", ["U", "L"])
def test_symmetric_and_hermitian_give_the_symmetric_part(rng, uplo):
    dx = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    out = ProjectTo(Symmetric(np.eye(3), uplo=uplo))(dx)
    assert type(out) is Symmetric
    assert out.uplo == uplo
    np.testing.assert_allclose(np.asarray(out), (dx.real + dx.real.T) / 2)
    out = ProjectTo(Hermitian(np.eye(3, dtype=complex), uplo=uplo))(dx)
    assert type(out) is Hermitian
    np.testing.assert_allclose(np.asarray(out), (dx + dx.conj().T) / 2)


@pytest.mark.parametrize(("kind", "tri"), [(UpperTriangular, np.triu), (LowerTriangular, np.tril)])
def test_triangular_keeps_its_triangle(rng, kind, tri):
    dx = rng.standard_normal((4, 4))
    out = ProjectTo(kind(np.ones((4, 4))))(dx)
    assert type(out) is kind
    np.testing.assert_array_equal(np.asarray(out), tri(dx))


def test_structured_shape_mismatch(rng):
    with pytest.raises(ValueError, match=r"\(3, 3\)"):
        ProjectTo(Diagonal(np.ones(3)))(np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"\(3, 3\)"):
        ProjectTo(Symmetric(np.eye(3)))(np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"\(3, 3\)"):
        ProjectTo(UpperTriangular(np.eye(3)))(np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"\(2, 2\)"):
        ProjectTo(Diagonal(np.ones(3)))(Diagonal(np.ones(2)))
    with pytest.raises(ValueError, match=r"\(2, 2\)"):
        ProjectTo(Symmetric(np.eye(3)))(Symmetric(np.eye(2)))
    with pytest.raises(ValueError, match=r"\(2, 2\)"):
        ProjectTo(LowerTriangular(np.eye(3)))(LowerTriangular(np.eye(2)))
    with pytest.raises(ValueError, match=r"\(2, 2\)"):
        ProjectTo(sp.csr_array(np.eye(3)))(sp.csr_array(np.eye(2)))


# --- sparse --------------------------------------------------------------------------------------

SPARSE = [sp.csr_array, sp.csr_matrix, sp.csc_array, sp.csc_matrix, sp.coo_array, sp.coo_matrix]


@pytest.mark.parametrize("cls", SPARSE)
def test_sparse_keeps_exactly_its_pattern_and_format(cls, rng):
    dense = np.where(rng.random((5, 4)) < 0.4, rng.standard_normal((5, 4)), 0.0)
    x = cls(dense)
    project = ProjectTo(x)
    dx = rng.standard_normal((5, 4))
    out = project(dx)
    assert type(out) is cls
    np.testing.assert_array_equal(out.toarray(), np.where(dense != 0, dx, 0.0))
    assert out.nnz == x.nnz
    assert project(out) is out  # already fits: no copy
    other = cls(np.ones((5, 4)))
    np.testing.assert_array_equal(project(other).toarray(), (dense != 0).astype(float))


def test_sparse_dtype_and_shape(rng):
    x = sp.csr_array(np.eye(3, dtype=np.float32))
    out = ProjectTo(x)(np.ones((3, 3)) * (1 + 1j))
    assert out.dtype == np.float32
    with pytest.raises(ValueError, match="shape"):
        ProjectTo(x)(np.ones((3, 4)))


# --- register ------------------------------------------------------------------------------------


class Celsius:
    def __init__(self, value):
        self.value = value


def test_users_register_their_own_projectors():
    class CelsiusProjector(Projector):
        def project(self, dx):
            return float(np.real(dx))

        def __repr__(self):
            return "ProjectTo(Celsius)"

    @ProjectTo.register(Celsius)
    def _(x):
        return CelsiusProjector()

    project = ProjectTo(Celsius(20.0))
    assert project(1 + 2j) == 1.0
    assert project(ZeroTangent()) is ZeroTangent()
    assert repr(project) == "ProjectTo(Celsius)"


def test_a_projector_registered_for_ndarray_itself_replaces_the_hot_path():
    from tangents import projection

    library = projection._TABLE[np.ndarray]
    seen = []

    @ProjectTo.register(np.ndarray)
    def _(x):
        seen.append(x.shape)
        return library(x)

    try:
        assert ProjectTo(np.zeros((2, 3))).shape == (2, 3)
        assert seen == [(2, 3)]  # the ndarray entry of the table ran, not a private copy of it
    finally:
        ProjectTo.register(np.ndarray, library)
    ProjectTo(np.zeros(4))
    assert seen == [(2, 3)]


def test_projectors_store_no_primal_values():
    big = np.zeros((50, 50))
    for project in (ProjectTo(big), ProjectTo(Symmetric(big)), ProjectTo(Diagonal(big[0]))):
        stored = [getattr(project, s) for s in type(project).__slots__]
        assert not any(isinstance(v, np.ndarray) for v in stored)


def test_repr_is_readable():
    assert repr(ProjectTo(np.zeros((2, 3), dtype=np.float32))) == (
        "ProjectTo(ndarray, dtype=float32, shape=(2, 3))"
    )
    assert repr(ProjectTo(1.0)) == "ProjectTo(float)"
    assert "Symmetric" in repr(ProjectTo(Symmetric(np.eye(2))))


# --- laws (hypothesis) ---------------------------------------------------------------------------

dtypes = st.sampled_from([np.float32, np.float64, np.complex128])
shapes = hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)


def finite_arrays(dtype, shape):
    return hnp.arrays(dtype, shape, elements=st.floats(-10, 10, width=32))


@st.composite
def primal_and_cotangent(draw):
    kind = draw(
        st.sampled_from(
            [
                "array",
                "scalar",
                "diagonal",
                "symmetric",
                "hermitian",
                "upper",
                "lower",
                "sparse",
                "tuple",
            ]
        )
    )
    dtype = draw(dtypes)
    cot_dtype = draw(st.sampled_from([np.float64, np.complex128]))
    if kind == "array":
        shape = draw(shapes)
        return np.zeros(shape, dtype), draw(finite_arrays(cot_dtype, shape))
    if kind == "scalar":
        return dtype(1), draw(finite_arrays(cot_dtype, ()))
    if kind == "python":
        primal = draw(st.sampled_from([1.0, 1, 1j]))
        return primal, draw(st.floats(-10, 10)) * draw(st.sampled_from([1, 1j]))
    if kind == "dataclass":
        n = draw(st.integers(1, 3))
        return Layer(np.zeros(n, dtype), "x", 1), Tangent(
            Layer, W=draw(finite_arrays(cot_dtype, (n,)))
        )
    n = draw(st.integers(1, 4))
    dx = draw(finite_arrays(cot_dtype, (n, n)))
    primal = {
        "diagonal": lambda: Diagonal(np.ones(n, dtype)),
        "symmetric": lambda: Symmetric(np.eye(n, dtype=dtype), draw(st.sampled_from("UL"))),
        "hermitian": lambda: Hermitian(np.eye(n, dtype=dtype), draw(st.sampled_from("UL"))),
        "upper": lambda: UpperTriangular(np.eye(n, dtype=dtype)),
        "lower": lambda: LowerTriangular(np.eye(n, dtype=dtype)),
        "sparse": lambda: sp.csr_array(np.triu(np.ones((n, n), dtype))),
        "tuple": lambda: (np.zeros((n, n), dtype), 1.0),
    }[kind]()
    return primal, (dx, 2.0) if kind == "tuple" else dx


def as_comparable(x):
    if isinstance(x, Tangent):
        return [as_comparable(v) for v in x]
    if sp.issparse(x):
        return x.toarray()
    return np.asarray(x)


@given(primal_and_cotangent())
def test_projection_is_idempotent_and_keeps_type_and_dtype(case):
    primal, dx = case
    project = ProjectTo(primal)
    once = project(dx)
    twice = project(once)
    assert twice is once  # an already-projected cotangent fits: returned as is
    if not isinstance(primal, tuple | Layer | int | float | complex):
        expected_type = np.ndarray if isinstance(primal, np.ndarray) else type(primal)
        assert isinstance(once, expected_type)
        dtype = np.float64 if isinstance(primal, float) else primal.dtype
        assert np.asarray(as_comparable(once)).dtype == dtype
