r"""Rules for products of a sparse matrix with a dense array, ``A @ B`` and ``B @ A``.

With ``A`` sparse (CSR, CSC or COO; array or matrix) and ``B`` a dense vector or matrix:

.. math::

    C = A B:\quad \bar A = \bar C B^H \text{ on the pattern of } A,\quad \bar B = A^H \bar C;
    \qquad C = B A:\quad \bar A = B^H \bar C \text{ on the pattern},\quad \bar B = \bar C A^H,

the cotangent of ``A`` computed as a sampled product (:mod:`rules.sparse.pattern`): O(nnz k) for
``k`` columns of ``B``, never the dense n x n product. The pushforward is :math:`\dot C = \dot A
B + A \dot B` (or :math:`\dot B A + B \dot A`). ``np.matmul`` and ``@`` route here when an
operand is sparse; two sparse operands are refused by name.

References
----------
M. B. Giles, "An extended collection of matrix derivative results for forward and reverse mode
algorithmic differentiation" (2008), section 2.2.1 (products).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array
from rules.sparse.pattern import check_format, is_sparse, sampled_product, sparse_or_array
from tangents import AbstractZero, NoTangent, ProjectTo, unthunk

__all__ = ["sparse_matmul_frule", "sparse_matmul_rrule"]

_NAME = "operator.matmul"


def _check(A: Any, B: Any) -> bool:
    """Whether the sparse operand is on the left; refuses what the rules do not support."""
    if is_sparse(A) and is_sparse(B):
        raise ValueError(f"the rules of {_NAME} do not support two sparse operands")
    sparse, dense = (A, B) if is_sparse(A) else (B, A)
    check_format(_NAME, sparse)
    if np.ndim(dense) > 2:
        raise ValueError(
            f"the rules of {_NAME} support a sparse matrix times a vector or a matrix, got a "
            f"{np.ndim(dense)}-D dense operand"
        )
    return is_sparse(A)


def sparse_matmul_rrule(A: Any, B: Any) -> tuple[Any, Any]:
    r"""``C = A @ B`` with one sparse operand: :math:`\bar A` on its pattern, :math:`\bar B` dense."""
    left = _check(A, B)
    C = A @ B
    project_A, project_B = ProjectTo(A), ProjectTo(B)

    def sparse_matmul_pullback(C_bar: Any) -> tuple[Any, Any, Any]:
        G = as_array(as_array_cotangent(C_bar, f"{_NAME}'s pullback (a sparse product)"))
        if left:  # C = S D: S_bar = G D^H sampled, D_bar = S^H G
            S, D = A, as_array(B)
            S_bar = sampled_product(S, G, D)
            D_bar = S.conj().T @ G
            return NoTangent(), project_A(S_bar), project_B(as_array(D_bar))
        D, S = as_array(A), B  # C = D S: S_bar = D^H G sampled, D_bar = G S^H
        S_bar = sampled_product(S, np.conj(D).T, np.conj(G).T)
        D_bar = (S.conj() @ G.T).T
        return NoTangent(), project_A(as_array(D_bar)), project_B(S_bar)

    return C, sparse_matmul_pullback


def sparse_matmul_frule(tangents: tuple[Any, Any, Any], A: Any, B: Any) -> tuple[Any, Any]:
    r"""``C = A @ B`` with one sparse operand: :math:`\dot C = \dot A B + A \dot B`."""
    _check(A, B)
    C = A @ B
    operation = f"{_NAME}'s frule (a sparse product)"
    A_dot, B_dot = (unthunk(t) for t in tangents[1:3])
    C_dot: Any = np.zeros(np.shape(C), dtype=np.result_type(C.dtype, np.float32))
    if not isinstance(A_dot, AbstractZero):
        A_dot = ProjectTo(A)(sparse_or_array(A_dot, operation))
        C_dot = C_dot + A_dot @ B
    if not isinstance(B_dot, AbstractZero):
        B_dot = ProjectTo(B)(sparse_or_array(B_dot, operation))
        C_dot = C_dot + A @ B_dot
    return C, ProjectTo(C)(as_array(C_dot))
