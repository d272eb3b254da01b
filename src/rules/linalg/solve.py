r"""Rules for linear solves: ``np.linalg.solve`` and ``scipy.linalg.solve``.

For ``X = A^{-1} B`` (Giles 2008, section 2.2.3) with the complex convention
``x_bar = dL/dRe x + i dL/dIm x``:

.. math::

    \dot X = A^{-1} (\dot B - \dot A X), \qquad
    \bar B = A^{-H} \bar X, \qquad \bar A = -\bar B X^H.

``b`` of shape ``(n,)`` is a vector, ``(..., n, k)`` a stack of matrices (numpy 2 and scipy
semantics); batch axes broadcast and cotangents are summed back over them. With one matrix
``a``, a stacked ``b`` is solved as the columns of one system.

``scipy.linalg.solve``'s ``assume_a`` says which entries of ``a`` are read. General (``None``,
``'gen'``, ``'banded'``: scipy detects the band from the values, so every entry counts): the
formulas above. Symmetric ``'sym'``, Hermitian ``'her'`` and positive definite ``'pos'`` read
one triangle (``lower``) as a symmetric (Hermitian) matrix ``S``; they follow the
symmetric-input convention (DESIGN.md section 3): ``a_bar = sym(S_bar)`` with ``sym(G) = (G +
G^T)/2`` for ``'sym'`` and ``(G + G^H)/2`` for ``'her'``/``'pos'``, and forward tangents are
symmetrised the same way. The factorization matches scipy's solver (LDL^T by ``sytrf``/``hetrf``,
Cholesky by ``potrf``) for large matrices. ``'diagonal'``, ``'tridiagonal'`` and the triangular
structures read only those entries: the cotangent is masked to them (these are solved by LU of the
matrix scipy reads, not by scipy's O(n^2) special solvers). ``transposed=True`` (real only)
solves ``A^T X = B``.

Paths:

* algebra path: with one matrix ``a`` and a matrix ``b`` (no broadcasting, no vector), a
  cotangent of any type with ``@`` flows through ``B_bar = A^{-H} @ X_bar`` (the inverse from
  the kept factors) without being converted; ``'diagonal'``/``'tridiagonal'``/triangular
  structures need elementwise masking and convert with ``as_array_cotangent``.
* array-formula path: none of its own; every ndarray is cast to the kernel dtype the forward
  pass factored in.
* kernel path: the forward pass factors ``A`` once and keeps the factors; the pullback's
  ``A^{-H} \bar X`` and the pushforward's ``A^{-1}(\cdot)`` are solves with them, not a second
  factorization. :func:`rules.linalg._systems.factor` chooses the factorization with
  :func:`rules.core.dispatch.paths`: the batched LU (Cholesky) kernels for stacks up to
  ``kernels.crossovers.SOLVE_STACK_MAX_N``, with the fused kernels
  ``kernels.solve.solve_pullback_batched`` and ``solve_pushforward_batched`` (both cotangents
  in one compiled call); for mid-size stacks of general ``A`` (up to
  ``SOLVE_GUFUNC_STACK_MAX_N``) numpy's batched ``np.linalg.solve``, which keeps no factors, so
  the pullback factors ``A^H`` again (a Python loop over LAPACK calls would cost more); LAPACK
  ``getrf``/``getrs`` (``potrf``, ``sytrf``/``hetrf`` for the structures) per matrix above,
  and for one matrix at every order.

References
----------
.. [1] M. B. Giles, "An extended collection of matrix derivative results for forward and reverse
   mode algorithmic differentiation", Oxford NA report 08/01, 2008.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from kernels import solve as ksolve
from kernels._blas import lu_solve_rows
from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array, innermost_value, is_traced
from rules.core.registry import frule, rrule
from rules.linalg import traced_systems
from rules.linalg._stacks import adjoint, check_shape, square_matrices
from rules.linalg._systems import (
    KINDS,
    STRUCTURES,
    BatchedLU,
    Factorization,
    LapackLU,
    Layout,
    cast,
    check_scipy_options,
    factor,
    fold_cotangent,
    lapack_functions,
    linalg_dtypes,
    lu_solve,
    read_matrix,
    takes_rows,
)
from tangents import AbstractZero, NoTangent, ProjectTo, ZeroTangent, unthunk

# --- the algebra path --------------------------------------------------------------------------
# One matrix a and a matrix b (no broadcasting, no vector): the inverse from the kept factors,
# then only @, -, + of the tangent algebra, so a cotangent of any type with @ flows through.


def _inverse(F: Factorization, n: int, dtype: Any, trans: int) -> np.ndarray:
    """``op(A)^-1`` of one matrix from its kept factors (``trans`` 0: ``A``, 2: ``A^H``)."""
    return F.solve(np.eye(n, dtype=dtype)[None], trans)[0]


def _pullback_algebra(F: Factorization, X: np.ndarray, X_bar: Any) -> tuple[Any, Any]:
    """``B_bar = A^-H @ X_bar``, ``A_bar = -(B_bar @ X^H)`` for ``X`` (n, k)."""
    B_bar = _inverse(F, len(X), X.dtype, 2) @ X_bar
    return -(B_bar @ adjoint(X)), B_bar


def _pushforward_algebra(F: Factorization, X: np.ndarray, A_dot: Any, B_dot: Any) -> Any:
    """``X_dot = A^-1 @ (B_dot - A_dot @ X)``; zero tangents stay symbolic."""
    return _inverse(F, len(X), X.dtype, 0) @ (ZeroTangent() + B_dot - A_dot @ X)


# --- the array-formula path: none of its own -----------------------------------------------------
# Every ndarray is cast to the kernel dtype the forward pass factored in (numpy.linalg's dtype
# rules), so the kernel path below takes every ndarray.

# --- the kernel path -----------------------------------------------------------------------------
# Solves with the factors the forward pass kept (rules.linalg._systems.factor, chosen there by
# rules.core.dispatch.paths); the batched LU has fused kernels for both cotangents.


def _pullback_kernel(F: Factorization, X: np.ndarray, X_bar: np.ndarray) -> tuple[Any, Any]:
    """``(A_bar, B_bar)`` stacks ``(s, n, n)``, ``(s, n, k)`` from the stacks ``X`` and ``X_bar``."""
    if isinstance(F, BatchedLU):  # both cotangents in one compiled call
        return ksolve.solve_pullback_batched(F.lu, F.piv, X, X_bar)
    B_bar = F.solve(X_bar, 2)  # A^-H X_bar with the forward's factors
    A_bar = B_bar @ adjoint(X)
    np.negative(A_bar, out=A_bar)
    return A_bar, B_bar


def _pushforward_kernel(
    F: Factorization, X: np.ndarray, A_dot: np.ndarray | None, B_dot: np.ndarray
) -> np.ndarray:
    """``X_dot = A^-1 (B_dot - A_dot X)`` on stacks; ``A_dot`` ``None`` for a zero tangent."""
    if A_dot is None:
        return F.solve(B_dot, 0)
    if isinstance(F, BatchedLU):
        return ksolve.solve_pushforward_batched(F.lu, F.piv, X, A_dot, B_dot)
    return F.solve(B_dot - A_dot @ X, 0)


def _one_system_pullback(F: LapackLU, X: np.ndarray, x_bar: np.ndarray, vector: bool) -> Any:
    """Kernel path of the common call, one matrix and one right-hand side: LAPACK directly."""
    lu, piv = F.factors[0]
    b_bar = lu_solve(F.getrs, lu, piv, x_bar, 2)
    if vector:  # a_bar = -outer(b_bar, conj(x))
        a_bar = b_bar[:, None] * X[:, 0].conj()
    else:
        a_bar = b_bar @ adjoint(X)
    np.negative(a_bar, out=a_bar)
    return a_bar, b_bar


# --- one plain system: the common call, with none of the general machinery ------------------------


_ONE_SYSTEM_DTYPES = frozenset("fdD")
"""The dtypes (``dtype.char``) of the one-system lane: those LAPACK computes in as they are."""


def _one_system(a: Any, b: Any) -> tuple[Any, ...] | None:
    """``(lu, piv, x, getrs)`` for ``np.linalg.solve(a, b)`` of one matrix, or ``None``.

    The common call: ``a`` one nonempty square ndarray, ``b`` a vector or a matrix of its dtype,
    float32, float64 or complex128. Then the general rule would cast nothing, broadcast nothing
    and project nothing; this lane calls LAPACK ``getrf``/``getrs`` as the general rule's
    one-matrix path does, with the same results bit for bit, for a fraction of its Python (bench
    case ``solve.pullback`` at n = 4, column ``rrule+pb``). ``None`` for anything else, and for a
    singular matrix: the general rule then raises ``LinAlgError`` naming the function.
    """
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.ndim != 2:
        return None
    dtype = a.dtype
    n = a.shape[0]
    if (
        a.shape[1] != n
        or not 1 <= b.ndim <= 2
        or b.shape[0] != n
        or b.size == 0
        or n == 0
        or b.dtype != dtype
        or dtype.char not in _ONE_SYSTEM_DTYPES
    ):
        return None
    getrf, getrs = lapack_functions(("getrf", "getrs"), dtype)
    lu, piv, info = getrf(a)
    if info != 0:
        return None
    return lu, piv, lu_solve(getrs, lu, piv, b), getrs


def _one_system_rrule(one: tuple[Any, ...], a: np.ndarray, b: np.ndarray) -> tuple[Any, Any]:
    """The reverse rule on :func:`_one_system`'s factors; other cotangents take the general rule."""
    lu, piv, x, getrs = one
    dtype, vector = x.dtype, x.ndim == 1
    xh = x.conj() if dtype.kind == "c" else x

    def solve_pullback(x_bar: Any) -> tuple[Any, Any, Any]:
        if type(x_bar) is not np.ndarray or x_bar.shape != x.shape or x_bar.dtype.hasobject:
            return _rrule(_Solve("np.linalg.solve", a, b), a, b)[1](x_bar)
        b_bar = lu_solve(getrs, lu, piv, cast(x_bar, dtype), 2)
        a_bar = b_bar[:, None] * xh if vector else b_bar @ xh.T
        np.negative(a_bar, out=a_bar)
        return NoTangent(), a_bar, b_bar

    return x, solve_pullback


