"""primitive: a function of one's own as one traced call, through its registered rules."""

import numpy as np

from rules import frule, rrule
from rules.autodiff import grad, jvp, primitive
from tangents import NoTangent, ProjectTo, unthunk


def test_a_primitive_runs_its_rule_and_not_its_body(registered):
    body_calls = []

    @primitive
    def softplus(x):
        body_calls.append(1)
        return np.log1p(np.exp(np.unwrap(x) * 0 + x))  # no rule for unwrap: never traced

    @registered(rrule, softplus)
    def softplus_rrule(x):
        project_x = ProjectTo(x)

        def softplus_pullback(y_bar):
            return NoTangent(), project_x(unthunk(y_bar) / (1.0 + np.exp(-x)))

        return softplus(x), softplus_pullback

    @registered(frule, softplus)
    def softplus_frule(tangents, x):
        return softplus(x), unthunk(tangents[1]) / (1.0 + np.exp(-x))

    x = np.array([-1.0, 0.5, 2.0])
    g = grad(lambda x: np.sum(softplus(x) ** 2))(x)
    np.testing.assert_allclose(g, 2 * np.log1p(np.exp(x)) / (1 + np.exp(-x)))
    assert len(body_calls) == 1  # once, on plain values, inside the rule
    _, y_dot = jvp(softplus, (x,), (np.ones(3),))
    np.testing.assert_allclose(y_dot, 1 / (1 + np.exp(-x)))


def test_a_rule_registered_for_the_undecorated_function_is_found(registered):
    def cube(x):
        return x**3

    @registered(rrule, cube)
    def cube_rrule(x):
        return cube(x), lambda y_bar: (NoTangent(), 3 * x**2 * y_bar)

    traced_cube = primitive(cube)
    np.testing.assert_allclose(grad(lambda x: np.sum(traced_cube(x)))(np.arange(3.0)), [0, 3, 12])
    assert traced_cube(2.0) == 8.0
