"""A low-rank cotangent: define a tangent type instead of rewriting pullbacks.

``LowRank(U, V)`` stands for the matrix ``U @ V.T`` without forming it. It supports the tangent
operations rules are written with (``+``, scalar ``*``, ``@`` with ndarrays on either side,
``.T``/``.mT``, ``.conj()``, ``.real``), so the library's pullbacks accept it unchanged. Where the
algebra keeps low rank (``C_bar @ B.T`` is ``U (B V)^T``), the cotangents that come out are
``LowRank`` too, and cost O(n^2 r) instead of O(n^3).

Run it: ``python examples/low_rank.py``.
"""

from __future__ import annotations

import time

import numpy as np

from rules import rrule
from tangents import AbstractTangent


class LowRank(AbstractTangent):
    """The matrix ``U @ V.T`` (``U``: n x r, ``V``: m x r), kept factored."""

    __slots__ = ("U", "V")

    def __init__(self, U: np.ndarray, V: np.ndarray) -> None:
        self.U, self.V = np.asarray(U), np.asarray(V)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.U.shape[0], self.V.shape[0])

    @property
    def dtype(self) -> np.dtype:
        return np.result_type(self.U, self.V)

    @property
    def rank(self) -> int:
        return self.U.shape[1]

    # linear structure
    def __add__(self, other):
        if isinstance(other, LowRank):  # ranks add; still factored
            return LowRank(np.hstack([self.U, other.U]), np.hstack([self.V, other.V]))
        if isinstance(other, np.ndarray):
            return np.asarray(self) + other
        return NotImplemented  # zeros and thunks are handled by the library

    __radd__ = __add__

    def __neg__(self):
        return LowRank(-self.U, self.V)

    def __sub__(self, other):
        return self + (-other)

    def __mul__(self, s):
        if np.ndim(s) != 0:
            return NotImplemented
        return LowRank(s * self.U, self.V)

    __rmul__ = __mul__

    def __truediv__(self, s):
        return self * (1.0 / s)

    # products with matrices: U V^T M = U (M^T V)^T and M U V^T = (M U) V^T
    def __matmul__(self, M):
        if isinstance(M, LowRank):
            return LowRank(self.U @ (self.V.T @ M.U), M.V)
        if isinstance(M, np.ndarray):
            return LowRank(self.U, M.T @ self.V) if M.ndim == 2 else self.U @ (self.V.T @ M)
        return NotImplemented

    def __rmatmul__(self, M):
        if isinstance(M, np.ndarray):
            return LowRank(M @ self.U, self.V) if M.ndim == 2 else (M @ self.U) @ self.V.T
        return NotImplemented

    # views
    @property
    def T(self):
        return LowRank(self.V, self.U)

    mT = T

    def conj(self):
        return LowRank(self.U.conj(), self.V.conj())

    @property
    def real(self):
        if np.iscomplexobj(self.U) or np.iscomplexobj(self.V):
            raise TypeError("the real part of a complex low-rank matrix is not low rank")
        return self

    def __array__(self, dtype=None, copy=None):
        """The dense matrix: for users who ask for it; rules never do."""
        return (self.U @ self.V.T).astype(dtype) if dtype else self.U @ self.V.T

    def __repr__(self):
        return f"LowRank(shape={self.shape}, rank={self.rank})"


def dense(x):
    return np.asarray(x)


def main(n: int = 2000, r: int = 2, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n)) / np.sqrt(n)
    B = rng.standard_normal((n, n)) / np.sqrt(n)
    C_bar = LowRank(rng.standard_normal((n, r)), rng.standard_normal((n, r)))

    # matmul: both cotangents stay low rank
    _, pullback = rrule(np.matmul, A, B)
    start = time.perf_counter()
    _, A_bar, B_bar = pullback(C_bar)
    low_rank_time = time.perf_counter() - start
    assert isinstance(A_bar, LowRank)
    assert isinstance(B_bar, LowRank)

    C_bar_dense = dense(C_bar)
    start = time.perf_counter()
    _, A_bar_dense, B_bar_dense = pullback(C_bar_dense)
    dense_time = time.perf_counter() - start
    np.testing.assert_allclose(dense(A_bar), A_bar_dense, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dense(B_bar), B_bar_dense, rtol=1e-10, atol=1e-10)
    print(
        f"matmul pullback at n={n}, rank {r}: LowRank {low_rank_time * 1e3:.2f} ms, "
        f"dense {dense_time * 1e3:.2f} ms ({dense_time / low_rank_time:.0f}x)"
    )
    assert low_rank_time < dense_time


if __name__ == "__main__":
    main()
