r"""Rules for scipy.sparse.linalg: ``spsolve``, ``splu`` with ``SuperLU.solve``, ``expm_multiply``.

Every cotangent of the sparse matrix ``A`` stays on its pattern (:mod:`rules.sparse.pattern`)
and is formed as a sampled product, O(nnz k) for k right-hand sides; no dense n x n array is
made.

* ``x = spsolve(A, b)``: :math:`\bar b = A^{-H}\bar x` (``spsolve`` with :math:`A^H`),
  :math:`\bar A = -\bar b\,x^H` on the pattern; :math:`\dot x = A^{-1}(\dot b - \dot A x)`.
* ``lu = splu(A)`` and ``x = lu.solve(b, trans)``: the tangent and cotangent of ``lu`` are those
  of the matrix it factors. ``lu.solve``'s pullback returns :math:`\bar b = A^{-H}\bar x` (the
  transposed solves for ``trans='T'``/``'H'``) and, for ``lu``, the rank-k cotangent
  :math:`-\bar b x^H` (its transposes for ``'T'``/``'H'``, see :func:`superlu_solve_rrule`) as
  an :class:`rules.sparse.factored.OuterProducts`, since ``SuperLU`` does not keep ``A``'s
  pattern; ``splu``'s pullback samples it onto the pattern.
* ``y = expm_multiply(A, B)`` :math:`= e^A B`: :math:`\bar B = e^{A^H}\bar y` and
  :math:`\bar A = \int_0^1 e^{sA^H}\bar y\,(e^{(1-s)A}B)^H\,ds` on the pattern (the adjoint of
  the Fréchet derivative), by Gauss-Legendre quadrature: 10 nodes on each of
  :math:`\lceil\|A\|_1/2\rceil` subintervals of length :math:`h`. The integrand's 20th
  derivative is at most :math:`(2\|A\|_1)^{20}` times its size, so the Gauss-Legendre error
  bound :math:`h^{21}(10!)^4/(21\,(20!)^3)\max|f^{(20)}|` is below :math:`10^{-18}` times
  its size on each piece (:math:`2h\|A\|_1 \le 4`): rounding dominates for any ``A``. The
  pushforward is exact: the top block of :math:`\exp\begin{pmatrix}A & \dot A\\ 0 &
  A\end{pmatrix}` applied to :math:`(\dot B; B)` is :math:`e^A\dot B + L(A, \dot A) B`.
  ``start``/``stop``/``num``/``endpoint`` are refused by name.

References
----------
M. B. Giles (2008), section 2.3.1 (linear solves); A. H. Al-Mohy and N. J. Higham, "Computing
the action of the matrix exponential" (SIAM J. Sci. Comput., 2011) and "Computing the Fréchet
derivative of the matrix exponential" (SIAM J. Matrix Anal. Appl., 2009), the block form; R. M.
Wilcox, "Exponential operators and parameter differentiation" (1967), the integral form.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spl

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array, contiguous
from rules.core.options import refuse
from rules.core.registry import frule, rrule
from rules.sparse.factored import OuterProducts
from rules.sparse.pattern import check_format, sampled_product, sparse_or_array
from tangents import AbstractZero, NoTangent, ProjectTo, unthunk

__all__: list[str] = []

SuperLU = type(spl.splu(sp.eye(1, format="csc")))


def _adjoint(A: Any) -> Any:
    return A.conj().T


def _columns(x: Any, n: int) -> np.ndarray:
    """``x`` as an (n, k) matrix (a vector is one column)."""
    return np.reshape(as_array(x), (n, -1))


def _check_dense_rhs(name: str, b: Any) -> None:
    if sp.issparse(b):
        raise TypeError(f"the rules of {name} support a dense right-hand side only")


# --- spsolve ------------------------------------------------------------------------------------


@rrule.register(spl.spsolve)
def spsolve_rrule(A: Any, b: Any, permc_spec: Any = None, use_umfpack: bool = True) -> Any:
    r"""``x = A^{-1} b``: :math:`\bar b = A^{-H}\bar x`, :math:`\bar A = -\bar b x^H` on the pattern."""
    check_format("scipy.sparse.linalg.spsolve", A)
    _check_dense_rhs("scipy.sparse.linalg.spsolve", b)
    x = spl.spsolve(A, b, permc_spec, use_umfpack)
    n = A.shape[0]
    project_A, project_b = ProjectTo(A), ProjectTo(b)

    def spsolve_pullback(x_bar: Any) -> tuple[Any, Any, Any]:
        X_bar = _columns(as_array_cotangent(x_bar, "scipy.sparse.linalg.spsolve's pullback"), n)
        B_bar = _columns(spl.spsolve(_adjoint(A).tocsc(), X_bar, permc_spec, use_umfpack), n)
        A_bar = sampled_product(A, -B_bar, _columns(x, n))
        return NoTangent(), project_A(A_bar), project_b(B_bar.reshape(np.shape(b)))

    return x, spsolve_pullback


@frule.register(spl.spsolve)
def spsolve_frule(
    tangents: tuple[Any, ...], A: Any, b: Any, permc_spec: Any = None, use_umfpack: bool = True
) -> Any:
    r"""``ẋ = A^{-1}(ḃ - Ȧ x)``."""
    check_format("scipy.sparse.linalg.spsolve", A)
    _check_dense_rhs("scipy.sparse.linalg.spsolve", b)
    x = spl.spsolve(A, b, permc_spec, use_umfpack)
    n = A.shape[0]
    A_dot, b_dot = (unthunk(t) for t in tangents[1:3])
    operation = "scipy.sparse.linalg.spsolve's frule"
    rhs = np.zeros(_columns(x, n).shape, dtype=np.result_type(x, np.float32))
    if not isinstance(b_dot, AbstractZero):
        rhs = rhs + _columns(as_array_cotangent(b_dot, operation), n)
    if not isinstance(A_dot, AbstractZero):
        rhs = rhs - ProjectTo(A)(sparse_or_array(A_dot, operation)) @ _columns(x, n)
    x_dot = _columns(spl.spsolve(A, rhs, permc_spec, use_umfpack), n)
    return x, ProjectTo(x)(x_dot.reshape(np.shape(x)))


# --- splu and SuperLU.solve ---------------------------------------------------------------------


@rrule.register(spl.splu)
def splu_rrule(A: Any, *options: Any, **kwargs: Any) -> Any:
    """``lu = splu(A)``: the cotangent of ``lu`` is that of ``A``, sampled onto its pattern."""
    check_format("scipy.sparse.linalg.splu", A)
    lu = spl.splu(A, *options, **kwargs)
    project_A = ProjectTo(A)

    def splu_pullback(lu_bar: Any) -> tuple[Any, Any]:
        lu_bar = unthunk(lu_bar)
        if isinstance(lu_bar, OuterProducts):
            lu_bar = lu_bar.on_pattern(A)
        return NoTangent(), project_A(
            sparse_or_array(lu_bar, "scipy.sparse.linalg.splu's pullback")
        )

    return lu, splu_pullback


@frule.register(spl.splu)
def splu_frule(tangents: tuple[Any, ...], A: Any, *options: Any, **kwargs: Any) -> Any:
    """``lu = splu(A)``: the tangent of ``lu`` is that of ``A``."""
    check_format("scipy.sparse.linalg.splu", A)
    A_dot = unthunk(tangents[1])
    if not isinstance(A_dot, OuterProducts | AbstractZero):
        A_dot = sparse_or_array(A_dot, "scipy.sparse.linalg.splu's frule")
    return spl.splu(A, *options, **kwargs), ProjectTo(A)(A_dot)


_TRANSPOSED = {"N": "H", "T": "T", "H": "N"}


def _solve_adjoint(lu: Any, x_bar: np.ndarray, trans: str) -> np.ndarray:
    """The cotangent of the right-hand side: the adjoint of ``lu.solve(., trans)`` applied."""
    if trans == "T":  # (A^{-T})^H = conj(A^{-1})
        return np.conj(lu.solve(contiguous(np.conj(x_bar)), "N"))
    return lu.solve(contiguous(x_bar), _TRANSPOSED[trans])


def _apply(A_dot: Any, x: np.ndarray, trans: str) -> Any:
    """``op(Ȧ) x`` for ``op`` the identity, the transpose or the adjoint."""
    if isinstance(A_dot, OuterProducts):
        A_dot = A_dot.dense()
    if trans == "T":
        return A_dot.T @ x
    if trans == "H":
        return A_dot.conj().T @ x
    return A_dot @ x


@rrule.register_method(SuperLU, "solve")
def superlu_solve_rrule(lu: Any, rhs: Any, trans: str = "N") -> Any:
    r"""``x = op(A)^{-1} b`` with ``lu = splu(A)``.

    :math:`\bar b = op(A)^{-H}\bar x`; the cotangent of ``lu`` (of ``A``) is :math:`-\bar b x^H`
    for ``'N'``, :math:`-x^{*}\bar b^T` for ``'T'`` and :math:`-x \bar b^H` for ``'H'``, kept as
    factors (``OuterProducts``).
    """
    x = lu.solve(rhs, trans)
    project_b = ProjectTo(rhs)

    def superlu_solve_pullback(x_bar: Any) -> tuple[Any, Any]:
        g = as_array(as_array_cotangent(x_bar, "SuperLU.solve's pullback"))
        b_bar = _solve_adjoint(lu, g, trans)
        if trans == "N":
            lu_bar = OuterProducts(-b_bar, x)
        elif trans == "T":
            lu_bar = OuterProducts(-np.conj(x), np.conj(b_bar))
        else:
            lu_bar = OuterProducts(-x, b_bar)
        return lu_bar, project_b(b_bar)

    return x, superlu_solve_pullback


@frule.register_method(SuperLU, "solve")
def superlu_solve_frule(tangents: tuple[Any, ...], lu: Any, rhs: Any, trans: str = "N") -> Any:
    r"""``ẋ = op(A)^{-1}(ḃ - op(Ȧ) x)``, with ``Ȧ`` the tangent of ``lu``."""
    x = lu.solve(rhs, trans)
    A_dot, b_dot = (unthunk(t) for t in tangents[:2])
    operation = "SuperLU.solve's frule"
    rhs_dot = np.zeros(np.shape(x), dtype=np.result_type(x, np.float32))
    if not isinstance(b_dot, AbstractZero):
        rhs_dot = rhs_dot + as_array(as_array_cotangent(b_dot, operation))
    if not isinstance(A_dot, AbstractZero):
        rhs_dot = rhs_dot - as_array(_apply(A_dot, x, trans))
    return x, ProjectTo(x)(lu.solve(contiguous(rhs_dot), trans))


# --- expm_multiply ------------------------------------------------------------------------------

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(10)


def _one_norm(A: Any) -> float:
    return float(abs(A).sum(axis=0).max()) if A.shape[0] else 0.0


def _quadrature(A: Any) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on [0, 1]: 10 per subinterval of length <= 2/||A||_1."""
    pieces = max(1, math.ceil(_one_norm(A) / 2))
    edges = np.linspace(0.0, 1.0, pieces + 1)
    half = np.diff(edges) / 2
    nodes = (edges[:-1, None] + half[:, None] * (_NODES[None, :] + 1)).ravel()
    weights = (half[:, None] * _WEIGHTS[None, :]).ravel()
    return nodes, weights


