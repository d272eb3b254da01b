"""``rand_tangent``: a random tangent of the right type, dtype, shape and structure."""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.testing.spaces import space_of
from tangents import ProjectTo

__all__ = ["as_generator", "rand_tangent"]


def as_generator(rng: Any) -> np.random.Generator:
    """A numpy Generator from ``None`` (seed 0), an int seed or a Generator."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(0 if rng is None else rng)


def rand_tangent(x: Any, rng: Any = None) -> Any:
    """A random tangent for the primal ``x``, of the type ``ProjectTo(x)`` gives.

    Standard-normal entries, in ``x``'s dtype (float32 stays float32, complex gets random real
    and imaginary parts), shape and structure (a ``Diagonal``, ``Symmetric`` or triangular
    primal gets a tangent of that type, a sparse primal one with its pattern, a dataclass or
    tuple a structural ``Tangent``). Values without a tangent space (bools, strings, Python ints,
    integer-free objects) get ``NoTangent()``.

    Parameters
    ----------
    x : any
        The primal.
    rng : numpy.random.Generator or int, optional
        Source of randomness (default: a generator seeded with 0).
    """
    space = space_of(x)
    coords = as_generator(rng).standard_normal(space.dim)
    return ProjectTo(x)(space.tangent(coords))
