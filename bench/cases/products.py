"""Cases for ``rules/linalg/products.py``: the matrix product ``C = A @ B`` (``np.matmul``).

Reference formulas (Giles 2008, the matrix product), stacks through numpy's broadcasting::

    pullback     A_bar = C_bar B^T,   B_bar = A^T C_bar
    pushforward  C = A B,             C_dot = A_dot B + A B_dot
"""

from __future__ import annotations

import numpy as np

from bench.case import Inputs, Size, pullback_case, pushforward_case
from bench.cases._random import general

__all__ = ["CASES"]


def _pullback_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    return Inputs(args=(general(rng, size), general(rng, size)), cotangent=general(rng, size))


def _pushforward_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    return Inputs(
        args=(general(rng, size), general(rng, size)),
        tangents=(general(rng, size), general(rng, size)),
    )


def matmul_pullback_numpy(inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """``(C_bar B^T, A^T C_bar)``."""
    A, B = inputs.args
    C_bar = inputs.cotangent
    return C_bar @ B.mT, A.mT @ C_bar


def matmul_pushforward_numpy(inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """``(A B, A_dot B + A B_dot)``."""
    A, B = inputs.args
    A_dot, B_dot = inputs.tangents
    return A @ B, A_dot @ B + A @ B_dot


CASES = [
    pullback_case(
        "matmul",
        "products",
        np.matmul,
        inputs=_pullback_inputs,
        reference=matmul_pullback_numpy,
        jax=lambda jax: jax.numpy.matmul,
        torch=lambda torch: torch.matmul,
    ),
    pushforward_case(
        "matmul",
        "products",
        np.matmul,
        inputs=_pushforward_inputs,
        reference=matmul_pushforward_numpy,
        jax=lambda jax: jax.numpy.matmul,
        torch=lambda torch: torch.matmul,
    ),
]
