r"""Cotangents on a sparse matrix's pattern: the sampled products every sparse rule returns.

The cotangent of a sparse primal ``A`` stays on ``A``'s sparsity pattern: ``ProjectTo(A)``
keeps exactly its stored entries, so a rule returns values at those entries only. This is a
choice (ChainRules users argue both ways): the alternative, a dense cotangent, is the gradient
with respect to every entry of the matrix including the structural zeros, and costs O(n^2) for
an n x n primal. A rule whose cotangent is a product :math:`\bar A = U V^H` (a sum of outer
products, as for ``A @ B`` and ``spsolve``) therefore computes :math:`\bar A_{ij} = \sum_l
U_{il} \overline{V_{jl}}` at the stored :math:`(i, j)` only (a sampled dense-dense product,
O(nnz k)), never the dense :math:`U V^H`.

References
----------
ChainRulesCore.jl's ``ProjectTo(::SparseMatrixCSC)`` discussion (issue JuliaDiff/ChainRulesCore.jl
#347: natural vs structural tangents of sparse arrays); Nisa et al., "Sampled dense matrix
multiplication for high-performance machine learning" (HiPC 2018).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array
from tangents import unthunk

__all__ = ["check_format", "on_pattern", "pattern", "sampled_product", "sparse_or_array"]

_FORMATS = ("csr", "csc", "coo")


def check_format(name: str, A: Any) -> None:
    """Refuse sparse formats other than CSR/CSC/COO by name (their projectors are not defined)."""
    if A.format not in _FORMATS:
        raise TypeError(
            f"the rules of {name} support CSR, CSC and COO sparse matrices, got "
            f"{A.format.upper()}; convert it with .tocsr() first"
        )
    if A.ndim != 2:
        raise ValueError(f"the rules of {name} need a 2-D sparse matrix, got {A.ndim}-D")


def pattern(A: Any) -> tuple[np.ndarray, np.ndarray]:
    """The row and column index of each entry of ``A.data``, in its storage order."""
    if A.format == "coo":
        return A.coords[0], A.coords[1]
    outer = np.repeat(np.arange(len(A.indptr) - 1), np.diff(A.indptr))
    return (outer, A.indices) if A.format == "csr" else (A.indices, outer)


def on_pattern(A: Any, values: np.ndarray) -> Any:
    """A sparse matrix of ``A``'s class and pattern holding ``values`` (in ``A.data``'s order)."""
    if A.format == "coo":
        return type(A)((values, (A.coords[0], A.coords[1])), shape=A.shape)
    return type(A)((values, A.indices, A.indptr), shape=A.shape)


def sampled_product(A: Any, U: Any, V: Any) -> Any:
    r""":math:`U V^H` at the stored entries of ``A``, as a sparse matrix like ``A``.

    ``U`` has ``A.shape[0]`` rows and ``V`` ``A.shape[1]`` (vectors count as one column);
    O(nnz k) time and memory for k columns.
    """
    rows, cols = pattern(A)
    U, V = as_array(U), as_array(V)
    if U.ndim == 1:
        values = U[rows] * np.conj(V[cols])
    else:
        values = np.einsum("kj,kj->k", U[rows], np.conj(V[cols]))
    return on_pattern(A, values)


def is_sparse(x: Any) -> bool:
    """Whether ``x`` is a scipy.sparse matrix or array."""
    return sp.issparse(x)


def sparse_or_array(t: Any, operation: str) -> Any:
    """A (co)tangent as a sparse matrix (kept sparse) or an ndarray; other types refused by name."""
    t = unthunk(t)
    return t if sp.issparse(t) else as_array_cotangent(t, operation)
