r"""Rules for the matrix inverse: ``np.linalg.inv`` and ``scipy.linalg.inv``.

For ``Y = A^{-1}`` (Giles 2008, section 2.2.3), with the complex convention
``Y_bar = dL/dRe Y + i dL/dIm Y``:

.. math::

    \dot Y = -Y \dot A Y, \qquad \bar A = -Y^H \bar Y Y^H.

Both need only ``Y`` from the forward pass: two products, no factorization and no solve.

Algebra path: the two products with the tangent algebra, so a cotangent of any type with
``@`` (both sides) and unary ``-`` flows through unconverted (stacks too, if the type's ``@``
broadcasts). Array-formula path: none of its own (ndarrays are cast to the forward's kernel
dtype). Kernel path: the compiled kernels up to ``kernels.crossovers.INV_SINGLE_MAX_N`` (one
matrix) and ``INV_STACK_MAX_N`` (stacks, one compiled call), two BLAS ``gemm`` above.

The forward pass: one matrix is inverted by LAPACK ``getrf``/``getri`` directly (scipy's
wrappers: cost less than ``np.linalg.inv``'s gufunc machinery at small n), stacks up to
``kernels.crossovers.INV_FORWARD_STACK_MAX_N`` by one compiled call (``inv_batched``: LU with LAPACK's
partial pivoting, then the identity solved with the factors, as ``gesv`` does), larger stacks by
``np.linalg.inv``. A singular matrix raises ``LinAlgError`` naming the function and the shape,
as numpy raises "Singular matrix"; NaN in gives NaN out.

``scipy.linalg.inv``'s ``assume_a`` says which entries of ``a`` are read: ``'sym'``, ``'her'``
and ``'pos'`` read one triangle as a symmetric (Hermitian) matrix and follow the
symmetric-cotangent convention (DESIGN.md section 3: ``sym(A_bar)``, forward tangents
symmetrised); the triangular structures mask the cotangent to the triangle. ``'diagonal'`` is
refused: scipy 1.17 returns ``a`` with only its diagonal inverted (the off-diagonal entries are
copied through), which is not the inverse of anything.

References
----------
.. [1] M. B. Giles, "An extended collection of matrix derivative results for forward and reverse
   mode algorithmic differentiation", Oxford NA report 08/01, 2008.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from kernels import crossovers
from kernels import inverse as kinverse
from kernels import solve as ksolve
from kernels._blas import getri
from rules.core.dispatch import as_stack, kernel_array, paths, unstack
from rules.core.nesting import as_array, call, is_traced
from rules.core.registry import frule, rrule
from rules.linalg._stacks import (
    adjoint,
    check_shape,
    plain_pullback,
    plain_real_matrix,
    plain_real_square,
    square_matrices,
)
from rules.linalg._systems import (
    STRUCTURES,
    cast,
    check_scipy_options,
    fold_cotangent,
    lapack_functions,
    linalg_dtypes,
    singular_error,
)
from tangents import AbstractZero, NoTangent, ProjectTo, unthunk


def _inverse(name: str, a: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(y, Y)``: ``A^{-1}`` as numpy returns it and in the kernel dtype (C-contiguous).

    A traced ``a`` (a nested differentiation) is inverted by the traced call ``inv(a)``.
    """
    if is_traced(a):
        Y = call(np.linalg.inv, a)
        return Y, Y
    A = a if type(a) is np.ndarray else as_array(a)
    work, result = linalg_dtypes(name, A.dtype)
    n = square_matrices(name, A).shape[-1]
    A = cast(A, work)
    if A.ndim == 2 and n > 0:
        Y = _lapack_inverse(A, name)
    elif (
        0 < n <= crossovers.INV_FORWARD_STACK_MAX_N and A.size
    ):  # a stack of small matrices: one call
        Y, info = kinverse.inv_batched(as_stack(kernel_array(A)))
        if info.any():
            raise singular_error(name, A.shape)
        Y = unstack(Y, A.shape)
    else:
        try:
            Y = np.linalg.inv(A)
        except np.linalg.LinAlgError:
            raise singular_error(name, A.shape) from None
    return (Y if result == work else Y.astype(result)), Y


