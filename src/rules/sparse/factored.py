r"""``OuterProducts``: the cotangent :math:`\sum_l u_l v_l^H = U V^H` kept as its factors.

A solve with a factorization that does not know its matrix's pattern (``splu(A).solve(b)``:
scipy's ``SuperLU`` keeps only the factors) has the cotangent :math:`-\bar b x^H` for ``A``, a
rank-k matrix for k right-hand sides. Forming it densely costs O(n^2); this type keeps the
factors and is sampled onto ``A``'s pattern by ``splu``'s pullback
(:func:`rules.sparse.pattern.sampled_product`), O(nnz k). Cotangents of several solves with the
same factorization add up by concatenating their factors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.nesting import as_array
from rules.sparse.pattern import sampled_product
from tangents import AbstractTangent

__all__ = ["OuterProducts"]


class OuterProducts(AbstractTangent):
    """The matrix ``U @ V.conj().T``, stored as ``U`` (n, k) and ``V`` (m, k).

    Parameters
    ----------
    U, V : ndarray
        The factors; 1-D factors are one column each.
    """

    __slots__ = ("U", "V")

    def __init__(self, U: Any, V: Any) -> None:
        U, V = as_array(U), as_array(V)
        self.U = U[:, None] if U.ndim == 1 else U
        self.V = V[:, None] if V.ndim == 1 else V

    @property
    def shape(self) -> tuple[int, int]:
        """The shape of the matrix it stands for."""
        return (self.U.shape[0], self.V.shape[0])

    def __add__(self, other: Any) -> Any:
        if isinstance(other, OuterProducts):
            return OuterProducts(np.hstack([self.U, other.U]), np.hstack([self.V, other.V]))
        return NotImplemented

    __radd__ = __add__

    def __neg__(self) -> OuterProducts:
        return OuterProducts(-self.U, self.V)

    def __sub__(self, other: Any) -> Any:
        if isinstance(other, OuterProducts):
            return self + (-other)
        return NotImplemented

    def __mul__(self, s: Any) -> Any:
        if np.ndim(s) == 0:
            return OuterProducts(self.U * s, self.V)
        return NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, s: Any) -> Any:
        if np.ndim(s) == 0:
            return OuterProducts(self.U / s, self.V)
        return NotImplemented

    def dense(self) -> np.ndarray:
        """The dense matrix (O(n m): for tests and small problems)."""
        return self.U @ self.V.conj().T

    def on_pattern(self, A: Any) -> Any:
        """The entries at ``A``'s stored positions, as a sparse matrix like ``A``."""
        return sampled_product(A, self.U, self.V)

    def __repr__(self) -> str:
        return f"OuterProducts({self.U!r}, {self.V!r})"
