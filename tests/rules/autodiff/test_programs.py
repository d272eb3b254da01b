"""Gradients of composed numpy programs against central differences of the plain function."""

import itertools
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pytest

from rules.autodiff import grad, value_and_grad


def mlp_loss(params, x, y):
    h = x
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    out = h @ W + b
    return np.mean((out - y) ** 2)


def test_mlp_gradient_matches_finite_differences(rng, fd):
    sizes = [3, 5, 4, 2]
    params = [
        (rng.standard_normal((m, n)) / np.sqrt(m), rng.standard_normal(n))
        for m, n in itertools.pairwise(sizes)
    ]
    x, y = rng.standard_normal((6, 3)), rng.standard_normal((6, 2))
    g = grad(mlp_loss)(params, x, y)
    assert isinstance(g, list)
    assert len(g) == 3
    for layer, (W, b) in enumerate(params):

        def loss_of_W(W_, layer=layer):
            p = list(params)
            p[layer] = (W_, p[layer][1])
            return mlp_loss(p, x, y)

        def loss_of_b(b_, layer=layer):
            p = list(params)
            p[layer] = (p[layer][0], b_)
            return mlp_loss(p, x, y)

        np.testing.assert_allclose(g[layer][0], fd.grad(loss_of_W, (W,)), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(g[layer][1], fd.grad(loss_of_b, (b,)), rtol=1e-6, atol=1e-8)


def gp_nll(log_ell, log_sf2, X, y):
    sq = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    K = np.exp(log_sf2) * np.exp(-0.5 * sq / np.exp(2 * log_ell)) + 0.1 * np.eye(len(y))
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(K, y)
    return 0.5 * y @ alpha + np.sum(np.log(np.diagonal(L))) + 0.5 * len(y) * np.log(2 * np.pi)


def test_gp_negative_log_likelihood(rng, fd):
    X, y = rng.standard_normal((8, 2)), rng.standard_normal(8)
    args = (0.3, -0.2, X, y)
    value, (g_ell, g_sf2) = value_and_grad(gp_nll, argnums=(0, 1))(*args)
    assert value == pytest.approx(gp_nll(*args))
    assert isinstance(g_ell, float)
    assert isinstance(g_sf2, float)
    assert g_ell == pytest.approx(fd.grad(gp_nll, args, 0), rel=1e-6)
    assert g_sf2 == pytest.approx(fd.grad(gp_nll, args, 1), rel=1e-6)
    np.testing.assert_allclose(grad(gp_nll, 2)(*args), fd.grad(gp_nll, args, 2), rtol=1e-5)


def softmax_cross_entropy(W, x, labels):
    logits = x @ W
    logits = logits - np.max(logits, axis=1, keepdims=True)
    log_p = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    return -np.mean(log_p[np.arange(len(labels)), labels])


def test_softmax_cross_entropy(rng, fd):
    W, x = rng.standard_normal((4, 3)), rng.standard_normal((5, 4))
    labels = np.array([0, 2, 1, 1, 0])
    np.testing.assert_allclose(
        grad(softmax_cross_entropy)(W, x, labels),
        fd.grad(softmax_cross_entropy, (W, x, labels)),
        rtol=1e-6,
        atol=1e-9,
    )


def test_logdet_and_trace_of_inverse_over_a_stack(rng, fd, spd):
    A, B = spd(3, batch=(4,)), rng.standard_normal((4, 3, 3))

    def loss(A, B):
        _sign, logdet = np.linalg.slogdet(A)
        return np.sum(logdet + np.trace(np.linalg.inv(A) @ B, axis1=-2, axis2=-1))

    np.testing.assert_allclose(grad(loss)(A, B), fd.grad(loss, (A, B)), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(grad(loss, 1)(A, B), fd.grad(loss, (A, B), 1), rtol=1e-5)


def test_control_flow_and_python_scalars(rng, fd):
    def f(x, n):
        total = 0.0
        for i in range(n):
            if np.sum(x) > 0:
                total = total + np.sin(x[i]) * (i + 1)
            else:
                total = total - x[i] ** 2
        while total > 10:
            total = total / 2
        return total * 1.5

    x = rng.standard_normal(4)
    for sign in (1, -1):
        z = sign * np.abs(x)
        np.testing.assert_allclose(grad(f)(z, 3), fd.grad(f, (z, 3)), rtol=1e-6, atol=1e-10)


Params = namedtuple("Params", "W b")


@dataclass
class Layer:
    weights: Params
    scale: float
    name: str
    depth: int


def test_structured_arguments_get_structural_gradients(rng, fd):
    W, b = rng.standard_normal((3, 2)), rng.standard_normal(2)
    x = rng.standard_normal((4, 3))

    def loss(layer, extras):
        z = np.tanh(x @ layer.weights.W + layer.weights.b) * layer.scale
        return np.sum(z**2) * extras["c"] + extras["d"][0] * layer.depth

    layer = Layer(Params(W, b), 0.7, "first", 2)
    extras = {"c": 1.3, "d": [0.5, 2]}
    g_layer, g_extras = grad(loss, (0, 1))(layer, extras)
    assert g_layer.primal_type is Layer
    assert g_layer.weights.primal_type is Params
    assert g_layer.depth == g_layer.name == g_extras["d"][1]  # NoTangent() for int and str leaves
    assert type(g_layer.depth).__name__ == "NoTangent"

    def loss_W(W_):
        return loss(Layer(Params(W_, b), 0.7, "first", 2), extras)

    def loss_scale(s):
        return loss(Layer(Params(W, b), s, "first", 2), extras)

    def loss_c(c):
        return loss(layer, {"c": c, "d": [0.5, 2]})

    def loss_d0(d0):
        return loss(layer, {"c": 1.3, "d": [d0, 2]})

    np.testing.assert_allclose(g_layer.weights.W, fd.grad(loss_W, (W,)), rtol=1e-6)
    assert g_layer.scale == pytest.approx(fd.grad(loss_scale, (0.7,)), rel=1e-6)
    assert g_extras["c"] == pytest.approx(fd.grad(loss_c, (1.3,)), rel=1e-6)
    assert isinstance(g_extras["d"], list)
    assert g_extras["d"][0] == pytest.approx(fd.grad(loss_d0, (0.5,)), rel=1e-6)


def test_methods_attributes_and_operators(rng, fd):
    def f(x):
        y = x.reshape(2, 3).T @ x.reshape((2, 3))  # (3, 3)
        z = y.mT.sum(axis=0) + y.mean() - y.diagonal().dot(y.trace() * np.ones(3))
        w = z.astype(np.float64) ** 2 / (1.0 + abs(z))
        shape_ok = x.shape == (6,) and x.ndim == 1 and x.dtype == np.float64 and len(x) == 6
        terms = [xi * i for i, xi in enumerate(x)]
        return (np.sum(w) + sum(terms) + x.max() - x.min() + x.prod() + x.std()) * shape_ok

    x = rng.standard_normal(6)
    np.testing.assert_allclose(grad(f)(x), fd.grad(f, (x,)), rtol=1e-5, atol=1e-8)


def test_indexing_basic_fancy_and_boolean(rng, fd):
    def f(x):
        return (
            np.sum(x[1:, ::2] ** 2)
            + np.sum(x[[0, 2, 0], [1, 1, 1]])
            + np.sum(np.exp(x[x > 0]))
            + x[..., -1].sum()
            + x[0, 0] * x[0, 0]
        )

    x = rng.standard_normal((3, 4))
    np.testing.assert_allclose(grad(f)(x), fd.grad(f, (x,)), rtol=1e-6, atol=1e-9)


def test_repeated_indexing_accumulates(rng, fd):
    def f(x):
        return sum(x[i] * x[(i + 1) % len(x)] for i in range(len(x)))

    x = rng.standard_normal(5)
    np.testing.assert_allclose(grad(f)(x), fd.grad(f, (x,)), rtol=1e-6)


def test_float32_gradient_stays_float32(rng):
    x = rng.standard_normal(4).astype(np.float32)
    g = grad(lambda x: np.sum(np.sin(x) * x))(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-5)


def test_complex_input_follows_the_project_convention(rng, fd):
    def f(z):
        return np.sum(np.abs(z) ** 2 + np.real(z * np.conj(z[::-1])))

    z = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    g = grad(f)(z)
    assert g.dtype == np.complex128
    np.testing.assert_allclose(g, fd.grad(f, (z,)), rtol=1e-6)
    # grad of |z|^2 at 1+1j is 2+2j (DESIGN.md section 3)
    assert grad(lambda z: np.abs(z) ** 2)(1 + 1j) == pytest.approx(2 + 2j)


def test_diagonal_argument_gets_a_diagonal_gradient(rng):
    from tangents import Diagonal

    d = Diagonal(rng.standard_normal(3))
    M = rng.standard_normal((3, 3))
    g = grad(lambda D: np.sum((D @ M) ** 2))(d)
    assert isinstance(g, Diagonal)
    want = np.diag(2 * (d.dense() @ M) @ M.T)
    np.testing.assert_allclose(g.data, want, rtol=1e-12)


def test_integer_array_input_gets_a_float64_gradient():
    x = np.arange(1, 4)
    g = grad(lambda x: np.sum(x * x))(x)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, 2.0 * x)


def test_gradient_with_no_dependence_is_zero_of_the_right_form():
    x = np.ones(3, dtype=np.float32)
    g = grad(lambda x, y: np.sum(y**2), 0)(x, np.ones(2))
    assert g.dtype == np.float32
    assert g.shape == (3,)
    assert not g.any()


def test_has_aux_and_argnums_tuple(rng):
    def f(x, y):
        return np.sum(x * y), {"norm": np.sum(x**2), "tag": "t"}

    x, y = rng.standard_normal(3), rng.standard_normal(3)
    (value, aux), (gx, gy) = value_and_grad(f, (0, 1), has_aux=True)(x, y)
    assert value == pytest.approx(np.sum(x * y))
    assert type(aux["norm"]).__name__ != "Traced"
    assert aux["norm"] == pytest.approx(np.sum(x**2))
    np.testing.assert_allclose(gx, y)
    np.testing.assert_allclose(gy, x)
    g, aux2 = grad(f, has_aux=True)(x, y)
    np.testing.assert_allclose(g, y)
    assert aux2["tag"] == "t"


def test_astype_casts_the_gradient_back(rng):
    x = rng.standard_normal(3).astype(np.float32)
    g = grad(lambda x: np.sum(x.astype(np.float64) ** 2))(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 2 * x, rtol=1e-6)
    # a cast to integers is piecewise constant: no derivative flows through it
    h = grad(lambda x: np.sum(x.astype(np.int64) * 1.0) + np.sum(x))(x)
    np.testing.assert_allclose(h, np.ones(3))


def test_complex_methods_and_attributes(rng, fd):
    def f(z):
        w = z.reshape(2, 2).mT @ z.conj().reshape(2, 2)
        return (
            np.sum(w.real**2) + np.sum(w.imag * z.real.reshape(2, 2)) + np.sum(z.conjugate().imag)
        )

    z = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    np.testing.assert_allclose(grad(f)(z), fd.grad(f, (z,)), rtol=1e-6, atol=1e-9)


def test_comparisons_are_plain_and_not_differentiated():
    seen = {}

    def f(x):
        mask = x > 0.5
        seen["mask"] = type(mask)
        seen["eq"] = type(x == x[0])
        return np.sum(np.where(mask, x**2, -x))

    x = np.array([0.2, 0.7, 1.5])
    np.testing.assert_allclose(grad(f)(x), [-1.0, 1.4, 3.0])
    assert seen == {"mask": np.ndarray, "eq": np.ndarray}
