import numpy as np
import pytest
import scipy.linalg as sla

from rules import frule, rrule
from rules.linalg import matfun
from rules.linalg.matfun import MatrixFunction
from rules.testing import check_frule, check_rrule
from tangents import Diagonal, Hermitian, NoTangent, Symmetric, Tangent, UpperTriangular

EXP = MatrixFunction(np.exp, np.exp)
TANH = MatrixFunction(np.tanh, lambda x: 1 - np.tanh(x) ** 2)


@pytest.fixture
def well_conditioned(randn):
    """``(dtype, *shape)``: eigenvalues near 2, far from the branch cuts of sqrt and log."""

    def make(dtype, *shape):
        n = shape[-1]
        return (0.3 * randn(dtype, *shape) + 2 * np.eye(n)).astype(dtype)

    return make


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
def test_sqrtm(well_conditioned, dtype, shape):
    A = well_conditioned(dtype, *shape)
    check_rrule(sla.sqrtm, A)
    check_frule(sla.sqrtm, A)


# scipy's logm of float32 input returns complex128 and warns about its accuracy; not tested.
# scipy's logm takes ~0.1 s per call even at 2x2, so finite differences stay at 2x2; the
# identity below checks 4x4 without them.
@pytest.mark.parametrize(
    ("dtype", "shape"), [(np.float64, (2, 2)), (np.complex128, (2, 2, 2))], ids=["single", "stack"]
)
def test_logm(well_conditioned, dtype, shape):
    A = well_conditioned(dtype, *shape)
    check_rrule(sla.logm, A)
    check_frule(sla.logm, A)


def test_logm_derivative_inverts_the_expm_derivative(well_conditioned, randn):
    A, E = well_conditioned(np.complex128, 4, 4), randn(np.complex128, 4, 4)
    Y, Y_dot = frule((NoTangent(), E), sla.logm, A)
    _, A_dot = frule((NoTangent(), Y_dot), sla.expm, Y)  # L_exp(log A, L_log(A, E)) = E
    np.testing.assert_allclose(A_dot, E, rtol=1e-9, atol=1e-9)
    G = randn(np.complex128, 4, 4)
    _, pullback = rrule(sla.logm, A)
    # adjoint of the frule: <G, L(A, E)> = <A_bar, E>
    np.testing.assert_allclose(np.vdot(G, Y_dot).real, np.vdot(pullback(G)[1], E).real)


@pytest.mark.parametrize("function", [sla.cosm, sla.sinm])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
def test_cosm_sinm(randn, dtype, function, shape):
    A = (0.7 * randn(dtype, *shape)).astype(dtype)
    check_rrule(function, A)
    check_frule(function, A)


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
def test_funm(randn, dtype, shape):
    A = (0.5 * randn(dtype, *shape)).astype(dtype)
    check_rrule(sla.funm, A, TANH, constant=[1])
    check_frule(sla.funm, A, TANH, constant=[1])


def test_funm_matches_expm_rule(randn):
    A, G = randn(np.float64, 4, 4), randn(np.float64, 4, 4)
    _, expm_pullback = rrule(sla.expm, A)
    _, funm_pullback = rrule(sla.funm, A, EXP)
    np.testing.assert_allclose(funm_pullback(G)[1], expm_pullback(G)[1], rtol=1e-9, atol=1e-10)


def test_funm_needs_the_derivative(randn):
    with pytest.raises(TypeError, match=r"scipy.linalg.funm.*MatrixFunction\(f, df\)"):
        rrule(sla.funm, np.eye(2), np.exp)
    with pytest.raises(TypeError, match="MatrixFunction"):
        frule((NoTangent(), np.eye(2), NoTangent()), sla.funm, np.eye(2), np.exp)


def test_funm_disp_false_differentiates_the_matrix_only(randn):
    A = 0.5 * randn(np.float64, 3, 3)
    (F, _), pullback = rrule(sla.funm, A, EXP, False)
    np.testing.assert_allclose(F, sla.expm(A), rtol=1e-10)
    G = randn(np.float64, 3, 3)
    _, expm_pullback = rrule(sla.expm, A)
    A_bar = pullback(Tangent(tuple, G, 1.0))[1]
    np.testing.assert_allclose(A_bar, expm_pullback(G)[1], rtol=1e-9, atol=1e-10)
    _, (F_dot, errest_dot) = frule(
        (NoTangent(), G, NoTangent(), NoTangent()), sla.funm, A, EXP, False
    )
    assert errest_dot == NoTangent()
    np.testing.assert_allclose(F_dot, frule((NoTangent(), G), sla.expm, A)[1], rtol=1e-9)