def _pullback_algebra(Y: np.ndarray, Y_bar: Any) -> Any:
    """Algebra path: ``-Y^H (Y_bar Y^H)``, any tangent type with ``@`` and unary ``-``."""
    Y_h = adjoint(Y)
    return -(Y_h @ (Y_bar @ Y_h))


def _pushforward_algebra(Y: np.ndarray, A_dot: Any) -> Any:
    """Algebra path: ``-Y (A_dot Y)``."""
    return -(Y @ (A_dot @ Y))


# No array-formula path of its own: every ndarray is cast to the kernel dtype of ``Y`` (the
# forward computes in one), so the algebra path doubles as the formula. Kernel path: the loop
# kernels up to the crossover, two BLAS gemm (numpy matmul, stacks too) above.
_PULLBACK = paths(
    algebra=_pullback_algebra,
    formula=_pullback_algebra,
    single=ksolve.inv_pullback,
    batched=ksolve.inv_pullback_batched,
    large=ksolve.inv_pullback_blas,
    large_takes_stacks=True,
    single_max_n="INV_SINGLE_MAX_N",
    stack_max_n="INV_STACK_MAX_N",
)
_PUSHFORWARD = paths(
    algebra=_pushforward_algebra,
    formula=_pushforward_algebra,
    single=ksolve.inv_pushforward,
    batched=ksolve.inv_pushforward_batched,
    large=ksolve.inv_pushforward_blas,
    large_takes_stacks=True,
    single_max_n="INV_SINGLE_MAX_N",
    stack_max_n="INV_STACK_MAX_N",
)


def inv_pullback_array(Y: np.ndarray, Y_bar: np.ndarray) -> np.ndarray:
    """``A_bar = -Y^H Y_bar Y^H`` for ndarrays: the kernels for small matrices, else BLAS."""
    return _PULLBACK(Y, Y_bar)


def inv_pushforward_array(Y: np.ndarray, A_dot: np.ndarray) -> np.ndarray:
    """``Y_dot = -Y A_dot Y`` for ndarrays: the kernels for small matrices, else BLAS."""
    return _PUSHFORWARD(Y, A_dot)


def _inv_pullback(name: str, Y: np.ndarray, Y_bar: Any, pullback: Any = None) -> Any:
    """The cotangent of the (read) matrix, by the path :func:`rules.core.dispatch.paths` chooses.

    ``pullback``: ``_PULLBACK.given(Y)`` from the forward pass (the gate decided once), or
    ``None`` for ``_PULLBACK`` itself.
    """
    if getattr(Y_bar, "shape", Y.shape) != Y.shape:
        check_shape(f"{name} pullback", "the cotangent", Y_bar, Y.shape)
    if pullback is not None:
        return pullback(Y_bar)
    return _PULLBACK(Y, Y_bar)


def _inv_pushforward(Y: np.ndarray, A_dot: Any) -> Any:
    if isinstance(A_dot, AbstractZero):
        return A_dot
    return _PUSHFORWARD(Y, A_dot)


# --- np.linalg.inv -----------------------------------------------------------------------------


@rrule.register(np.linalg.inv)
def inv_rrule(a: Any, /) -> tuple[np.ndarray, Any]:
    r"""Reverse rule for ``Y = np.linalg.inv(a)``: :math:`\bar A = -Y^H \bar Y Y^H`.

    Stacks ``(..., n, n)``; structured inputs get cotangents of their structure.
    """
    if plain_real_square(a):
        # one plain real matrix: LAPACK directly, and the general pullback's projection and
        # path only if a cotangent other than a plain ndarray comes (a 4x4 whole call took
        # 6.2 us, of which 2.3 went to them and to _inverse's dtype and shape plumbing)
        Y = _lapack_inverse(a)
        general = _inv_rrule_pullback(a, Y, None)
        return Y, plain_pullback(general, Y.shape, Y.dtype, _pullback_plain, Y)
    y, Y = _inverse("np.linalg.inv", a)
    return y, _inv_rrule_pullback(a, Y, _PULLBACK.given(Y))


