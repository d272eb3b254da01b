"""``torch.linalg`` look-alikes whose derivatives are the library's rules.

Each function takes and returns what its ``torch.linalg`` namesake does (the same named tuples,
``torch.linalg.lu``'s ``A = P L U``, 1-based ``int32`` pivots from ``lu_factor``) and is computed
by the numpy or scipy function named in its docstring through :func:`rules.interop.torch.wrap`.
The ``out=`` arguments and CUDA tensors are not supported.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla
import torch

from rules.interop._cache import OperationCache
from rules.interop.torch.function import wrap

__all__ = [
    "cholesky",
    "det",
    "eigh",
    "eigvalsh",
    "inv",
    "lu",
    "lu_factor",
    "lu_solve",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "norm",
    "qr",
    "slogdet",
    "solve",
    "solve_triangular",
    "svd",
    "svdvals",
    "vector_norm",
]

_op = OperationCache(wrap)
_types = torch.return_types


def _is_vector_rhs(A: torch.Tensor, B: torch.Tensor) -> bool:
    """``torch.linalg.solve``'s rule: ``B`` is a (batch of) vector(s) when its shape is ``A``'s minus the last axis."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])


def cholesky(A: torch.Tensor, *, upper: bool = False) -> torch.Tensor:
    """``torch.linalg.cholesky`` through ``np.linalg.cholesky`` (its ``upper`` option too)."""
    return _op(np.linalg.cholesky, upper=upper)(A) if upper else _op(np.linalg.cholesky)(A)


def eigh(A: torch.Tensor, UPLO: str = "L") -> Any:
    """``torch.linalg.eigh``: ``(eigenvalues, eigenvectors)`` through ``np.linalg.eigh``."""
    return _types.linalg_eigh(tuple(_op(np.linalg.eigh, UPLO=UPLO)(A)))


def eigvalsh(A: torch.Tensor, UPLO: str = "L") -> torch.Tensor:
    """``torch.linalg.eigvalsh`` through ``np.linalg.eigvalsh``."""
    return _op(np.linalg.eigvalsh, UPLO=UPLO)(A)


def svd(A: torch.Tensor, full_matrices: bool = True) -> Any:
    """``torch.linalg.svd``: ``(U, S, Vh)`` through ``np.linalg.svd``."""
    return _types.linalg_svd(tuple(_op(np.linalg.svd, full_matrices=full_matrices)(A)))


def svdvals(A: torch.Tensor) -> torch.Tensor:
    """``torch.linalg.svdvals`` through ``np.linalg.svdvals``."""
    return _op(np.linalg.svdvals)(A)


def qr(A: torch.Tensor, mode: str = "reduced") -> Any:
    """``torch.linalg.qr``: ``(Q, R)`` through ``np.linalg.qr``; mode ``'r'`` gives an empty ``Q``."""
    if mode == "r":
        R = _op(np.linalg.qr, mode="r")(A)
        return _types.linalg_qr((torch.empty(0, dtype=A.dtype), R))
    return _types.linalg_qr(tuple(_op(np.linalg.qr, mode=mode)(A)))


def lu(A: torch.Tensor, *, pivot: bool = True) -> Any:
    """``torch.linalg.lu``: ``(P, L, U)`` with ``A = P L U``, through ``scipy.linalg.lu``.

    ``P`` has ``A``'s dtype, as in PyTorch (scipy's is real for a complex ``A``).
    """
    if not pivot:
        raise ValueError("rules.interop.torch.linalg.lu: pivot=False is not supported")
    P, L, U = _op(sla.lu)(A)
    return _types.linalg_lu((P.to(L.dtype), L, U))  # scipy's P is real; torch's has A's dtype


def lu_factor(A: torch.Tensor, *, pivot: bool = True) -> Any:
    """``torch.linalg.lu_factor``: ``(LU, pivots)`` through ``scipy.linalg.lu_factor``.

    scipy's 0-based ``int32`` pivots become LAPACK's (and PyTorch's) 1-based ones; they are
    not differentiable.
    """
    if not pivot:
        raise ValueError("rules.interop.torch.linalg.lu_factor: pivot=False is not supported")
    LU, piv = _op(sla.lu_factor)(A)
    return _types.linalg_lu_factor((LU, (piv + 1).to(torch.int32)))


