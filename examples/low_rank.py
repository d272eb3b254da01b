"""A low-rank cotangent: define a tangent type instead of rewriting pullbacks.

``LowRank(U, V)`` stands for the matrix ``U @ V.T`` without forming it. It supports the tangent
operations rules are written with (docs/tangent-types.md: ``+``, scalar ``*``, unary ``-``,
``@`` with matrices on either side, ``.T``/``.mT``, ``.conj()``, ``.real``, a ``shape``), so the
library's algebra-path pullbacks accept it unchanged and never convert it to an ndarray. Where the
algebra keeps low rank, the cotangents that come out are ``LowRank`` too, and cost O(n^2 r)
instead of O(n^3):

* ``matmul``: ``C = A B`` gives ``A_bar = C_bar B^H = U (conj(B) V)^T`` and
  ``B_bar = A^H C_bar = (A^H U) V^T``.
* ``trace``: ``np.trace``'s own cotangent is a number, so no matrix can be passed *into* its
  pullback; what a trace contributes is the matrix that comes *out*. For the trace-form loss
  ``L = trace(P^T C Q) = sum_k p_k^T C q_k`` (r bilinear probes of ``C``) the cotangent of ``C``
  is exactly ``P L_bar Q^T``, rank r: the library's ``np.trace`` pullback turns ``L_bar`` into
  ``S_bar = L_bar I_r`` for ``S = P^T C Q``, the sandwich ``C -> P^T C Q`` pulls that back to
  ``LowRank(P S_bar, Q)`` without forming it, and that ``LowRank`` goes on into ``matmul``'s
  pullback when ``C = A B``: the whole gradient of ``L`` stays factored.
* ``inv``: ``Y = M^{-1}`` gives ``M_bar = -Y^H Y_bar Y^H = LowRank(-Y^H U, conj(Y) V)``.
* a program of two steps, ``Y = (I + A B)^{-1}``, differentiated by ``rules.autodiff.vjp``:
  the LowRank ``Y_bar`` goes through ``inv``'s pullback and then ``matmul``'s, unchanged in kind.
* ``solve``: ``X = M^{-1} B`` gives ``B_bar = M^{-H} X_bar = LowRank(M^{-H} U, V)`` and
  ``M_bar = -B_bar X^H``, both low rank; the rule forms ``M^{-H}`` from its LU factors once
  (O(n^3)), so here the gain is a constant factor rather than O(n).

Each result is compared with the same pullback given the dense matrix, and timed against it at
n = 2000, rank 2. The times are printed, not asserted: the example checks what the algebra
guarantees (the results are ``LowRank`` and equal the dense ones); how much faster that is on a
given machine is a measurement, for the reader to see.

Run it: ``python examples/low_rank.py``.
"""

from __future__ import annotations

import time

import numpy as np

from rules import rrule
from rules.autodiff import vjp
from tangents import AbstractTangent, StructuredMatrix


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

    def __rsub__(self, other):
        return (-self) + other

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
            return LowRank(self.U, M.V @ (M.U.T @ self.V))
        if isinstance(M, np.ndarray | StructuredMatrix):
            return LowRank(self.U, M.T @ self.V) if M.ndim == 2 else self.U @ (self.V.T @ M)
        return NotImplemented

    def __rmatmul__(self, M):
        if isinstance(M, np.ndarray | StructuredMatrix):
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
    def real(self):  # Re(U V^T) = Re U Re V^T - Im U Im V^T: rank 2r at most
        if not (np.iscomplexobj(self.U) or np.iscomplexobj(self.V)):
            return self
        U, V = self.U, self.V
        return LowRank(np.hstack([U.real, -U.imag]), np.hstack([V.real, V.imag]))

    @property
    def imag(self):  # Im(U V^T) = Re U Im V^T + Im U Re V^T
        U, V = self.U, self.V
        return LowRank(np.hstack([U.real, U.imag]), np.hstack([V.imag, V.real]))

    def __array__(self, dtype=None, copy=None):
        """The dense matrix: for users who ask for it; rules never do."""
        dense = self.U @ self.V.T
        return dense if dtype is None else dense.astype(dtype)

    def __repr__(self):
        return f"LowRank(shape={self.shape}, rank={self.rank})"


def dense(x):
    return np.asarray(x)


def race(pullback, low_rank_cotangent, dense_cotangent, rounds=2):
    """Both results and the best wall-clock time of each, measured in alternation.

    Alternating the two keeps a burst of load on a shared machine from favouring either side.
    """
    if dense_cotangent is None:
        dense_cotangent = dense(low_rank_cotangent)
    times = [np.inf, np.inf]
    for _ in range(rounds):
        for i, cotangent in enumerate((low_rank_cotangent, dense_cotangent)):
            start = time.perf_counter()
            result = pullback(cotangent)
            times[i] = min(times[i], time.perf_counter() - start)
            if i == 0:
                low_rank = result
            else:
                dense_result = result
    return low_rank, dense_result, times


