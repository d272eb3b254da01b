r"""Rules for determinants: ``np.linalg.det`` and ``np.linalg.slogdet``.

det, by Jacobi's formula (Magnus & Neudecker 2019, ch. 8), with ``adj(A)`` the adjugate and the
complex convention ``det_bar = dL/dRe det + i dL/dIm det``:

.. math::

    \dot{\det} = \operatorname{tr}(\operatorname{adj}(A) \dot A), \qquad
    \bar A = \overline{\det}\, \operatorname{adj}(A)^H
           \;(= \overline{\det}\, \overline{\det A}\, A^{-H} \text{ when } A \text{ is invertible}).

The adjugate is a polynomial in ``A``, so this is exact at singular matrices: at rank ``n - 1``
the cotangent is the cofactor matrix (rank one), not NaN (JAX's behaviour too) and not zero
(PyTorch's LU path gives 0 there); below rank ``n - 1`` it is exactly zero.

slogdet, ``(sign, logabsdet)`` with ``det = sign * exp(logabsdet)``. With
``tau = tr(A^{-1} \dot A)`` and ``z = conj(sign) sign_bar``:

.. math::

    \dot{\text{logabsdet}} = \operatorname{Re} \tau, \quad
    \dot{\text{sign}} = i\, \text{sign}\, \operatorname{Im} \tau, \qquad
    \bar A = (\overline{\text{logabsdet}} + i \operatorname{Im} z)\, A^{-H}.

For real ``A`` the sign is locally constant: its tangent is ``ZeroTangent()`` and its cotangent
is ignored. At a singular matrix ``logabsdet = -inf`` has no derivative: the cotangent is
non-finite (inf/NaN), never an exception and never a silently finite number. NaN in gives NaN
out without warnings.

Paths (chosen by :func:`rules.core.dispatch.paths` in the forward pass; each path is a class
that keeps what its own pullback and pushforward need):

* algebra path: none. Both rules need the cotangent of a scalar output: numbers and ndarrays,
  converted with ``as_array_cotangent`` (there is no matrix algebra to keep generic).
* array-formula path (det): numpy's batched gufuncs, which loop over a stack in C:
  ``np.linalg.det`` forward, ``det conj(det) A^{-H}`` by ``np.linalg.inv`` in the pullback and
  ``det tr(A^{-1} A_dot)`` by ``np.linalg.solve`` in the pushforward, for mid-size stacks (above
  ``kernels.crossovers.DET_STACK_MAX_N`` up to ``DET_GUFUNC_STACK_MAX_N``); a stack holding an
  exactly singular matrix (``inv`` and ``solve`` raise) takes the exact LAPACK path instead.
  slogdet has none of its own (every ndarray is cast to a kernel dtype).
* kernel path: det by ``kernels.determinant`` (complete pivoting, which reveals rank ``n -
  1``) for one matrix up to ``DET_SINGLE_MAX_N``; stacks up to ``DET_STACK_MAX_N`` keep the
  forward's partial-pivoting LU (``kernels.determinant_lu``, in
  :mod:`rules.linalg._determinant_stacks`) and form ``det conj(det) A^-H`` from it, sending only the matrices whose pivots fail a test
  (singular, nearly so, badly scaled, NaN) to the complete-pivoting kernel; above, the forward
  pass factors with LAPACK ``getrf`` and the pullback reuses that LU
  (``det_pullback_lapack``: ``getri`` if invertible, a rank-one formula at one zero pivot, an
  SVD adjugate below). slogdet computes ``(sign, logabsdet)`` from an LU it keeps, the batched
  kernel's for stacks up to ``SLOGDET_STACK_MAX_N`` (factors and slogdet in one call), LAPACK
  ``getrf``'s for one matrix and larger stacks, and its pullback and pushforward use ``A^-1``
  from it.

References
----------
.. [1] M. B. Giles, "An extended collection of matrix derivative results for forward and reverse
   mode algorithmic differentiation", Oxford NA report 08/01, 2008 (determinant).
.. [2] J. R. Magnus, H. Neudecker, "Matrix Differential Calculus with Applications in Statistics
   and Econometrics", 3rd ed., Wiley, 2019 (Jacobi's formula; the adjugate at rank n - 1).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.linalg as sla

from kernels import crossovers
from kernels import determinant as kdet
from kernels import determinant_value as kdet_value
from rules.core.dispatch import kernel_array, paths
from rules.core.nesting import as_array, call, is_traced
from rules.core.options import refuse as refuse_overwrite
from rules.core.registry import frule, rrule, split_cotangent
from rules.linalg import traced_systems
from rules.linalg._determinant_stacks import (
    DetStack,
    SlogdetResult,
    SlogdetStack,
    tangent_stack,
)
from rules.linalg._determinant_stacks import (
    flat as _flat,
)
from rules.linalg._determinant_stacks import (
    scalar_cotangent as _scalar_cotangent,
)
from rules.linalg._determinant_stacks import (
    slogdet_bars as _slogdet_bars,
)
from rules.linalg._slogdet_one import SlogdetOne, slogdet_rrule4
from rules.linalg._stacks import adjoint, plain_real_square, square_matrices
from rules.linalg._systems import LapackLU, cast, linalg_dtypes
from tangents import AbstractZero, NoTangent, ProjectTo, Tangent, ZeroTangent, unthunk


def _stack(name: str, a: Any) -> tuple[np.ndarray, np.ndarray, np.dtype[Any]]:
    """``(A, stack, result)``: ``a`` in the kernel dtype, as an ``(s, n, n)`` stack, the dtype."""
    A = a if type(a) is np.ndarray else as_array(a)
    work, result = linalg_dtypes(name, A.dtype)
    n = square_matrices(name, A).shape[-1]
    A = kernel_array(cast(A, work))
    return A, A.reshape(math.prod(A.shape[:-2]), n, n), result


def _output(values: np.ndarray, batch: tuple[int, ...], dtype: Any) -> Any:
    """``(s,)`` values in the output's shape and dtype: numpy scalars for one matrix."""
    return values.astype(dtype, copy=False).reshape(batch)[()]


