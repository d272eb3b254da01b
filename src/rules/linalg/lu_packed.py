r"""Rules for the packed LU pair: ``scipy.linalg.lu_factor`` and ``scipy.linalg.lu_solve``.

``lu, piv = lu_factor(A)`` packs the factors of ``A = P L U`` (``rules.linalg.lu``) in one matrix:
the strict lower part of ``lu`` is ``L`` (unit diagonal implied), the upper part ``U``; ``piv``
holds LAPACK's 0-based row swaps. The derivatives are those of ``scipy.linalg.lu`` (de Hoog,
Anderssen & Lukas 2011, with its zero-pivot policy), read and written through the packing:
``lu``'s cotangent is both ``L_bar`` (strictly lower) and ``U_bar`` (upper), ``piv`` gets
``NoTangent()``.

``x = lu_solve((lu, piv), b, trans)`` solves ``op(A) x = b`` with the packed factors (Giles 2008,
section 2.2.3): the pullback solves with the same factors, and ``A_bar = -p q^H`` reaches the
packed ``lu`` through ``L_bar = tril(P^T A_bar U^H, -1)`` and ``U_bar = triu(L^H P^T A_bar)``.
Stacks broadcast as in scipy; small stacks solve in one compiled call (``kernels.lu``).

References
----------
.. [1] F. R. de Hoog, R. S. Anderssen, M. A. Lukas, "Differentiation of matrix functionals using
   triangular factorization", Math. Comp. 80 (2011), 1585-1600.
.. [2] M. B. Giles, "An extended collection of matrix derivative results for forward and reverse
   mode algorithmic differentiation", Oxford NA report 08/01 (2008).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from kernels import crossovers
from kernels import lu as klu
from rules.core.broadcasting import unbroadcast
from rules.core.cotangents import as_array_cotangent
from rules.core.dispatch import as_stack, flat_batch, kernel_dtype, kernel_eligible, unstack
from rules.core.nesting import as_array, call
from rules.core.registry import frule, rrule, split_cotangent
from rules.linalg._stacks import adjoint, scipy_outputs
from rules.linalg._systems import Layout, lapack_functions
from rules.linalg.lu import (
    _as_array,
    _check_finite,
    _Factors,
    _inverse,
    _matrix,
    _refuse_overwrite,
    _rows,
    _small_stack,
)
from tangents import AbstractZero, NoTangent, ProjectTo, Tangent, ZeroTangent, unthunk

# --- scipy.linalg.lu_factor ----------------------------------------------------------------------


def _row_order(piv: np.ndarray, m: int) -> np.ndarray:
    """``order`` with ``(P^T A)[i] = A[order[i]]``, from LAPACK's 0-based row swaps ``piv``.

    ``perm = _inverse(order)`` gives ``A = L[perm] @ U``.
    """
    batch = piv.shape[:-1]
    order = np.empty((*batch, m), dtype=np.int32)
    order[...] = np.arange(m, dtype=np.int32)
    flat, swaps = flat_batch(order, 1), flat_batch(piv, 1)
    rows = np.arange(flat.shape[0])
    for j in range(swaps.shape[-1]):  # the swaps in the order getrf made them
        p = swaps[:, j]
        flat[rows, j], flat[rows, p] = flat[rows, p], flat[rows, j]
    return order


def _triangles(lu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The unit lower ``L`` (m, k) and upper ``U`` (k, n) packed in ``lu`` (m, n)."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    lower = np.tri(m, k, -1, dtype=bool)
    L = np.where(lower, lu[..., :k], np.eye(m, k, dtype=lu.dtype))
    U = np.where(np.tri(k, n, -1, dtype=bool), 0, lu[..., :k, :])
    return L, U


def _lu_factor(A: Any, overwrite_a: bool, check_finite: bool) -> Any:
    """``scipy.linalg.lu_factor(A)``: small stacks in one compiled call, the rest by scipy."""
    name = "scipy.linalg.lu_factor"
    _refuse_overwrite(name, overwrite_a)
    dense = _matrix(name, A)
    if dense.ndim == 2 and kernel_eligible(dense) and dense.size:
        # one matrix: LAPACK getrf directly, as scipy calls it, without scipy's Python wrapper
        # (several times the factorization at small n); a singular or non-finite matrix goes
        # through scipy, for its warning or its error
        (getrf,) = lapack_functions(("getrf",), dense.dtype)
        if np.isfinite(dense).all():
            lu, piv, info = getrf(dense)
            if info == 0:
                return lu, piv
        return call(sla.lu_factor, dense, check_finite=check_finite)
    stack = _small_stack(dense)
    if stack is None:
        return call(sla.lu_factor, dense, check_finite=check_finite)
    if check_finite:
        _check_finite(name, stack)
    lu, piv = klu.lu_factor_batched(stack)
    return scipy_outputs(unstack(lu, dense.shape), piv.reshape(dense.shape[:-1]), stack=True)


def _unpack(lu: np.ndarray, piv: np.ndarray) -> _Factors:
    """The factors stored in ``lu_factor``'s packed ``lu`` and ``piv``."""
    L, U = _triangles(lu)
    perm = _inverse(_row_order(piv, lu.shape[-2]))
    return _Factors("scipy.linalg.lu_factor", perm, L, U)


