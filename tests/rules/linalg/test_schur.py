"""scipy.linalg.schur: the triangular recursions, the real form directly, the complex form through
gauge-invariant functions of its factors (its Schur vectors' phases are arbitrary)."""

import numpy as np
import pytest
import scipy.linalg as sla

import rules  # noqa: F401  (registers the rules)
from rules import frule, rrule, split_cotangent
from rules.linalg.schur import _solve_lower, _solve_lower_adjoint
from rules.testing import check_frule, check_rrule
from tangents import AbstractZero, NoTangent, Tangent, unthunk


def _real_spectrum(rng, n, dtype=np.float64):
    V = np.eye(n) + 0.3 * rng.standard_normal((n, n)) / np.sqrt(n)
    return (V @ np.diag(np.arange(1.0, n + 1)) @ np.linalg.inv(V)).astype(dtype)


def test_the_recursions_solve_their_equations(rng):
    n = 5
    T = np.triu(rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)))
    C = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    L = _solve_lower(T, C)
    np.testing.assert_allclose(np.tril(L @ T - T @ L, -1), np.tril(C, -1), atol=1e-10)
    M = _solve_lower_adjoint(T, C)
    Th = T.conj().T
    np.testing.assert_allclose(np.tril(M @ Th - Th @ M, -1), np.tril(C, -1), atol=1e-10)
    assert np.all(np.triu(L) == 0)
    assert np.all(np.triu(M) == 0)


def test_real_schur_form(rng):
    A = _real_spectrum(rng, 4)
    check_rrule(sla.schur, A)
    check_frule(sla.schur, A)


def test_float32_is_kept(rng):
    # float32 LAPACK flips the signs of Schur vectors under finite-difference steps, so the
    # float32 rule is only checked for its dtype; the arithmetic is the float64 one above.
    A = _real_spectrum(rng, 3, np.float32)
    (T, Z), pullback = rrule(sla.schur, A)
    assert pullback((np.ones_like(T), np.ones_like(Z)))[1].dtype == np.float32
    _, (T_dot, Z_dot) = frule((NoTangent(), np.ones_like(A)), sla.schur, A)
    assert T_dot.dtype == Z_dot.dtype == np.float32


def test_real_schur_with_complex_eigenvalues_is_refused():
    with pytest.raises(ValueError, match="complex"):
        rrule(sla.schur, np.array([[0.0, -1.0], [1.0, 0.0]]))


def _moduli(A):
    """``(|T|^2, |Z|^2)`` of the complex Schur form: invariant under the vectors' phases."""
    T, Z = sla.schur(A, output="complex")
    return np.abs(T) ** 2, np.abs(Z) ** 2


@pytest.fixture
def moduli(registered):
    def moduli_rrule(A):
        (T, Z), pullback = rrule(sla.schur, A, output="complex")

        def moduli_pullback(y_bar):
            parts = [unthunk(t) for t in split_cotangent(y_bar, 2)]
            bars = [
                t if isinstance(t, AbstractZero) else 2 * t * F
                for t, F in zip(parts, (T, Z), strict=True)
            ]
            return pullback(tuple(bars))[:2]

        return (np.abs(T) ** 2, np.abs(Z) ** 2), moduli_pullback

    def moduli_frule(tangents, A):
        (T, Z), y_dot = frule((NoTangent(), tangents[1]), sla.schur, A, output="complex")
        T_dot, Z_dot = split_cotangent(y_dot, 2)
        y = (np.abs(T) ** 2, np.abs(Z) ** 2)
        return y, Tangent(tuple, 2 * np.real(np.conj(T) * T_dot), 2 * np.real(np.conj(Z) * Z_dot))

    registered(rrule, _moduli)(moduli_rrule)
    registered(frule, _moduli)(moduli_frule)
    return _moduli


@pytest.mark.parametrize("kind", ["real", "complex"])
def test_complex_schur_form_through_invariant_functions(rng, moduli, kind):
    A = rng.standard_normal((4, 4))
    if kind == "complex":
        A = A + 1j * rng.standard_normal((4, 4))
    check_rrule(moduli, A)
    check_frule(moduli, A)