# --- det ---------------------------------------------------------------------------------------


# --- det: the paths ----------------------------------------------------------------------------
# Algebra path: none. The cotangent of a scalar output has no matrix algebra to keep generic:
# numbers and ndarrays, converted with as_array_cotangent. Each path below is a forward pass
# that keeps what its own pullback and pushforward need; paths() chooses one per call.


class _DetFormula:
    """Array-formula path: numpy's batched gufuncs (they loop over a stack in C).

    ``det`` forward; ``A_bar = det_bar conj(det) A^-H`` by ``np.linalg.inv`` and ``d_dot = det
    tr(A^-1 A_dot)`` by ``np.linalg.solve`` (``adj(A) = det A^-1`` where ``A`` is invertible). A
    stack holding an exactly singular matrix (``inv`` and ``solve`` raise) takes the exact LAPACK
    path instead. For mid-size stacks, and whatever the kernels do not take.
    """

    __slots__ = ("d", "stack")

    def __init__(self, A: np.ndarray) -> None:
        self.stack = _flat(A)
        with np.errstate(all="ignore"):  # numpy warns on NaN; the rule gives NaN quietly
            self.d = as_array(np.linalg.det(self.stack))

    def pullback(self, bar: np.ndarray) -> np.ndarray:
        try:
            with np.errstate(all="ignore"):
                A_inverse = np.linalg.inv(self.stack)
        except np.linalg.LinAlgError:  # an exactly singular matrix: the exact LAPACK path
            return _DetLapack(self.stack).pullback(bar)
        return (bar * self.d.conj())[:, None, None] * adjoint(A_inverse)

    def pushforward(self, A_dot: np.ndarray) -> np.ndarray:
        try:
            with np.errstate(all="ignore"):
                C = np.linalg.solve(self.stack, A_dot)
        except np.linalg.LinAlgError:
            return _DetLapack(self.stack).pushforward(A_dot)
        return self.d * np.trace(C, axis1=-2, axis2=-1)


