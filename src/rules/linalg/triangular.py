r"""Rules for ``scipy.linalg.solve_triangular``.

``X = op(T)^{-1} B`` with ``op(T)`` = ``T``, ``T^T``, ``T^H`` for ``trans`` = 0 (``'N'``), 1
(``'T'``), 2 (``'C'``); only the ``lower`` (or upper) triangle of ``T`` is read, without its
diagonal when ``unit_diagonal``. With ``tri(.)`` the projection onto the entries read and the
complex convention ``x_bar = dL/dRe x + i dL/dIm x`` (Giles 2008, the result for
``X = A^{-1} B``; ``op`` only moves the transpose):

.. math::

    \bar B = \mathrm{op}(T)^{-H} \bar X, \qquad
    \bar T = \mathrm{tri}(\mathrm{op}^*(-\bar B X^H)), \qquad
    \dot X = \mathrm{op}(T)^{-1}\big(\dot B - \mathrm{op}(\mathrm{tri}(\dot T)) X\big),

where ``op^*`` undoes ``op`` on the cotangent (identity, transpose, conjugate transpose). The
cotangent of ``T`` lives on the triangle that is read, as JAX and PyTorch project it; a
``LowerTriangular``/``UpperTriangular`` input gets a cotangent of that type through ``ProjectTo``.

A triangular matrix is its own factorization: the forward pass keeps nothing but ``T`` and
``X``. Batch axes broadcast as in scipy (``b`` of shape ``(n,)`` is a vector, ``(..., n, k)`` a
stack); one ``T`` with a stacked ``b`` is one system.

Paths (chosen by :func:`rules.core.dispatch.paths`, for the forward solve too):

* algebra path: none; the masking ``tri`` needs elementwise access, so cotangents are converted
  with ``as_array_cotangent`` (other tangent types raise ``TypeError``).
* array-formula path: the formulas with scipy's (batched) ``solve_triangular`` and
  ``np.tril``/``np.triu``, for operands the kernels do not take.
* kernel path (float32/float64/complex128): while ``n * n * k`` stays up to
  ``kernels.crossovers.SOLVE_TRIANGULAR_KERNEL_MAX_SIZE`` one compiled loop over the stack
  (``kernels.triangular``, also the forward solve, which scipy otherwise loops over in Python);
  above, one BLAS ``trsm`` (and ``gemm`` or ``trmm``) per matrix.
* fused lane: one system of a kernel dtype (``a`` (n, n), ``b`` (n,) or (n, k), within the
  kernel crossover): ``kernels.triangular_single`` does the forward solve with scipy's
  finiteness test and the zero-diagonal test, the pullback, or the whole frule in one compiled
  call each; anything else (and any input those tests reject) goes the general way.

A zero on the diagonal (without ``unit_diagonal``) raises ``LinAlgError`` naming the function
and the shape, as scipy does; NaN in gives NaN out (with ``check_finite=False``).

References
----------
.. [1] M. B. Giles, "An extended collection of matrix derivative results for forward and reverse
   mode algorithmic differentiation", Oxford NA report 08/01, 2008.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import scipy.linalg as sla

from kernels import crossovers
from kernels import triangular as ktri
from kernels import triangular_single as ktri_single
from rules.core.cotangents import as_array_cotangent
from rules.core.dispatch import paths
from rules.core.nesting import as_array, call, innermost_value, is_traced
from rules.core.registry import frule, rrule
from rules.linalg import traced_systems
from rules.linalg._stacks import check_shape, plain_real_matrix, square_matrices
from rules.linalg._systems import (
    Layout,
    cast,
    check_scipy_options,
    linalg_dtypes,
    singular_error,
)
from tangents import AbstractZero, NoTangent, ProjectTo, unthunk

NAME = "scipy.linalg.solve_triangular"

_TRANS = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}


def _trans_code(trans: Any) -> int:
    """Scipy's ``trans`` (0, 1, 2, 'N', 'T' or 'C') as 0, 1 or 2; ``ValueError`` otherwise."""
    try:
        return _TRANS[trans]
    except (KeyError, TypeError):
        raise ValueError(f"{NAME}: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}") from None


# --- the algebra path: none (tri() needs elementwise access) ------------------------------------

# --- the array-formula path --------------------------------------------------------------------


