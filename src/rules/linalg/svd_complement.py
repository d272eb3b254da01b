r"""``svd(A, full_matrices=True)``: the cotangents and tangents of the complement's vectors.

With ``k = min(m, n)``, the full ``U`` (or ``Vh``) holds ``k`` singular vectors and ``m - k``
(``n - k``) more that only complete a basis: any rotation of them is as good, so a cotangent may
move them only along the thin vectors. :func:`fold` turns full cotangents into thin ones (and
raises :class:`rules.linalg._spectral.GaugeError` for a cotangent that rotates the complement);
:func:`unfold` extends thin tangents to full ones. Used by :mod:`rules.linalg.svd`.
"""

from __future__ import annotations

import numpy as np

from rules.core.dispatch import flat_batch
from rules.core.nesting import contiguous
from rules.linalg._spectral import frobenius, raise_if_gauge_dependent
from rules.linalg._stacks import adjoint

__all__ = ["fold", "unfold"]

_COMPLEMENT = "the basis of the orthogonal complement (the extra vectors of full_matrices=True)"


def fold(
    name: str,
    U: np.ndarray,
    Vh: np.ndarray,
    U_bar: np.ndarray | None,
    Vh_bar: np.ndarray | None,
    k: int,
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Thin cotangents from full ones: the extra vectors' cotangent moves ``U_k`` (``Vh_k``)."""
    if U_bar is not None and U.shape[-1] > k:
        U_k, U_p, X = U[..., :k], U[..., k:], U_bar[..., k:]
        _check(name, U_p, X, adjoint(U_p) @ X)
        U_bar = contiguous(U_bar[..., :k] - U_p @ (adjoint(X) @ U_k))
    if Vh_bar is not None and Vh.shape[-2] > k:
        Vh_k, Vh_p, Y = Vh[..., :k, :], Vh[..., k:, :], Vh_bar[..., k:, :]
        _check(name, Vh_p, Y, Vh_p @ adjoint(Y))
        Vh_bar = contiguous(Vh_bar[..., :k, :] - (Vh_k @ adjoint(Y)) @ Vh_p)
    return U_bar, Vh_bar


def _check(name: str, basis: np.ndarray, X: np.ndarray, G: np.ndarray) -> None:
    """GaugeError when ``G = U_p^H X`` has a skew-Hermitian part (a rotation of the complement)."""
    G = flat_batch(G, 2)
    skew = np.max(np.abs(G - adjoint(G)), axis=(1, 2), initial=0.0) / 2
    stack = flat_batch(X, 2)
    raise_if_gauge_dependent(
        name, {_COMPLEMENT: skew}, lambda rows: frobenius(stack[rows]), basis.real.dtype
    )


def unfold(
    U: np.ndarray, Vh: np.ndarray, U_dot: np.ndarray, Vh_dot: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Full tangents from thin ones: ``U_p_dot = -U_k U_k_dot^H U_p`` (``Vh_p`` likewise)."""
    if U.shape[-1] > k:
        U_k, U_p = U[..., :k], U[..., k:]
        U_dot = np.concatenate([U_dot, -U_k @ (adjoint(U_dot) @ U_p)], axis=-1)
    if Vh.shape[-2] > k:
        Vh_k, Vh_p = Vh[..., :k, :], Vh[..., k:, :]
        Vh_dot = np.concatenate([Vh_dot, -(Vh_p @ adjoint(Vh_dot)) @ Vh_k], axis=-2)
    return U_dot, Vh_dot
