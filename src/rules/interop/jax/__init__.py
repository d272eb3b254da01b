"""The library's rules as JAX operations: :func:`wrap`, and ready ``numpy``/``scipy`` namespaces.

``rules.interop.jax.numpy.linalg`` and ``rules.interop.jax.scipy.linalg`` mirror
``jax.numpy.linalg`` and ``jax.scipy.linalg``. Importing this module imports jax.
"""

from rules.interop.jax import numpy, scipy
from rules.interop.jax.function import KEPT_PULLBACKS, wrap, wrap_forward

__all__ = ["KEPT_PULLBACKS", "numpy", "scipy", "wrap", "wrap_forward"]
