"""The library's rules as JAX operations: :func:`wrap`, and ready ``numpy``/``scipy`` namespaces.

``rules.interop.jax.numpy.linalg`` and ``rules.interop.jax.scipy.linalg`` mirror
``jax.numpy.linalg`` and ``jax.scipy.linalg``; :func:`wrap_forward` is the forward-mode
(``custom_jvp``) variant of :func:`wrap`. Importing this module imports jax.
"""

from rules.interop.jax import numpy, scipy
from rules.interop.jax.function import wrap, wrap_forward

__all__ = ["numpy", "scipy", "wrap", "wrap_forward"]
