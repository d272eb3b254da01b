"""The kernel paths of ``np.linalg.det`` and ``np.linalg.slogdet`` for stacks of small matrices.

Both keep the partial-pivoting LU of their forward pass (``kernels.determinant_lu``), so the
pullback and the pushforward only form ``A^-1`` from it. det checks the pivots of each matrix
and sends those that fail (singular, nearly so, badly scaled, NaN) to the complete-pivoting
adjugate kernel ``kernels.determinant``, which is exact at rank ``n - 1``. Used by
:mod:`rules.linalg.determinant` (see its docstring for the formulas), with the helpers the
rules share.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from kernels import determinant as kdet
from kernels import determinant_lu as kdet_lu
from rules.core.cotangents import as_array_cotangent
from rules.core.dispatch import kernel_array
from rules.core.nesting import as_array
from rules.linalg._stacks import check_shape
from rules.linalg._systems import cast
from tangents import AbstractZero

SlogdetResult = type(np.linalg.slogdet(np.eye(1)))
"""The type of ``np.linalg.slogdet``'s result, a named tuple ``(sign, logabsdet)``."""


def tangent_stack(name: str, A_dot: Any, A: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The tangent of ``A`` as a kernel stack of ``shape`` in ``A``'s dtype."""
    A_dot = cast(as_array(as_array_cotangent(A_dot, f"{name}'s pushforward")), A.dtype)
    check_shape(f"{name} pushforward", "the tangent", A_dot, A.shape)
    return kernel_array(A_dot).reshape(shape)


def scalar_cotangent(name: str, y_bar: Any, batch: tuple[int, ...], dtype: Any) -> np.ndarray:
    """The cotangent of a (stack of) scalar output(s) as a ``(s,)`` array of ``dtype``."""
    y_bar = as_array(as_array_cotangent(y_bar, f"{name}'s pullback"))
    if y_bar.shape != batch:
        check_shape(f"{name} pullback", "the cotangent", y_bar, batch)
    return kernel_array(cast(y_bar, np.dtype(dtype))).reshape(-1)


def flat(A: np.ndarray) -> np.ndarray:
    """``(n, n)`` or ``(..., n, n)`` as an ``(s, n, n)`` stack (a view: ``A`` is contiguous)."""
    return A.reshape(math.prod(A.shape[:-2]), *A.shape[-2:])


def slogdet_bars(
    sign_bar: Any, logabsdet_bar: Any, batch: tuple[int, ...], stack: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(s_bar, l_bar)`` as ``(s,)`` arrays; a zero part (or the sign of a real ``A``) as zeros."""
    s, dtype, real = len(stack), stack.dtype, stack.real.dtype
    l_bar = (
        np.zeros(s, real)
        if isinstance(logabsdet_bar, AbstractZero)
        else scalar_cotangent("np.linalg.slogdet", logabsdet_bar, batch, real)
    )
    s_bar = (
        np.zeros(s, dtype)
        if isinstance(sign_bar, AbstractZero) or dtype.kind != "c"
        else scalar_cotangent("np.linalg.slogdet", sign_bar, batch, dtype)
    )
    return s_bar, l_bar


def pivot_tolerance(dtype: np.dtype[Any]) -> float:
    """``tau`` of ``kernels.determinant_lu``'s pivot test: ``sqrt(eps)`` of ``dtype``."""
    return math.sqrt(float(np.finfo(dtype).eps))


class DetStack:
    """Kernel path for stacks: the forward's partial-pivoting LU, kept (``kernels.determinant_lu``).

    ``det_bar conj(d) A^-H`` and ``d tr(A^-1 A_dot)`` from the kept factors for every matrix
    whose pivots pass the kernel's test (all nonzero, the smallest at least ``sqrt(eps)`` times
    the largest, ``d`` a finite normal number); the others (singular, nearly so, badly scaled,
    NaN) take the complete-pivoting adjugate kernel, exact at rank ``n - 1``. Measured against
    exact (rational) cofactors, the kept LU's adjugate was as accurate as the complete-pivoting
    one even with no threshold (``tau = 0``) on random, graded, nearly singular (``s_min =
    1e-13``) and rounded rank ``n - 1`` matrices at n = 5 (max error 3e-15 of ``max|adj|``), so
    the threshold is a margin, not a repair (tests/rules/linalg/test_determinant_stacks.py).
    """

    __slots__ = ("d", "lu", "ok", "piv", "stack")

    def __init__(self, A: np.ndarray) -> None:
        self.stack = flat(A)
        if A.shape[-1] == 0 or self.stack.shape[0] == 0:  # nothing to factor
            self.d, self.lu = as_array(np.linalg.det(self.stack)), None
        else:
            self.lu, self.piv, self.d, self.ok = kdet_lu.lu_det_batched(
                self.stack, pivot_tolerance(A.dtype)
            )

    def _others(self) -> np.ndarray | None:
        """The indices of the matrices that failed the pivot test, or None."""
        return None if self.ok.all() else np.flatnonzero(~self.ok)

    def pullback(self, bar: np.ndarray) -> np.ndarray:
        if self.lu is None:
            return kdet.det_pullback_batched(self.stack, bar)
        A_bar = kdet_lu.scaled_inverse_adjoint_batched(self.lu, self.piv, bar * self.d.conj())
        others = self._others()
        if others is not None:
            A_bar[others] = kdet.det_pullback_batched(self.stack[others], bar[others])
        return A_bar

    def pushforward(self, A_dot: np.ndarray) -> np.ndarray:
        if self.lu is None:
            return kdet.det_pushforward_batched(self.stack, A_dot)
        d_dot = self.d * kdet_lu.inverse_trace_batched(self.lu, self.piv, A_dot)
        others = self._others()
        if others is not None:
            d_dot[others] = kdet.det_pushforward_batched(self.stack[others], A_dot[others])
        return d_dot


class SlogdetStack:
    """Kernel path for stacks: the batched LU's factors and slogdet in one compiled call, kept.

    ``kernels.determinant_lu``: the pullback is ``c A^-H`` and the pushforward reads
    ``tr(A^-1 A_dot)`` off ``A^-1``, both from the kept factors.
    """

    __slots__ = ("logabsdet", "lu", "piv", "sign", "stack")

    def __init__(self, A: np.ndarray) -> None:
        self.stack = flat(A)
        self.lu, self.piv, self.sign, self.logabsdet = kdet_lu.lu_slogdet_batched(self.stack)

    def pullback(self, sign_bar: Any, logabsdet_bar: Any, batch: tuple[int, ...]) -> np.ndarray:
        s_bar, l_bar = slogdet_bars(sign_bar, logabsdet_bar, batch, self.stack)
        if self.stack.dtype.kind == "c":  # c = l_bar + i Im(conj(sign) s_bar)
            c = l_bar + 1j * (self.sign.conj() * s_bar).imag
        else:
            c = l_bar
        return kdet_lu.scaled_inverse_adjoint_batched(self.lu, self.piv, c)

    def pushforward(self, A_dot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        tau = kdet_lu.inverse_trace_batched(self.lu, self.piv, A_dot)
        if self.stack.dtype.kind == "c":
            return self.sign * (1j * tau.imag), tau.real.copy()
        return np.zeros_like(self.sign), tau
