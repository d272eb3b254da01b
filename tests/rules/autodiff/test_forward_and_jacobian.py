"""jvp, jacobian, elementwise_grad and vjp of structured results, against central differences."""

from collections import namedtuple

import numpy as np
import pytest

from rules.autodiff import elementwise_grad, jacobian, jvp, vjp
from tangents import Tangent


def test_jvp_of_a_composed_program(rng, fd):
    def f(W, x):
        return np.tanh(W @ x) * np.sum(x**2)

    W, x = rng.standard_normal((3, 4)), rng.standard_normal(4)
    W_dot, x_dot = rng.standard_normal((3, 4)), rng.standard_normal(4)
    y, y_dot = jvp(f, (W, x), (W_dot, x_dot))
    np.testing.assert_allclose(y, f(W, x))
    h = 1e-6
    want = (f(W + h * W_dot, x + h * x_dot) - f(W - h * W_dot, x - h * x_dot)) / (2 * h)
    np.testing.assert_allclose(y_dot, want, rtol=1e-6, atol=1e-9)


Pair = namedtuple("Pair", "a b")


def test_jvp_and_vjp_of_structured_inputs_and_outputs(rng):
    def f(p, scale):
        return {"sum": p.a + p.b, "prod": (p.a * p.b * scale, np.sum(p.a))}

    p = Pair(rng.standard_normal(3), rng.standard_normal(3))
    dot = Pair(np.ones(3), np.zeros(3))
    _, y_dot = jvp(f, (p, 2.0), (dot, 0.0))
    np.testing.assert_allclose(y_dot["sum"], np.ones(3))
    np.testing.assert_allclose(y_dot["prod"][0], 2.0 * p.b)
    assert y_dot["prod"][1] == pytest.approx(3.0)

    _y, pullback = vjp(f, p, 2.0)
    bar = {"sum": np.ones(3), "prod": (np.zeros(3), 1.0)}
    p_bar, scale_bar = pullback(bar)
    assert isinstance(p_bar, Tangent)
    np.testing.assert_allclose(p_bar.a, np.ones(3) + 1.0)
    np.testing.assert_allclose(p_bar.b, np.ones(3))
    assert scale_bar == 0.0
    # the same cotangent in Tangent form
    p_bar2, _ = pullback(
        Tangent(dict, {"sum": np.ones(3), "prod": Tangent(tuple, np.zeros(3), 1.0)})
    )
    np.testing.assert_allclose(p_bar2.a, p_bar.a)


def test_jvp_output_that_does_not_depend_on_the_input_has_zero_tangent():
    _y, y_dot = jvp(lambda x: (np.ones(2), x * 2), (np.ones(3, dtype=np.float32),), (np.ones(3),))
    np.testing.assert_array_equal(y_dot[0], np.zeros(2))
    np.testing.assert_array_equal(y_dot[1], 2 * np.ones(3))


@pytest.mark.parametrize(("n_in", "n_out"), [(2, 5), (5, 2), (3, 3)])
def test_jacobian_forward_or_reverse(rng, fd, n_in, n_out):
    M = rng.standard_normal((n_out, n_in))

    def f(x):
        return np.sin(M @ x) * np.sum(x)

    x = rng.standard_normal(n_in)
    J = jacobian(f)(x)
    assert J.shape == (n_out, n_in)
    np.testing.assert_allclose(J, fd.jacobian(f, x), rtol=1e-6, atol=1e-9)


def test_jacobian_of_matrices_and_argnums(rng, fd):
    A, B = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))
    JA, JB = jacobian(lambda A, B: A @ B, (0, 1))(A, B)
    assert JA.shape == (2, 2, 2, 3)
    assert JB.shape == (2, 2, 3, 2)
    np.testing.assert_allclose(JA, fd.jacobian(lambda A_: A_ @ B, A), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(JB, fd.jacobian(lambda B_: A @ B_, B), rtol=1e-6, atol=1e-9)
    big = jacobian(lambda x: np.outer(x, x))(np.arange(2.0))  # 4 outputs, 2 inputs: forward
    np.testing.assert_allclose(big, fd.jacobian(lambda x: np.outer(x, x), np.arange(2.0)))


def test_elementwise_grad(rng):
    x = rng.standard_normal(4)
    np.testing.assert_allclose(elementwise_grad(np.sin)(x), np.cos(x))
    np.testing.assert_allclose(elementwise_grad(lambda a, b: a * b, 1)(x, 2 * x), x)


def test_vjp_has_aux(rng):
    x = rng.standard_normal(3)
    _y, pullback, aux = vjp(lambda x: (x * 2, {"m": np.max(x)}), x, has_aux=True)
    np.testing.assert_allclose(pullback(np.ones(3))[0], 2 * np.ones(3))
    assert aux["m"] == np.max(x)