def _inv_rrule_pullback(a: Any, Y: np.ndarray, pullback_of: Any) -> Any:
    """The general pullback of ``inv``: any cotangent, projected onto ``a``'s structure.

    ``pullback_of``: ``_PULLBACK.given(Y)``, or ``None`` to decide the path at each call.
    """
    project_a: list[Any] = []

    def inv_pullback(Y_bar: Any) -> tuple[Any, Any]:
        A_bar = _inv_pullback("np.linalg.inv", Y, unthunk(Y_bar), pullback_of)
        if not project_a:
            project_a.append(ProjectTo(a))
        return NoTangent(), project_a[0](A_bar)

    return inv_pullback


def _lapack_inverse(A: np.ndarray, name: str = "np.linalg.inv") -> np.ndarray:
    """``A^-1`` of one square ndarray of a LAPACK dtype (``n > 0``): ``getrf``, then ``getri``.

    Inverting ``A^T`` (an F-ordered view of a C-ordered ``A``: no copy) gives ``(A^-1)^T``,
    whose transpose is a C-ordered ``A^-1``; ``getri`` is blocked (its optimal workspace).
    ``LinAlgError`` naming ``name`` for a singular ``A``.
    """
    (getrf,) = lapack_functions(("getrf",), A.dtype)
    lu, piv, info = getrf(A.T)
    if info > 0:
        raise singular_error(name, A.shape)
    return getri(lu, piv, overwrite_lu=True)[0].T


# One plain real matrix: two BLAS products through ndarray.dot, which at 4x4 cost less than
# a compiled kernel's dispatch (and than matmul's).


def _pullback_plain(Y: np.ndarray, Y_bar: np.ndarray) -> np.ndarray:
    """``-Y^T Y_bar Y^T`` for one plain real matrix and (C-ordered) cotangent.

    Up to ``kernels.crossovers.INV_PLAIN_KERNEL_MAX_N`` one compiled call
    (``kernels.solve.inv_pullback``); up to ``PLAIN_DOT_MAX_N`` two dots and a unary minus; above,
    two matmul (whose BLAS calls ran faster than ``ndarray.dot``'s there) with the minus taken in
    place, on the product's own memory.
    """
    n = Y.shape[0]
    if n <= crossovers.INV_PLAIN_KERNEL_MAX_N and Y.flags.carray:
        return ksolve.inv_pullback(Y, Y_bar)
    Y_t = Y.T
    if n <= crossovers.PLAIN_DOT_MAX_N:
        return -Y_t.dot(Y_bar.dot(Y_t))
    A_bar = (Y_t @ Y_bar) @ Y_t
    return np.negative(A_bar, out=A_bar)


def _pushforward_plain(Y: np.ndarray, A_dot: np.ndarray) -> np.ndarray:
    """``-Y (A_dot Y)`` for one plain real matrix and tangent (a compiled call for small ones)."""
    if Y.shape[0] <= crossovers.INV_PLAIN_KERNEL_MAX_N and Y.flags.carray and A_dot.flags.carray:
        return ksolve.inv_pushforward(Y, A_dot)
    return -Y.dot(A_dot.dot(Y))


@frule.register_lane(np.linalg.inv)
def inv_frule_lane(tangents: Any, a: Any) -> tuple[Any, Any] | None:
    """:func:`inv_frule` for one plain real matrix and a tangent of its dtype and shape, or ``None``.

    The registry calls it before its own checks. The rule's arithmetic (LAPACK ``getrf`` of the
    Fortran view ``a.T``, ``getri``, then :func:`_pushforward_plain`) without the rule's dtype
    and square plumbing, which at 4x4 costs as much as the products; every other call (stacks,
    complex, structured, zero tangents) returns ``None`` and takes the rule.
    """
    if type(tangents) is not tuple or len(tangents) != 2 or tangents[0] is None:
        return None
    A_dot = tangents[1]
    if (
        type(A_dot) is not np.ndarray
        or not plain_real_matrix(a)
        or A_dot.dtype is not a.dtype
        or A_dot.shape != a.shape
        or a.shape[0] != a.shape[1]
        or a.shape[0] == 0
    ):
        return None
    Y = _lapack_inverse(a)
    return Y, _pushforward_plain(Y, A_dot)


