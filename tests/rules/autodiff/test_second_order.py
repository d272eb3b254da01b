"""Second derivatives through the driver: Hessians of whole programs, hvp, and every nesting.

References are second-order central differences of the plain numpy function (no driver):
``H_ij ~ [f(x + h e_i + h e_j) - f(x + h e_i - h e_j) - f(x - h e_i + h e_j) + f(x - h e_i - h e_j)]
/ (4 h^2)``.
"""

import numpy as np
import pytest
import scipy.linalg as scipy_linalg

import rules.autodiff.scipy.linalg as sla
from rules.autodiff import grad, hessian, hvp, jacobian, jvp, value_and_grad, vjp


def numerical_hessian(f, x, h=1e-4):
    """The Hessian of a real scalar ``f`` at real ``x`` by second-order central differences."""
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    H = np.zeros((n, n))
    flat = x.reshape(-1)
    for i in range(n):
        for j in range(i, n):
            total = 0.0
            for si, sj in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
                e = np.zeros(n)
                e[i] += si * h
                e[j] += sj * h
                total += si * sj * float(f((flat + e).reshape(x.shape)))
            H[i, j] = H[j, i] = total / (4 * h * h)
    return H.reshape(x.shape + x.shape)


RNG = np.random.default_rng(7)


# --- programs ---------------------------------------------------------------------------------

X_MLP = RNG.standard_normal((6, 3))
Y_MLP = RNG.standard_normal((6, 1))


def mlp_loss(theta):
    """A two-layer tanh network's mean squared error; ``theta`` packs W1 (3x4), b1, W2 (4x1), b2."""
    W1, b1 = theta[:12].reshape(3, 4), theta[12:16]
    W2, b2 = theta[16:20].reshape(4, 1), theta[20]
    hidden = np.tanh(X_MLP @ W1 + b1)
    return np.mean((hidden @ W2 + b2 - Y_MLP) ** 2)


T_GP = np.linspace(0.0, 3.0, 7)
Y_GP = np.sin(T_GP) + 0.1 * RNG.standard_normal(7)


def gp_nll(log_params):
    """A GP's negative log marginal likelihood in log lengthscale, log amplitude, log noise."""
    lengthscale, amplitude, noise = (
        np.exp(log_params[0]),
        np.exp(log_params[1]),
        np.exp(log_params[2]),
    )
    d2 = (T_GP[:, None] - T_GP[None, :]) ** 2
    K = amplitude * np.exp(-0.5 * d2 / lengthscale**2) + noise * np.eye(T_GP.size)
    L = np.linalg.cholesky(K)
    alpha = sla.solve_triangular(L, Y_GP, lower=True)
    return (
        0.5 * np.sum(alpha**2)
        + np.sum(np.log(np.diagonal(L)))
        + 0.5 * T_GP.size * np.log(2 * np.pi)
    )


X_CE = RNG.standard_normal((5, 3))
LABELS = np.array([0, 1, 1, 0, 1])


def softmax_cross_entropy(w):
    """Softmax cross-entropy of a linear classifier, ``w`` the 3x2 weights flattened."""
    logits = X_CE @ w.reshape(3, 2)
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_softmax = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(log_softmax[np.arange(5), LABELS])


A_LOGDET = RNG.standard_normal((3, 3)) + 3 * np.eye(3)


def log_determinant(x):
    """``log |det(A0 + X)|`` by slogdet plus ``log det`` of an SPD matrix by Cholesky."""
    X = x.reshape(3, 3)
    S = X @ X.T + np.eye(3)
    return np.linalg.slogdet(A_LOGDET + X)[1] + 2 * np.sum(
        np.log(np.diagonal(np.linalg.cholesky(S)))
    )


