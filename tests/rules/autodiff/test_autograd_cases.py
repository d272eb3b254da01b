"""Cases from HIPS autograd's own tests (test_numpy, test_linalg, test_systematic, test_scipy).

The functions and inputs are autograd's (the cases, not the code): plain numpy written for
``autograd.numpy``, run here with only the imports changed (``import numpy as np`` and
``rules.autodiff``). ``check_grads`` (conftest.py) checks both modes against central differences
of the plain function. Where autograd's test builds an array from traced values with
``np.array([...])``, this driver needs ``np.stack`` (numpy's ``np.array`` cannot be traced);
those cases are written with ``np.stack`` and say so.
"""

import numpy as np
import pytest
import scipy.linalg
import scipy.special
import scipy.stats

import rules.autodiff.scipy.linalg as spla
from rules.autodiff import elementwise_grad, grad, jacobian, value_and_grad
from rules.autodiff.scipy import special

R = np.random.default_rng(1).standard_normal


def rand_psd(D):
    mat = R((D, D))
    return mat @ mat.T


def eigh_reconstruction(x):
    w, v = np.linalg.eigh(x)
    return v @ np.diag(w) @ v.T


def symmetrize(f):
    """autograd's test_linalg: functions of a symmetric matrix are checked on (L + L^T) / 2."""
    return lambda L: f((L + L.T) / 2.0)


D = 4
B23, B23_2 = R((2, 3)), R((2, 3))
A_SOLVE, B_SOLVE = R((D, D)) + 10 * np.eye(D), R((D, D - 1))
SPD4 = rand_psd(4) + 4 * np.eye(4)

