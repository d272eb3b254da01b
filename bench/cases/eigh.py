r"""Cases for ``rules/linalg/eigh.py``: ``w, V = np.linalg.eigh(A)`` and ``np.linalg.eigvalsh``.

``A = V diag(w) V^T`` (real symmetric), ``F_ij = 1/(w_j - w_i)`` off the diagonal and 0 on it.
Reference formulas (M. B. Giles 2008, section 3.1), stacks through numpy's broadcasting::

    pullback     A_bar = V (diag(w_bar) + F o (M - M^T) / 2) V^T,   M = V^T V_bar
    pushforward  w_dot = diag(C),  V_dot = V (F o C),                C = V^T A_dot V
    eigvalsh     A_bar = V diag(w_bar) V^T,  w_dot = diag(V^T A_dot V)

The inputs have well-separated eigenvalues (gaps at least 1/2, ``_random.separated_spectrum``),
so the plain ``1/(w_j - w_i)`` of the references is well conditioned; the rule's tie masking
and gauge check then do nothing but cost their time. The eigenvector cotangent is a random
matrix: for a real matrix with distinct eigenvalues every ``V_bar`` is gauge-invariant (the only
gauge is the discrete sign of each column), so the rule accepts it.

Peers: the sign of each eigenvector is LAPACK's choice, and with a fixed ``V_bar`` the pullback
depends on it (so does the pushforward's ``V``). JAX's CPU ``eigh`` returns numpy's signs here;
PyTorch's flips columns of about half of the 4x4 and all of the 16x16 matrices, and its rows
then show ``mismatch`` rather than a time (timed without the check, it took 4.5 ms on 10000 x
4x4 for the pullback, 6x this project's time). The ``eigvalsh`` cases do not depend on the
signs.
"""

from __future__ import annotations

import numpy as np

from bench.case import Inputs, Size, pullback_case, pushforward_case
from bench.cases._random import general, symmetric, symmetric_separated

__all__ = ["CASES"]


def _coupling(w: np.ndarray) -> np.ndarray:
    """``F_ij = 1/(w_j - w_i)``, 0 on the diagonal (``w`` of shape ``(..., n)``)."""
    D = w[..., None, :] - w[..., :, None]
    i = np.arange(w.shape[-1])
    D[..., i, i] = np.inf
    return 1.0 / D


def _pullback_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    batch = () if size.batch is None else (size.batch,)
    A = symmetric_separated(rng, size)
    w_bar = rng.standard_normal((*batch, size.n))
    return Inputs(args=(A,), cotangent=(w_bar, general(rng, size)))


def _pushforward_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    return Inputs(args=(symmetric_separated(rng, size),), tangents=(symmetric(rng, size),))


def _values_pullback_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    batch = () if size.batch is None else (size.batch,)
    A = symmetric_separated(rng, size)
    _, V = np.linalg.eigh(A)  # what a user's forward pass keeps for the gradient
    return Inputs(args=(A,), cotangent=rng.standard_normal((*batch, size.n)), saved=V)


def eigh_pullback_numpy(inputs: Inputs) -> tuple[np.ndarray]:
    """``A_bar = V (diag(w_bar) + F o (M - M^T) / 2) V^T``, ``M = V^T V_bar``."""
    w, V = inputs.output
    w_bar, V_bar = inputs.cotangent
    Vh = V.mT
    M = Vh @ V_bar
    K = _coupling(w) * (0.5 * (M - M.mT))
    i = np.arange(w.shape[-1])
    K[..., i, i] = w_bar
    return (V @ K @ Vh,)


def eigh_pushforward_numpy(inputs: Inputs) -> tuple[np.ndarray, ...]:
    """``(w, V)`` and ``(w_dot, V_dot) = (diag(C), V (F o C))``, ``C = V^T A_dot V``."""
    (A,), (A_dot,) = inputs.args, inputs.tangents
    w, V = np.linalg.eigh(A)
    C = V.mT @ A_dot @ V
    w_dot = np.diagonal(C, axis1=-2, axis2=-1)
    return w, V, w_dot, V @ (_coupling(w) * C)


def eigvalsh_pullback_numpy(inputs: Inputs) -> tuple[np.ndarray]:
    """``A_bar = V diag(w_bar) V^T`` with the eigenvectors of the forward pass."""
    V, w_bar = inputs.saved, inputs.cotangent
    return ((V * w_bar[..., None, :]) @ V.mT,)


def eigvalsh_pushforward_numpy(inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """``w`` and ``w_dot = diag(V^T A_dot V)``, from ``np.linalg.eigh`` (eigvalsh has no ``V``)."""
    (A,), (A_dot,) = inputs.args, inputs.tangents
    w, V = np.linalg.eigh(A)
    return w, np.sum(V * (A_dot @ V), axis=-2)


def _phases(X: np.ndarray, X_ref: np.ndarray) -> np.ndarray:
    """The unit factors ``c_j`` with ``X[..., j] c_j`` closest to ``X_ref[..., j]`` (columns)."""
    overlap = np.sum(X.conj() * X_ref, axis=-2)
    return overlap / np.abs(overlap)


def align_eigh(result: tuple[np.ndarray, ...], reference: tuple[np.ndarray, ...]) -> tuple:
    """``(w, V, w_dot, V_dot)`` with each eigenvector (and its tangent) in the reference's gauge.

    A column sign (phase) ``c_j`` of ``V`` multiplies the matching column of ``V_dot``.
    """
    w, V, w_dot, V_dot = result
    c = _phases(V, reference[1])[..., None, :]
    return w, V * c, w_dot, V_dot * c


CASES = [
    pullback_case(
        "eigh",
        "eigh",
        np.linalg.eigh,
        inputs=_pullback_inputs,
        reference=eigh_pullback_numpy,
        jax=lambda jax: jax.numpy.linalg.eigh,
        torch=lambda torch: torch.linalg.eigh,
    ),
    pushforward_case(
        "eigh",
        "eigh",
        np.linalg.eigh,
        inputs=_pushforward_inputs,
        reference=eigh_pushforward_numpy,
        align=align_eigh,
        jax=lambda jax: jax.numpy.linalg.eigh,
        torch=lambda torch: torch.linalg.eigh,
    ),
    pullback_case(
        "eigvalsh",
        "eigh",
        np.linalg.eigvalsh,
        inputs=_values_pullback_inputs,
        reference=eigvalsh_pullback_numpy,
        jax=lambda jax: jax.numpy.linalg.eigvalsh,
        torch=lambda torch: torch.linalg.eigvalsh,
    ),
    pushforward_case(
        "eigvalsh",
        "eigh",
        np.linalg.eigvalsh,
        inputs=_pushforward_inputs,
        reference=eigvalsh_pushforward_numpy,
        jax=lambda jax: jax.numpy.linalg.eigvalsh,
        torch=lambda torch: torch.linalg.eigvalsh,
    ),
]
