r"""Cases for ``rules/linalg/expm.py``: ``X = scipy.linalg.expm(A)``.

The rule runs the Pade product chain and its Frechet derivative as Numba kernels
(``kernels.expm``) for small matrices and stacks of them (``EXPM_*_MAX_N`` in
``kernels.crossovers``), with numpy's products above. The reference is the Frechet derivative
``L(A, E)`` of the exponential::

    pushforward  X = expm(A),  X_dot = L(A, A_dot)
    pullback     A_bar = L(A^T, X_bar)

For one matrix, by ``scipy.linalg.expm_frechet`` (Al-Mohy and Higham 2009), the stronger
baseline: it costs a few ``expm`` where the block form below costs an ``expm`` of twice the
order. ``expm_frechet`` takes one matrix at a time, so for stacks ``(..., n, n)`` the reference is
the block-triangular identity (N. J. Higham, "Functions of Matrices", SIAM 2008, Theorem 3.6 and
section 3.1) with scipy's ``expm``, which takes stacks and is the faster of the two there::

    expm([[A, E], [0, A]]) = [[expm(A), L(A, E)], [0, expm(A)]]
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from bench.case import SIZES, Inputs, Size, pullback_case, pushforward_case
from bench.cases._random import general

__all__ = ["CASES"]

_SIZES = tuple(size for size in SIZES if size.label != "1024")
"""No n = 1024: the references' calls take seconds each at that order (one thread), so those two
rows alone take minutes."""


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
    """``A_bar = L(A^T, X_bar)``: ``expm_frechet`` for one matrix, the block form for stacks."""
    (A,), X_bar = inputs.args, inputs.cotangent
    if A.ndim == 2:
        return (sla.expm_frechet(A.T, X_bar, compute_expm=False, check_finite=False),)
    n = A.shape[-1]
    return (_block_expm(A.mT, X_bar)[..., :n, n:],)


def expm_pushforward_numpy(inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """``X`` and ``X_dot = L(A, A_dot)``: ``expm_frechet`` for one matrix, the block form for stacks."""
    (A,), (A_dot,) = inputs.args, inputs.tangents
    if A.ndim == 2:
        return sla.expm_frechet(A, A_dot, check_finite=False)
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