@rrule.register(sla.lu_factor)
def lu_factor_rrule(
    A: Any, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Any, Any]:
    """Reverse rule for ``lu, piv = scipy.linalg.lu_factor(A)``; square, tall, wide, stacks.

    ``lu`` packs ``L`` (strictly below the diagonal) and ``U`` (on and above it), so its
    cotangent is read as both ``L_bar`` and ``U_bar``; ``piv`` gets ``NoTangent()`` and its
    cotangent is ignored.
    """
    y = _lu_factor(A, overwrite_a, check_finite)
    lu, piv = y
    factors = _unpack(lu, piv)
    project_A = ProjectTo(A)
    k = factors.L.shape[-1]

    def lu_factor_pullback(y_bar: Any) -> tuple[Any, Any]:
        lu_bar = _as_array(
            "scipy.linalg.lu_factor pullback",
            split_cotangent(y_bar, 2)[0],
            lu.shape,
            "the cotangent of lu",
        )
        if lu_bar is None:
            return NoTangent(), ZeroTangent()
        A_bar = factors.pullback(lu_bar[..., :k], lu_bar[..., :k, :])
        return NoTangent(), project_A(A_bar)

    return y, lu_factor_pullback


@frule.register(sla.lu_factor)
def lu_factor_frule(
    tangents: tuple[Any, ...], A: Any, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Any, Any]:
    """Forward rule for ``scipy.linalg.lu_factor``: ``lu_dot`` packs ``L_dot`` and ``U_dot``."""
    y = _lu_factor(A, overwrite_a, check_finite)
    lu, piv = y
    factors = _unpack(lu, piv)
    A_dot = _as_array(
        "scipy.linalg.lu_factor pushforward", tangents[1], factors.shape, "the tangent"
    )
    L_dot, U_dot = factors.pushforward(A_dot)
    k = L_dot.shape[-1]
    lu_dot = np.zeros(lu.shape, dtype=L_dot.dtype)
    lu_dot[..., :k] = L_dot  # strictly lower
    lu_dot[..., :k, :] += U_dot  # upper
    return y, Tangent(tuple, lu_dot, NoTangent())


# --- scipy.linalg.lu_solve -----------------------------------------------------------------------