@frule.register_lane(np.linalg.solve)
def solve_frule_lane(tangents: Any, a: Any, b: Any) -> tuple[Any, Any] | None:
    """:func:`solve_frule` for ndarray tangents of one plain system's dtype, or ``None``.

    The one-system lane (:func:`_one_system`); the registry calls it before its own checks.
    """
    if type(tangents) is not tuple or len(tangents) != 3 or tangents[0] is None:
        return None
    a_dot, b_dot = tangents[1], tangents[2]
    if (
        type(a_dot) is not np.ndarray
        or type(b_dot) is not np.ndarray
        or type(a) is not np.ndarray
        or type(b) is not np.ndarray
        or a_dot.dtype != a.dtype
        or b_dot.dtype != b.dtype
        or a_dot.shape != a.shape
        or b_dot.shape != b.shape
    ):
        return None
    one = _one_system(a, b)
    if one is None:
        return None
    lu, piv, x, getrs = one
    if x.ndim == 1:
        rhs = b_dot - a_dot @ x
    else:
        rhs = a_dot @ x
        np.subtract(b_dot, rhs, out=rhs)
    if takes_rows(rhs):  # lu_solve's row path, without its second look at the crossover
        return x, lu_solve_rows(lu, piv, rhs)
    return x, getrs(lu, piv, rhs, overwrite_b=True)[0]


