"""eigh and svd at exact ties: refuse the coupling no cotangent resolves, stay exact elsewhere.

Issue 14, item 3. ``tr(C A^2)`` through ``eigh`` at ``A = I`` used to return 0 (gradient
``2C``), and ``tr(C A A^H)`` through ``svd`` the same: the pullbacks now raise ``TieError``.
The losses they keep answering exactly at ties (eigenvalue-only losses, functions of
``V diag(f(w)) V^H`` whose cotangent does not couple inside the tie, the polar factor) are
checked against central differences of the loss.
"""

import numpy as np
import pytest

from rules import rrule
from rules.linalg._spectral import TieError
from tangents import ZeroTangent

DTYPES = [np.float64, np.complex128]
SPECTRA = {"identity": [1.0, 1.0, 1.0], "diag(1,1,2)": [1.0, 1.0, 2.0]}


def herm(X):
    return 0.5 * (X + X.conj().swapaxes(-1, -2))


@pytest.fixture
def hermitian_random(randn):
    return lambda dtype, n: herm(randn(dtype, n, n))


def diag_of(V, C):
    """``Re diag(V^H C V)``."""
    return np.real(np.sum(V.conj() * (C @ V), axis=0))


def spectrum_matrix(with_spectrum, dtype, name):
    w = SPECTRA[name]
    return np.diag(w).astype(dtype) if name == "identity" else with_spectrum(dtype, w)


# --- eigh -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spectrum", SPECTRA)
def test_eigh_refuses_the_in_tie_coupling_of_tr_C_A2(
    with_spectrum, hermitian_random, dtype, spectrum
):
    A = spectrum_matrix(with_spectrum, dtype, spectrum)
    C = hermitian_random(dtype, 3)
    (w, V), pullback = rrule(np.linalg.eigh, A)
    w_bar, V_bar = 2 * w * diag_of(V, C), 2 * C @ V * w**2  # L = Re tr(C V W^2 V^H)
    with pytest.raises(
        TieError, match=r"np\.linalg\.eigh pullback: at a repeated eigenvalue.*matfun"
    ):
        pullback((w_bar, V_bar))


def test_eigh_tie_error_names_the_matrix_of_the_stack(with_spectrum, hermitian_random, randn):
    A = np.stack([herm(randn(np.float64, 3, 3)), with_spectrum(np.float64, [1.0, 1.0, 2.0])])
    C = hermitian_random(np.float64, 3)
    (w, V), pullback = rrule(np.linalg.eigh, A)
    V_bar = 2 * C @ V * w[:, None, :] ** 2
    with pytest.raises(TieError, match="matrix 1 of the stack"):
        pullback((ZeroTangent(), V_bar))


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_just_off_the_tie_gets_tr_C_A2_right(with_spectrum, hermitian_random, gradient, dtype):
    A = with_spectrum(dtype, [1.0, 1.0 + 1e-6, 2.0])
    C = hermitian_random(dtype, 3)
    (w, V), pullback = rrule(np.linalg.eigh, A)
    got = pullback((2 * w * diag_of(V, C), 2 * C @ V * w**2))[1]
    want = gradient(lambda X: np.real(np.trace(C @ herm(X) @ herm(X))), A)
    np.testing.assert_allclose(got, want, atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spectrum", SPECTRA)
@pytest.mark.parametrize("loss", ["trace", "frobenius", "A0-weighted", "eigenvalues"])
def test_eigh_stays_exact_at_ties_where_the_cotangent_determines_the_derivative(
    with_spectrum, gradient, dtype, spectrum, loss
):
    A = spectrum_matrix(with_spectrum, dtype, spectrum)
    A0 = A.copy()
    (w, V), pullback = rrule(np.linalg.eigh, A)
    f, df = np.exp, np.exp

    def Y(X):  # V diag(f(w)) V^H, through eigh
        wx, Vx = np.linalg.eigh(herm(X))
        return (Vx * f(wx)) @ Vx.conj().T

    # L = g(Y) with dL/dY = G (Hermitian): V_bar = 2 G V diag(f), w_bar = f' Re diag(V^H G V)
    if loss == "trace":
        G, value = np.eye(3, dtype=dtype), lambda X: np.real(np.trace(Y(X)))
    elif loss == "frobenius":
        G, value = 2 * Y(A), lambda X: np.sum(np.abs(Y(X)) ** 2)
    elif loss == "A0-weighted":
        G, value = A0, lambda X: np.real(np.trace(A0 @ Y(X)))
    if loss == "eigenvalues":
        cotangent = (3 * w**2, ZeroTangent())

        def value(X):
            return np.sum(np.linalg.eigvalsh(herm(X)) ** 3)
    else:
        cotangent = (df(w) * diag_of(V, G), 2 * G @ V * f(w))
    got = pullback(cotangent)[1]
    np.testing.assert_allclose(got, gradient(value, A), atol=1e-7)


# --- svd ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spectrum", SPECTRA)
@pytest.mark.parametrize("side", ["U", "V"])
def test_svd_refuses_the_in_tie_coupling_of_tr_C_A_AH(
    with_spectrum, hermitian_random, dtype, spectrum, side
):
    A = spectrum_matrix(with_spectrum, dtype, spectrum)
    C = hermitian_random(dtype, 3)
    (U, s, Vh), pullback = rrule(np.linalg.svd, A)
    zero = np.zeros_like(U)
    if side == "U":  # L = Re tr(C A A^H) = Re tr(C U S^2 U^H)
        cotangent = (2 * C @ U * s**2, 2 * s * diag_of(U, C), zero)
    else:  # L = Re tr(C A^H A) = Re tr(C V S^2 V^H), Vh_bar = (2 C V S^2)^H
        V = Vh.conj().T
        cotangent = (zero, 2 * s * diag_of(V, C), 2 * (s**2)[:, None] * (Vh @ C))
    with pytest.raises(TieError, match=r"np\.linalg\.svd pullback: at a repeated singular value"):
        pullback(cotangent)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spectrum", SPECTRA)
def test_svd_polar_factor_and_values_stay_exact_at_ties(
    with_spectrum, randn, gradient, dtype, spectrum
):
    A = spectrum_matrix(with_spectrum, dtype, spectrum)
    G = randn(dtype, 3, 3)
    (U, s, Vh), pullback = rrule(np.linalg.svd, A)

    def polar(X):
        u, _, vh = np.linalg.svd(X)
        return np.real(np.sum(G.conj() * (u @ vh)))  # Re <G, U Vh>

    got = pullback((G @ Vh.conj().T, np.zeros(3), U.conj().T @ G))[1]
    np.testing.assert_allclose(got, gradient(polar, A), atol=1e-7)
    got = pullback((ZeroTangent(), 3 * s**2, ZeroTangent()))[1]
    np.testing.assert_allclose(
        got, gradient(lambda X: np.sum(np.linalg.svd(X)[1] ** 3), A), atol=1e-7
    )
