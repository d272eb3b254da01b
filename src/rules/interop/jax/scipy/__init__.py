"""``jax.scipy`` look-alikes: :mod:`.linalg`."""

from rules.interop.jax.scipy import linalg

__all__ = ["linalg"]
