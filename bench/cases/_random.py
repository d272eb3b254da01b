"""Random operands shared by the case files: general, symmetric and well-conditioned SPD matrices."""

from __future__ import annotations

import numpy as np

from bench.case import Size

__all__ = ["general", "lower_triangular", "spd", "symmetric"]


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
