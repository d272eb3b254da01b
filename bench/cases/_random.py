"""Random operands shared by the case files.

General, symmetric and SPD matrices; matrices with separated spectra (eigh, svd), with
dominant shuffled pivots (qr, lu, solve, inv) and with a determinant of order one (det, slogdet); well
conditioned lower triangular factors (solve_triangular).
"""

from __future__ import annotations

import numpy as np

from bench.case import Size

__all__ = [
    "dominant",
    "general",
    "lower_factor",
    "lower_triangular",
    "modest_determinant",
    "orthogonal",
    "separated_singular_values",
    "separated_spectrum",
    "spd",
    "symmetric",
    "symmetric_separated",
]


def general(rng: np.random.Generator, size: Size) -> np.ndarray:
    """Standard normal entries, shaped ``size.shape``."""
    return rng.standard_normal(size.shape)


def symmetric(rng: np.random.Generator, size: Size) -> np.ndarray:
    """``(E + E^T) / 2`` for standard normal ``E``: a tangent of a symmetric input."""
    E = general(rng, size)
    return 0.5 * (E + E.mT)


def lower_triangular(rng: np.random.Generator, size: Size) -> np.ndarray:
    """The lower triangle of a standard normal matrix: a cotangent of a Cholesky factor."""
    return np.tril(general(rng, size))


def spd(rng: np.random.Generator, size: Size) -> np.ndarray:
    """``X X^T / n + I``: symmetric positive definite with condition number below about 5.

    Well conditioned on purpose, so that the agreement check measures the rule, not the
    conditioning of the reference formula.
    """
    X = general(rng, size)
    return X @ X.mT / size.n + np.eye(size.n)


def lower_factor(rng: np.random.Generator, size: Size) -> np.ndarray:
    """The Cholesky factor of :func:`spd`: lower triangular, condition number below about 2.3.

    A random triangular matrix is ill conditioned exponentially in ``n``; this one is not.
    """
    return np.linalg.cholesky(spd(rng, size))


def orthogonal(rng: np.random.Generator, size: Size) -> np.ndarray:
    """A random orthogonal matrix (or stack): the ``Q`` of a standard normal matrix's QR."""
    Q, R = np.linalg.qr(general(rng, size))
    return Q * np.sign(np.diagonal(R, axis1=-2, axis2=-1))[..., None, :]


def separated_spectrum(rng: np.random.Generator, size: Size) -> np.ndarray:
    """``n`` values ``1, 2, ..., n``, each moved by up to 1/4 at random, shaped ``(..., n)``.

    Every gap is at least 1/2 and every value at least 3/4, so the ``1/(w_j - w_i)`` of
    eigenvalue and singular-value formulas stays below 2: the agreement check measures the rule,
    not a near tie.
    """
    batch = () if size.batch is None else (size.batch,)
    return np.arange(1.0, size.n + 1) + rng.uniform(-0.25, 0.25, (*batch, size.n))


def symmetric_separated(rng: np.random.Generator, size: Size) -> np.ndarray:
    """``Q diag(w) Q^T`` for a random orthogonal ``Q`` and :func:`separated_spectrum` ``w``.

    Exactly symmetric (LAPACK reads one triangle, the peers may read the other).
    """
    Q = orthogonal(rng, size)
    A = (Q * separated_spectrum(rng, size)[..., None, :]) @ Q.mT
    return 0.5 * (A + A.mT)


def separated_singular_values(rng: np.random.Generator, size: Size) -> np.ndarray:
    """``U diag(s) V^T`` for random orthogonal ``U``, ``V`` and :func:`separated_spectrum` ``s``."""
    U, V = orthogonal(rng, size), orthogonal(rng, size)
    return (U * separated_spectrum(rng, size)[..., None, :]) @ V.mT


def dominant(rng: np.random.Generator, size: Size) -> np.ndarray:
    """``E / sqrt(n) + 3 I`` with its rows shuffled (a different order per matrix of a stack).

    Singular values between about 1 and 5 at every n, so triangular factors are well
    conditioned; partial pivoting picks the shuffled diagonal rows with a wide margin (no near
    ties between candidate pivots), and the permutation is not the identity.
    """
    A = general(rng, size) / np.sqrt(size.n) + 3.0 * np.eye(size.n)
    rows = rng.permuted(np.broadcast_to(np.arange(size.n), A.shape[:-1]), axis=-1)
    return np.take_along_axis(A, rows[..., None], axis=-2)


def modest_determinant(rng: np.random.Generator, size: Size) -> np.ndarray:
    """:func:`dominant` rescaled so that ``log|det|`` is between 0.5 and 1.5; the sign is random.

    ``dominant`` alone has ``|det|`` near ``3^n`` (``inf`` at n = 1024, about ``1e122`` at 256);
    the scale keeps ``det``, ``logabsdet`` and their cotangents of order one at every n (singular
    values between about 0.3 and 2), and ``logabsdet`` away from 0, where the agreement check,
    relative to the largest value, would compare rounding errors.
    """
    A = dominant(rng, size)
    _, logabsdet = np.linalg.slogdet(A)
    target = rng.uniform(0.5, 1.5, logabsdet.shape)
    return A * np.exp((target - logabsdet) / size.n)[..., None, None]