@frule.register(np.linalg.inv)
def inv_frule(tangents: tuple[Any, Any], a: Any, /) -> tuple[np.ndarray, Any]:
    r"""Forward rule for ``np.linalg.inv``: :math:`\dot Y = -Y \dot A Y`."""
    y, Y = _inverse("np.linalg.inv", a)
    A_dot = tangents[1]
    plain = type(A_dot) is np.ndarray and A_dot.dtype is Y.dtype and A_dot.shape == Y.shape
    if plain and y is Y and plain_real_matrix(a):
        return y, _pushforward_plain(Y, A_dot)
    return y, ProjectTo(y)(_inv_pushforward(Y, unthunk(A_dot)))


# --- scipy.linalg.inv --------------------------------------------------------------------------


def _scipy_inverse(
    a: Any, assume_a: Any, lower: bool, kwargs: dict[str, Any]
) -> tuple[np.ndarray, np.ndarray, str]:
    """``(y, Y, structure)``: scipy's result, it in the kernel dtype, and what ``a`` is read as."""
    name = "scipy.linalg.inv"
    check_scipy_options(name, (a,), kwargs)
    structure = STRUCTURES.get(assume_a) if assume_a in STRUCTURES else None
    if structure is None or structure == "tridiagonal" or assume_a == "banded":
        raise ValueError(f"{name}: {assume_a!r} is not a recognized matrix structure")
    if structure == "diagonal":
        raise NotImplementedError(
            f"{name}: assume_a='diagonal' returns a with only its diagonal inverted (scipy "
            "1.17), which is not an inverse; no rule. Invert np.diag(np.diagonal(a)) instead"
        )
    A = as_array(a)
    work, _ = linalg_dtypes(name, A.dtype)
    square_matrices(name, A)
    try:
        y = call(sla.inv, A, check_finite=False, assume_a=assume_a, lower=lower)
    except np.linalg.LinAlgError:
        raise singular_error(name, A.shape) from None
    if structure == "her" and not np.iscomplexobj(A):
        structure = "sym"
    return y, (y if is_traced(y) else kernel_array(cast(y, work))), structure


@rrule.register(sla.inv)
def scipy_inv_rrule(
    a: Any,
    overwrite_a: bool = False,
    check_finite: bool = True,
    *,
    assume_a: Any = None,
    lower: bool = False,
) -> tuple[np.ndarray, Any]:
    """Reverse rule for ``scipy.linalg.inv``; ``assume_a`` as in the module docstring.

    ``overwrite_a=True`` is refused; ``check_finite`` is honoured.
    """
    options = {"overwrite_a": overwrite_a, "check_finite": check_finite}
    y, Y, structure = _scipy_inverse(a, assume_a, lower, options)
    project_a = ProjectTo(a)

    def scipy_inv_pullback(Y_bar: Any) -> tuple[Any, Any]:
        G = _inv_pullback("scipy.linalg.inv", Y, unthunk(Y_bar))
        return NoTangent(), project_a(fold_cotangent(G, structure, "scipy.linalg.inv's pullback"))

    return y, scipy_inv_pullback


@frule.register(sla.inv)
def scipy_inv_frule(
    tangents: tuple[Any, ...],
    a: Any,
    overwrite_a: bool = False,
    check_finite: bool = True,
    *,
    assume_a: Any = None,
    lower: bool = False,
) -> tuple[np.ndarray, Any]:
    """Forward rule for ``scipy.linalg.inv``; symmetric structures symmetrise ``a_dot``."""
    options = {"overwrite_a": overwrite_a, "check_finite": check_finite}
    y, Y, structure = _scipy_inverse(a, assume_a, lower, options)
    A_dot = unthunk(tangents[1])
    if not isinstance(A_dot, AbstractZero):
        A_dot = fold_cotangent(A_dot, structure, "scipy.linalg.inv's pushforward")
    return y, ProjectTo(y)(_inv_pushforward(Y, A_dot))
