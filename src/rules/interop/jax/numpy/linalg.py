"""``jax.numpy.linalg`` look-alikes whose reverse-mode derivatives are the library's rules.

Each function takes and returns what its ``jax.numpy.linalg`` namesake does (its named tuples,
``symmetrize_input``) and is computed by the numpy function of the same name through
:func:`rules.interop.jax.wrap`, so ``grad``, ``vjp``, ``jacrev``, ``jit`` and ``vmap`` work
and forward mode does not (see ``docs/interop.md``).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rules.interop._cache import OperationCache
from rules.interop.jax.function import wrap

__all__ = [
    "cholesky",
    "det",
    "eigh",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "norm",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "vector_norm",
]

_op = OperationCache(wrap)
_eye = jnp.eye(1)
EighResult = type(jnp.linalg.eigh(_eye))
SVDResult = type(jnp.linalg.svd(_eye))
QRResult = type(jnp.linalg.qr(_eye))
SlogdetResult = type(jnp.linalg.slogdet(_eye))


@jax.custom_vjp
def _hermitian_part(a: jax.Array) -> jax.Array:
    """``(a + a^H) / 2``, whose backward pass hands its cotangent through unchanged.

    Its only consumers are the rules of ``cholesky``, ``eigh`` and ``eigvalsh``, whose
    cotangents are Hermitian (DESIGN.md section 3; so are their conjugates, JAX's cotangents);
    the derivative of the Hermitian part maps a Hermitian ``g`` to ``(g + g^H) / 2 = g``, so
    JAX's own transpose of it (a transposed copy and an addition of the whole stack, slower
    than the rule's pullback on small matrices) would return ``g`` again.
    """
    return (a + jnp.conj(jnp.swapaxes(a, -1, -2))) / 2


def _hermitian_part_fwd(a: jax.Array) -> tuple[jax.Array, None]:
    return _hermitian_part(a), None


def _hermitian_part_bwd(residual: None, g: jax.Array) -> tuple[jax.Array]:
    return (g,)


_hermitian_part.defvjp(_hermitian_part_fwd, _hermitian_part_bwd)


def _symmetrized(a: Any, symmetrize_input: bool) -> jax.Array:
    """``(a + a^H) / 2`` when asked, as JAX does before a Hermitian factorization."""
    a = jnp.asarray(a)
    return _hermitian_part(a) if symmetrize_input else a


def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> jax.Array:
    """``jax.numpy.linalg.cholesky`` through ``np.linalg.cholesky``."""
    a = _symmetrized(a, symmetrize_input)
    return _op(np.linalg.cholesky, upper=True)(a) if upper else _op(np.linalg.cholesky)(a)


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> Any:
    """``jax.numpy.linalg.eigh``: ``EighResult(eigenvalues, eigenvectors)``."""
    a = _symmetrized(a, symmetrize_input)
    return EighResult(*_op(np.linalg.eigh, UPLO=UPLO or "L")(a))


def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> jax.Array:
    """``jax.numpy.linalg.eigvalsh`` through ``np.linalg.eigvalsh``."""
    a = _symmetrized(a, symmetrize_input)
    return _op(np.linalg.eigvalsh, UPLO=UPLO or "L")(a)


def svd(
    a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False
) -> Any:
    """``jax.numpy.linalg.svd``: ``SVDResult(U, S, Vh)``, or ``S`` without ``compute_uv``."""
    if not compute_uv:
        return svdvals(a)
    op = _op(np.linalg.svd, full_matrices=full_matrices, hermitian=hermitian)
    return SVDResult(*op(a))


def svdvals(a: Any) -> jax.Array:
    """``jax.numpy.linalg.svdvals`` through ``np.linalg.svdvals``."""
    return _op(np.linalg.svdvals)(a)


def qr(a: Any, mode: str = "reduced") -> Any:
    """``jax.numpy.linalg.qr``: ``QRResult(Q, R)``, or ``R`` with ``mode='r'``."""
    if mode == "r":
        return _op(np.linalg.qr, mode="r")(a)
    return QRResult(*_op(np.linalg.qr, mode=mode)(a))


def solve(a: Any, b: Any) -> jax.Array:
    """``jax.numpy.linalg.solve``; a one-dimensional ``b`` is a vector, as in numpy 2."""
    b = jnp.asarray(b)
    if b.ndim == 1:  # a column, so that a vmapped (tiled) b still reads as vectors
        return _op(np.linalg.solve)(a, b[:, None])[..., 0]
    return _op(np.linalg.solve)(a, b)


def inv(a: Any) -> jax.Array:
    """``jax.numpy.linalg.inv`` through ``np.linalg.inv``."""
    return _op(np.linalg.inv)(a)


def det(a: Any) -> jax.Array:
    """``jax.numpy.linalg.det`` through ``np.linalg.det``."""
    return _op(np.linalg.det)(a)


def slogdet(a: Any) -> Any:
    """``jax.numpy.linalg.slogdet``: ``SlogdetResult(sign, logabsdet)``."""
    return SlogdetResult(*_op(np.linalg.slogdet)(a))


def matmul(x1: Any, x2: Any) -> jax.Array:
    """``jax.numpy.linalg.matmul`` through ``np.matmul``."""
    return _op(np.matmul)(x1, x2)


def matrix_power(a: Any, n: int) -> jax.Array:
    """``jax.numpy.linalg.matrix_power`` through ``np.linalg.matrix_power`` (``n`` static)."""
    return _op(np.linalg.matrix_power)(a, int(n))


def _axis(axis: Any) -> Any:
    """An axis option as a hashable static value (a list becomes a tuple)."""
    return tuple(axis) if isinstance(axis, list | tuple) else axis


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> jax.Array:
    """``jax.numpy.linalg.norm`` through ``np.linalg.norm`` (its options static)."""
    return _op(np.linalg.norm, ord=ord, axis=_axis(axis), keepdims=keepdims)(x)


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> jax.Array:
    """``jax.numpy.linalg.vector_norm`` through ``np.linalg.vector_norm``."""
    return _op(np.linalg.vector_norm, ord=ord, axis=_axis(axis), keepdims=keepdims)(x)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> jax.Array:
    """``jax.numpy.linalg.matrix_norm`` (over the last two axes) through ``np.linalg.matrix_norm``."""
    return _op(np.linalg.matrix_norm, ord=ord, keepdims=keepdims)(x)
