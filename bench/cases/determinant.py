r"""Cases for ``rules/linalg/determinant.py``: ``d = np.linalg.det(A)`` and ``np.linalg.slogdet``.

Reference formulas, Jacobi's formula for an invertible ``A`` (Giles 2008, section 2.2.3),
``H(M)`` the conjugate transpose::

    det      pullback     A_bar = d_bar conj(d) H(A^-1)
             pushforward  d_dot = d tr(A^-1 A_dot)
    slogdet  pullback     A_bar = l_bar H(A^-1)            (sign_bar is ignored: A is real)
             pushforward  l_dot = tr(A^-1 A_dot),  sign_dot = 0

written as a user would, stacks through broadcasting. The pullback is given the same saved
factors the rule keeps: the LU of ``A`` (``bench.cases._saved.saved_lu``, built untimed, in
``Inputs.saved``), and ``H(A^-1)`` is a solve of ``A^H X = I`` with them (LAPACK ``getrs`` for one
matrix, stacked substitution for a stack); nothing is factored inside the timed pullback (the
rule's det kernel for small matrices keeps no factors, so there the reference is favoured).
The pushforward's trace is ``np.trace(np.linalg.solve(A, A_dot))``. The rule's ``det``
cotangent is the adjugate, exact at singular matrices too; here every ``A`` is invertible, where
the two agree.

Inputs: ``_random.modest_determinant``: ``log|det A|`` between 0.5 and 1.5 and condition number
below about 3 at every n (a random matrix's determinant overflows at n = 1024), so ``det``,
``logabsdet`` and their cotangents stay of order one. The cotangent of ``sign`` is random (ignored by everyone, as
the sign of a real determinant is locally constant); the pushforward's ``sign_dot`` is zeros
(the rule's ``ZeroTangent()``, materialised by the harness).
"""

from __future__ import annotations

import numpy as np

from bench.case import Inputs, Size, pullback_case, pushforward_case
from bench.cases._random import general, modest_determinant
from bench.cases._saved import saved_lu, solve_adjoint

__all__ = ["CASES"]


def _scalars(rng: np.random.Generator, size: Size) -> np.ndarray:
    """Standard normal, one per matrix: shape ``()`` or ``(batch,)``, an ndarray."""
    return rng.standard_normal(size.shape[:-2])


def _inverse_adjoint(A: np.ndarray, saved: object) -> np.ndarray:
    """``H(A^-1)`` from the saved LU of ``A``: ``A^H X = I`` solved with the factors."""
    return solve_adjoint(saved, np.eye(A.shape[-1], dtype=A.dtype))


def _det_pullback_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    A = modest_determinant(rng, size)
    return Inputs(args=(A,), cotangent=_scalars(rng, size), saved=saved_lu(A))


def _slogdet_pullback_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    bars = (_scalars(rng, size), _scalars(rng, size))
    A = modest_determinant(rng, size)
    return Inputs(args=(A,), cotangent=bars, saved=saved_lu(A))


def _pushforward_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    return Inputs(args=(modest_determinant(rng, size),), tangents=(general(rng, size),))


def _trace(X: np.ndarray) -> np.ndarray:
    return np.trace(X, axis1=-2, axis2=-1)


def det_pullback_numpy(inputs: Inputs) -> tuple[np.ndarray]:
    """``A_bar = d_bar conj(d) H(A^-1)`` given the forward output ``d``."""
    (A,), d, d_bar = inputs.args, inputs.output, inputs.cotangent
    return ((d_bar * np.conj(d))[..., None, None] * _inverse_adjoint(A, inputs.saved),)


def det_pushforward_numpy(inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """``d = det(A)`` and ``d_dot = d tr(A^-1 A_dot)``."""
    (A,), (A_dot,) = inputs.args, inputs.tangents
    d = np.linalg.det(A)
    return d, d * _trace(np.linalg.solve(A, A_dot))


def slogdet_pullback_numpy(inputs: Inputs) -> tuple[np.ndarray]:
    """``A_bar = l_bar H(A^-1)``; the sign's cotangent does not enter (real ``A``)."""
    (A,), (_, l_bar) = inputs.args, inputs.cotangent
    return (l_bar[..., None, None] * _inverse_adjoint(A, inputs.saved),)


def slogdet_pushforward_numpy(inputs: Inputs) -> tuple[np.ndarray, ...]:
    """``(sign, logabsdet)`` and ``(0, tr(A^-1 A_dot))``."""
    (A,), (A_dot,) = inputs.args, inputs.tangents
    sign, logabsdet = np.linalg.slogdet(A)
    return sign, logabsdet, np.zeros_like(sign), _trace(np.linalg.solve(A, A_dot))


CASES = [
    pullback_case(
        "det",
        "determinant",
        np.linalg.det,
        inputs=_det_pullback_inputs,
        reference=det_pullback_numpy,
        jax=lambda jax: jax.numpy.linalg.det,
        torch=lambda torch: torch.linalg.det,
    ),
    pushforward_case(
        "det",
        "determinant",
        np.linalg.det,
        inputs=_pushforward_inputs,
        reference=det_pushforward_numpy,
        jax=lambda jax: jax.numpy.linalg.det,
        torch=lambda torch: torch.linalg.det,
    ),
    pullback_case(
        "slogdet",
        "determinant",
        np.linalg.slogdet,
        inputs=_slogdet_pullback_inputs,
        reference=slogdet_pullback_numpy,
        jax=lambda jax: jax.numpy.linalg.slogdet,
        torch=lambda torch: torch.linalg.slogdet,
    ),
    pushforward_case(
        "slogdet",
        "determinant",
        np.linalg.slogdet,
        inputs=_pushforward_inputs,
        reference=slogdet_pushforward_numpy,
        jax=lambda jax: jax.numpy.linalg.slogdet,
        torch=lambda torch: torch.linalg.slogdet,
    ),
]