def _solve(lu: np.ndarray, piv: np.ndarray, B: np.ndarray, trans: int) -> np.ndarray:
    """``op(A)^-1 B`` for stacks ``B`` (..., n, r) from the factors, broadcast against ``lu``.

    One matrix: LAPACK ``getrs``; a stack of small matrices: ``kernels.lu.lu_solve_batched``
    (one compiled call instead of scipy's Python loop over the stack).
    """
    n = lu.shape[-1]
    if (lu.ndim == 2 and B.ndim == 2) or n > crossovers.LU_STACK_MAX_N:
        return call(sla.lu_solve, (lu, piv), B, trans=trans, check_finite=False)
    batch = np.broadcast_shapes(lu.shape[:-2], piv.shape[:-1], B.shape[:-2])
    dtype = kernel_dtype(lu.dtype, B.dtype)
    if dtype is None:
        return call(sla.lu_solve, (lu, piv), B, trans=trans, check_finite=False)
    lu_k = _broadcast(lu, (*batch, n, n), dtype)
    piv_k = _broadcast(piv, (*batch, n), np.dtype(np.int32))
    B_k = _broadcast(B, (*batch, *B.shape[-2:]), dtype)
    X = klu.lu_solve_batched(as_stack(lu_k), flat_batch(piv_k, 1), as_stack(B_k), trans)
    return unstack(X, B_k.shape)


