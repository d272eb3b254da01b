r"""Cases for ``rules/linalg/inverse.py``: ``Y = np.linalg.inv(A)``.

Reference formulas (Giles 2008, section 2.2.3), ``H(M)`` the conjugate transpose::

    pullback     A_bar = -H(Y) Y_bar H(Y)
    pushforward  Y_dot = -Y A_dot Y

Both need only ``Y``: the reference is the two products, as the rule's. Inputs: ``E / sqrt(n) +
3 I`` with shuffled rows (``_random.dominant``), condition number below about 3 at every n.
"""

from __future__ import annotations

import numpy as np

from bench.case import Inputs, Size, pullback_case, pushforward_case
from bench.cases._random import dominant, general

__all__ = ["CASES"]


def _h(X: np.ndarray) -> np.ndarray:
    """The conjugate transpose of each matrix (a view for real ``X``)."""
    return X.mT.conj()


def _pullback_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    return Inputs(args=(dominant(rng, size),), cotangent=general(rng, size))


def _pushforward_inputs(size: Size, rng: np.random.Generator) -> Inputs:
    return Inputs(args=(dominant(rng, size),), tangents=(general(rng, size),))


def inv_pullback_numpy(inputs: Inputs) -> tuple[np.ndarray]:
    """``A_bar = -H(Y) Y_bar H(Y)`` given the forward output ``Y``."""
    Y, Y_bar = inputs.output, inputs.cotangent
    Y_h = _h(Y)
    return (-(Y_h @ Y_bar @ Y_h),)


def inv_pushforward_numpy(inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """``Y = A^-1`` and ``Y_dot = -Y A_dot Y``."""
    (A,), (A_dot,) = inputs.args, inputs.tangents
    Y = np.linalg.inv(A)
    return Y, -(Y @ A_dot @ Y)


CASES = [
    pullback_case(
        "inv",
        "inverse",
        np.linalg.inv,
        inputs=_pullback_inputs,
        reference=inv_pullback_numpy,
        jax=lambda jax: jax.numpy.linalg.inv,
        torch=lambda torch: torch.linalg.inv,
    ),
    pushforward_case(
        "inv",
        "inverse",
        np.linalg.inv,
        inputs=_pushforward_inputs,
        reference=inv_pushforward_numpy,
        jax=lambda jax: jax.numpy.linalg.inv,
        torch=lambda torch: torch.linalg.inv,
    ),
]
