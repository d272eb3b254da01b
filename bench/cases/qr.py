r"""Cases for ``rules/linalg/qr.py``: ``Q, R = np.linalg.qr(A)`` (reduced mode, square).

Reference formulas (S. F. Walter, L. Lehmann 2010; M. Seeger et al. 2017), with
``copyltu(M) = tril(M, -1) + tril(M, -1)^T + diag(M)``::

    pullback     A_bar = (Q_bar + Q copyltu(R R_bar^T - Q_bar^T Q)) R^-T
    pushforward  C = Q^T A_dot R^-1,  Omega = tril(C, -1) - tril(C, -1)^T,
                 R_dot = (C - Omega) R,  Q_dot = A_dot R^-1 - Q (C - Omega)

written as a user would: one matrix with scipy's triangular solve, a stack with numpy's
broadcasting ``solve`` (scipy's batched ``solve_triangular`` loops in Python). Inputs: ``E /
sqrt(n) + 3 I`` with shuffled rows (``_random.dominant``), so ``R`` is well conditioned at
every size; the cotangent of ``R`` is upper triangular (the rule and the peers read only that
triangle).

No JAX column for the pushforward: ``jax.jvp(jnp.linalg.qr, ...)`` on a stack (10000 x 4x4,
1000 x 16x16, 100 x 64x64), jitted or not, hangs in ``block_until_ready`` in about half of the
fresh processes with jax/jaxlib 0.10.2 on the CPU, whatever ``--xla_cpu_multi_thread_eigen``
says, and the run never ends. When it finished it took 9.2 ms at 10000 x 4x4 and 12.6 ms at
1000 x 16x16. The pullback (``jax.vjp``) has not hung.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from bench.case import Inputs, Size, pullback_case, pushforward_case
from bench.cases._random import dominant, general

__all__ = ["CASES"]


def _times_inverse(X: np.ndarray, R: np.ndarray, trans: str) -> np.ndarray:
    """``X R^-1`` (``trans="N"``) or ``X R^-T`` (``trans="T"``) for upper triangular ``R``."""
    if R.ndim == 2:  # (R^-T X^T)^T, (R^-1 X^T)^T
        other = "T" if trans == "N" else "N"
        return sla.solve_triangular(R, X.T, lower=False, trans=other, check_finite=False).T
    R = R if trans == "T" else R.mT
    return np.linalg.solve(R, X.mT).mT


def _pullback_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    A = dominant(rng, size)
    return Inputs(args=(A,), cotangent=(general(rng, size), np.triu(general(rng, size))))


def _pushforward_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    return Inputs(args=(dominant(rng, size),), tangents=(general(rng, size),))


def qr_pullback_numpy(inputs: Inputs) -> tuple[np.ndarray]:
    """``A_bar = (Q_bar + Q copyltu(M)) R^-T``, ``M = R R_bar^T - Q_bar^T Q``."""
    Q, R = inputs.output
    Q_bar, R_bar = inputs.cotangent
    M = R @ R_bar.mT - Q_bar.mT @ Q
    K = np.tril(M, -1)
    K = K + K.mT
    i = np.arange(M.shape[-1])
    K[..., i, i] = M[..., i, i]
    return (_times_inverse(Q_bar + Q @ K, R, "T"),)


def qr_pushforward_numpy(inputs: Inputs) -> tuple[np.ndarray, ...]:
    """``(Q, R)`` and ``(Q_dot, R_dot)``: ``C = Q^T A_dot R^-1``, ``B = C - Omega``."""
    (A,), (A_dot,) = inputs.args, inputs.tangents
    Q, R = np.linalg.qr(A)
    Y = _times_inverse(A_dot, R, "N")  # A_dot R^-1
    C = Q.mT @ Y
    L = np.tril(C, -1)
    B = C - L + L.mT  # C - Omega: upper triangular
    return Q, R, Y - Q @ B, B @ R


CASES = [
    pullback_case(
        "qr",
        "qr",
        np.linalg.qr,
        inputs=_pullback_inputs,
        reference=qr_pullback_numpy,
        jax=lambda jax: jax.numpy.linalg.qr,
        torch=lambda torch: torch.linalg.qr,
    ),
    pushforward_case(
        "qr",
        "qr",
        np.linalg.qr,
        inputs=_pushforward_inputs,
        reference=qr_pushforward_numpy,
        jax=None,  # see the module docstring: jax.jvp of qr on stacks can hang (jax 0.10.2, CPU)
        torch=lambda torch: torch.linalg.qr,
    ),
]