# --- the shared rule ---------------------------------------------------------------------------


class _Solve:
    """The forward pass of ``x = solve(a, b)``: the factors and solution kept for the rules."""

    __slots__ = ("F", "X", "layout", "name", "single", "structure", "transposed", "work", "x")

    def __init__(
        self,
        name: str,
        a: Any,
        b: Any,
        structure: str = "general",
        lower: bool = False,
        transposed: bool = False,
    ) -> None:
        A0 = a if type(a) is np.ndarray else as_array(a)
        b0 = b if type(b) is np.ndarray else as_array(b)
        self.work, result = linalg_dtypes(name, A0.dtype, b0.dtype)
        square_matrices(name, A0)
        self.name, self.structure, self.transposed = name, structure, transposed
        self.layout = layout = Layout(name, A0.shape, b0.shape)
        if A0.size == 0 or b0.size == 0:  # nothing to factor (LAPACK rejects n = 0)
            self.F, self.single = None, False  # type: ignore[assignment]
            self.X = None  # type: ignore[assignment]
            self.x = np.zeros(layout.x_shape, result)
            return
        M = read_matrix(A0.astype(self.work, copy=False), structure, lower)
        self.F: Factorization = factor(
            name,
            layout.matrices(M.mT if transposed else M),
            KINDS.get(structure, "lu"),
            shape=A0.shape,
        )
        # one matrix and one right-hand side (the common call): LAPACK directly, no reshaping
        self.single = isinstance(self.F, LapackLU) and layout.folded and b0.ndim <= 2
        if self.single:
            lu, piv = self.F.factors[0]
            x = lu_solve(self.F.getrs, lu, piv, b0.astype(self.work, copy=False))
            self.X = x.reshape(1, layout.n, -1)
        else:
            self.X = self.F.solve(layout.rhs(b0.astype(self.work, copy=False)), 0)
            x = layout.solution(self.X)
        self.x = x.astype(result, copy=False)

    def _algebra(self, plain: bool) -> bool:
        """Whether (co)tangents take the algebra path: the one path test of the rule.

        ``plain``: they are ndarrays (or zeros), which take the kernel path. Others take the
        algebra path where the layout is one matrix ``a`` and a matrix ``b`` of a structure read
        in full; elsewhere they are converted by ``as_array_cotangent`` (or refused by name).
        """
        return (
            not plain
            and self.layout.folded
            and len(self.layout.b_shape) == 2
            and self.structure in ("general", "sym", "her", "pos")
        )

    def pullback(self, x_bar: Any) -> tuple[Any, Any]:
        """``(a_bar, b_bar)`` before projection."""
        layout = self.layout
        if self.F is None:
            check_shape(f"{self.name} pullback", "the cotangent", x_bar, self.x.shape)
            return np.zeros(layout.a_shape, self.work), np.zeros(layout.b_shape, self.work)
        if self.single and type(x_bar) is np.ndarray and x_bar.shape == self.x.shape:
            a_bar, b_bar = _one_system_pullback(
                self.F,  # type: ignore[arg-type]
                self.X[0],
                cast(x_bar, self.work),
                layout.vector,
            )
            return self._a_cotangent(a_bar), b_bar
        check_shape(f"{self.name} pullback", "the cotangent", x_bar, self.x.shape)
        if self._algebra(type(x_bar) is np.ndarray):
            a_bar, b_bar = _pullback_algebra(self.F, self.X[0], x_bar)
            return self._a_cotangent(a_bar), b_bar
        x_bar = as_array(as_array_cotangent(x_bar, f"{self.name}'s pullback"))
        A_bar, B_bar = _pullback_kernel(self.F, self.X, layout.rhs(cast(x_bar, self.work)))
        return self._a_cotangent(layout.a_cotangent(A_bar)), layout.b_cotangent(B_bar)

    def _a_cotangent(self, G: Any) -> Any:
        G = G.mT if self.transposed else G
        return fold_cotangent(G, self.structure, f"{self.name}'s pullback (assume_a structure)")

    def pushforward(self, a_dot: Any, b_dot: Any) -> Any:
        """``x_dot = A^-1 (b_dot - A_dot x)`` (``A_dot`` of the read matrix), before projection."""
        layout = self.layout
        if self.F is None or (isinstance(a_dot, AbstractZero) and isinstance(b_dot, AbstractZero)):
            return ZeroTangent()
        A_dot = a_dot
        if not isinstance(a_dot, AbstractZero):
            A_dot = fold_cotangent(a_dot, self.structure, f"{self.name}'s pushforward")
            A_dot = A_dot.mT if self.transposed else A_dot
        if self._algebra(all(isinstance(t, np.ndarray | AbstractZero) for t in (A_dot, b_dot))):
            return _pushforward_algebra(self.F, self.X[0], A_dot, b_dot)
        A_k, B_k = (
            None
            if isinstance(t, AbstractZero)
            else cast(as_array(as_array_cotangent(t, f"{self.name}'s pushforward")), self.work)
            for t in (A_dot, b_dot)
        )
        B_k = np.zeros_like(self.X) if B_k is None else layout.rhs(B_k)
        A_k = None if A_k is None else layout.matrices(A_k)
        return layout.solution(_pushforward_kernel(self.F, self.X, A_k, B_k))