CASES = {
    # test_numpy.py
    "dot matrix-vector": (lambda x, y: np.dot(x, y), (R((10, 11)), R(11))),
    "dot vector-matrix": (lambda x, y: np.dot(x, y), (R(10), R((10, 11)))),
    "dot with a float": (lambda x, y: np.dot(x, y), (R((3, 4)), R(()))),
    "outer": (lambda x, y: np.outer(x, y), (R(11), R(11))),
    "max": (lambda x: np.max(x), (R((10, 11)),)),
    "max axis": (lambda x: np.max(x, axis=1), (R((3, 4, 5)),)),
    "max axis keepdims": (lambda x: np.max(x, axis=1, keepdims=True), (R((3, 4, 5)),)),
    "min axis": (lambda x: np.min(x, axis=1), (R((3, 4, 5)),)),
    "sum axis tuple": (lambda x: np.sum(x, axis=(1, 2)), (R((3, 4, 5)),)),
    "sum keepdims": (lambda x: np.sum(x, axis=0, keepdims=True), (R((10, 11)),)),
    "flip": (lambda x: np.flip(x, axis=0), (R((5, 4)),)),
    "cumsum axis 1": (lambda x: np.cumsum(x, axis=1), (R((5, 4)),)),
    "cumsum": (lambda x: np.cumsum(x), (R((5, 4)),)),
    "builtin sum": (lambda x, y: sum([x, y]), (R((5, 4)), R((5, 4)))),
    "mean axis keepdims": (lambda x: np.mean(x, axis=0, keepdims=True), (R((5, 4)),)),
    "index ints": (lambda x: x[3, 0, 1], (R((5, 6, 4)),)),
    "index slices": (lambda x: x[::-1, 2:4, :], (R((5, 6, 4)),)),
    "index lists": (lambda x: x[[0, 1, 2], :, :], (R((5, 6, 4)),)),
    "index mixed": (lambda x: x[3, 2:, [1, 3]], (R((5, 6, 4)),)),
    "reshape method": (lambda x: x.reshape((5 * 4, 6)), (R((5, 4, 6)),)),
    "reshape varargs": (lambda x: x.reshape(5 * 4, 6), (R((5, 4, 6)),)),
    "ravel method": (lambda x: x.ravel(), (R((5, 4, 6)),)),
    "flatten method": (lambda x: x.flatten(), (R((5, 4, 6)),)),
    "concatenate": (lambda x: np.concatenate((B23, x, B23_2), axis=1), (R((2, 3)),)),
    "trace offset": (lambda x: np.trace(x, offset=1), (R((5, 5)),)),
    "diag": (lambda x: np.diag(x), (R((5, 5)),)),
    "transpose": (lambda x: x.T, (R((5, 4)),)),
    "roll": (lambda x: np.roll(x, 2, axis=1), (R((5, 4)),)),
    "triu": (lambda x: np.triu(x, k=2), (R((5, 5)),)),
    "tril": (lambda x: np.tril(x, k=2), (R((5, 5)),)),
    "clip": (lambda x: np.clip(x, a_min=0.1, a_max=1.1), (R((5, 4)),)),
    "prod axis": (lambda x: np.prod(x, axis=0), (R((4, 3)),)),
    # autograd: np.array([x, x * 1.0, x + 2.5]); here np.stack
    "stack of traced values": (lambda x: np.stack([x, x * 1.0, x + 2.5]), (R(3),)),
    "squeeze": (lambda x: np.squeeze(x), (R((5, 1, 4)),)),
    "repeat": (lambda x: np.repeat(x, 2, axis=1), (R((3, 2)),)),
    "expand_dims": (lambda x: np.expand_dims(x, 2), (R((3, 2)),)),
    "split dot": (lambda x: np.dot(x[:2], x[2:]), (R(4),)),
    "maximum of itself": (lambda x: np.maximum(x, x + 0.5), (R(5),)),
    "astype": (lambda x: np.sin(x.astype("float64")), (R(3),)),
    # test_systematic.py: unary ufuncs, binary operators with broadcasting, statistics
    "sin": (np.sin, (R((3, 4)),)),
    "abs": (lambda x: np.abs(x), (R((3, 4)) + 5,)),
    "exp log tanh": (lambda x: np.tanh(np.log(np.exp(x) + 1.0)), (R((3, 4)),)),
    "sqrt": (np.sqrt, (np.abs(R((3, 4))) + 0.1,)),
    "arctan2": (np.arctan2, (R((3, 4)), R((3, 4)))),
    "add broadcast": (lambda x, y: x + y, (R((3, 4)), R(4))),
    "subtract broadcast": (lambda x, y: x - y, (R((3, 1)), R(4))),
    "multiply broadcast": (lambda x, y: x * y, (R((3, 4)), R((1, 4)))),
    "divide broadcast": (lambda x, y: x / y, (R((3, 4)), R(4) + 5)),
    "power": (lambda x, y: x**y, (np.abs(R((3, 4))) + 0.5, R((3, 4)))),
    "matmul": (lambda x, y: x @ y, (R((3, 4)), R((4, 2)))),
    "var": (lambda x: np.var(x, axis=0), (R((4, 3)),)),
    "std": (lambda x: np.std(x, axis=1), (R((4, 3)),)),
    "logaddexp": (np.logaddexp, (R((3, 4)), R((3, 4)))),
    "where": (lambda x, y: np.where(x > 0, x, y), (R((3, 4)), R((3, 4)))),
    "einsum": (lambda x, y: np.einsum("ij,jk->ik", x, y), (R((3, 4)), R((4, 2)))),
    # test_linalg.py
    "inv": (np.linalg.inv, (R((D, D)) + 5 * np.eye(D),)),
    "inv 3d": (np.linalg.inv, (R((D, D, D)) + 5 * np.eye(D),)),
    "pinv": (np.linalg.pinv, (R((5, 3)),)),
    "solve arg1": (lambda a: np.linalg.solve(a, B_SOLVE), (R((D, D)) + 10 * np.eye(D),)),
    "solve arg2": (lambda b: np.linalg.solve(A_SOLVE, b), (R((D, D - 1)),)),
    "det": (np.linalg.det, (R((D, D)),)),
    "det 3d": (np.linalg.det, (R((D, D, D)),)),
    "slogdet": (lambda x: np.linalg.slogdet(x)[1], (R((D, D)),)),
    "slogdet 3d": (
        lambda x: np.linalg.slogdet(x)[1],
        (np.stack([rand_psd(5) + 5 * np.eye(5) for _ in range(3)]),),
    ),
    "vector 2-norm": (np.linalg.norm, (R(D),)),
    "frobenius norm": (np.linalg.norm, (R((D, D - 1)),)),
    "norm axis": (lambda x: np.linalg.norm(x, axis=0), (R((3, 4)),)),
    "cholesky": (symmetrize(np.linalg.cholesky), (rand_psd(6) + 6 * np.eye(6),)),
    "eigh eigenvalues": (symmetrize(lambda x: np.linalg.eigh(x)[0]), (rand_psd(5),)),
    "eigh gauge-invariant": (
        symmetrize(eigh_reconstruction),
        (rand_psd(4),),
    ),
    "svd singular values": (lambda x: np.linalg.svd(x)[1], (R((5, 3)),)),
    "matrix power": (lambda x: np.linalg.matrix_power(x, 3), (R((3, 3)),)),
    # test_scipy.py, through rules.autodiff.scipy
    "gammaln": (special.gammaln, (np.abs(R(4)) + 0.5,)),
    "psi": (special.psi, (np.abs(R(4)) + 0.5,)),
    "erf": (special.erf, (R(4),)),
    "expit": (special.expit, (R(4),)),
    "logsumexp": (lambda x: special.logsumexp(x, axis=1), (R((3, 4)),)),
    "expm": (spla.expm, (R((3, 3)),)),
    "sqrtm": (spla.sqrtm, (rand_psd(3) + 3 * np.eye(3),)),
    "solve_triangular": (
        lambda a, b: spla.solve_triangular(a, b, lower=True),
        (np.tril(R((4, 4))) + 4 * np.eye(4), R((4, 2))),
    ),
    "cho_solve": (
        lambda b: spla.cho_solve(spla.cho_factor(SPD4), b),
        (R((4, 2)),),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_autograd_case(name, check_grads):
    fun, args = CASES[name]
    check_grads(fun, modes=("rev", "fwd"))(*args)


def test_complex_cases(check_grads):
    # test_complex.py and the complex variants of test_linalg.py
    z = R(4) + 1j * R(4)
    check_grads(lambda z: np.abs(z) ** 2)(z)
    check_grads(lambda z: np.real(z * np.conj(z) + z**2))(z)
    check_grads(np.linalg.norm, modes=("rev",))(z)
    check_grads(lambda Z: np.linalg.inv(Z), modes=("rev",))(
        R((3, 3)) + 1j * R((3, 3)) + 4 * np.eye(3)
    )


def test_grad_api_matches_autograd_usage():
    # test_core.py / test_wrappers.py style: grad of grad-free functions, elementwise_grad,
    # value_and_grad, jacobian of an elementwise function
    x = R(5)
    np.testing.assert_allclose(grad(lambda x: np.sum(np.sin(x)))(x), np.cos(x))
    np.testing.assert_allclose(elementwise_grad(np.tanh)(x), 1 - np.tanh(x) ** 2)
    value, g = value_and_grad(lambda x: np.sum(x**2))(x)
    assert value == pytest.approx(np.sum(x**2))
    np.testing.assert_allclose(g, 2 * x)
    np.testing.assert_allclose(jacobian(np.exp)(x), np.diag(np.exp(x)))
    assert grad(lambda x: x**3)(2.0) == pytest.approx(12.0)  # a Python float in and out


def test_mirror_calls_scipy_on_plain_inputs():
    A = rand_psd(3) + 3 * np.eye(3)
    np.testing.assert_array_equal(spla.expm(A), scipy.linalg.expm(A))
    assert special.gammaln is scipy.special.gammaln  # ufuncs dispatch by themselves
    assert spla.expm.__wrapped__ is scipy.linalg.expm
    assert "expm" in dir(spla)
    with pytest.raises(AttributeError, match=r"scipy\.linalg has no attribute 'nope'"):
        _ = spla.nope


def test_scipy_stats_signal_and_sparse_through_the_mirror(fd):
    import rules.autodiff.scipy.sparse.linalg as sparse_linalg
    from rules.autodiff.scipy import signal, sparse, stats

    x = R(4)
    mu = np.array(0.3)

    def logpdf(x):
        return np.sum(stats.norm.logpdf(x, mu, 1.5))

    np.testing.assert_allclose(grad(logpdf)(x), fd.grad(logpdf, (x,)), rtol=1e-6)
    kernel = np.array([1.0, -2.0, 0.5])

    def smoothed(x):
        return np.sum(signal.convolve(x, kernel) ** 2)

    np.testing.assert_allclose(grad(smoothed)(x), fd.grad(smoothed, (x,)), rtol=1e-6)
    import scipy.sparse

    A = scipy.sparse.csc_array(np.diag([2.0, 3.0, 4.0, 5.0]) + np.eye(4, k=1))

    def solved(b):
        return np.sum(sparse_linalg.spsolve(A, b) ** 2)

    np.testing.assert_allclose(grad(solved)(x), fd.grad(solved, (x,)), rtol=1e-6)
    assert sparse.linalg is sparse_linalg  # the mirror's submodule, not scipy's
    assert stats.norm.logpdf(0.0) == scipy.stats.norm.logpdf(0.0)