class _DetKernel:
    """Kernel path: the complete-pivoting kernels of ``kernels.determinant``.

    Complete pivoting reveals rank ``n - 1``; the whole stack goes in one compiled call, and
    nothing is kept but ``A``.
    """

    __slots__ = ("d", "stack")

    def __init__(self, A: np.ndarray) -> None:
        self.stack = _flat(A)
        if A.shape[-1] == 0:  # det of a 0 x 0 matrix is 1
            self.d = as_array(np.linalg.det(self.stack))
        else:
            self.d = kdet_value.det_batched(self.stack)

    def pullback(self, bar: np.ndarray) -> np.ndarray:
        return kdet.det_pullback_batched(self.stack, bar)

    def pushforward(self, A_dot: np.ndarray) -> np.ndarray:
        return kdet.det_pushforward_batched(self.stack, A_dot)


class _DetLapack:
    """Kernel path above the crossovers: LAPACK ``getrf`` per matrix, the LU kept.

    ``det = sign exp(logabsdet)`` from it, as numpy computes det; the pullback reuses it
    (``det_pullback_lapack``: ``getri`` if invertible, a rank-one formula at one zero pivot, an
    SVD adjugate below).
    """

    __slots__ = ("F", "d", "stack")

    def __init__(self, A: np.ndarray) -> None:
        self.stack = _flat(A)
        self.F = LapackLU(self.stack)
        sign, logabsdet = _sign_and_log(self.F)
        self.d = sign * np.exp(logabsdet)

    def pullback(self, bar: np.ndarray) -> np.ndarray:
        A_bar = np.empty_like(self.stack)
        for t, (lu, piv) in enumerate(self.F.factors):
            A_bar[t] = kdet.det_pullback_lapack(self.stack[t], lu, piv, bar[t])
        return A_bar

    def pushforward(self, A_dot: np.ndarray) -> np.ndarray:
        return np.array(
            [
                kdet.det_pushforward_lapack(self.stack[t], lu, piv, A_dot[t])
                for t, (lu, piv) in enumerate(self.F.factors)
            ]
        )


# The kernel up to DET_SINGLE_MAX_N (one matrix) and DET_STACK_MAX_N (stacks), numpy's gufuncs
# for stacks up to DET_GUFUNC_STACK_MAX_N, LAPACK with the kept LU above.
_DET = paths(
    formula=_DetFormula,
    single=_DetKernel,
    batched=DetStack,
    stacked=_DetFormula,
    large=_DetLapack,
    large_takes_stacks=True,
    single_max_n="DET_SINGLE_MAX_N",
    stack_max_n="DET_STACK_MAX_N",
    stacked_max_n="DET_GUFUNC_STACK_MAX_N",
)


class _Det:
    """The forward pass of ``det``: the path :data:`_DET` chose, and the output."""

    __slots__ = ("A", "batch", "path", "y")

    def __init__(self, a: Any) -> None:
        A, _, result = _stack("np.linalg.det", a)
        self.A, self.batch = A, A.shape[:-2]
        self.path = _DET(A)
        self.y = _output(self.path.d, self.batch, result)

    def pullback(self, det_bar: Any) -> np.ndarray:
        bar = _scalar_cotangent("np.linalg.det", det_bar, self.batch, self.A.dtype)
        return self.path.pullback(bar).reshape(self.A.shape)

    def pushforward(self, A_dot: Any) -> np.ndarray:
        shape = (math.prod(self.batch), *self.A.shape[-2:])
        A_dot = tangent_stack("np.linalg.det", A_dot, self.A, shape)
        return _output(self.path.pushforward(A_dot), self.batch, self.y.dtype)


@rrule.register(np.linalg.det)
def det_rrule(a: Any, /) -> tuple[Any, Any]:
    r"""Reverse rule for ``np.linalg.det``: :math:`\bar A = \overline{\det}\,\mathrm{adj}(A)^H`.

    Exact at singular matrices (see the module docstring); stacks ``(..., n, n)``.
    """
    if plain_real_square(a) and a.shape[0] <= crossovers.DET_SINGLE_MAX_N and a.flags.carray:
        return _det_one(a)
    if is_traced(a):  # a nested differentiation
        return traced_systems.det_rrule(np.linalg.det, a)
    forward = _Det(a)
    project_a = ProjectTo(a)

    def det_pullback(det_bar: Any) -> tuple[Any, Any]:
        return NoTangent(), project_a(forward.pullback(unthunk(det_bar)))

    return forward.y, det_pullback


