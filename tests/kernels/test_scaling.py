"""The forward kernels' power-of-two prescale, down to subnormal matrices."""

import math

import numpy as np
import pytest

from kernels._scaling import unit_scale
from kernels.eigh_forward import eigh_batched
from kernels.qr_forward import qr_batched
from kernels.svd_forward import svd_batched


@pytest.mark.parametrize("m", [1.0, 0.75, 3.0, 1e-300, 1e300, 5e-324, 2.5e-310])
def test_unit_scale_is_a_finite_power_of_two(m):
    f = unit_scale(m)
    assert np.isfinite(f)
    assert math.frexp(f)[0] == 0.5  # a power of two
    if m >= np.finfo(np.float64).tiny:
        assert 0.5 <= m * f < 1.0
    else:
        assert m * f >= np.finfo(np.float64).tiny  # lifted into the normal range


@pytest.mark.parametrize("m", [0.0, np.inf, np.nan])
def test_unit_scale_leaves_zero_and_non_finite_alone(m):
    assert unit_scale(m) == 1.0


def test_jacobi_and_householder_kernels_on_subnormal_matrices():
    """A largest entry below the normal range gave an infinite scale, then NaN, before."""
    A = (np.diag([1.0, 2.0, 3.0, 4.0]) + np.triu(np.ones((4, 4)), 1) * 0.5)[None] * 5e-324 * 4
    H = np.diag([1.0, 2.0, 3.0, 4.0])[None] * 5e-324 * 4
    w, V = eigh_batched(H)
    assert np.isfinite(V).all()
    np.testing.assert_array_equal(w, np.linalg.eigvalsh(H))
    U, s, Vh = svd_batched(A)
    assert np.isfinite(U).all()
    assert np.isfinite(Vh).all()
    np.testing.assert_allclose(s, np.linalg.svd(A, compute_uv=False), rtol=0.3)  # few bits
    Q, R = qr_batched(A, "reduced")
    assert np.isfinite(Q).all()
    np.testing.assert_allclose(np.abs(R), np.abs(np.linalg.qr(A)[1]), rtol=0.3)


def test_unit_scale_is_the_frexp_ldexp_formula_for_every_exponent():
    """The bit-level exponent gives ``ldexp(1, min(-frexp(m)[1], 1022))`` exactly: every power of
    two from the smallest subnormal to the largest, its neighbours, and float32 input."""
    ms = [math.ldexp(0.5, e) for e in range(-1073, 1025)]  # 2^-1074 ... 2^1023
    ms += [m * (1 - 2**-53) for m in ms] + [m * (1 + 2**-52) for m in ms]
    ms += [np.finfo(np.float64).max, float(np.float32(3.5)), float(np.float32(1e-40))]
    for m in ms:
        assert unit_scale(m) == math.ldexp(1.0, min(-math.frexp(m)[1], 1022)), m
    assert unit_scale(np.float32(1e-40)) == unit_scale(float(np.float32(1e-40)))
