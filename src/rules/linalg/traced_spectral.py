r"""The eigh and svd pullbacks on traced operands, and the masked inverses they need.

A nested differentiation (``hessian``, ``grad(grad(f))``; :mod:`rules.core.nesting`) runs these
pullbacks on traced values, which the kernels cannot take. The formulas are the rule modules'
(:mod:`rules.linalg.eigh`, :mod:`rules.linalg.svd`), written with operations that are rules, with
two differences:

* masks come from the plain values, and a masked entry divides by one instead of by its
  (near-zero) denominator: :math:`k / (x + (1 - k))` for a 0/1 mask :math:`k`. ``np.where`` of
  ``1/x`` would give the same values, but ``0 * inf`` in its derivative;
* no in-place writes (a diagonal is added as ``w_bar * eye``).

The rule modules run their gauge and tie checks on the plain values before calling these.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.nesting import innermost_value
from rules.linalg._stacks import adjoint

__all__ = ["eigh_pullback", "inverse_where", "masked_inverse_traced", "svd_pullback"]


def inverse_where(x: Any, keep: np.ndarray) -> Any:
    """``1/x`` where the plain 0/1 mask ``keep`` is 1, ``0`` where it is 0; no ``0 * inf`` to differentiate."""
    return keep / (x + (1 - keep))


def masked_inverse_traced(d: Any, tol: np.ndarray) -> Any:
    """``1/d`` with 0 where ``|d| <= tol`` (broadcast over the last two axes), for a traced ``d``."""
    keep = (np.abs(innermost_value(d)) > tol[..., None, None]).astype(d.dtype)
    return inverse_where(d, keep)


def eigh_pullback(w: Any, V: Any, w_bar: Any, V_bar: Any, tol: np.ndarray) -> Any:
    """``A_bar = V (F o sym-skew(V^H V_bar) + diag(w_bar)) V^H``, Hermitian part; ``None``: zero.

    ``tol`` is the eigenvalue gap below which ``F_ij = 1/(w_j - w_i)`` is masked, per matrix.
    """
    Vh = adjoint(V)
    K: Any = 0.0
    if V_bar is not None:
        M = Vh @ V_bar
        F = masked_inverse_traced(w[..., None, :] - w[..., :, None], tol)  # F_ij = 1/(w_j - w_i)
        K = F * (0.5 * (M - adjoint(M)))
    if w_bar is not None:
        K = K + w_bar[..., None, :] * np.eye(V.shape[-1], dtype=innermost_value(w).dtype)
    A_bar = V @ K @ Vh
    return 0.5 * (A_bar + adjoint(A_bar))


def svd_pullback(
    U: Any, s: Any, Vh: Any, U_bar: Any, s_bar: Any, Vh_bar: Any, tol: np.ndarray
) -> Any:
    """:func:`rules.linalg.svd.svd_pullback_formula` for traced operands; ``None``: zero.

    ``tol`` is the singular-value threshold of the masks, per matrix.
    """
    s0 = innermost_value(s)
    m, k, n = U.shape[-2], s.shape[-1], Vh.shape[-1]
    Fm = masked_inverse_traced(s[..., None, :] - s[..., :, None], tol)
    small = s0 <= tol[..., None]
    Fp = inverse_where(
        s[..., None, :] + s[..., :, None],
        (~(small[..., None, :] & small[..., :, None])).astype(s0.dtype),
    )
    s_inv = inverse_where(s, (~small).astype(s0.dtype))
    J: Any = 0.0 if U_bar is None else adjoint(U) @ U_bar  # U^H U_bar
    K: Any = 0.0 if Vh_bar is None else Vh @ adjoint(Vh_bar)  # V^H V_bar
    X: Any = 0.0
    if U_bar is not None or Vh_bar is not None:
        Ja = 0.0 if U_bar is None else J - adjoint(J)
        Ka = 0.0 if Vh_bar is None else K - adjoint(K)
        X = 0.5 * (Fm * (Ja + Ka) + Fp * (Ja - Ka))
    if s_bar is not None:
        X = X + s_bar[..., None, :] * np.eye(k, dtype=s0.dtype)
    A_bar = U @ X @ Vh
    if m > k and U_bar is not None:
        A_bar = A_bar + ((U_bar - U @ J) * s_inv[..., None, :]) @ Vh
    if n > k and Vh_bar is not None:
        A_bar = A_bar + U @ (s_inv[..., :, None] * (Vh_bar - adjoint(K) @ Vh))
    return A_bar
