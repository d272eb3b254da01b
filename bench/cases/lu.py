r"""Cases for ``rules/linalg/lu.py``: ``P, L, U = scipy.linalg.lu(A)`` (square), ``A = P L U``.

Reference formulas (F. R. de Hoog, R. S. Anderssen, M. A. Lukas 2011), with the permutation held
fixed (``A = L[perm] @ U``, ``P[i, perm[i]] = 1``)::

    pullback     A_bar = P L^-T (tril(L^T L_bar, -1) + triu(U_bar U^T)) U^-T
    pushforward  F = L^-1 P^T A_dot U^-1,  L_dot = L tril(F, -1),  U_dot = triu(F) U

written as a user would: one matrix with scipy's triangular solves, a stack with numpy's
broadcasting ``solve``; rows permuted by indexing (``perm`` from ``P`` by ``argmax``), not by a
product with ``P``. The pullback times the default call ``(P, L, U)``: the cotangent of ``P`` is
random and ignored by everyone (``P`` is piecewise constant), ``L_bar`` is strictly lower and
``U_bar`` upper triangular (the entries the factors are free in). The pushforward times
``permute_l=True``, whose outputs ``(P L, U)`` both have array tangents (``frule`` gives
``P``'s tangent as ``ZeroTangent()``, which the harness could not line up with the peers' zero
arrays when this case was written; it now compares a zero tangent as zeros).

Inputs: ``E / sqrt(n) + 3 I`` with shuffled rows (``_random.dominant``): partial pivoting picks
the shuffled diagonal with a wide margin (no near ties between pivots, so every library picks
the same ``P``), and ``L`` and ``U`` are well conditioned.

Peers: ``jax.scipy.linalg.lu`` takes one matrix, so JAX runs it through ``jnp.vectorize`` (a
``vmap``); PyTorch's ``torch.linalg.lu`` returns ``P`` with no gradient, so its ``P`` is marked
as a leaf that requires one (``torch.autograd.grad`` wants every output to), and its
``permute_l`` is ``P @ L``.
"""

from __future__ import annotations

import functools
from types import MappingProxyType
from typing import Any

import numpy as np
import scipy.linalg as sla

from bench.case import Inputs, Size, pullback_case, pushforward_case
from bench.cases._random import dominant, general

__all__ = ["CASES"]


def _rows(X: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``X[..., index, :]`` per matrix (``index`` of shape ``(..., n)``)."""
    return np.take_along_axis(X, index[..., :, None], axis=-2)


def _pullback_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    A = dominant(rng, size)
    bars = (general(rng, size), np.tril(general(rng, size), -1), np.triu(general(rng, size)))
    return Inputs(args=(A,), cotangent=bars)


def _pushforward_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    return Inputs(args=(dominant(rng, size),), tangents=(general(rng, size),))


def lu_pullback_numpy(inputs: Inputs) -> tuple[np.ndarray]:
    """``A_bar = P L^-T M U^-T``, ``M = tril(L^T L_bar, -1) + triu(U_bar U^T)``."""
    P, L, U = inputs.output
    _, L_bar, U_bar = inputs.cotangent
    M = np.tril(L.mT @ L_bar, -1) + np.triu(U_bar @ U.mT)
    if L.ndim == 2:
        X = sla.solve_triangular(U, M.T, lower=False, check_finite=False).T  # M U^-T
        X = sla.solve_triangular(
            L, X, lower=True, trans="T", unit_diagonal=True, check_finite=False
        )
    else:
        X = np.linalg.solve(L.mT, np.linalg.solve(U, M.mT).mT)
    return (_rows(X, np.argmax(P, axis=-1)),)


def lu_pushforward_numpy(inputs: Inputs) -> tuple[np.ndarray, ...]:
    """``(P L, U)`` and ``(P L_dot, U_dot)``: ``F = L^-1 P^T A_dot U^-1``."""
    (A,), (A_dot,) = inputs.args, inputs.tangents
    perm, L, U = sla.lu(A, p_indices=True)
    B = _rows(A_dot, np.argsort(perm, axis=-1))  # P^T A_dot
    if L.ndim == 2:
        Y = sla.solve_triangular(L, B, lower=True, unit_diagonal=True, check_finite=False)
        F = sla.solve_triangular(U, Y.T, lower=False, trans="T", check_finite=False).T
    else:
        F = np.linalg.solve(U.mT, np.linalg.solve(L, B).mT).mT
    L_dot = L @ np.tril(F, -1)
    return _rows(L, perm), U, _rows(L_dot, perm), np.triu(F) @ U


def _jax_lu(jax: Any) -> Any:
    """``jax.scipy.linalg.lu`` over stacks (it takes one matrix): ``jnp.vectorize``."""

    def lu(a: Any, permute_l: bool = False) -> Any:
        signature = "(m,m)->(m,m),(m,m)" if permute_l else "(m,m)->(m,m),(m,m),(m,m)"
        one = functools.partial(jax.scipy.linalg.lu, permute_l=permute_l)
        return jax.numpy.vectorize(one, signature=signature)(a)

    return lu


def _torch_lu(torch: Any) -> Any:
    """``torch.linalg.lu`` with scipy's ``permute_l``; ``P`` a leaf that requires a gradient."""

    def lu(A: Any, permute_l: bool = False) -> Any:
        P, L, U = torch.linalg.lu(A)
        if permute_l:
            return P @ L, U
        return P.requires_grad_(), L, U  # P has no grad_fn: constant, its cotangent unused

    return lu


CASES = [
    pullback_case(
        "lu",
        "lu",
        sla.lu,
        inputs=_pullback_inputs,
        reference=lu_pullback_numpy,
        jax=_jax_lu,
        torch=_torch_lu,
    ),
    pushforward_case(
        "lu",
        "lu",
        sla.lu,
        inputs=_pushforward_inputs,
        reference=lu_pushforward_numpy,
        kwargs=MappingProxyType({"permute_l": True}),
        jax=_jax_lu,
        torch=_torch_lu,
    ),
]
