"""``jax.numpy`` look-alikes: :mod:`.linalg`."""

from rules.interop.jax.numpy import linalg

__all__ = ["linalg"]