def _det_one(a: np.ndarray) -> tuple[Any, Any]:
    """``det_rrule`` of one small plain real C-ordered matrix: the kernel path, straight away.

    The kernels of :class:`_DetKernel` on the one-matrix stack ``a[None]``, without the stack
    and dtype plumbing of :class:`_Det`; a cotangent that is not a plain scalar of ``a``'s
    dtype (a 0-d array, a numpy or Python float) takes :class:`_Det`'s pullback.
    """
    stack = a.reshape(1, *a.shape)
    dtype, scalar, no_tangent = a.dtype, a.dtype.type, NoTangent()

    def det_pullback(det_bar: Any) -> tuple[Any, Any]:
        if type(det_bar) is np.ndarray and det_bar.dtype is dtype and det_bar.shape == ():
            return no_tangent, kdet.det_pullback_batched(stack, det_bar.reshape(1))[0]
        if type(det_bar) is float or type(det_bar) is scalar:
            return no_tangent, kdet.det_pullback_batched(stack, np.array([det_bar], dtype))[0]
        return NoTangent(), ProjectTo(a)(_Det(a).pullback(unthunk(det_bar)))

    return kdet_value.det_batched(stack)[0], det_pullback


@frule.register(np.linalg.det)
def det_frule(tangents: tuple[Any, Any], a: Any, /) -> tuple[Any, Any]:
    r"""Forward rule for ``np.linalg.det``.

    :math:`\dot{\det} = \mathrm{tr}(\mathrm{adj}(A)\dot A)` (module docstring).
    """
    A_dot = tangents[1]
    if plain_real_square(a) and a.shape[0] <= crossovers.DET_SINGLE_MAX_N and a.flags.carray:
        plain = type(A_dot) is np.ndarray and A_dot.dtype is a.dtype and A_dot.flags.carray
        if plain and A_dot.shape == a.shape:  # one small plain matrix: the kernels straight away
            stack, n = a.reshape(1, *a.shape), a.shape[0]
            d_dot = kdet.det_pushforward_batched(stack, A_dot.reshape(1, n, n))
            return kdet_value.det_batched(stack)[0], d_dot[0]
    forward = _Det(a)
    return forward.y, forward.pushforward(unthunk(A_dot))


