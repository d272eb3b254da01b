"""absolute, angle, conj, real, imag: hand-derived rules, real and complex, and their zeros."""

import numpy as np
import pytest

import rules  # noqa: F401  (registers the rules)
from rules import frule, rrule
from rules.testing import check_frule, check_rrule
from tangents import NoTangent, ZeroTangent

FUNCTIONS = [np.absolute, np.angle, np.conj, np.real, np.imag]


def away_from_zero(rng, shape, dtype):
    x = rng.uniform(0.5, 2, shape) * rng.choice([-1, 1], shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.uniform(0.5, 2, shape) * rng.choice([-1, 1], shape)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_rules(rng, f, dtype):
    x = away_from_zero(rng, (2, 3), dtype)
    check_rrule(f, x)
    check_frule(f, x)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_python_scalars(f):
    check_rrule(f, 1.5 - 0.5j)
    check_rrule(f, -1.5)
    _, pullback = rrule(f, 1.5 - 0.5j)
    assert isinstance(pullback(1.0)[1], complex | ZeroTangent)


def test_angle_in_degrees(rng):
    z = away_from_zero(rng, (3,), np.complex128)
    check_rrule(np.angle, z, deg=True)
    check_frule(np.angle, z, deg=True)
    check_rrule(np.angle, z, True)  # positional deg: a NoTangent() for it
    assert rrule(np.angle, z, True)[1](np.ones(3))[2] is NoTangent()


def test_complex_convention_for_abs_squared():
    # DESIGN.md section 3: the gradient of |z|^2 at 1+1j is 2+2j; |z|^2 = |z| * |z|.
    z = np.array([1.0 + 1.0j])
    y, pullback = rrule(np.absolute, z)
    _, z_bar = pullback(2 * y)
    np.testing.assert_allclose(z_bar, [2 + 2j])


def test_absolute_at_zero_is_zero_not_nan():
    for x in (np.array([0.0, -2.0]), np.array([0j, -2.0 + 0j])):
        _, pullback = rrule(np.absolute, x)
        _, x_bar = pullback(np.ones(2))
        np.testing.assert_array_equal(x_bar, [0.0, -1.0])
        _, y_dot = frule((NoTangent(), np.ones_like(x)), np.absolute, x)
        np.testing.assert_array_equal(y_dot, [0.0, -1.0])


def test_angle_at_zero_is_zero_not_nan():
    z = np.array([0j, 1j])
    _, pullback = rrule(np.angle, z)
    _, z_bar = pullback(np.ones(2))
    np.testing.assert_allclose(z_bar, [0, -1])  # i z / |z|^2 = i / conj(z)
    _, y_dot = frule((NoTangent(), np.ones(2, complex)), np.angle, z)
    np.testing.assert_allclose(y_dot, [0, -1])


def test_real_input_derivatives_that_vanish(rng):
    x = rng.standard_normal(3)
    assert rrule(np.imag, x)[1](np.ones(3))[1] is ZeroTangent()
    assert rrule(np.angle, x)[1](np.ones(3))[1] is ZeroTangent()
    assert frule((NoTangent(), np.ones(3)), np.imag, x)[1] is ZeroTangent()


def test_real_of_complex_gives_a_complex_cotangent(rng):
    z = away_from_zero(rng, (3,), np.complex64)
    _, pullback = rrule(np.real, z)
    _, z_bar = pullback(np.ones(3, np.float32))
    assert z_bar.dtype == np.complex64
    np.testing.assert_array_equal(z_bar, 1.0)


def test_imag_of_complex_points_along_i(rng):
    z = away_from_zero(rng, (3,), np.complex128)
    _, pullback = rrule(np.imag, z)
    np.testing.assert_array_equal(pullback(np.full(3, 2.0))[1], 2j)


@pytest.mark.parametrize("f", [np.conj, np.real])
def test_conj_and_real_take_a_user_tangent_type(rng, user_tangent, f):
    z = away_from_zero(rng, (3,), np.complex128)
    _, pullback = rrule(f, z)
    assert isinstance(pullback(user_tangent(np.ones(3)))[1], user_tangent)


def test_absolute_refuses_a_user_tangent_type_by_name(rng, user_tangent):
    _, pullback = rrule(np.absolute, away_from_zero(rng, (3,), np.float64))
    with pytest.raises(TypeError, match=r"np\.absolute's pullback"):
        pullback(user_tangent(np.ones(3)))