def lu_solve(
    LU: torch.Tensor,
    pivots: torch.Tensor,
    B: torch.Tensor,
    *,
    left: bool = True,
    adjoint: bool = False,
) -> torch.Tensor:
    """``torch.linalg.lu_solve``: ``op(A) X = B`` through ``scipy.linalg.lu_solve``.

    ``(LU, pivots)`` as :func:`lu_factor` (or ``torch.linalg.lu_factor``) gives them, 1-based;
    ``adjoint`` solves with ``A^H`` (scipy's ``trans=2``), ``left=False`` solves
    ``X op(A) = B``. The pivots are not differentiable.
    """
    piv = (pivots - 1).to(torch.int32)  # LAPACK's 1-based pivots as scipy's 0-based ones
    if not left:  # X op(A) = B is op(A)^T X^T = B^T; conj(A^H) = A^T, conj(A^T) = A^H
        if adjoint:  # X A^H = B: A X^H = B^H
            return _op(sla.lu_solve, trans=0)((LU, piv), B.mH).mH
        return _op(sla.lu_solve, trans=1)((LU, piv), B.mT).mT
    return _op(sla.lu_solve, trans=2 if adjoint else 0)((LU, piv), B)


def solve(A: torch.Tensor, B: torch.Tensor, *, left: bool = True) -> torch.Tensor:
    """``torch.linalg.solve`` (``left=False`` solves ``X A = B``) through ``np.linalg.solve``."""
    if not left:
        return solve(A.mT, B.mT).mT
    if _is_vector_rhs(A, B):
        return _op(np.linalg.solve)(A, B.unsqueeze(-1)).squeeze(-1)
    return _op(np.linalg.solve)(A, B)


def solve_triangular(
    A: torch.Tensor,
    B: torch.Tensor,
    *,
    upper: bool,
    left: bool = True,
    unitriangular: bool = False,
) -> torch.Tensor:
    """``torch.linalg.solve_triangular`` through ``scipy.linalg.solve_triangular``."""
    if not left:  # X A = B is A^T X^T = B^T
        op = _op(sla.solve_triangular, trans=1, lower=not upper, unit_diagonal=unitriangular)
        return op(A, B.mT).mT
    return _op(sla.solve_triangular, lower=not upper, unit_diagonal=unitriangular)(A, B)


def inv(A: torch.Tensor) -> torch.Tensor:
    """``torch.linalg.inv`` through ``np.linalg.inv``."""
    return _op(np.linalg.inv)(A)


def det(A: torch.Tensor) -> torch.Tensor:
    """``torch.linalg.det`` through ``np.linalg.det``."""
    return _op(np.linalg.det)(A)


def slogdet(A: torch.Tensor) -> Any:
    """``torch.linalg.slogdet``: ``(sign, logabsdet)`` through ``np.linalg.slogdet``."""
    return _types.linalg_slogdet(tuple(_op(np.linalg.slogdet)(A)))


def matrix_exp(A: torch.Tensor) -> torch.Tensor:
    """``torch.linalg.matrix_exp`` through ``scipy.linalg.expm``."""
    return _op(sla.expm)(A)


def matrix_power(A: torch.Tensor, n: int) -> torch.Tensor:
    """``torch.linalg.matrix_power`` through ``np.linalg.matrix_power`` (``n < 0``: of the inverse)."""
    return _op(np.linalg.matrix_power)(A, n)


def matmul(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """``torch.linalg.matmul`` through ``np.matmul``."""
    return _op(np.matmul)(A, B)


def _dims(dim: Any) -> Any:
    """A ``dim`` option as a hashable static value (a list becomes a tuple)."""
    return tuple(dim) if isinstance(dim, list | tuple) else dim


def norm(A: torch.Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False) -> torch.Tensor:
    """``torch.linalg.norm`` through ``np.linalg.norm`` (the same rules for ``ord`` and ``dim``)."""
    return _op(np.linalg.norm, ord=ord, axis=_dims(dim), keepdims=keepdim)(A)


def vector_norm(
    x: torch.Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False
) -> torch.Tensor:
    """``torch.linalg.vector_norm`` through ``np.linalg.vector_norm``."""
    return _op(np.linalg.vector_norm, ord=ord, axis=_dims(dim), keepdims=keepdim)(x)


def matrix_norm(
    A: torch.Tensor, ord: Any = "fro", dim: tuple[int, int] = (-2, -1), keepdim: bool = False
) -> torch.Tensor:
    """``torch.linalg.matrix_norm`` through ``np.linalg.matrix_norm`` (``dim`` moved last)."""
    rows, cols = dim
    if (rows % A.ndim, cols % A.ndim) != (A.ndim - 2, A.ndim - 1):
        A = A.movedim((rows, cols), (-2, -1))
        if keepdim:
            raise ValueError(
                "rules.interop.torch.linalg.matrix_norm: keepdim=True needs dim=(-2, -1)"
            )
    return _op(np.linalg.matrix_norm, ord=ord, keepdims=keepdim)(A)