def _tri(G: Any, lower: bool, unit: bool) -> Any:
    """The triangle of ``G`` that is read (without the diagonal when ``unit``)."""
    return np.tril(G, -1 if unit else 0) if lower else np.triu(G, 1 if unit else 0)


def _op(M: Any, trans: int) -> Any:
    """``op(M)``: ``M``, ``M^T`` or ``M^H`` for ``trans`` 0, 1, 2 (on the last two axes)."""
    return (M, M.mT, M.mT.conj())[trans]


def _solve_formula(T: Any, B: Any, lower: bool, trans: int, unit: bool) -> Any:
    """``op(T)^-1 B`` by scipy (which loops over a stack)."""
    return call(sla.solve_triangular, T, B, trans, lower, unit, check_finite=False)


def _pullback_formula(
    T: Any, X: Any, X_bar: Any, lower: bool, trans: int, unit: bool
) -> tuple[Any, Any]:
    """``B_bar = op(T)^-H X_bar`` and ``T_bar = tri(op^*(-B_bar X^H))``."""
    if trans == 1:  # (T^T)^-H = conj(T)^-1
        B_bar = _solve_formula(T, X_bar.conj(), lower, 0, unit).conj()
    else:  # T^-H for op = N, T^-1 for op = H
        B_bar = _solve_formula(T, X_bar, lower, 2 - trans, unit)
    G = -(B_bar @ X.mT.conj())  # the cotangent of op(T)
    return _tri(_op(G, trans), lower, unit), B_bar


def _pushforward_formula(
    T: Any, X: Any, T_dot: Any, B_dot: Any, lower: bool, trans: int, unit: bool
) -> Any:
    """``X_dot = op(T)^-1 (B_dot - op(tri(T_dot)) X)``."""
    return _solve_formula(T, B_dot - _op(_tri(T_dot, lower, unit), trans) @ X, lower, trans, unit)


# --- the kernel path: paths() per combination of the flags -------------------------------------


class _Paths:
    """The forward solve, pullback and pushforward of one ``(lower, trans, unit)``, as ``paths()``.

    Operands are the ``(s, n, n)``/``(s, n, k)`` stacks of :class:`rules.linalg._systems.Layout`
    (``s = 1`` for one system); the order compared with the crossover is ``n * n * k``.
    """

    __slots__ = ("pullback", "pushforward", "solve")

    def __init__(self, lower: bool, trans: int, unit: bool) -> None:
        flags = (lower, trans, unit)

        def solve_formula(T: Any, B: Any) -> Any:
            return _solve_formula(T, B, *flags)

        def solve_kernel(T: np.ndarray, B: np.ndarray) -> np.ndarray:
            return ktri.solve_triangular_batched(T, B, *flags)

        def solve_blas(T: np.ndarray, B: np.ndarray) -> np.ndarray:
            return ktri.solve_triangular_blas(T, B, *flags)

        def pullback_formula(T: Any, X: Any, X_bar: Any) -> tuple[Any, Any]:
            return _pullback_formula(T, X, X_bar, *flags)

        def pullback_kernel(T: np.ndarray, X: np.ndarray, X_bar: np.ndarray) -> Any:
            if ktri.pullback_uses_matmul(*X.shape[-2:]):
                return ktri.solve_triangular_pullback_matmul(T, X, X_bar, *flags)
            return ktri.solve_triangular_pullback_batched(T, X, X_bar, *flags)

        def pullback_blas(T: np.ndarray, X: np.ndarray, X_bar: np.ndarray) -> Any:
            return ktri.solve_triangular_pullback_blas(T, X, X_bar, *flags)

        def pushforward_formula(T: Any, X: Any, T_dot: Any, B_dot: Any) -> Any:
            return _pushforward_formula(T, X, T_dot, B_dot, *flags)

        def pushforward_kernel(T: np.ndarray, X: np.ndarray, T_dot: Any, B_dot: Any) -> Any:
            return ktri.solve_triangular_pushforward_batched(T, X, T_dot, B_dot, *flags)

        def pushforward_blas(T: np.ndarray, X: np.ndarray, T_dot: Any, B_dot: Any) -> Any:
            return ktri.solve_triangular_pushforward_blas(T, X, T_dot, B_dot, *flags)

        crossover = "SOLVE_TRIANGULAR_KERNEL_MAX_SIZE"  # on n * n * k
        self.solve = paths(
            formula=solve_formula,
            batched=solve_kernel,
            large=solve_blas,
            single_max_n=None,
            stack_max_n=crossover,
        )
        self.pullback = paths(
            formula=pullback_formula,
            batched=pullback_kernel,
            large=pullback_blas,
            single_max_n=None,
            stack_max_n=crossover,
        )
        self.pushforward = paths(
            formula=pushforward_formula,
            batched=pushforward_kernel,
            large=pushforward_blas,
            single_max_n=None,
            stack_max_n=crossover,
        )