def _check_expm_multiply(A: Any, B: Any, **options: Any) -> None:
    refuse("scipy.sparse.linalg.expm_multiply", **options)
    if sp.issparse(A):
        check_format("scipy.sparse.linalg.expm_multiply", A)
    _check_dense_rhs("scipy.sparse.linalg.expm_multiply", B)


@rrule.register(spl.expm_multiply)
def expm_multiply_rrule(
    A: Any,
    B: Any,
    start: Any = None,
    stop: Any = None,
    num: Any = None,
    endpoint: Any = None,
    traceA: Any = None,
) -> Any:
    r"""``y = e^A B``: :math:`\bar B = e^{A^H}\bar y`, :math:`\bar A` by quadrature on the pattern."""
    _check_expm_multiply(A, B, start=start, stop=stop, num=num, endpoint=endpoint)
    y = spl.expm_multiply(A, B, traceA=traceA)
    n = A.shape[0]
    project_A, project_B = ProjectTo(A), ProjectTo(B)

    def expm_multiply_pullback(y_bar: Any) -> tuple[Any, Any, Any]:
        G = _columns(as_array_cotangent(y_bar, "scipy.sparse.linalg.expm_multiply's pullback"), n)
        A_H = _adjoint(A)
        B_bar = spl.expm_multiply(A_H, G)
        nodes, weights = _quadrature(A)
        # P_i = e^{s_i A^H} G forwards and Q_i = e^{(1 - s_i) A} B backwards, one step at a time
        steps = np.diff(np.concatenate([[0.0], nodes]))
        P, current = [], G
        for step in steps:
            current = spl.expm_multiply(step * A_H, current)
            P.append(current)
        Q, current = [None] * len(nodes), _columns(B, n)
        for i in range(len(nodes) - 1, -1, -1):
            step = (1.0 if i == len(nodes) - 1 else nodes[i + 1]) - nodes[i]
            current = spl.expm_multiply(step * A, current)
            Q[i] = current
        U = np.hstack([w * p for w, p in zip(weights, P, strict=True)])
        V = np.hstack(Q)
        A_bar = sampled_product(A, U, V) if sp.issparse(A) else U @ V.conj().T
        return NoTangent(), project_A(A_bar), project_B(np.reshape(B_bar, np.shape(B)))

    return y, expm_multiply_pullback