def _broadcast(x: np.ndarray, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
    """``x`` broadcast to ``shape`` as a writeable C-contiguous array of ``dtype`` (for kernels)."""
    if x.shape == shape and x.dtype == dtype and x.flags.c_contiguous and x.flags.writeable:
        return x
    out = np.empty(shape, dtype=dtype)
    out[...] = x
    return out


_ADJOINT_TRANS = {0: 2, 2: 0}


def _check_solve(
    lu_and_piv: Any, b: Any, trans: int, overwrite_b: bool
) -> tuple[np.ndarray, np.ndarray]:
    name = "scipy.linalg.lu_solve"
    _refuse_overwrite(name, overwrite_b)
    if trans not in (0, 1, 2):
        raise ValueError(f"{name}: trans must be 0, 1 or 2, got {trans!r}")
    lu, piv = lu_and_piv
    lu, piv = as_array(lu), as_array(piv)
    if lu.ndim < 2 or lu.shape[-1] != lu.shape[-2]:
        raise ValueError(f"{name}: lu must be a square matrix (or a stack), got shape {lu.shape}")
    if piv.ndim < 1 or piv.shape[-1] != lu.shape[-1]:
        raise ValueError(
            f"{name}: piv of shape {piv.shape} does not match lu of shape {lu.shape} "
            "(piv must be (..., n) for lu (..., n, n))"
        )
    Layout(name, lu.shape, np.shape(b), "lu")  # b's shape against lu's, a message naming both
    return lu, piv


@rrule.register(sla.lu_solve)
def lu_solve_rrule(
    lu_and_piv: Any,
    b: Any,
    trans: int = 0,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> tuple[np.ndarray, Any]:
    r"""Reverse rule for ``x = scipy.linalg.lu_solve((lu, piv), b, trans)``: ``op(A) x = b``.

    With ``A = P L U`` read from ``lu`` and ``op`` the identity, transpose or adjoint for
    ``trans`` 0, 1, 2 (Giles 2008):

    .. math::

        \bar b = \mathrm{op}(A)^{-H} \bar x, \qquad \overline{\mathrm{op}(A)} = -\bar b x^H,

    solved with the same factors (no refactorization); ``A_bar = -p q^H`` then reaches the
    packed factors as :math:`\bar L = \mathrm{tril}(P^T \bar A U^H, -1)`, :math:`\bar U =
    \mathrm{triu}(L^H P^T \bar A)`, kept rank-``r`` (``p = b_bar, q = x`` for ``trans=0``;
    ``x, b_bar`` for 2; ``conj(x), conj(b_bar)`` for 1). ``piv`` gets ``NoTangent()``. Stacks
    broadcast as scipy's batching does, and cotangents are summed back over broadcast axes. A
    singular ``lu`` gives inf/nan here as in the primal (no exception).
    """
    lu, piv = _check_solve(lu_and_piv, b, trans, overwrite_b)
    x = call(sla.lu_solve, (lu, piv), b, trans=trans, check_finite=check_finite)
    project_lu, project_b = ProjectTo(lu), ProjectTo(b)
    b_shape = np.shape(b)
    vector = len(b_shape) == 1

    def lu_solve_pullback(x_bar: Any) -> tuple[Any, Any, Any]:
        x_bar = _as_array("scipy.linalg.lu_solve pullback", x_bar, x.shape, "the cotangent")
        X, X_bar = (x[..., None], x_bar[..., None]) if vector else (x, x_bar)
        if trans == 1:  # (A^T)^-H x_bar = conj(A^-1 conj(x_bar))
            B_bar = _solve(lu, piv, X_bar.conj(), 0).conj()
            p, q = X.conj(), B_bar.conj()
        else:
            B_bar = _solve(lu, piv, X_bar, _ADJOINT_TRANS[trans])
            p, q = (B_bar, X) if trans == 0 else (X, B_bar)
        lu_bar = _packed_cotangent(lu, piv, p, q)  # for A_bar = -p q^H
        b_bar = unbroadcast(B_bar[..., 0] if vector else B_bar, b_shape)
        return (
            NoTangent(),
            Tangent(tuple, project_lu(unbroadcast(lu_bar, lu.shape)), NoTangent()),
            project_b(b_bar),
        )

    return x, lu_solve_pullback


def _packed_cotangent(lu: np.ndarray, piv: np.ndarray, p: np.ndarray, q: np.ndarray) -> Any:
    """The cotangent of the packed ``lu`` for ``A_bar = -p q^H``: ``L_bar + U_bar``.

    ``L_bar = tril(P^T A_bar U^H, -1)`` and ``U_bar = triu(L^H P^T A_bar)`` fill the strict
    lower and the upper part of ``lu`` respectively, so one ``where`` packs them.
    """
    L, U = _triangles(lu)
    order = np.broadcast_to(_row_order(piv, lu.shape[-1]), (*p.shape[:-2], lu.shape[-1]))
    Pp = _rows(p, order)  # P^T p
    lower = np.tri(*lu.shape[-2:], -1, dtype=bool)
    return -np.where(lower, Pp @ adjoint(U @ q), (adjoint(L) @ Pp) @ adjoint(q))


@frule.register(sla.lu_solve)
def lu_solve_frule(
    tangents: tuple[Any, ...],
    lu_and_piv: Any,
    b: Any,
    trans: int = 0,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> tuple[np.ndarray, Any]:
    r"""Forward rule: :math:`\dot x = \mathrm{op}(A)^{-1} (\dot b - \mathrm{op}(\dot A) x)`.

    ``A_dot = P (L_dot U + L U_dot)`` with ``L_dot``, ``U_dot`` the strict lower and upper parts
    of the tangent of ``lu``.
    """
    lu, piv = _check_solve(lu_and_piv, b, trans, overwrite_b)
    x = call(sla.lu_solve, (lu, piv), b, trans=trans, check_finite=check_finite)
    _, pair_dot, b_dot = (unthunk(t) for t in tangents)
    lu_dot = unthunk(split_cotangent(pair_dot, 2)[0])
    vector = np.ndim(b) == 1  # scipy's rule: b's core is (n,) only when b is 1-D
    X = x[..., None] if vector else x
    rhs: Any = ZeroTangent()
    if not isinstance(unthunk(b_dot), AbstractZero):
        b_dot = as_array(as_array_cotangent(b_dot, "scipy.linalg.lu_solve's pushforward"))
        rhs = np.broadcast_to(b_dot[..., None] if vector else b_dot, X.shape)
    if not isinstance(lu_dot, AbstractZero):
        lu_dot = as_array(as_array_cotangent(lu_dot, "scipy.linalg.lu_solve's pushforward"))
        L, U = _triangles(lu)
        L_dot, U_dot = _triangles(lu_dot)
        perm = _inverse(_row_order(piv, lu.shape[-1]))
        A_dot = _rows((L_dot - np.eye(lu.shape[-1])) @ U + L @ U_dot, perm)  # P (dL U + L dU)
        op_A_dot = {0: A_dot, 1: A_dot.mT, 2: adjoint(A_dot)}[trans]
        rhs = rhs - op_A_dot @ X
    if isinstance(rhs, AbstractZero):
        return x, ZeroTangent()
    dtype = np.result_type(x, rhs)
    X_dot = _solve(lu, piv, as_array(rhs, dtype=dtype), trans)
    return x, ProjectTo(x)(X_dot[..., 0] if vector else X_dot)
