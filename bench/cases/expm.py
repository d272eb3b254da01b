r"""Cases for ``rules/linalg/expm.py``: ``X = scipy.linalg.expm(A)``.

The rule has no Numba kernel yet (its docstring says why and what it costs): these rows time
its Pade product chain. Reference formulas, the block-triangular identity (N. J. Higham,
"Functions of Matrices", SIAM 2008, Theorem 3.6 and section 3.1) with scipy's ``expm``, which
takes stacks ``(..., n, n)``::

    expm([[A, E], [0, A]]) = [[expm(A), L(A, E)], [0, expm(A)]]
    pushforward  X = expm(A),  X_dot = L(A, A_dot)
    pullback     A_bar = L(A^T, X_bar)

A user with one matrix might call ``scipy.linalg.expm_frechet`` instead; it computes the same
block exponential's upper-right block in another way and takes one matrix at a time.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from bench.case import SIZES, Inputs, Size, pullback_case, pushforward_case
from bench.cases._random import general

__all__ = ["CASES"]

_SIZES = tuple(size for size in SIZES if size.label != "1024")
"""No n = 1024: the reference's 2048 x 2048 exponential takes about 5 s a call (one thread), so
those two rows alone took minutes; the rule itself measured 0.7 s (pullback), 6.6x faster."""


def _operand(rng: np.random.Generator, size: Size) -> np.ndarray:
    """Standard normal scaled by ``1/sqrt(n)``: 1-norm about 1-2, few squarings."""
    return general(rng, size) / np.sqrt(size.n)


def _pullback_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    return Inputs(args=(_operand(rng, size),), cotangent=general(rng, size))


def _pushforward_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    return Inputs(args=(_operand(rng, size),), tangents=(general(rng, size),))


def _block_expm(A: np.ndarray, E: np.ndarray) -> np.ndarray:
    """``expm([[A, E], [0, A]])`` for one matrix or a stack."""
    n = A.shape[-1]
    M = np.zeros((*A.shape[:-2], 2 * n, 2 * n))
    M[..., :n, :n] = A
    M[..., n:, n:] = A
    M[..., :n, n:] = E
    return sla.expm(M)


def expm_pullback_numpy(inputs: Inputs) -> tuple[np.ndarray]:
    """``A_bar = L(A^T, X_bar)``: the upper-right block of ``expm([[A^T, X_bar], [0, A^T]])``."""
    (A,), X_bar = inputs.args, inputs.cotangent
    n = A.shape[-1]
    return (_block_expm(A.mT, X_bar)[..., :n, n:],)


def expm_pushforward_numpy(inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """``X`` and ``X_dot = L(A, A_dot)`` from one block exponential."""
    (A,), (A_dot,) = inputs.args, inputs.tangents
    n = A.shape[-1]
    B = _block_expm(A, A_dot)
    return B[..., :n, :n], B[..., :n, n:]


CASES = [
    pullback_case(
        "expm",
        "expm",
        sla.expm,
        inputs=_pullback_inputs,
        reference=expm_pullback_numpy,
        sizes=_SIZES,
        jax=lambda jax: jax.scipy.linalg.expm,
        torch=lambda torch: torch.linalg.matrix_exp,
    ),
    pushforward_case(
        "expm",
        "expm",
        sla.expm,
        inputs=_pushforward_inputs,
        reference=expm_pushforward_numpy,
        sizes=_SIZES,
        jax=lambda jax: jax.scipy.linalg.expm,
        torch=lambda torch: torch.linalg.matrix_exp,
    ),
]