PROGRAMS = {
    "mlp": (mlp_loss, 0.5 * RNG.standard_normal(21)),
    "gp-nll": (gp_nll, np.array([0.1, -0.2, -1.5])),
    "softmax-cross-entropy": (softmax_cross_entropy, RNG.standard_normal(6)),
    "log-determinant": (log_determinant, 0.3 * RNG.standard_normal(9)),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_hessian_of_program(name):
    f, x = PROGRAMS[name]
    H = hessian(f)(x)
    assert H.shape == x.shape + x.shape
    np.testing.assert_allclose(H, numerical_hessian(f, x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_hvp_of_program(name):
    f, x = PROGRAMS[name]
    v = RNG.standard_normal(x.shape)
    np.testing.assert_allclose(
        hvp(f, (x,), (v,)), numerical_hessian(f, x) @ v, rtol=1e-5, atol=1e-6
    )


# --- every nesting ------------------------------------------------------------------------------


def f_vector(x):
    return np.sum(np.sin(x) * x**2) + np.prod(x[:2]) * x[2]


X3 = np.array([0.3, -0.7, 1.1])
V3 = np.array([0.5, 1.0, -2.0])


def test_grad_of_grad_of_a_scalar_function():
    def g(t):
        return np.sin(t) * t**3

    t = 0.7
    want = numerical_hessian(lambda x: g(float(x.reshape(()))), np.array(t))
    np.testing.assert_allclose(grad(grad(g))(t), want, rtol=1e-5)


def test_third_derivative():
    assert np.isclose(grad(grad(grad(np.sin)))(0.4), -np.cos(0.4))


def test_jacobian_of_grad_is_the_hessian():
    np.testing.assert_allclose(
        jacobian(grad(f_vector))(X3), numerical_hessian(f_vector, X3), rtol=1e-5, atol=1e-7
    )


def test_grad_of_a_grad_component():
    def second(x):
        return grad(f_vector)(x)[0] * x[1]

    want = numerical_hessian(f_vector, X3)[0] * X3[1]
    want[1] += grad(f_vector)(X3)[0]
    np.testing.assert_allclose(grad(second)(X3), want, rtol=1e-5, atol=1e-7)


def test_value_and_grad_nested():
    value, g = value_and_grad(lambda x: np.sum(grad(f_vector)(x) ** 2))(X3)
    H = numerical_hessian(f_vector, X3)
    np.testing.assert_allclose(g, 2 * H @ grad(f_vector)(X3), rtol=1e-5, atol=1e-7)
    assert np.isclose(value, np.sum(grad(f_vector)(X3) ** 2))


def test_vjp_of_jvp():
    def directional(x):
        return jvp(f_vector, (x,), (V3,))[1]

    _, pullback = vjp(directional, X3)
    np.testing.assert_allclose(
        pullback(1.0)[0], numerical_hessian(f_vector, X3) @ V3, rtol=1e-5, atol=1e-7
    )


def test_jvp_of_a_vjp_pullback():
    def pulled(x):
        return vjp(f_vector, x)[1](1.0)[0]

    np.testing.assert_allclose(
        jvp(pulled, (X3,), (V3,))[1], numerical_hessian(f_vector, X3) @ V3, rtol=1e-5, atol=1e-7
    )


def test_hessian_with_several_arguments():
    def f(a, b):
        return np.sum(a**2 * b) + np.sum(np.exp(a * b))

    a, b = X3, V3 * 0.3
    blocks = hessian(f, (0, 1))(a, b)
    full = numerical_hessian(lambda ab: f(ab[:3], ab[3:]), np.concatenate([a, b]))
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(
                blocks[i][j], full[3 * i : 3 * i + 3, 3 * j : 3 * j + 3], rtol=1e-5, atol=1e-7
            )
    products = hvp(f, (a, b), (V3, X3))
    np.testing.assert_allclose(
        np.concatenate(products), full @ np.concatenate([V3, X3]), rtol=1e-5, atol=1e-7
    )


# --- thunks and in-place accumulation under nesting ---------------------------------------------


def test_accumulation_of_plain_and_traced_cotangents():
    """Cotangents that do not depend on the outer trace (plain) and ones that do (traced) meet
    in one accumulator: the sweep must add them out of place, not into its own plain buffer."""
    c1, c2 = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])

    def f(x):
        return np.sum(x**3) + np.sum(x * c1) + np.sum(x * c2)

    np.testing.assert_allclose(hessian(f)(X3), np.diag(6 * X3), rtol=1e-12)


def test_repeated_indexing_scatter_is_differentiated():
    """``x[i]``'s cotangent is an in-place scatter (an InplaceableThunk) at first order; under
    nesting it is a traced call with its own rule."""

    def f(x):
        return np.sum(x[[0, 0, 2]] ** 3) + x[1] * np.sum(x)

    np.testing.assert_allclose(hessian(f)(X3), numerical_hessian(f, X3), rtol=1e-5, atol=1e-7)


def test_gradient_dtype_float32_is_kept_at_second_order():
    x = X3.astype(np.float32)
    H = hessian(lambda x: np.sum(np.sin(x) * x))(x)
    assert H.dtype == np.float32


def test_scipy_expm_hessian():
    def f(x):
        return np.sum(sla.expm(x.reshape(2, 2)) ** 2)

    x = 0.3 * RNG.standard_normal(4)
    np.testing.assert_allclose(
        hessian(f)(x),
        numerical_hessian(lambda y: np.sum(scipy_linalg.expm(y.reshape(2, 2)) ** 2), x),
        rtol=1e-5,
        atol=1e-6,
    )


def test_a_thunked_cotangent_is_differentiated():
    """logsumexp's cotangent of ``b`` is a Thunk: evaluated inside the traces, it is recorded."""
    import scipy.special

    from rules.autodiff.scipy import special

    a = np.array([0.2, -0.4, 1.0])

    def f(b):
        return special.logsumexp(a, None, b) ** 2

    b = np.array([0.5, 1.5, 0.7])
    want = numerical_hessian(lambda b: scipy.special.logsumexp(a, None, b) ** 2, b)
    np.testing.assert_allclose(hessian(f)(b), want, rtol=1e-5, atol=1e-7)