def _rrule(system: _Solve, a: Any, b: Any) -> tuple[np.ndarray, Any]:
    project_a, project_b = ProjectTo(a), ProjectTo(b)

    def solve_pullback(x_bar: Any) -> tuple[Any, Any, Any]:
        a_bar, b_bar = system.pullback(unthunk(x_bar))
        return NoTangent(), project_a(a_bar), project_b(b_bar)

    return system.x, solve_pullback


def _frule(system: _Solve, tangents: tuple[Any, ...]) -> tuple[np.ndarray, Any]:
    a_dot, b_dot = unthunk(tangents[1]), unthunk(tangents[2])
    return system.x, ProjectTo(system.x)(system.pushforward(a_dot, b_dot))


# --- np.linalg.solve ---------------------------------------------------------------------------


@rrule.register(np.linalg.solve)
def solve_rrule(a: Any, b: Any, /) -> tuple[np.ndarray, Any]:
    r"""Reverse rule for ``x = np.linalg.solve(a, b)``.

    :math:`\bar b = A^{-H}\bar x`, :math:`\bar a = -\bar b x^H`, with the forward's LU (see
    the module docstring).
    """
    one = _one_system(a, b)
    if one is not None:
        return _one_system_rrule(one, a, b)
    if is_traced(a) or is_traced(b):  # a nested differentiation
        return traced_systems.solve_rrule(np.linalg.solve, a, b)
    return _rrule(_Solve("np.linalg.solve", a, b), a, b)