@frule.register(spl.expm_multiply)
def expm_multiply_frule(
    tangents: tuple[Any, ...],
    A: Any,
    B: Any,
    start: Any = None,
    stop: Any = None,
    num: Any = None,
    endpoint: Any = None,
    traceA: Any = None,
) -> Any:
    r"""``ẏ`` = the top block of :math:`\exp[[A, \dot A], [0, A]]\,(\dot B; B)`."""
    _check_expm_multiply(A, B, start=start, stop=stop, num=num, endpoint=endpoint)
    y = spl.expm_multiply(A, B, traceA=traceA)
    n = A.shape[0]
    A_dot, B_dot = (unthunk(t) for t in tangents[1:3])
    operation = "scipy.sparse.linalg.expm_multiply's frule"
    B_cols = _columns(B, n)
    top = np.zeros(B_cols.shape, dtype=np.result_type(B_cols, A.dtype, np.float32))
    if not isinstance(B_dot, AbstractZero):
        top = top + _columns(as_array_cotangent(B_dot, operation), n)
    if isinstance(A_dot, AbstractZero):
        y_dot = spl.expm_multiply(A, top)
    else:
        A_dot = ProjectTo(A)(sparse_or_array(A_dot, operation))
        if sp.issparse(A):
            M = sp.block_array([[A, A_dot], [None, A]], format="csr")
        else:
            M = np.block([[A, as_array(A_dot)], [np.zeros_like(A), A]])
        y_dot = spl.expm_multiply(M, np.vstack([top, B_cols]))[:n]
    return y, ProjectTo(y)(np.reshape(y_dot, np.shape(y)))
