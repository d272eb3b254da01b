r"""Cases for ``rules/linalg/solve.py``: ``X = np.linalg.solve(A, B)``, ``A X = B``.

Reference formulas (Giles 2008, section 2.2.3), ``H(M)`` the conjugate transpose::

    pullback     B_bar = A^-H X_bar,   A_bar = -B_bar X^H
    pushforward  X_dot = A^-1 (B_dot - A_dot X)

Two right-hand sides: ``solve`` a matrix ``B`` of the shape of ``A`` (``k = n``, a stack of them
for a stack of ``A``), ``solve_vector`` one vector ``b`` of shape ``(n,)`` (numpy 2's vector
case), shared by every matrix of a stack: ``x`` is ``(..., n)`` and the cotangent of ``b`` is
summed over the stack.

Written as a user would. The pullback is given the same saved factors the rule keeps: the LU
of ``A`` (``bench.cases._saved.saved_lu``, built untimed, in ``Inputs.saved``), and ``A^-H X_bar``
is a solve with them (LAPACK ``getrs`` for one matrix, stacked substitution for a stack, which
numpy and scipy have no batched solve with given factors for); nothing is factored inside the
timed pullback. The pushforward of one matrix factors ``A`` once with scipy's ``lu_factor`` and
solves twice with ``lu_solve``, a stack calls ``np.linalg.solve`` twice (numpy keeps no
factorization, scipy's ``lu_factor`` loops over a stack in Python). Inputs: ``E / sqrt(n) + 3 I``
with shuffled rows (``_random.dominant``), condition number below about 3 at every n, and a
pivot order that is not the identity.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from bench.case import Inputs, Size, pullback_case, pushforward_case
from bench.cases._random import dominant, general
from bench.cases._saved import saved_lu, solve_adjoint

__all__ = ["CASES"]


def _h(X: np.ndarray) -> np.ndarray:
    """The conjugate transpose of each matrix (a view for real ``X``)."""
    return X.mT.conj()


def _vector(rng: np.random.Generator, size: Size) -> np.ndarray:
    """A standard normal vector of length ``n``."""
    return rng.standard_normal(size.n)


def _vectors(rng: np.random.Generator, size: Size) -> np.ndarray:
    """Standard normal, shaped like ``x`` in ``solve(A, b)`` with ``b`` a vector: ``(..., n)``."""
    return rng.standard_normal(size.shape[:-1])


def _pullback_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    A = dominant(rng, size)
    return Inputs(args=(A, general(rng, size)), cotangent=general(rng, size), saved=saved_lu(A))


def _pushforward_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    return Inputs(
        args=(dominant(rng, size), general(rng, size)),
        tangents=(general(rng, size), general(rng, size)),
    )


def _vector_pullback_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    A = dominant(rng, size)
    return Inputs(args=(A, _vector(rng, size)), cotangent=_vectors(rng, size), saved=saved_lu(A))


def _vector_pushforward_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    return Inputs(
        args=(dominant(rng, size), _vector(rng, size)),
        tangents=(general(rng, size), _vector(rng, size)),
    )


def solve_pullback_numpy(inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """``B_bar = A^-H X_bar``, ``A_bar = -B_bar X^H``."""
    X, X_bar = inputs.output, inputs.cotangent
    B_bar = solve_adjoint(inputs.saved, X_bar)
    return -(B_bar @ _h(X)), B_bar


def solve_pushforward_numpy(inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """``X = A^-1 B`` and ``X_dot = A^-1 (B_dot - A_dot X)``."""
    (A, B), (A_dot, B_dot) = inputs.args, inputs.tangents
    if A.ndim == 2:
        factors = sla.lu_factor(A, check_finite=False)
        X = sla.lu_solve(factors, B, check_finite=False)
        return X, sla.lu_solve(factors, B_dot - A_dot @ X, check_finite=False)
    X = np.linalg.solve(A, B)
    return X, np.linalg.solve(A, B_dot - A_dot @ X)


def solve_vector_pullback_numpy(inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """``b_bar = sum over the stack of A^-H x_bar``, ``A_bar = -outer(A^-H x_bar, conj(x))``."""
    (_, b), x, x_bar = inputs.args, inputs.output, inputs.cotangent
    b_bar = solve_adjoint(inputs.saved, x_bar[..., None])[..., 0]
    A_bar = -(b_bar[..., :, None] * x.conj()[..., None, :])
    return A_bar, b_bar.reshape(-1, b.shape[-1]).sum(axis=0)


def solve_vector_pushforward_numpy(inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """``x = A^-1 b`` and ``x_dot = A^-1 (b_dot - A_dot x)``."""
    (A, b), (A_dot, b_dot) = inputs.args, inputs.tangents
    if A.ndim == 2:
        factors = sla.lu_factor(A, check_finite=False)
        x = sla.lu_solve(factors, b, check_finite=False)
        return x, sla.lu_solve(factors, b_dot - A_dot @ x, check_finite=False)
    x = np.linalg.solve(A, b)
    rhs = b_dot - (A_dot @ x[..., None])[..., 0]
    return x, np.linalg.solve(A, rhs[..., None])[..., 0]


CASES = [
    pullback_case(
        "solve",
        "solve",
        np.linalg.solve,
        inputs=_pullback_inputs,
        reference=solve_pullback_numpy,
        jax=lambda jax: jax.numpy.linalg.solve,
        torch=lambda torch: torch.linalg.solve,
    ),
    pushforward_case(
        "solve",
        "solve",
        np.linalg.solve,
        inputs=_pushforward_inputs,
        reference=solve_pushforward_numpy,
        jax=lambda jax: jax.numpy.linalg.solve,
        torch=lambda torch: torch.linalg.solve,
    ),
    pullback_case(
        "solve_vector",
        "solve",
        np.linalg.solve,
        inputs=_vector_pullback_inputs,
        reference=solve_vector_pullback_numpy,
        jax=lambda jax: jax.numpy.linalg.solve,
        torch=lambda torch: torch.linalg.solve,
    ),
    pushforward_case(
        "solve_vector",
        "solve",
        np.linalg.solve,
        inputs=_vector_pushforward_inputs,
        reference=solve_vector_pushforward_numpy,
        jax=lambda jax: jax.numpy.linalg.solve,
        torch=lambda torch: torch.linalg.solve,
    ),
]
