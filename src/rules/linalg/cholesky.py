r"""Rules for the Cholesky factorization and the solve that reuses it.

Functions: ``np.linalg.cholesky``, ``scipy.linalg.cholesky``, ``scipy.linalg.cho_factor`` and
``scipy.linalg.cho_solve``.

For ``A = L L^H`` with ``L`` lower triangular (I. Murray, "Differentiation of the Cholesky
decomposition", arXiv:1602.07527, 2016, section 3):

.. math::

    \bar A = \mathrm{sym}\big(L^{-H}\, \Phi(L^H \bar L)\, L^{-1}\big), \qquad
    \dot L = L\, \Phi\big(L^{-1} \dot A L^{-H}\big),

where :math:`\Phi` keeps the lower triangle and halves the (real part of the) diagonal and
``sym(X) = (X + X^H)/2``. Upper factors ``U = L^H`` use ``L_bar = U_bar^H``.

Conventions: the input is read as a symmetric (Hermitian) matrix, so its cotangent is the
symmetric ``sym(G)`` (DESIGN.md section 3, as JAX and PyTorch do) and forward tangents are
symmetrised first.

Paths (chosen by :func:`rules.core.dispatch.paths`):

* algebra path: none; the formula needs elementwise access (``Phi``), so cotangents must be
  arrays (:func:`rules.core.cotangents.as_array_cotangent`; other tangent types raise
  ``TypeError``).
* array-formula path: the formula with scipy's triangular solves, for dtypes without kernels.
* kernel path: the loop kernels up to ``kernels.crossovers.CHOLESKY_PULLBACK_MAX_N``
  (``CHOLESKY_PUSHFORWARD_MAX_N``), one matrix or a stack in one compiled call; the blocked
  level-3 BLAS algorithm per matrix above (no explicit inverse). The forward factorization of
  one matrix up to ``CHOLESKY_FORWARD_SINGLE_MAX_N`` calls LAPACK's ``?potrf`` directly
  (numpy's wrapper costs more than the factorization there); it reads the same triangle as
  numpy and agrees with it to rounding. A C-contiguous stack up to
  ``CHOLESKY_FORWARD_STACK_MAX_N`` is factored in one compiled call (``cholesky_factor_batched``:
  same triangle, NaN in gives NaN out, a failed pivot raises ``LinAlgError``). Other stacks,
  other dtypes and failures go through ``np.linalg.cholesky``, whose errors and NaN results the
  rules keep.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from kernels import cholesky as kcholesky
from kernels import cholesky_factor as kfactor
from kernels import crossovers
from rules.core.broadcasting import unbroadcast
from rules.core.cotangents import as_array_cotangent
from rules.core.dispatch import (
    KERNEL_DTYPES,
    as_stack,
    kernel_array,
    kernel_eligible,
    paths,
    unstack,
)
from rules.core.nesting import as_array, call, contiguous, is_traced
from rules.core.registry import frule, rrule, split_cotangent
from rules.linalg._stacks import adjoint, check_shape, scipy_outputs, square_matrices
from rules.linalg._systems import Layout, check_scipy_options, potrf_factor
from tangents import AbstractZero, NoTangent, ProjectTo, Tangent, ZeroTangent, unthunk


def _factor(name: str, A: Any, lower: bool) -> np.ndarray:
    """The lower (or upper) Cholesky factor of the dense ``A``, with errors naming ``name``.

    Kernel path: one small matrix through LAPACK ``potrf`` directly
    (:func:`rules.linalg._systems.potrf_factor`); array-formula path: ``np.linalg.cholesky``, whose
    errors and NaN results the rules keep (a failed ``potrf`` goes there for numpy's message).
    A traced ``A`` (a nested differentiation) is factored by the traced call.
    """
    if is_traced(A):
        return call(np.linalg.cholesky, A, upper=not lower)
    if (
        kernel_eligible(A)
        and A.ndim == 2
        and 0 < A.shape[0] == A.shape[1] <= crossovers.CHOLESKY_FORWARD_SINGLE_MAX_N
    ):
        F = potrf_factor(A, lower)
        if F is not None:
            return F
    dense = square_matrices(name, A)
    if (
        dense.ndim > 2
        and 0 < dense.shape[-1] <= crossovers.CHOLESKY_FORWARD_STACK_MAX_N
        and (dense.dtype in KERNEL_DTYPES)
    ):  # a stack of small matrices: one compiled call instead of LAPACK per matrix
        L, info = kfactor.cholesky_factor_batched(as_stack(kernel_array(dense)), lower)
        if info.any():
            raise np.linalg.LinAlgError(
                f"{name}: Matrix is not positive definite (input of shape {dense.shape})"
            )
        L = unstack(L, dense.shape)
        return L if lower else contiguous(adjoint(L))
    try:
        return np.linalg.cholesky(dense, upper=not lower)
    except np.linalg.LinAlgError as error:
        raise np.linalg.LinAlgError(f"{name}: {error} (input of shape {dense.shape})") from None


def _phi(X: np.ndarray) -> np.ndarray:
    """Lower triangle of ``X`` with the real part of its diagonal halved (a new array).

    Written without an in-place write for a traced ``X`` (a nested differentiation).
    """
    if is_traced(X):
        half_diagonal = np.real(X) * (0.5 * np.eye(X.shape[-1], dtype=np.real(X).dtype))
        return np.tril(X, -1) + half_diagonal
    P = np.tril(X)
    n = P.shape[-1]
    diagonal = P[..., np.arange(n), np.arange(n)]
    P[..., np.arange(n), np.arange(n)] = 0.5 * diagonal.real
    return P


def _sym(X: np.ndarray) -> np.ndarray:
    return 0.5 * (X + adjoint(X))


def _pullback_formula(L: np.ndarray, L_bar: np.ndarray) -> np.ndarray:
    """Array-formula path: ``sym(L^-H Phi(L^H L_bar) L^-1)`` with scipy's triangular solves."""
    P = _phi(adjoint(L) @ L_bar)
    Y = call(sla.solve_triangular, L, P, lower=True, trans="C")  # L^-H P
    S = adjoint(call(sla.solve_triangular, L, adjoint(Y), lower=True, trans="C"))  # L^-H P L^-1
    return _sym(S)


def _pushforward_formula(L: np.ndarray, A_dot: np.ndarray) -> np.ndarray:
    """Array-formula path: ``L Phi(L^-1 A_dot L^-H)`` with scipy's triangular solves."""
    X = call(sla.solve_triangular, L, A_dot, lower=True)  # L^-1 A_dot
    X = adjoint(call(sla.solve_triangular, L, adjoint(X), lower=True))  # L^-1 A_dot L^-H
    return L @ _phi(X)


# Kernel path: the loop kernels (one matrix, or a stack in one compiled call) up to the
# crossover, the blocked level-3 BLAS algorithm per matrix above (no explicit inverse).
_PULLBACK = paths(
    formula=_pullback_formula,
    single=kcholesky.cholesky_pullback,
    batched=kcholesky.cholesky_pullback_batched,
    large=kcholesky.cholesky_pullback_blocked,
    single_max_n="CHOLESKY_PULLBACK_MAX_N",
    stack_max_n="CHOLESKY_PULLBACK_MAX_N",
)
_PUSHFORWARD = paths(
    formula=_pushforward_formula,
    single=kcholesky.cholesky_pushforward,
    batched=kcholesky.cholesky_pushforward_batched,
    large=kcholesky.cholesky_pushforward_blocked,
    single_max_n="CHOLESKY_PUSHFORWARD_MAX_N",
    stack_max_n="CHOLESKY_PUSHFORWARD_MAX_N",
)


def cholesky_pullback_array(L: np.ndarray, L_bar: np.ndarray) -> np.ndarray:
    """``A_bar = sym(L^-H Phi(L^H L_bar) L^-1)`` for lower ``L`` and an ndarray ``L_bar``."""
    return _PULLBACK(L, L_bar)


def cholesky_pushforward_array(L: np.ndarray, A_dot: np.ndarray) -> np.ndarray:
    """``L_dot = L Phi(L^-1 A_dot L^-H)`` for lower ``L`` and a Hermitian ndarray ``A_dot``."""
    return _PUSHFORWARD(L, A_dot)


def _lower_cotangent(name: str, F_bar: Any, shape: tuple[int, ...], lower: bool) -> np.ndarray:
    """The cotangent of the lower factor, from that of the returned (lower or upper) one."""
    if type(F_bar) is not np.ndarray:
        F_bar = as_array(as_array_cotangent(F_bar, f"{name}'s pullback (triangular parts)"))
    check_shape(f"{name} pullback", "the cotangent", F_bar, shape)
    return F_bar if lower else adjoint(F_bar)


def _tangent_of_factor(L: np.ndarray, A_dot: Any, lower: bool) -> np.ndarray:
    A_dot = _sym(as_array_cotangent(A_dot, "the Cholesky pushforward"))
    L_dot = cholesky_pushforward_array(L, A_dot.astype(L.dtype, copy=False))
    return L_dot if lower else adjoint(L_dot)


def _cholesky_rule(name: str, A: Any, lower: bool) -> tuple[np.ndarray, Any]:
    F = _factor(name, A, lower)
    L = F if lower else adjoint(F)
    project_A = ProjectTo(A)
    no_tangent = NoTangent()
    pullback_of_factor = _PULLBACK.given(L)  # L's path decided once, in the forward pass

    def cholesky_pullback(F_bar: Any) -> tuple[Any, Any]:
        if lower and type(F_bar) is np.ndarray and F_bar.shape == L.shape:
            L_bar = F_bar  # the hot case: no conversion, no shape message to build
        else:
            L_bar = _lower_cotangent(name, unthunk(F_bar), F.shape, lower)
        return no_tangent, project_A(pullback_of_factor(L_bar))

    return F, cholesky_pullback


# --- np.linalg.cholesky --------------------------------------------------------------------------


@rrule.register(np.linalg.cholesky)
def cholesky_rrule(A: Any, /, *, upper: bool = False) -> tuple[np.ndarray, Any]:
    """Reverse rule for ``np.linalg.cholesky(A, upper=False)``; stacks ``(..., n, n)`` too.

    See the module docstring for the formula and the symmetric-cotangent convention.
    """
    return _cholesky_rule("np.linalg.cholesky", A, lower=not upper)


@frule.register(np.linalg.cholesky)
def cholesky_frule(tangents: tuple[Any, Any], A: Any, /, *, upper: bool = False) -> tuple[Any, Any]:
    r"""Forward rule for ``np.linalg.cholesky``: :math:`\dot L = L \Phi(L^{-1} \dot A L^{-H})`."""
    F = _factor("np.linalg.cholesky", A, lower=not upper)
    L = adjoint(F) if upper else F
    return F, _tangent_of_factor(contiguous(L), unthunk(tangents[1]), lower=not upper)


# --- scipy.linalg.cholesky -----------------------------------------------------------------------


@rrule.register(sla.cholesky)
def scipy_cholesky_rrule(A: Any, lower: bool = False, **kwargs: Any) -> tuple[np.ndarray, Any]:
    """Reverse rule for ``scipy.linalg.cholesky(A, lower=False)`` (upper factor by default).

    ``overwrite_a`` is refused (a rule never modifies its input); ``check_finite`` is honoured.
    """
    check_scipy_options("scipy.linalg.cholesky", (A,), kwargs)
    return _cholesky_rule("scipy.linalg.cholesky", A, lower=lower)


@frule.register(sla.cholesky)
def scipy_cholesky_frule(
    tangents: tuple[Any, Any], A: Any, lower: bool = False, **kwargs: Any
) -> tuple[Any, Any]:
    """Forward rule for ``scipy.linalg.cholesky``."""
    check_scipy_options("scipy.linalg.cholesky", (A,), kwargs)
    F = _factor("scipy.linalg.cholesky", A, lower)
    L = contiguous(F if lower else adjoint(F))
    return F, _tangent_of_factor(L, unthunk(tangents[1]), lower)


# --- scipy.linalg.cho_factor / cho_solve ---------------------------------------------------------


def _cho_factor(A: Any, lower: bool, kwargs: dict[str, Any]) -> tuple[np.ndarray, Any]:
    """``scipy.linalg.cho_factor(A, lower)``, with errors naming the function and the shape."""
    name = "scipy.linalg.cho_factor"
    check_scipy_options(name, (A,), kwargs)
    dense = square_matrices(name, A)
    try:
        return call(sla.cho_factor, dense, lower=lower, check_finite=False)
    except np.linalg.LinAlgError as error:
        raise np.linalg.LinAlgError(f"{name}: {error} (input of shape {dense.shape})") from None


@rrule.register(sla.cho_factor)
def cho_factor_rrule(
    A: Any, lower: bool = False, **kwargs: Any
) -> tuple[tuple[np.ndarray, bool], Any]:
    """Reverse rule for ``c, lower = scipy.linalg.cho_factor(A, lower=False)``.

    ``c`` holds the factor in one triangle and a copy of ``A``'s other triangle in the rest (as
    scipy returns it), so the cotangent of that other part flows straight back to ``A``; the
    result is symmetrised like every Cholesky cotangent.
    """
    c, lower_out = _cho_factor(A, lower, kwargs)
    F = np.tril(c) if lower else np.triu(c)
    L = contiguous(F if lower else adjoint(F))
    project_A = ProjectTo(A)

    def cho_factor_pullback(y_bar: Any) -> tuple[Any, Any]:
        c_bar = unthunk(split_cotangent(y_bar, 2)[0])
        if isinstance(c_bar, AbstractZero):
            return NoTangent(), c_bar
        c_bar = as_array_cotangent(c_bar, "scipy.linalg.cho_factor's pullback")
        check_shape("scipy.linalg.cho_factor pullback", "the cotangent of c", c_bar, c.shape)
        factor_bar = np.tril(c_bar) if lower else np.triu(c_bar)
        copied_bar = np.triu(c_bar, 1) if lower else np.tril(c_bar, -1)
        L_bar = factor_bar if lower else adjoint(factor_bar)
        A_bar = cholesky_pullback_array(L, as_array(L_bar, dtype=L.dtype)) + _sym(copied_bar)
        return NoTangent(), project_A(A_bar)

    return scipy_outputs(c, lower_out, stack=c.ndim > 2), cho_factor_pullback


@frule.register(sla.cho_factor)
def cho_factor_frule(
    tangents: tuple[Any, Any], A: Any, lower: bool = False, **kwargs: Any
) -> tuple[Any, Any]:
    """Forward rule for ``scipy.linalg.cho_factor``: the factor's tangent plus the copied part."""
    c, lower_out = _cho_factor(A, lower, kwargs)
    F = np.tril(c) if lower else np.triu(c)
    L = contiguous(F if lower else adjoint(F))
    A_dot = _sym(as_array_cotangent(unthunk(tangents[1]), "scipy.linalg.cho_factor's pushforward"))
    F_dot = _tangent_of_factor(L, A_dot, lower)
    copied_dot = np.triu(A_dot, 1) if lower else np.tril(A_dot, -1)
    return scipy_outputs(c, lower_out, stack=c.ndim > 2), Tangent(
        tuple, (F_dot + copied_dot).astype(c.dtype, copy=False), NoTangent()
    )


def _factor_of(c: np.ndarray, lower: bool) -> np.ndarray:
    """The lower factor ``L`` (``A = L L^H``) stored in the ``cho_factor`` output ``c``."""
    return contiguous(np.tril(c) if lower else adjoint(np.triu(c)))


def _cho_solve_operands(
    c_and_lower: Any, b: Any, kwargs: dict[str, Any]
) -> tuple[np.ndarray, Any, bool, np.ndarray]:
    """``(c, lower, is_lower, x)``: the checked operands of ``cho_solve`` and its solution.

    ``lower`` is passed to scipy as given; ``is_lower`` is it as one flag: for a stack of factors
    scipy's ``cho_factor`` returns one flag per matrix (a bool array), all equal. A stack whose
    flags differ is refused. ``b`` is ``(n,)`` or ``(..., n, k)``, its batch axes broadcasting
    against those of ``c`` (scipy's rule).
    """
    name = "scipy.linalg.cho_solve"
    c, lower = c_and_lower
    c = as_array(c)
    check_scipy_options(name, (c, b), kwargs)  # check_finite covers the factor too, as in scipy
    flags = as_array(lower, dtype=bool)
    if flags.size == 0 or not (flags.all() or not flags.any()):
        raise ValueError(
            f"{name}: the factors of a stack must all be lower or all upper, got lower={lower!r}"
        )
    square_matrices(name, c)
    Layout(name, c.shape, np.shape(b), "c")  # b's shape against c's, a message naming both
    x = call(sla.cho_solve, (c, lower), b, check_finite=False)
    return c, lower, bool(flags.flat[0]), x


@rrule.register(sla.cho_solve)
def cho_solve_rrule(
    c_and_lower: tuple[np.ndarray, Any], b: Any, **kwargs: Any
) -> tuple[np.ndarray, Any]:
    r"""Reverse rule for ``x = scipy.linalg.cho_solve((c, lower), b)``, i.e. ``x = A^{-1} b``.

    With ``A = L L^H`` read from the factor triangle of ``c``:
    :math:`\bar b = A^{-1} \bar x` (solved with the same factor, no refactorization),
    :math:`\bar A = -\bar b x^H`, and through ``dA = dL L^H + L dL^H`` the factor gets
    :math:`\bar L = \mathrm{tril}((\bar A + \bar A^H) L)` (``U_bar = triu(U (A_bar + A_bar^H))``
    for an upper factor). The rest of ``c`` is not read and gets a zero cotangent; ``lower``
    gets ``NoTangent()``. Stacks broadcast as in scipy (a ``b`` of shape ``(n,)`` is one vector,
    ``(..., n, k)`` a stack), and the cotangents are summed back over broadcast axes: one factor
    with a stack of right-hand sides gets ``A_bar`` summed over the stack.
    """
    c, lower, is_lower, x = _cho_solve_operands(c_and_lower, b, kwargs)
    project_b, project_c = ProjectTo(b), ProjectTo(c)
    b_shape = np.shape(b)
    vector = len(b_shape) == 1
    L = _factor_of(c, is_lower)

    def cho_solve_pullback(x_bar: Any) -> tuple[Any, Any, Any]:
        x_bar = as_array_cotangent(unthunk(x_bar), "scipy.linalg.cho_solve's pullback")
        check_shape("scipy.linalg.cho_solve pullback", "the cotangent", x_bar, x.shape)
        X, X_bar = (x[..., None], as_array(x_bar)[..., None]) if vector else (x, x_bar)
        B_bar = call(sla.cho_solve, (c, lower), X_bar, check_finite=False)  # in X's shape
        A_bar = unbroadcast(-(B_bar @ adjoint(X)), c.shape)  # summed over the broadcast stack
        G = A_bar + adjoint(A_bar)
        c_bar = np.tril(G @ L) if is_lower else np.triu(adjoint(L) @ G)
        b_bar = unbroadcast(B_bar[..., 0] if vector else B_bar, b_shape)
        return NoTangent(), Tangent(tuple, project_c(c_bar), NoTangent()), project_b(b_bar)

    return x, cho_solve_pullback


@frule.register(sla.cho_solve)
def cho_solve_frule(
    tangents: tuple[Any, Any, Any], c_and_lower: tuple[np.ndarray, Any], b: Any, **kwargs: Any
) -> tuple[Any, Any]:
    r"""Forward rule for ``x = cho_solve((c, lower), b)``.

    :math:`\dot x = A^{-1}(\dot b - \dot A x)` with ``A_dot`` from the factor's tangent.
    """
    c, lower, is_lower, x = _cho_solve_operands(c_and_lower, b, kwargs)
    _, cl_dot, b_dot = (unthunk(t) for t in tangents)
    c_dot = unthunk(split_cotangent(cl_dot, 2)[0])
    operation = "scipy.linalg.cho_solve's frule (triangular parts, LAPACK)"
    vector = np.ndim(b) == 1
    X = x[..., None] if vector else x
    rhs: Any = ZeroTangent()
    if not isinstance(b_dot, AbstractZero):
        b_dot = as_array(as_array_cotangent(b_dot, operation))
        rhs = np.broadcast_to(b_dot[..., None] if vector else b_dot, X.shape)
    if not isinstance(c_dot, AbstractZero):
        c_dot = as_array_cotangent(c_dot, operation)
        L = _factor_of(c, is_lower)
        F_dot = np.tril(c_dot) if is_lower else np.triu(c_dot)
        L_dot = F_dot if is_lower else adjoint(F_dot)
        rhs = rhs - (L_dot @ adjoint(L) + L @ adjoint(L_dot)) @ X  # A_dot x
    if isinstance(rhs, AbstractZero):
        return x, ZeroTangent()
    rhs = np.broadcast_to(rhs, X.shape)  # a stack of factors with one b: x has the stack's batch
    X_dot = call(sla.cho_solve, (c, lower), as_array(rhs), check_finite=False)
    return x, ProjectTo(x)(X_dot[..., 0] if vector else X_dot)
