import numpy as np
import pytest
import scipy.linalg as sla

from rules import frule, rrule
from rules.linalg import expm as expm_rules
from rules.testing import check_frule, check_rrule
from tangents import Diagonal, Hermitian, NoTangent, Symmetric, UpperTriangular


class Cotangent:
    """A user's tangent type with only the algebra the algebra path uses; never an ndarray."""

    __array_ufunc__ = None

    def __init__(self, values):
        self.values = values
        self.shape = values.shape

    def __add__(self, other):
        return Cotangent(self.values + other.values)

    def __sub__(self, other):
        return Cotangent(self.values - other.values)

    def __mul__(self, scalar):
        return Cotangent(self.values * scalar)

    __rmul__ = __mul__

    def __matmul__(self, matrix):
        return Cotangent(self.values @ matrix)

    def __rmatmul__(self, matrix):
        return Cotangent(matrix @ self.values)

    @property
    def mT(self):
        return Cotangent(self.values.mT)

    def conj(self):
        return Cotangent(self.values.conj())


# One scale per Pade branch: the degrees 3, 5, 7, 9 and 13 with 0, 1 and several squarings.
@pytest.mark.parametrize(
    ("norm", "degree"), [(0.005, 3), (0.1, 5), (0.6, 7), (1.5, 9), (4.0, 13), (40.0, 13)]
)
def test_each_pade_degree(randn, norm, degree):
    A = np.triu(np.ones((4, 4))) + np.diag(np.arange(4.0)) + 0.1 * randn(np.float64, 4, 4)
    A *= norm / np.linalg.norm(A, 1)
    assert expm_rules._pade(A).m == degree
    check_rrule(sla.expm, A)
    check_frule(sla.expm, A)


@pytest.mark.parametrize("shape", [(4, 4), (3, 4, 4)])
def test_expm(randn, dtype, shape):
    # a stack whose matrices need different scalings (s = 0 < s_1 < s_2 for the degree 13)
    A = randn(np.complex128 if dtype.kind == "c" else np.float64, *shape)
    norms = np.array([0.5, 20.0, 60.0]).reshape(3, 1, 1) if len(shape) == 3 else 2.0
    A = (A * norms / np.linalg.norm(A, 1, axis=(-2, -1), keepdims=True)).astype(dtype)
    if len(shape) == 3:
        s = expm_rules._pade(A).s
        assert s[0] == 0 < s[1] < s[2]
    check_rrule(sla.expm, A)
    check_frule(sla.expm, A)


def test_primal_agrees_with_scipy(randn):
    for norm in (0.01, 1.0, 10.0, 300.0):
        A = randn(np.complex128, 2, 6, 6)
        A *= norm / np.linalg.norm(A[0], 1)
        X, _ = rrule(sla.expm, A)
        np.testing.assert_allclose(X, sla.expm(A), rtol=1e-12, atol=1e-12 * np.abs(X).max())
    assert rrule(sla.expm, randn(np.float32, 3, 3))[0].dtype == np.float32


@pytest.mark.parametrize(
    "A",
    [
        np.eye(4),  # every eigenvalue repeated
        np.kron(np.eye(2), [[1.0, 0.5], [0.5, -1.0]]),  # block-diagonal with equal blocks
        np.diag([1.0, 1.0, 1.0 + 1e-9, 2.0]),  # a near tie below the threshold
    ],
    ids=["identity", "equal-blocks", "near-tie"],
)
def test_symmetric_input_at_repeated_eigenvalues(A):
    check_rrule(sla.expm, Symmetric(A))
    check_frule(sla.expm, Symmetric(A))
    _, pullback = rrule(sla.expm, Symmetric(A))
    A_bar = pullback(np.arange(16.0).reshape(4, 4))[1]
    assert type(A_bar) is Symmetric
    assert np.isfinite(A_bar.dense()).all()


def test_hermitian_and_structured_inputs(randn):
    H = randn(np.complex128, 2, 3, 3)
    H = Hermitian(H + H.conj().mT)
    check_rrule(sla.expm, H)
    check_frule(sla.expm, H)
    for M in (Diagonal(randn(np.float64, 3)), UpperTriangular(randn(np.float64, 3, 3))):
        check_rrule(sla.expm, M)
        _, pullback = rrule(sla.expm, M)
        assert type(pullback(np.ones((3, 3)))[1]) is type(M)


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
def test_complex_symmetric_input_takes_the_general_rule(randn, shape):
    # complex symmetric, not Hermitian: the Daleckii-Krein path gave 29.99 for a derivative of 6.19
    A = 0.3 * randn(np.complex128, *shape) + 2 * np.eye(3)
    check_rrule(sla.expm, Symmetric(A))
    check_frule(sla.expm, Symmetric(A))
    _, pullback = rrule(sla.expm, Symmetric(A))
    assert type(pullback(np.ones(shape, np.complex128))[1]) is Symmetric


def test_generic_path_agrees_with_the_array_path(randn, dtype):
    A = randn(dtype, 5, 5) * 2
    X_bar = randn(dtype, 5, 5)
    _, pullback = rrule(sla.expm, A)
    array = pullback(X_bar)[1]
    generic = pullback(Cotangent(X_bar))[1]
    assert type(generic) is Cotangent
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(generic.values, array, rtol=tol, atol=tol * np.abs(array).max())
    _, X_dot = frule((NoTangent(), Cotangent(X_bar)), sla.expm, A)
    _, X_dot_array = frule((NoTangent(), X_bar), sla.expm, A)
    np.testing.assert_allclose(X_dot.values, X_dot_array, rtol=tol, atol=tol * 10)


def test_pullback_is_scipys_frechet_derivative_at_the_adjoint(randn):
    A, G = randn(np.complex128, 6, 6) * 3, randn(np.complex128, 6, 6)
    _, pullback = rrule(sla.expm, A)
    want = sla.expm_frechet(A.conj().T, G, compute_expm=False)
    np.testing.assert_allclose(pullback(G)[1], want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def test_bad_input():
    with pytest.raises(np.linalg.LinAlgError, match=r"scipy.linalg.expm.*square.*\(2, 3\)"):
        rrule(sla.expm, np.ones((2, 3)))
    _, pullback = rrule(sla.expm, np.eye(3))
    with pytest.raises(ValueError, match=r"expm pullback.*\(2, 2\).*\(3, 3\)"):
        pullback(np.ones((2, 2)))


def test_nan_in_nan_out():
    A = np.zeros((2, 3, 3))
    A[0, 1, 1] = np.nan
    X, pullback = rrule(sla.expm, A)
    assert np.isnan(X[0]).any()
    np.testing.assert_allclose(X[1], np.eye(3))
    A_bar = pullback(np.ones((2, 3, 3)))[1]
    assert np.isnan(A_bar[0]).any()
    np.testing.assert_allclose(A_bar[1], np.ones((3, 3)))
    _, X_dot = frule((NoTangent(), np.ones((2, 3, 3))), sla.expm, A)
    assert np.isnan(X_dot[0]).any()


def test_empty_and_integer_input():
    for shape in [(0, 0), (3, 0, 0), (0, 3, 3)]:
        X, pullback = rrule(sla.expm, np.zeros(shape))
        assert X.shape == shape
        assert pullback(np.ones(shape))[1].shape == shape
    A = np.array([[0, 1], [-1, 0]])
    X, pullback = rrule(sla.expm, A)
    np.testing.assert_allclose(X, sla.expm(A), atol=1e-15)
    assert pullback(np.ones((2, 2)))[1].dtype == np.float64
