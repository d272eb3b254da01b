"""``jax.scipy.linalg`` look-alikes whose reverse-mode derivatives are the library's rules.

Each function takes the leading arguments of its ``jax.scipy.linalg`` namesake and returns
what it does (``lu``'s ``(p, l, u)`` with ``a = p l u``, ``lu_factor``'s 0-based ``int32``
pivots), computed by the scipy function of the same name through
:func:`rules.interop.jax.wrap`. ``overwrite_*`` and ``check_finite`` are accepted and ignored,
as JAX does.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import scipy.linalg as sla

from rules.interop._cache import OperationCache
from rules.interop.jax.function import wrap

__all__ = [
    "cho_factor",
    "cho_solve",
    "cholesky",
    "det",
    "eigh",
    "expm",
    "inv",
    "lu",
    "lu_factor",
    "lu_solve",
    "qr",
    "solve",
    "solve_triangular",
    "svd",
]

_op = OperationCache(wrap)


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> jax.Array:
    """``jax.scipy.linalg.expm`` through ``scipy.linalg.expm`` (its options are hints)."""
    return _op(sla.expm)(A)


def lu(
    a: Any, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Any:
    """``jax.scipy.linalg.lu``: ``(p, l, u)``, or ``(p l, u)`` with ``permute_l``."""
    return tuple(_op(sla.lu, permute_l=permute_l)(a))


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Any, Any]:
    """``jax.scipy.linalg.lu_factor``: ``(lu, piv)``, ``piv`` not differentiable."""
    return tuple(_op(sla.lu_factor)(a))


def lu_solve(
    lu_and_piv: tuple[Any, Any],
    b: Any,
    trans: int = 0,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> jax.Array:
    """``jax.scipy.linalg.lu_solve`` through ``scipy.linalg.lu_solve``: ``op(a) x = b``.

    ``lu_and_piv`` is :func:`lu_factor`'s ``(lu, piv)`` (or JAX's: the same 0-based pivots);
    ``piv`` is not differentiable.
    """
    lu_, piv = lu_and_piv
    b = jnp.asarray(b)
    op = _op(sla.lu_solve, trans=trans)
    if b.ndim == 1:  # a column, so that a vmapped (tiled) b still reads as a vector
        return op((lu_, piv), b[:, None])[..., 0]
    return op((lu_, piv), b)


def cho_factor(
    a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[jax.Array, bool]:
    """``jax.scipy.linalg.cho_factor``: ``(c, lower)`` through ``scipy.linalg.cho_factor``.

    As JAX gives it, ``c`` is the triangular factor with zeros in its other triangle (scipy
    leaves a copy of ``a`` there, which neither :func:`cho_solve` reads).
    """
    c, _ = _op(sla.cho_factor, lower=lower)(a)
    return (jnp.tril(c) if lower else jnp.triu(c)), lower


def cho_solve(
    c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False, check_finite: bool = True
) -> jax.Array:
    """``jax.scipy.linalg.cho_solve`` through ``scipy.linalg.cho_solve``: ``a x = b``.

    ``c_and_lower`` is :func:`cho_factor`'s ``(c, lower)``; ``lower`` is a Python bool.
    """
    c, lower = c_and_lower
    b = jnp.asarray(b)
    if b.ndim == 1:  # a column, so that a vmapped (tiled) b still reads as a vector
        return _op(sla.cho_solve)((c, bool(lower)), b[:, None])[..., 0]
    return _op(sla.cho_solve)((c, bool(lower)), b)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> jax.Array:
    """``jax.scipy.linalg.det`` through ``scipy.linalg.det``."""
    return _op(sla.det)(a)


def solve_triangular(
    a: Any,
    b: Any,
    trans: int | str = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    debug: Any = None,
    check_finite: bool = True,
) -> jax.Array:
    """``jax.scipy.linalg.solve_triangular`` through ``scipy.linalg.solve_triangular``."""
    b = jnp.asarray(b)
    op = _op(sla.solve_triangular, trans=trans, lower=lower, unit_diagonal=unit_diagonal)
    if b.ndim == 1:  # a column, so that a vmapped (tiled) b still reads as a vector
        return op(a, b[:, None])[..., 0]
    return op(a, b)


def cholesky(
    a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> jax.Array:
    """``jax.scipy.linalg.cholesky`` through ``scipy.linalg.cholesky``."""
    return _op(sla.cholesky, lower=lower)(a)


def eigh(
    a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False, **options: Any
) -> Any:
    """``jax.scipy.linalg.eigh``, standard problem: ``(w, v)``, or ``w`` with ``eigvals_only``."""
    if b is not None:
        raise NotImplementedError(
            "rules.interop.jax.scipy.linalg.eigh: the generalized problem (b)"
        )
    y = _op(sla.eigh, lower=lower, eigvals_only=eigvals_only)(a)
    return y if eigvals_only else tuple(y)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, **options: Any) -> Any:
    """``jax.scipy.linalg.svd``: ``(u, s, vh)``, or ``s`` without ``compute_uv``."""
    y = _op(sla.svd, full_matrices=full_matrices, compute_uv=compute_uv)(a)
    return tuple(y) if compute_uv else y


def qr(
    a: Any,
    overwrite_a: bool = False,
    lwork: Any = None,
    mode: str = "full",
    pivoting: bool = False,
    check_finite: bool = True,
) -> Any:
    """``jax.scipy.linalg.qr`` (no pivoting): ``(q, r)``, or ``(r,)`` with ``mode='r'``."""
    if pivoting:
        raise NotImplementedError("rules.interop.jax.scipy.linalg.qr: pivoting=True")
    y = _op(sla.qr, mode=mode)(a)
    return tuple(y) if isinstance(y, tuple | list) else (y,)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> jax.Array:
    """``jax.scipy.linalg.inv`` through ``scipy.linalg.inv``."""
    return _op(sla.inv)(a)


def solve(
    a: Any,
    b: Any,
    lower: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    debug: bool = False,
    check_finite: bool = True,
    assume_a: str = "gen",
) -> jax.Array:
    """``jax.scipy.linalg.solve`` through ``scipy.linalg.solve``."""
    b = jnp.asarray(b)
    op = _op(sla.solve, lower=lower, assume_a=assume_a)
    if b.ndim == 1:
        return op(a, b[:, None])[..., 0]
    return op(a, b)
