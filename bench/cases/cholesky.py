r"""Cases for ``rules/linalg/cholesky.py``: ``L = np.linalg.cholesky(A)``, ``A = L L^T``.

Reference formulas (I. Murray, "Differentiation of the Cholesky decomposition",
arXiv:1602.07527, 2016, section 3), with ``Phi`` the lower triangle with its diagonal halved::

    pullback     A_bar = sym(L^-T Phi(L^T L_bar) L^-1),   sym(X) = (X + X^T) / 2
    pushforward  L_dot = L Phi(L^-1 A_dot L^-T)

written as a user would: one matrix with scipy's triangular solves (``solve_triangular``, no
inverse), a stack with numpy's broadcasting ``inv`` (scipy's batched ``solve_triangular`` loops
in Python and is an order of magnitude slower on 10000 x 4x4).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from bench.case import Inputs, Size, pullback_case, pushforward_case
from bench.cases._random import lower_triangular, spd, symmetric

__all__ = ["CASES"]


def _phi(X: np.ndarray) -> np.ndarray:
    """Lower triangle of ``X`` with the diagonal halved (a new array)."""
    P = np.tril(X)
    i = np.arange(P.shape[-1])
    P[..., i, i] *= 0.5
    return P


def _pullback_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    return Inputs(args=(spd(rng, size),), cotangent=lower_triangular(rng, size))


def _pushforward_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    return Inputs(args=(spd(rng, size),), tangents=(symmetric(rng, size),))


def cholesky_pullback_numpy(inputs: Inputs) -> tuple[np.ndarray]:
    """``A_bar = sym(L^-T Phi(L^T L_bar) L^-1)`` given the forward output ``L``."""
    L, L_bar = inputs.output, inputs.cotangent
    P = _phi(L.mT @ L_bar)
    if L.ndim == 2:
        Y = sla.solve_triangular(L, P, lower=True, trans="T", check_finite=False)  # L^-T P
        S = sla.solve_triangular(L, Y.T, lower=True, trans="T", check_finite=False).T  # Y L^-1
    else:
        L_inv = np.linalg.inv(L)
        S = L_inv.mT @ P @ L_inv
    return (0.5 * (S + S.mT),)


def cholesky_pushforward_numpy(inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """``L = cholesky(A)`` and ``L_dot = L Phi(L^-1 A_dot L^-T)``."""
    (A,), (A_dot,) = inputs.args, inputs.tangents
    L = np.linalg.cholesky(A)
    if L.ndim == 2:
        Y = sla.solve_triangular(L, A_dot, lower=True, check_finite=False)  # L^-1 A_dot
        X = sla.solve_triangular(L, Y.T, lower=True, check_finite=False).T  # Y L^-T
    else:
        L_inv = np.linalg.inv(L)
        X = L_inv @ A_dot @ L_inv.mT
    return L, L @ _phi(X)


CASES = [
    pullback_case(
        "cholesky",
        "cholesky",
        np.linalg.cholesky,
        inputs=_pullback_inputs,
        reference=cholesky_pullback_numpy,
        jax=lambda jax: jax.numpy.linalg.cholesky,
        torch=lambda torch: torch.linalg.cholesky,
    ),
    pushforward_case(
        "cholesky",
        "cholesky",
        np.linalg.cholesky,
        inputs=_pushforward_inputs,
        reference=cholesky_pushforward_numpy,
        jax=lambda jax: jax.numpy.linalg.cholesky,
        torch=lambda torch: torch.linalg.cholesky,
    ),
]
