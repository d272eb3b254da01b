r"""Cases for ``rules/linalg/svd.py``: ``U, s, Vh = np.linalg.svd(A, full_matrices=False)``.

Square ``A = U diag(s) V^T`` (real), ``F_ij = 1/(s_j^2 - s_i^2)`` off the diagonal and 0 on it.
Reference formulas (J. Townsend, "Differentiating the singular value decomposition", 2016), stacks
through numpy's broadcasting::

    pullback     A_bar = U (diag(s_bar) + F o (J_a S + S K_a)) V^T,
                 J = U^T U_bar,  K = V^T V_bar = Vh Vh_bar^T,  X_a = X - X^T
    pushforward  P = U^T A_dot V,  s_dot = diag(P),
                 U_dot = U (F o (P S + S P^T)),  Vh_dot = -(F o (S P + P^T S)) Vh
    svdvals      A_bar = U diag(s_bar) V^T,  s_dot = diag(U^T A_dot V)

(square matrices have no ``(I - U U^T)`` terms). The inputs have well-separated singular values
(gaps at least 1/2, all at least 3/4, ``_random.separated_spectrum``), so the plain
``1/(s_j^2 - s_i^2)`` is well conditioned. The cotangents of ``U`` and ``Vh`` are random matrices:
a real matrix with distinct nonzero singular values has no continuous gauge (only the sign of
each pair ``(u_i, v_i)``), so the rule accepts them.

Peers: with fixed cotangents of ``U`` and ``Vh`` the pullback depends on those signs, which are
LAPACK's choice. JAX's CPU ``svd`` returns numpy's signs here; PyTorch's flips a few pairs at
1000 x 16x16 (4 to 6 of the 1000 matrices), whose rows then show ``mismatch``. ``svdvals`` does
not depend on the signs.
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from bench.case import Inputs, Size, pullback_case, pushforward_case
from bench.cases._random import general, separated_singular_values

__all__ = ["CASES"]

_THIN = MappingProxyType({"full_matrices": False})


def _coupling(s: np.ndarray) -> np.ndarray:
    """``F_ij = 1/(s_j^2 - s_i^2)``, 0 on the diagonal (``s`` of shape ``(..., k)``)."""
    s2 = s * s
    D = s2[..., None, :] - s2[..., :, None]
    i = np.arange(s.shape[-1])
    D[..., i, i] = np.inf
    return 1.0 / D


def _values(rng: np.random.Generator, size: Size) -> np.ndarray:
    batch = () if size.batch is None else (size.batch,)
    return rng.standard_normal((*batch, size.n))


def _pullback_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    A = separated_singular_values(rng, size)
    bars = (general(rng, size), _values(rng, size), general(rng, size))
    return Inputs(args=(A,), cotangent=bars)


def _pushforward_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    return Inputs(args=(separated_singular_values(rng, size),), tangents=(general(rng, size),))


def _values_pullback_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    A = separated_singular_values(rng, size)
    U, _, Vh = np.linalg.svd(A)  # what a user's forward pass keeps for the gradient
    return Inputs(args=(A,), cotangent=_values(rng, size), saved=(U, Vh))


def svd_pullback_numpy(inputs: Inputs) -> tuple[np.ndarray]:
    """``A_bar = U (diag(s_bar) + F o (J_a S + S K_a)) V^T`` (square, thin)."""
    U, s, Vh = inputs.output
    U_bar, s_bar, Vh_bar = inputs.cotangent
    J = U.mT @ U_bar
    K = Vh @ Vh_bar.mT
    X = _coupling(s) * ((J - J.mT) * s[..., None, :] + s[..., :, None] * (K - K.mT))
    i = np.arange(s.shape[-1])
    X[..., i, i] += s_bar
    return (U @ X @ Vh,)


def svd_pushforward_numpy(inputs: Inputs) -> tuple[np.ndarray, ...]:
    """``(U, s, Vh)`` and ``(U_dot, s_dot, Vh_dot)`` (square, thin)."""
    (A,), (A_dot,) = inputs.args, inputs.tangents
    U, s, Vh = np.linalg.svd(A, full_matrices=False)
    P = U.mT @ A_dot @ Vh.mT
    F = _coupling(s)
    PS, SP = P * s[..., None, :], s[..., :, None] * P  # P S and S P
    U_dot = U @ (F * (PS + PS.mT))  # (P S)^T = S P^T
    Vh_dot = -(F * (SP + SP.mT)) @ Vh
    return U, s, Vh, U_dot, np.diagonal(P, axis1=-2, axis2=-1), Vh_dot


def svdvals_pullback_numpy(inputs: Inputs) -> tuple[np.ndarray]:
    """``A_bar = U diag(s_bar) V^T`` with the singular vectors of the forward pass."""
    (U, Vh), s_bar = inputs.saved, inputs.cotangent
    return ((U * s_bar[..., None, :]) @ Vh,)


def svdvals_pushforward_numpy(inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """``s`` and ``s_dot = diag(U^T A_dot V)``, from ``np.linalg.svd`` (svdvals has no vectors)."""
    (A,), (A_dot,) = inputs.args, inputs.tangents
    U, s, Vh = np.linalg.svd(A)
    return s, np.sum(U * (A_dot @ Vh.mT), axis=-2)


def align_svd(result: tuple[np.ndarray, ...], reference: tuple[np.ndarray, ...]) -> tuple:
    """``(U, s, Vh, U_dot, s_dot, Vh_dot)`` with each pair ``(u_j, v_j)`` in the reference's gauge.

    A common sign (phase) ``c_j`` of ``u_j`` and ``v_j`` multiplies column ``j`` of ``U`` and
    ``U_dot`` and row ``j`` of ``Vh`` and ``Vh_dot`` (by ``conj(c_j)``).
    """
    U, s, Vh, U_dot, s_dot, Vh_dot = result
    overlap = np.sum(U.conj() * reference[0], axis=-2)
    c = overlap / np.abs(overlap)
    col, row = c[..., None, :], c.conj()[..., :, None]
    return U * col, s, Vh * row, U_dot * col, s_dot, Vh_dot * row


CASES = [
    pullback_case(
        "svd",
        "svd",
        np.linalg.svd,
        inputs=_pullback_inputs,
        reference=svd_pullback_numpy,
        kwargs=_THIN,
        jax=lambda jax: jax.numpy.linalg.svd,
        torch=lambda torch: torch.linalg.svd,
    ),
    pushforward_case(
        "svd",
        "svd",
        np.linalg.svd,
        inputs=_pushforward_inputs,
        reference=svd_pushforward_numpy,
        align=align_svd,
        kwargs=_THIN,
        jax=lambda jax: jax.numpy.linalg.svd,
        torch=lambda torch: torch.linalg.svd,
    ),
    pullback_case(
        "svdvals",
        "svd",
        np.linalg.svdvals,
        inputs=_values_pullback_inputs,
        reference=svdvals_pullback_numpy,
        jax=lambda jax: jax.numpy.linalg.svdvals,
        torch=lambda torch: torch.linalg.svdvals,
    ),
    pushforward_case(
        "svdvals",
        "svd",
        np.linalg.svdvals,
        inputs=_pushforward_inputs,
        reference=svdvals_pushforward_numpy,
        jax=lambda jax: jax.numpy.linalg.svdvals,
        torch=lambda torch: torch.linalg.svdvals,
    ),
]