# Exactly repeated eigenvalues: the identity, equal blocks, a zero-gap pair and a near tie.
REPEATED = {
    "identity": 2 * np.eye(4),
    "equal-blocks": np.kron(np.eye(2), [[2.0, 0.5], [0.5, 3.0]]),
    "near-tie": np.diag([2.0, 2.0 + 1e-9, 2.0, 3.0]),
}
SCALAR = {
    sla.sqrtm: (np.sqrt, lambda x: 0.5 / np.sqrt(x)),
    sla.logm: (np.log, lambda x: 1 / x),
    sla.cosm: (np.cos, lambda x: -np.sin(x)),
    sla.sinm: (np.sin, np.cos),
    sla.expm: (np.exp, np.exp),
}


@pytest.mark.parametrize("name", list(REPEATED))
@pytest.mark.parametrize("function", list(SCALAR), ids=lambda f: f.__name__)
def test_symmetric_input_at_repeated_eigenvalues(function, name):
    A = Symmetric(REPEATED[name])
    if function is not sla.logm or name == "identity":  # scipy's logm is slow (see above)
        check_rrule(function, A)
        check_frule(function, A)
    # against the closed form at a diagonal matrix: (Gamma o G) with f' on the ties
    f, df = SCALAR[function]
    w = np.diag(REPEATED["near-tie"])
    G = np.arange(16.0).reshape(4, 4)
    _, pullback = rrule(function, Symmetric(np.diag(w)))
    A_bar = pullback(G)[1]
    assert type(A_bar) is Symmetric
    with np.errstate(all="ignore"):
        Gamma = (f(w)[:, None] - f(w)[None, :]) / (w[:, None] - w[None, :])
    Gamma[[0, 1, 0, 2, 1, 2], [1, 0, 2, 0, 2, 1]] = df(2.0)
    Gamma[np.arange(4), np.arange(4)] = df(w)
    np.testing.assert_allclose(A_bar.dense(), Gamma * (G + G.T) / 2, rtol=1e-7)


def test_funm_symmetric_and_hermitian(randn):
    check_rrule(sla.funm, Symmetric(REPEATED["equal-blocks"]), TANH, constant=[1])
    check_frule(sla.funm, Symmetric(REPEATED["equal-blocks"]), TANH, constant=[1])
    H = randn(np.complex128, 2, 3, 3)
    H = Hermitian(H + H.conj().mT)
    check_rrule(sla.funm, H, TANH, constant=[1])


def test_hermitian_stacks(randn):
    H = randn(np.complex128, 2, 3, 3)
    H = Hermitian(H @ H.conj().mT + np.eye(3))
    for function in (sla.sqrtm, sla.cosm):
        check_rrule(function, H)
        check_frule(function, H)
    _, pullback = rrule(sla.sqrtm, H)
    assert type(pullback(np.ones((2, 3, 3)))[1]) is Hermitian


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
def test_complex_symmetric_input_is_not_hermitian(randn, well_conditioned, shape):
    # A complex Symmetric (A^T = A) has no unitary eigendecomposition: it takes the general
    # rules, not Daleckii-Krein (Hermitian subclasses Symmetric; the type test must tell them apart)
    S = Symmetric(well_conditioned(np.complex128, *shape))
    for function in (sla.sqrtm, sla.logm, sla.cosm, sla.sinm):
        check_rrule(function, S)
        check_frule(function, S)
    check_rrule(sla.funm, Symmetric(well_conditioned(np.complex128, 3, 3)), TANH, constant=[1])
    check_frule(sla.funm, Symmetric(well_conditioned(np.complex128, 3, 3)), TANH, constant=[1])
    assert not matfun.is_hermitian(S)
    assert matfun.is_hermitian(Hermitian(S.data))
    assert matfun.is_hermitian(Symmetric(S.data.real))


def test_symmetric_input_with_negative_eigenvalues_gives_complex_output():
    A = Symmetric(np.diag([-1.0, 2.0, 3.0]) + 0.1)
    check_rrule(sla.sqrtm, A)
    check_frule(sla.sqrtm, A)


