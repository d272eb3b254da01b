"""``np.linalg.slogdet`` of one plain real matrix: the commonest call, kept off the general path.

The general forward pass of :mod:`rules.linalg.determinant` (stacks, dtype casts, per-matrix
lists) costs several times LAPACK's own work at 4x4. Here the forward pass is ``getrf`` once,
the pullback ``getri`` (``A^-T``) and the pushforward ``getrs`` (``tr(A^-1 A_dot)``), in Python
scalars, as that module's LAPACK path computes them; a C-ordered 4x4 matrix takes one compiled
call, ``kernels.determinant.slogdet_inverse4``, for the sign, logabsdet and ``A^-T`` at once.
The formulas are the module docstring's of :mod:`rules.linalg.determinant`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from kernels import crossovers
from kernels import determinant as kdet
from kernels._blas import getri
from rules.core.registry import split_cotangent
from rules.linalg._determinant_stacks import SlogdetResult, scalar_cotangent, tangent_stack
from rules.linalg._systems import lapack_functions
from tangents import AbstractZero, NoTangent, Tangent, ZeroTangent, unthunk

_REAL_SCALARS = (float, np.float64, np.float32)


class SlogdetOne:
    """The forward pass of ``slogdet`` of one ``plain_real_square`` matrix: getrf's LU, kept."""

    __slots__ = ("lu", "piv", "sign", "y")

    def __init__(self, A: np.ndarray) -> None:
        getrf, _, _ = lapack_functions(("getrf", "getrs", "getri"), A.dtype)
        self.lu, self.piv, _ = getrf(A)  # info > 0 (a zero pivot) is read off the diagonal
        # determinant._sign_and_log_small in Python floats (real A): numpy's sum of log|u_kk|,
        # in its order
        d = self.lu.diagonal().tolist()
        if 0.0 in d:
            self.sign, logabsdet = 0.0, -math.inf
        else:
            negative = 0  # row swaps, counted in a plain loop (sum of a generator: 0.2 us more)
            for i, p in enumerate(self.piv.tolist()):
                negative += p != i
            logabsdet = 0.0
            for x in d:
                logabsdet += math.log(abs(x))
                negative += x < 0
            self.sign = -1.0 if negative % 2 else 1.0
        scalar = A.dtype.type
        self.y = tuple.__new__(SlogdetResult, (scalar(self.sign), scalar(logabsdet)))

    def pullback(self, y_bar: Any) -> Any:
        """``A_bar = logabsdet_bar A^-T`` (the sign of a real determinant is locally constant)."""
        l_bar = logabsdet_bar(y_bar, self.lu.dtype)
        if l_bar is None:
            return ZeroTangent()
        if self.sign == 0:  # logabsdet = -inf: no derivative
            return np.full(self.lu.shape, np.nan, self.lu.dtype)
        if self.lu.shape[0] > crossovers.DET_GETRI_MAX_N:
            return kdet.slogdet_pullback_lapack(self.lu, self.piv, self.sign, 0.0, l_bar)
        A_inverse = getri(self.lu, self.piv)[0]  # blocked: its optimal workspace; a new array
        A_inverse *= l_bar  # in place; a Python float: the dtype stays the matrix's
        return A_inverse.T

    def pushforward(self, A_dot: Any) -> Any:
        """``logabsdet_dot = tr(A^-1 A_dot)``, ``sign_dot = 0``."""
        dtype = self.lu.dtype
        if type(A_dot) is not np.ndarray or A_dot.dtype != dtype or A_dot.shape != self.lu.shape:
            A_dot = tangent_stack("np.linalg.slogdet", A_dot, self.lu, (1, *self.lu.shape))[0]
        if self.sign == 0:  # as the general LAPACK path: getrs with the zero pivot gives inf/NaN
            _, l_dot = kdet.slogdet_pushforward_lapack(self.lu, self.piv, self.sign, A_dot)
        else:
            _, getrs, _ = lapack_functions(("getrf", "getrs", "getri"), dtype)
            l_dot = sum(getrs(self.lu, self.piv, A_dot)[0].diagonal().tolist())
        return Tangent(SlogdetResult, sign=ZeroTangent(), logabsdet=dtype.type(l_dot))


def logabsdet_bar(y_bar: Any, real: np.dtype[Any]) -> float | None:
    """The cotangent of a real ``slogdet``'s logabsdet as a Python float; ``None`` for a zero."""
    if type(y_bar) is tuple and len(y_bar) == 2:
        l_bar = y_bar[1]
    else:
        l_bar = split_cotangent(y_bar, 2)[1]
    if type(l_bar) is np.ndarray and l_bar.shape == ():
        return l_bar.real.item()
    if type(l_bar) in _REAL_SCALARS:  # a user's float: 6.8 -> 2.5 us at 4x4
        return float(l_bar)
    l_bar = unthunk(l_bar)
    if isinstance(l_bar, AbstractZero):
        return None
    return scalar_cotangent("np.linalg.slogdet", l_bar, (), real)[0]


def slogdet_rrule4(a: np.ndarray) -> tuple[Any, Any]:
    """``slogdet_rrule`` of one plain real C-ordered 4x4 matrix: one compiled call.

    ``kernels.determinant.slogdet_inverse4`` returns the sign, logabsdet and ``A^-T`` at
    once, so the pullback is one product (bench case ``slogdet.pullback --sizes 4``, whole
    call: LAPACK's getrf, then getri in the pullback, cost about twice as much).
    """
    sign, logabsdet, Z = kdet.slogdet_inverse4(a)
    scalar, dtype, no_tangent = a.dtype.type, a.dtype, NoTangent()
    y = tuple.__new__(SlogdetResult, (scalar(sign), scalar(logabsdet)))

    def slogdet_pullback4(y_bar: Any) -> tuple[Any, Any]:
        l_bar = logabsdet_bar(y_bar, dtype)
        if l_bar is None:
            return no_tangent, ZeroTangent()
        if sign == 0:  # logabsdet = -inf: no derivative
            return no_tangent, np.full((4, 4), np.nan, dtype)
        return no_tangent, Z * l_bar  # a Python float: the dtype stays the matrix's

    return y, slogdet_pullback4