@frule.register(np.linalg.solve)
def solve_frule(tangents: tuple[Any, Any, Any], a: Any, b: Any, /) -> tuple[np.ndarray, Any]:
    r"""Forward rule for ``np.linalg.solve``: :math:`\dot x = A^{-1}(\dot b - \dot A x)`."""
    result = solve_frule_lane(tangents, a, b)
    if result is not None:
        return result
    return _frule(_Solve("np.linalg.solve", a, b), tangents)


# --- scipy.linalg.solve ------------------------------------------------------------------------


def _scipy_solve(
    a: Any, b: Any, lower: bool, assume_a: Any, transposed: bool, kwargs: dict[str, Any]
) -> _Solve:
    name = "scipy.linalg.solve"
    check_scipy_options(name, (a, b), kwargs)
    try:
        structure = STRUCTURES[assume_a]
    except (KeyError, TypeError):
        raise ValueError(f"{name}: {assume_a!r} is not a recognized matrix structure") from None
    complex_a = np.iscomplexobj(a)
    if structure == "her" and not complex_a:
        structure = "sym"
    if transposed and complex_a:
        raise NotImplementedError(f"{name}: transposed=True is not supported for complex a")
    return _Solve(name, a, b, structure, bool(lower), bool(transposed))


@rrule.register(sla.solve)
def scipy_solve_rrule(
    a: Any,
    b: Any,
    lower: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
    assume_a: Any = None,
    transposed: bool = False,
) -> tuple[np.ndarray, Any]:
    """Reverse rule for ``scipy.linalg.solve``; ``assume_a`` as in the module docstring.

    ``overwrite_a``/``overwrite_b=True`` are refused; ``check_finite`` is honoured.
    """
    options = {"overwrite_a": overwrite_a, "overwrite_b": overwrite_b, "check_finite": check_finite}
    if is_traced(a) or is_traced(b):  # a nested differentiation
        check_scipy_options("scipy.linalg.solve", (innermost_value(a), innermost_value(b)), options)
        keywords = {"lower": lower, "assume_a": assume_a, "transposed": transposed}
        return traced_systems.solve_rrule(sla.solve, a, b, **keywords)
    return _rrule(_scipy_solve(a, b, lower, assume_a, transposed, options), a, b)


@frule.register(sla.solve)
def scipy_solve_frule(
    tangents: tuple[Any, ...],
    a: Any,
    b: Any,
    lower: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
    assume_a: Any = None,
    transposed: bool = False,
) -> tuple[np.ndarray, Any]:
    """Forward rule for ``scipy.linalg.solve``; symmetric structures symmetrise ``a_dot``."""
    options = {"overwrite_a": overwrite_a, "overwrite_b": overwrite_b, "check_finite": check_finite}
    return _frule(_scipy_solve(a, b, lower, assume_a, transposed, options), tangents)
