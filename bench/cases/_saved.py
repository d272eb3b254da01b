r"""The LU factors a reference keeps from its forward pass, and solves with ``A^H`` that use them.

This project's solve, det and slogdet pullbacks reuse the LU their forward pass computed; their
numpy references are given the same saved factors (built untimed, in ``Inputs.saved``) so that
neither side factors inside the timed pullback (issue 13, point 7).

One matrix keeps scipy's ``lu_factor(A)`` and solves with LAPACK ``getrs`` (``lu_solve``). A
stack keeps ``(L, U, p)`` with ``A = L[p] U`` (``scipy.linalg.lu(A, p_indices=True)``): numpy and
scipy have no batched solve with given factors (scipy's ``lu_solve`` loops over a stack in
Python, one LAPACK call per matrix, far slower than numpy's batched ``solve`` for small
matrices), so the two triangular solves run as forward and back substitution over the whole
stack, one stacked ``matmul`` per row. ``A^H x = b`` with ``A = L[p] U`` and ``M = L U``:
``M^H z = b`` (``U^H y = b``, then ``L^H z = y``) and ``x = z[p]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

__all__ = ["saved_lu", "solve_adjoint"]


def saved_lu(A: np.ndarray) -> Any:
    """The LU of ``A`` as a user's forward pass keeps it: ``lu_factor`` of one matrix, else ``(L, U, p)``."""
    if A.ndim == 2:
        return sla.lu_factor(A, check_finite=False)
    p, L, U = sla.lu(A, p_indices=True, check_finite=False)
    return L, U, p


def solve_adjoint(saved: Any, B: np.ndarray) -> np.ndarray:
    """``A^-H B`` from the saved LU of ``A`` (``B`` of shape ``(..., n, k)``), no factorization."""
    if len(saved) == 2:  # one matrix: scipy's (lu, piv)
        return sla.lu_solve(saved, B, trans=2, check_finite=False)
    L, U, p = saved
    B = np.broadcast_to(B, U.shape[:-2] + B.shape[-2:])
    n = U.shape[-1]
    U_h, L_h = U.mT.conj(), L.mT.conj()
    y = np.empty(B.shape, np.result_type(U, B))
    for i in range(n):  # U^H y = B, U^H lower triangular
        y[..., i, :] = (B[..., i, :] - (U_h[..., i : i + 1, :i] @ y[..., :i, :])[..., 0, :]) / U_h[
            ..., i, i, None
        ]
    for i in range(n - 2, -1, -1):  # L^H z = y in place, L^H unit upper triangular
        y[..., i, :] -= (L_h[..., i : i + 1, i + 1 :] @ y[..., i + 1 :, :])[..., 0, :]
    return np.take_along_axis(y, p[..., :, None], axis=-2)
