r"""Cases for ``rules/linalg/triangular.py``: ``X = scipy.linalg.solve_triangular(T, B, lower=True)``.

``T X = B`` with ``T`` lower triangular (``trans=0``): only the lower triangle of ``T`` is read,
so its cotangent lives there (JAX and PyTorch project it the same way). Reference formulas
(Giles 2008, section 2.2.3, for ``X = A^-1 B``), ``H(M)`` the conjugate transpose::

    pullback     B_bar = T^-H X_bar,   T_bar = tril(-B_bar H(X))
    pushforward  X_dot = T^-1 (B_dot - T_dot X)      (T_dot lower triangular)

written as a user would: one matrix with scipy's triangular solves (``trans=2`` for ``T^-H``), a
stack with numpy's broadcasting ``solve`` (LU of a triangular matrix; scipy's batched
``solve_triangular`` loops in Python, which the forward column shows at 10000 x 4x4).

Inputs: ``T`` the Cholesky factor of ``X X^T / n + I`` (``_random.lower_factor``), condition
number below about 2.3 at every n (a random triangular matrix is exponentially ill
conditioned), ``B`` standard normal of ``T``'s shape (``k = n``); the tangent of ``T`` is lower
triangular. PyTorch's ``solve_triangular`` takes ``upper=`` (keyword only) instead of
``lower=``.

No JAX column for the pushforward: ``jax.jit(jax.jvp)`` of ``jax.scipy.linalg.solve_triangular``
on the 10000 x 4x4 stack deadlocks in ``block_until_ready`` (every XLA worker idle) with
jax/jaxlib 0.10.2 on the CPU: at the twelfth call of a plain loop, with or without the
one-thread ``XLA_FLAGS``, and in two ``python -m bench --peers`` runs, which never ended. The
whole call on that stack, ``jax.jit`` of ``jax.vjp`` with the forward inside, hangs the same way
at its second call (with or without the ``XLA_FLAGS``, with synchronous dispatch too), so the
``jax+fwd`` column is left out there, and on 1000 x (16x16), where a full ``--peers`` run
hung the same way after the rows before it (``peer_totals_skipped``). The pullback with the forward
outputs given (``jax.vjp`` once, its pullback jitted) has not hung.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import numpy as np
import scipy.linalg as sla

from bench.case import Inputs, Size, pullback_case, pushforward_case
from bench.cases._random import general, lower_factor, lower_triangular

__all__ = ["CASES"]

_LOWER = MappingProxyType({"lower": True})


def _h(X: np.ndarray) -> np.ndarray:
    """The conjugate transpose of each matrix (a view for real ``X``)."""
    return X.mT.conj()


def _pullback_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    return Inputs(args=(lower_factor(rng, size), general(rng, size)), cotangent=general(rng, size))


def _pushforward_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    return Inputs(
        args=(lower_factor(rng, size), general(rng, size)),
        tangents=(lower_triangular(rng, size), general(rng, size)),
    )


def solve_triangular_pullback_numpy(inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """``B_bar = T^-H X_bar``, ``T_bar = tril(-B_bar H(X))``."""
    (T, _), X, X_bar = inputs.args, inputs.output, inputs.cotangent
    if T.ndim == 2:
        B_bar = sla.solve_triangular(T, X_bar, trans=2, lower=True, check_finite=False)
    else:
        B_bar = np.linalg.solve(_h(T), X_bar)
    return np.tril(-(B_bar @ _h(X))), B_bar


def solve_triangular_pushforward_numpy(inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """``X = T^-1 B`` and ``X_dot = T^-1 (B_dot - T_dot X)``."""
    (T, B), (T_dot, B_dot) = inputs.args, inputs.tangents
    if T.ndim == 2:
        X = sla.solve_triangular(T, B, lower=True, check_finite=False)
        X_dot = sla.solve_triangular(T, B_dot - T_dot @ X, lower=True, check_finite=False)
        return X, X_dot
    X = np.linalg.solve(T, B)
    return X, np.linalg.solve(T, B_dot - T_dot @ X)


def _torch_solve_triangular(torch: Any) -> Any:
    """``torch.linalg.solve_triangular`` with scipy's ``lower=`` (torch takes ``upper=``)."""

    def solve_triangular(a: Any, b: Any, lower: bool = False) -> Any:
        return torch.linalg.solve_triangular(a, b, upper=not lower)

    return solve_triangular


CASES = [
    pullback_case(
        "solve_triangular",
        "triangular",
        sla.solve_triangular,
        inputs=_pullback_inputs,
        reference=solve_triangular_pullback_numpy,
        kwargs=_LOWER,
        jax=lambda jax: jax.scipy.linalg.solve_triangular,
        torch=_torch_solve_triangular,
        peer_totals_skipped=frozenset({("jax", "10000x4"), ("jax", "1000x16")}),  # docstring
    ),
    pushforward_case(
        "solve_triangular",
        "triangular",
        sla.solve_triangular,
        inputs=_pushforward_inputs,
        reference=solve_triangular_pushforward_numpy,
        kwargs=_LOWER,
        jax=None,  # see the module docstring: jax.jvp of solve_triangular on stacks deadlocks
        torch=_torch_solve_triangular,
    ),
]