def test_structured_non_hermitian_inputs(randn, well_conditioned):
    U = UpperTriangular(well_conditioned(np.float64, 3, 3))
    check_rrule(sla.sqrtm, U)
    check_rrule(sla.logm, U)
    _, pullback = rrule(sla.logm, U)
    assert type(pullback(np.ones((3, 3)))[1]) is UpperTriangular
    D = Diagonal(np.array([1.0, 2.0, 3.0]))
    check_rrule(sla.cosm, D)
    _, pullback = rrule(sla.cosm, D)
    assert type(pullback(np.ones((3, 3)))[1]) is Diagonal


def test_adjoints_are_the_block_and_sylvester_formulas(randn):
    A, G = 0.5 * randn(np.complex128, 4, 4) + 2 * np.eye(4), randn(np.complex128, 4, 4)
    _, pullback = rrule(sla.sqrtm, A)
    X = sla.sqrtm(A)
    np.testing.assert_allclose(pullback(G)[1], sla.solve_sylvester(X.conj().T, X.conj().T, G))
    _, pullback = rrule(sla.logm, A)
    Z = np.zeros_like(A)
    block = sla.logm(np.block([[A.conj().T, G], [Z, A.conj().T]]))[:4, 4:]
    np.testing.assert_allclose(pullback(G)[1], block, rtol=1e-10, atol=1e-12)


def test_user_tangent_types_are_refused_by_name(user_tangent, well_conditioned):
    A = well_conditioned(np.float64, 3, 3)
    _, pullback = rrule(sla.sqrtm, A)
    with pytest.raises(TypeError, match=r"scipy.linalg.sqrtm pullback.*UserTangent"):
        pullback(user_tangent(np.ones((3, 3))))
    _, pullback = rrule(sla.sqrtm, Symmetric(A + A.T))
    with pytest.raises(TypeError, match=r"scipy.linalg.sqrtm pullback.*UserTangent"):
        pullback(user_tangent(np.ones((3, 3))))


def test_bad_input():
    for function in (sla.sqrtm, sla.logm, sla.cosm, sla.sinm):
        with pytest.raises(np.linalg.LinAlgError, match=rf"{function.__name__}.*square.*\(2, 3\)"):
            rrule(function, np.ones((2, 3)))
    _, pullback = rrule(sla.cosm, np.eye(3))
    with pytest.raises(ValueError, match=r"cosm pullback.*\(2, 2\).*\(3, 3\)"):
        pullback(np.ones((2, 2)))
    _, pullback = rrule(sla.cosm, Symmetric(np.eye(3)))
    with pytest.raises(ValueError, match=r"cosm pullback.*\(2, 2\).*\(3, 3\)"):
        pullback(np.ones((2, 2)))


def test_nan_in_nan_out():
    A = 2 * np.eye(3)
    A[1, 1] = np.nan
    for function in (sla.sqrtm, sla.cosm, sla.sinm):
        Y, pullback = rrule(function, A)
        assert np.isnan(Y).any()
        assert np.isnan(pullback(np.ones((3, 3)))[1]).any()
        _, Y_dot = frule((NoTangent(), np.ones((3, 3))), function, A)
        assert np.isnan(Y_dot).any()
    Y, pullback = rrule(sla.cosm, Symmetric(A))
    assert np.isnan(pullback(np.ones((3, 3)))[1].dense()).any()
    with pytest.raises(ValueError, match="infs or NaNs"):
        rrule(sla.logm, A)


def test_sqrtm_of_a_general_matrix_with_nan_raises_as_scipy_does():
    # the module docstring's NaN policy: scipy's Schur step fails, the rule passes its error on
    A = np.array([[3.0, 1.0, 0.0], [np.nan, 3.0, 1.0], [0.5, 0.0, 3.0]])
    with pytest.raises(np.linalg.LinAlgError, match="sqrtm"):
        sla.sqrtm(A)
    with pytest.raises(np.linalg.LinAlgError, match="sqrtm"):
        rrule(sla.sqrtm, A)
    with pytest.raises(np.linalg.LinAlgError, match="sqrtm"):
        frule((NoTangent(), np.ones((3, 3))), sla.sqrtm, A)


def test_divided_differences_use_the_derivative_at_ties():
    w = np.array([1.0, 1.0, 1.0 + 1e-7, 4.0])
    Gamma = matfun._divided_differences(matfun.SQRT, w)
    assert Gamma[0, 1] == 0.5
    np.testing.assert_allclose(Gamma[0, 2], 0.5 / np.sqrt(1 + 0.5e-7), rtol=1e-15)
    np.testing.assert_allclose(Gamma[0, 3], (1 - 2) / (1 - 4), rtol=1e-15)