@rrule.register(sla.det)
def scipy_det_rrule(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """Reverse rule for ``scipy.linalg.det``: scipy's value, ``np.linalg.det``'s pullback."""
    if is_traced(a):  # a nested differentiation
        return traced_systems.det_rrule(sla.det, a)
    refuse_overwrite("scipy.linalg.det", overwrite_a=overwrite_a)
    y = call(sla.det, a, check_finite=check_finite)
    _, pullback = det_rrule(a)
    return y, pullback


@frule.register(sla.det)
def scipy_det_frule(
    tangents: tuple[Any, Any], a: Any, overwrite_a: bool = False, check_finite: bool = True
) -> Any:
    """Forward rule for ``scipy.linalg.det``: ``np.linalg.det``'s pushforward."""
    refuse_overwrite("scipy.linalg.det", overwrite_a=overwrite_a)
    y = call(sla.det, a, check_finite=check_finite)
    return y, ProjectTo(y)(det_frule(tangents[:2], a)[1])


# --- slogdet -----------------------------------------------------------------------------------


def _sign_and_log(F: LapackLU) -> tuple[np.ndarray, np.ndarray]:
    """``(sign, logabsdet)``, each ``(s,)``, from the LU ``P L U`` of a stack.

    ``det = det(P) prod(diag U)``; a zero pivot gives ``sign = 0`` and ``logabsdet = -inf`` as
    in numpy (masked, so no divide-by-zero warning). For real matrices the sign counts negative
    pivots, so NaN gives a sign of +-1, numpy's answer too.
    """
    if len(F.factors) == 1 and len(F.factors[0][1]) <= 32:
        return _sign_and_log_small(*F.factors[0])
    d = np.array([np.diagonal(lu) for lu, _ in F.factors])
    piv = np.array([p for _, p in F.factors])
    odd = (piv != np.arange(d.shape[-1])).sum(axis=-1)
    zero = (d == 0).any(axis=-1)
    singular = zero.any()
    if singular:
        d = np.where(d == 0, 1, d)
    absd = np.abs(d)
    logabsdet = np.log(absd).sum(axis=-1)
    if d.dtype.kind == "c":
        with np.errstate(invalid="ignore"):  # NaN pivots: NaN sign, quietly (as numpy)
            sign = (d / absd).prod(axis=-1) * (1 - 2 * (odd % 2))
    else:
        sign = (1 - 2 * ((odd + (d < 0).sum(axis=-1)) % 2)).astype(d.dtype)
    if singular:
        sign[zero], logabsdet[zero] = 0, -np.inf
    return sign, logabsdet


def _sign_and_log_small(lu: np.ndarray, piv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``_sign_and_log`` of one small matrix, in Python scalars.

    Faster than the vectorised version at small n, where its dozen numpy calls dominate.
    """
    d = lu.diagonal().tolist()
    odd = sum(1 for i, p in enumerate(piv.tolist()) if p != i)
    real = np.zeros((), lu.dtype).real.dtype
    if 0 in d:
        return np.zeros(1, lu.dtype), np.full(1, -np.inf, real)
    logabsdet = sum(math.log(abs(x)) for x in d)
    if lu.dtype.kind == "c":
        sign: complex | float = -1.0 if odd % 2 else 1.0
        for x in d:
            sign *= x / abs(x)
    else:
        sign = -1.0 if (odd + sum(1 for x in d if x < 0)) % 2 else 1.0
    return np.array([sign], lu.dtype), np.array([logabsdet], real)


# --- slogdet: the paths ------------------------------------------------------------------------
# Algebra path: none (scalar outputs, as for det). Array-formula path: none of its own; every
# ndarray is cast to a kernel dtype in the forward pass. Kernel path: the LU kept by the
# forward pass, the pullback and pushforward solve with it.


class _SlogdetLapack:
    """Kernel path for one matrix and large stacks: LAPACK ``getrf`` per matrix, the LU kept."""

    __slots__ = ("F", "logabsdet", "sign", "stack")

    def __init__(self, A: np.ndarray) -> None:
        self.stack = _flat(A)
        self.F = LapackLU(self.stack)
        self.sign, self.logabsdet = _sign_and_log(self.F)

    def pullback(self, sign_bar: Any, logabsdet_bar: Any, batch: tuple[int, ...]) -> np.ndarray:
        if not batch:  # one matrix: scalars to LAPACK, no arrays to build
            return self._pullback_one(sign_bar, logabsdet_bar)
        s_bar, l_bar = _slogdet_bars(sign_bar, logabsdet_bar, batch, self.stack)
        A_bar = np.empty_like(self.stack)
        for t, (lu, piv) in enumerate(self.F.factors):
            if self.sign[t] == 0:  # logabsdet = -inf: no derivative
                A_bar[t] = np.nan
            else:
                A_bar[t] = kdet.slogdet_pullback_lapack(lu, piv, self.sign[t], s_bar[t], l_bar[t])
        return A_bar

    def _pullback_one(self, sign_bar: Any, logabsdet_bar: Any) -> np.ndarray:
        dtype, real = self.stack.dtype, self.stack.real.dtype
        if self.sign[0] == 0:  # logabsdet = -inf: no derivative
            return np.full(self.stack.shape[1:], np.nan, dtype)
        lu, piv = self.F.factors[0]
        l_bar = 0.0
        if not isinstance(logabsdet_bar, AbstractZero):
            l_bar = _scalar_cotangent("np.linalg.slogdet", logabsdet_bar, (), real)[0]
        s_bar = 0.0
        if dtype.kind == "c" and not isinstance(sign_bar, AbstractZero):
            s_bar = _scalar_cotangent("np.linalg.slogdet", sign_bar, (), dtype)[0]
        return kdet.slogdet_pullback_lapack(lu, piv, self.sign[0], s_bar, l_bar)

    def pushforward(self, A_dot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pairs = [
            kdet.slogdet_pushforward_lapack(lu, piv, self.sign[t], A_dot[t])
            for t, (lu, piv) in enumerate(self.F.factors)
        ]
        sign_dot = np.array([p[0] for p in pairs], self.sign.dtype)
        return sign_dot, np.array([p[1] for p in pairs], self.stack.real.dtype)


# Stacks up to SLOGDET_STACK_MAX_N keep the batched LU kernel's factors; one matrix and larger
# stacks LAPACK's (a scipy wrapper's call costs less than a kernel dispatch for one matrix).
_SLOGDET = paths(
    formula=_SlogdetLapack,
    batched=SlogdetStack,
    large=_SlogdetLapack,
    large_takes_stacks=True,
    single_max_n=None,
    stack_max_n="SLOGDET_STACK_MAX_N",
)


class _Slogdet:
    """The forward pass of ``slogdet``: the path :data:`_SLOGDET` chose, and the output."""

    __slots__ = ("A", "batch", "path", "y")

    def __init__(self, a: Any) -> None:
        A, stack, result = _stack("np.linalg.slogdet", a)
        self.A, self.batch = A, A.shape[:-2]
        s, n = stack.shape[:2]
        if n == 0 or s == 0:  # nothing to factor: det = 1 (n = 0), or an empty stack
            self.path = None
            sign, logabsdet = np.ones(s, A.dtype), np.zeros(s, A.real.dtype)
        else:
            self.path = _SLOGDET(A)
            sign, logabsdet = self.path.sign, self.path.logabsdet
        real = np.zeros((), result).real.dtype
        self.y = SlogdetResult(
            _output(sign, self.batch, result), _output(logabsdet, self.batch, real)
        )

    def pullback(self, y_bar: Any) -> Any:
        sign_bar, logabsdet_bar = (unthunk(t) for t in split_cotangent(y_bar, 2))
        complex_ = self.A.dtype.kind == "c"
        if self.path is None or (isinstance(logabsdet_bar, AbstractZero) and not complex_):
            return ZeroTangent()  # the sign of a real determinant is locally constant
        return self.path.pullback(sign_bar, logabsdet_bar, self.batch).reshape(self.A.shape)

    def pushforward(self, A_dot: Any) -> Any:
        if self.path is None:
            return ZeroTangent()
        shape = (math.prod(self.batch), *self.A.shape[-2:])
        A_dot = tangent_stack("np.linalg.slogdet", A_dot, self.A, shape)
        sign_dot, l_dot = self.path.pushforward(A_dot)
        sign, logabsdet = self.y
        return Tangent(
            SlogdetResult,
            sign=_output(sign_dot, self.batch, as_array(sign).dtype)
            if self.A.dtype.kind == "c"
            else ZeroTangent(),
            logabsdet=_output(l_dot, self.batch, as_array(logabsdet).dtype),
        )


@rrule.register(np.linalg.slogdet)
def slogdet_rrule(a: Any, /) -> tuple[Any, Any]:
    r"""Reverse rule for ``np.linalg.slogdet``: :math:`\bar A = (\bar l + i\,\mathrm{Im}\,z)A^{-H}`.

    The cotangent is a ``Tangent(SlogdetResult, ...)`` or a plain ``(sign_bar,
    logabsdet_bar)`` tuple, either part possibly zero; see the module docstring.
    """
    if plain_real_square(a):
        if a.shape[0] == 4 and a.flags.c_contiguous:
            return slogdet_rrule4(a)
        one = SlogdetOne(a)
        no_tangent = NoTangent()

        def slogdet_pullback_one(y_bar: Any) -> tuple[Any, Any]:
            return no_tangent, one.pullback(y_bar)

        return one.y, slogdet_pullback_one
    if is_traced(a):  # a nested differentiation
        return traced_systems.slogdet_rrule(a)
    forward = _Slogdet(a)
    project_a = ProjectTo(a)

    def slogdet_pullback(y_bar: Any) -> tuple[Any, Any]:
        return NoTangent(), project_a(forward.pullback(y_bar))

    return forward.y, slogdet_pullback


@frule.register(np.linalg.slogdet)
def slogdet_frule(tangents: tuple[Any, Any], a: Any, /) -> tuple[Any, Any]:
    r"""Forward rule for ``np.linalg.slogdet``.

    :math:`\dot l = \mathrm{Re}\,\tau`, :math:`\dot s = i s\,\mathrm{Im}\,\tau` with
    :math:`\tau = \mathrm{tr}(A^{-1}\dot A)`; the sign's tangent is ``ZeroTangent()`` for
    real ``a``.
    """
    forward = SlogdetOne(a) if plain_real_square(a) else _Slogdet(a)
    return forward.y, forward.pushforward(unthunk(tangents[1]))