def compare(name, n, r, results, times):
    """Check that the LowRank results are LowRank and equal the dense ones; report the times."""
    low_rank, dense_result = results
    for got, want in zip(low_rank, dense_result, strict=True):
        assert isinstance(got, LowRank), f"{name}: {type(got).__name__}"
        np.testing.assert_allclose(dense(got), want, rtol=1e-9, atol=1e-9)
    t_low_rank, t_dense = times
    print(
        f"{name} at n={n}, rank {r}: LowRank {t_low_rank * 1e3:.2f} ms, "
        f"dense {t_dense * 1e3:.2f} ms ({t_dense / t_low_rank:.1f}x)"
    )


def check_pullback(name, pullback, cotangent, n, r):
    """``pullback`` on the LowRank ``cotangent`` and on its dense matrix: results and times."""
    low_rank, dense_result, times = race(pullback, cotangent, dense(cotangent))
    compare(name, n, r, (low_rank[1:], dense_result[1:]), times)
    return low_rank[1:]


def main(n: int = 2000, r: int = 2, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)

    def low_rank(m):
        return LowRank(rng.standard_normal((m, r)), rng.standard_normal((m, r)))

    A = rng.standard_normal((n, n)) / np.sqrt(n)
    B = rng.standard_normal((n, n)) / np.sqrt(n)
    C, matmul_pullback = rrule(np.matmul, A, B)  # forward passes are not timed

    # matmul: a LowRank cotangent in, LowRank cotangents out
    check_pullback("matmul pullback", matmul_pullback, low_rank(n), n, r)

    # trace: L = trace(P^T C Q) with C = A B. np.trace's pullback (the library's) gives
    # S_bar = L_bar I_r for S = P^T C Q; the sandwich C -> P^T C Q pulls it back to
    # P S_bar Q^T, kept factored; matmul's pullback takes that on to A and B.
    P, Q = rng.standard_normal((n, r)), rng.standard_normal((n, r))
    _, trace_pullback = rrule(np.trace, P.T @ C @ Q)

    def gradient(sandwich_pullback):
        _, S_bar = trace_pullback(1.0)
        return matmul_pullback(sandwich_pullback(S_bar))[1:]

    def factored_sandwich(S_bar):  # the adjoint of C -> P^T C Q, kept factored
        return LowRank(P @ S_bar, Q)

    def dense_sandwich(S_bar):
        return P @ S_bar @ Q.T

    factored, dense_result, times = race(gradient, factored_sandwich, dense_sandwich)
    compare("trace-form loss gradient", n, r, (factored, dense_result), times)
    # the gradient is the one of L = sum_k p_k^T A B q_k: A_bar = P Q^T B^T, B_bar = A^T P Q^T
    np.testing.assert_allclose(dense(factored[0]), P @ (Q.T @ B.T), rtol=1e-9, atol=1e-9)

    # inv: Y = M^-1 gives M_bar = -Y^H Y_bar Y^H = LowRank(-Y^H U, conj(Y) V), two thin products
    M = np.eye(n) + 0.5 * A  # well conditioned
    _, inv_pullback = rrule(np.linalg.inv, M)
    check_pullback("inv pullback", inv_pullback, low_rank(n), n, r)

    # solve: X = M^-1 B gives B_bar = M^-H X_bar and M_bar = -B_bar X^H. The rule applies M^-H as
    # one matrix, formed from the forward pass's LU factors (O(n^3), but once, where the dense
    # cotangent needs a solve with n right-hand sides and an n x n x n product); both
    # cotangents then come out LowRank. Both paths are O(n^3) here (forming M^-H dominates):
    # the gain is a constant factor.
    _, solve_pullback = rrule(np.linalg.solve, M, B)
    check_pullback("solve pullback", solve_pullback, low_rank(n), n, r)

    # A whole program, through the driver: Y = (I + A B)^-1 is two recorded calls (matmul, then
    # inv, with an add of a constant between them that passes the cotangent through). A LowRank
    # Y_bar handed to vjp's pullback goes through inv's pullback and then matmul's, generic paths
    # both: A_bar and B_bar come out LowRank, and no n x n x n product is ever formed.
    _, program_pullback = vjp(lambda A, B: np.linalg.inv(np.eye(n) + A @ B), A, B)
    low_rank_bars, dense_bars, times = race(program_pullback, low_rank(n), None)
    compare("two-step program (vjp)", n, r, (low_rank_bars, dense_bars), times)


if __name__ == "__main__":
    main()