@functools.cache
def _paths(lower: bool, trans: int, unit: bool) -> _Paths:
    """The paths of one combination of the flags (twelve in all), made once."""
    return _Paths(lower, trans, unit)


# --- the rule ----------------------------------------------------------------------------------


class _Triangular:
    """The forward pass: ``T`` and ``X`` as kernel stacks, and the paths of the flags."""

    __slots__ = ("T", "X", "layout", "order", "paths", "pullback_of", "x")

    def __init__(self, a: Any, b: Any, trans: Any, lower: Any, unit_diagonal: Any) -> None:
        trans = _trans_code(trans)
        unit = bool(unit_diagonal)  # Python bools: one compile
        A0 = a if type(a) is np.ndarray else as_array(a)
        b0 = b if type(b) is np.ndarray else as_array(b)
        work, result = linalg_dtypes(NAME, A0.dtype, b0.dtype)
        square_matrices(NAME, A0)
        self.layout = layout = Layout(NAME, A0.shape, b0.shape)
        self.T = layout.matrices(cast(A0, work))
        if not unit and not np.diagonal(self.T, axis1=1, axis2=2).all():
            raise singular_error(NAME, A0.shape, "singular (a zero on the diagonal)")
        B = layout.rhs(cast(b0, work))
        n, k = B.shape[1:]
        self.order = n * n * k
        self.paths = _paths(bool(lower), trans, unit)
        self.X = self.paths.solve.given(self.T, n=self.order)(B)
        self.x = layout.solution(self.X).astype(result, copy=False)
        self.pullback_of = self.paths.pullback.given(self.T, self.X, n=self.order)

    def pullback(self, x_bar: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(T_bar, B_bar)`` summed back to the shapes of ``a`` and ``b``."""
        x_bar = as_array(as_array_cotangent(x_bar, f"{NAME}'s pullback (triangular masking)"))
        check_shape(f"{NAME} pullback", "the cotangent", x_bar, self.x.shape)
        X_bar = self.layout.rhs(cast(x_bar, self.T.dtype))
        T_bar, B_bar = self.pullback_of(X_bar)
        return self.layout.a_cotangent(T_bar), self.layout.b_cotangent(B_bar)

    def pushforward(self, a_dot: Any, b_dot: Any) -> np.ndarray:
        """``X_dot = op(T)^-1 (B_dot - op(tri(T_dot)) X)`` in the shape of ``x``."""
        T_dot, B_dot = (
            np.zeros_like(like)
            if isinstance(t, AbstractZero)
            else convert(cast(as_array(as_array_cotangent(t, f"{NAME}'s pushforward")), like.dtype))
            for t, like, convert in (
                (a_dot, self.T, self.layout.matrices),
                (b_dot, self.X, self.layout.rhs),
            )
        )
        X_dot = self.paths.pushforward(self.T, self.X, T_dot, B_dot, n=self.order)
        return self.layout.solution(X_dot)


@rrule.register(sla.solve_triangular)
def solve_triangular_rrule(
    a: Any,
    b: Any,
    trans: Any = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> tuple[np.ndarray, Any]:
    r"""Reverse rule for ``scipy.linalg.solve_triangular``; see the module docstring.

    :math:`\bar B = \mathrm{op}(T)^{-H}\bar X`, :math:`\bar T = \mathrm{tri}(\mathrm{op}^*(-\bar
    B X^H))`. ``overwrite_b=True`` is refused; ``check_finite`` is honoured.
    """
    if not overwrite_b:
        fast = _fast_rrule(a, b, trans, lower, unit_diagonal, check_finite)
        if fast is not None:
            return fast
    if is_traced(a) or is_traced(b):  # a nested differentiation
        refuse_overwrite = {"overwrite_b": overwrite_b, "check_finite": check_finite}
        check_scipy_options(NAME, (innermost_value(a), innermost_value(b)), refuse_overwrite)
        return traced_systems.solve_triangular_rrule(
            a, b, _trans_code(trans), lower, unit_diagonal, check_finite
        )
    check_scipy_options(NAME, (a, b), {"overwrite_b": overwrite_b, "check_finite": check_finite})
    forward = _Triangular(a, b, trans, lower, unit_diagonal)
    project_a, project_b = ProjectTo(a), ProjectTo(b)

    def solve_triangular_pullback(x_bar: Any) -> tuple[Any, Any, Any]:
        a_bar, b_bar = forward.pullback(unthunk(x_bar))
        return NoTangent(), project_a(a_bar), project_b(b_bar)

    return forward.x, solve_triangular_pullback


@frule.register(sla.solve_triangular)
def solve_triangular_frule(
    tangents: tuple[Any, ...],
    a: Any,
    b: Any,
    trans: Any = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> tuple[np.ndarray, Any]:
    r"""Forward rule: :math:`\dot X = \mathrm{op}(T)^{-1}(\dot B - \mathrm{op}(\mathrm{tri}(\dot T)) X)`."""
    if not overwrite_b:
        fast = _fast_frule(
            a, b, tangents[1], tangents[2], trans, lower, unit_diagonal, check_finite
        )
        if fast is not None:
            return fast
    check_scipy_options(NAME, (a, b), {"overwrite_b": overwrite_b, "check_finite": check_finite})
    if _plain_system(a, b, tangents[1], tangents[2]):
        return _frule_plain(
            a, b, tangents[1], tangents[2], _trans_code(trans), lower, unit_diagonal
        )
    forward = _Triangular(a, b, trans, lower, unit_diagonal)
    a_dot, b_dot = unthunk(tangents[1]), unthunk(tangents[2])
    return forward.x, ProjectTo(forward.x)(forward.pushforward(a_dot, b_dot))


# --- one plain real system: LAPACK trtrs straight away -------------------------------------------
# The frule of one plain real system above the fused lane's crossover, where the stack layout
# and the paths' checks are not needed: the kernels' BLAS forms, straight away.


def _plain_system(a: Any, b: Any, a_dot: Any, b_dot: Any) -> bool:
    """One plain real non-empty ``(n, n)`` system, ``b`` ``(n,)`` or ``(n, k)``, plain tangents."""
    if not plain_real_matrix(a):
        return False
    dtype, n = a.dtype, a.shape[0]
    return (
        type(b) is np.ndarray
        and b.dtype is dtype
        and 0 < n == a.shape[1]
        and 0 < b.ndim <= 2
        and b.shape[0] == n
        and b.size > 0
        and type(a_dot) is np.ndarray
        and type(b_dot) is np.ndarray
        and a_dot.dtype is dtype
        and b_dot.dtype is dtype
        and a_dot.shape == a.shape
        and b_dot.shape == b.shape
    )


def _frule_plain(
    a: np.ndarray,
    b: np.ndarray,
    a_dot: np.ndarray,
    b_dot: np.ndarray,
    trans: int,
    lower: Any,
    unit_diagonal: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """``X = op(T)^-1 B``, ``X_dot = op(T)^-1 (B_dot - op(tri(T_dot)) X)``: trsm, trmm, trsm.

    Real ``T`` only (:func:`_plain_system`), so ``trans`` 2 is ``trans`` 1. The kernels' BLAS
    forms (:func:`kernels.triangular.solve_triangular_blas` and
    :func:`kernels.triangular.solve_triangular_pushforward_blas`) solve C-ordered systems from
    the right as the transposed problem, without the Fortran copies of LAPACK ``trtrs`` (the
    frule of one 256 x 256 system took 1.01 against 1.52 ms by trtrs, trmm, trtrs in one
    process); trmm reads only the triangle that is read (entries outside it, NaN included,
    never enter). Results are C-ordered.
    """
    lower, unit = bool(lower), bool(unit_diagonal)
    if not unit and not np.diagonal(a).all():  # an exact zero on the diagonal, as trtrs reports
        raise singular_error(NAME, a.shape, "singular (a zero on the diagonal)")
    x = ktri.solve_triangular_blas(a, b, lower, trans, unit)
    x_dot = ktri.solve_triangular_pushforward_blas(a, x, a_dot, b_dot, lower, trans, unit)
    return x, x_dot


# --- one small system: the fused kernels of kernels.triangular_single ----------------------------
# The forward solve with scipy's finiteness test and the zero-diagonal test, the pullback and the
# frule, each one compiled call (as rules.linalg.lu's fast lane). Anything else (mixed dtypes,
# stacks, non-finite input, a zero on the diagonal, other cotangents) takes the paths above.

_FAST_DTYPES = frozenset(np.dtype(d) for d in (np.float64, np.float32, np.complex128))
_NO_TANGENT = NoTangent()


def _fast_system(
    a: Any, b: Any, trans: Any, lower: Any, unit_diagonal: Any
) -> tuple[np.ndarray, np.ndarray, bool, int, bool] | None:
    """``(T, B, lower, trans, unit)`` for the fused kernels, or ``None``: the general path.

    One ``(n, n)`` system, ``b`` ``(n,)`` or ``(n, k)``, of one kernel dtype, with ``n * n * k``
    within ``kernels.crossovers.SOLVE_TRIANGULAR_KERNEL_MAX_SIZE`` (the general path's kernel,
    so both give the same bits); other layouts are copied.
    """
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.ndim != 2:
        return None
    if a.dtype not in _FAST_DTYPES or b.dtype != a.dtype or not 1 <= b.ndim <= 2:
        return None
    n = a.shape[0]
    if a.shape[1] != n or b.shape[0] != n or b.size == 0 or n == 0:
        return None
    if n * b.size > crossovers.SOLVE_TRIANGULAR_KERNEL_MAX_SIZE:
        return None
    code = _TRANS.get(trans) if type(trans) is int or type(trans) is str else None
    if code is None:
        return None
    T = a if a.flags.carray else np.array(a, order="C")
    B = b if b.flags.carray else np.array(b, order="C")
    return T, B, bool(lower), code, bool(unit_diagonal)


def _fits(X: Any, like: np.ndarray) -> bool:
    """``X`` can go to a fused kernel in place of an array like ``like`` as it is."""
    return (
        type(X) is np.ndarray and X.dtype == like.dtype and X.shape == like.shape and X.flags.carray
    )


def _fast_rrule(
    a: Any, b: Any, trans: Any, lower: Any, unit_diagonal: Any, check_finite: Any
) -> tuple[np.ndarray, Any] | None:
    """``solve_triangular_rrule`` by the fused kernels, or ``None``."""
    system = _fast_system(a, b, trans, lower, unit_diagonal)
    if system is None:
        return None
    T, B, low, code, unit = system
    X = np.empty(B.shape, dtype=B.dtype)  # written by the kernel
    if ktri_single.solve_triangular_single_into(T, B, X, low, code, unit, bool(check_finite)):
        return None  # inf/NaN or a zero on the diagonal: the general path raises

    def solve_triangular_pullback(x_bar: Any) -> tuple[Any, Any, Any]:
        if (  # ProjectTo(a) and ProjectTo(b) are the identity here
            type(x_bar) is np.ndarray
            and x_bar.dtype == X.dtype
            and x_bar.shape == X.shape
            and x_bar.flags.carray
        ):
            a_bar, b_bar = np.empty(T.shape, dtype=T.dtype), np.empty(X.shape, dtype=X.dtype)
            ktri_single.solve_triangular_single_pullback_into(
                T, X, x_bar, a_bar, b_bar, low, code, unit
            )
            return _NO_TANGENT, a_bar, b_bar
        forward = _Triangular(a, b, trans, lower, unit_diagonal)
        a_bar, b_bar = forward.pullback(unthunk(x_bar))
        return NoTangent(), ProjectTo(a)(a_bar), ProjectTo(b)(b_bar)

    return X, solve_triangular_pullback


def _fast_frule(
    a: Any,
    b: Any,
    a_dot: Any,
    b_dot: Any,
    trans: Any,
    lower: Any,
    unit_diagonal: Any,
    check_finite: Any,
) -> tuple[np.ndarray, np.ndarray] | None:
    """``solve_triangular_frule`` by one fused kernel, or ``None``."""
    system = _fast_system(a, b, trans, lower, unit_diagonal)
    if system is None:
        return None
    T, B, low, code, unit = system
    if not (_fits(a_dot, T) and _fits(b_dot, B)):
        return None
    X, X_dot, status = ktri_single.solve_triangular_single_jvp(
        T, B, a_dot, b_dot, low, code, unit, bool(check_finite)
    )
    return None if status else (X, X_dot)
