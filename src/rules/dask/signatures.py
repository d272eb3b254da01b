"""Which rules run chunk by chunk over dask arrays, and the core dimensions of their arguments.

A rule lifts to dask when its function acts independently on each element of the *batch* (the
leading axes) of its array arguments: a stack of matrices for the linear-algebra rules
(``(..., n, n)``: two core axes per argument), a plain array for the elementwise ufuncs (no core
axes). Then each chunk of the batch is one call of the in-memory rule, kernels included, and the
chunks are independent. :func:`core_ndims` says how many trailing axes of each positional
argument are core axes for one call, or ``None`` when the function is not lifted.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.linalg as sla

__all__ = ["core_ndims", "lifted_functions"]


def _matrices(*args: Any) -> tuple[int, ...]:
    """Every argument a stack of matrices, except a 1-D one, which is a vector (``np.matmul``)."""
    return tuple(min(np.ndim(a), 2) for a in args)


def _solve(a: Any, b: Any, *rest: Any) -> tuple[int, ...]:
    """``np.linalg.solve``: ``b`` is a vector only when it is 1-D (numpy 2's rule)."""
    return (2, 1 if np.ndim(b) == 1 else 2) + (0,) * len(rest)


def _first_matrix(a: Any, *rest: Any) -> tuple[int, ...]:
    """One stack of matrices; further positional arguments are options (no core axes)."""
    return (2,) + (0,) * len(rest)


def _solve_triangular(a: Any, b: Any, *rest: Any) -> tuple[int, ...]:
    """``scipy.linalg.solve_triangular``: as ``np.linalg.solve``."""
    return _solve(a, b, *rest)


_MATRIX_RULES: dict[Any, Callable[..., tuple[int, ...]]] = {
    np.matmul: _matrices,
    operator.matmul: _matrices,
    np.linalg.solve: _solve,
    sla.solve_triangular: _solve_triangular,
    np.linalg.inv: _first_matrix,
    sla.inv: _first_matrix,
    np.linalg.det: _first_matrix,
    np.linalg.slogdet: _first_matrix,
    np.linalg.cholesky: _first_matrix,
    sla.cholesky: _first_matrix,
    np.linalg.eigh: _first_matrix,
    np.linalg.eigvalsh: _first_matrix,
    np.linalg.svd: _first_matrix,
    np.linalg.svdvals: _first_matrix,
    np.linalg.qr: _first_matrix,
    sla.lu: _first_matrix,
    sla.expm: _first_matrix,
}


# The arithmetic operators (a traced ``x * y`` is a call of ``operator.mul``): elementwise.
_OPERATORS = frozenset(
    {
        operator.add,
        operator.sub,
        operator.mul,
        operator.truediv,
        operator.pow,
        operator.neg,
        operator.pos,
    }
)


def core_ndims(f: Any, args: tuple[Any, ...]) -> tuple[int, ...] | None:
    """The number of core axes of each positional argument of ``f(*args)``; ``None`` if not lifted.

    Elementwise ufuncs (every ufunc with one output except ``np.matmul``) and the arithmetic
    operators have none: any chunking of their broadcast arguments works.
    """
    signature = _MATRIX_RULES.get(f)
    if signature is not None:
        return signature(*args)
    if (isinstance(f, np.ufunc) and f.nout == 1 and f.signature is None) or f in _OPERATORS:
        return (0,) * len(args)
    return None


def lifted_functions() -> list[Any]:
    """The non-ufunc functions whose rules run over dask arrays (for messages and docs)."""
    return list(_MATRIX_RULES)
