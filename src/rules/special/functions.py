r"""Rules for scipy.special: elementwise functions (a table) and the log-sum-exp family.

Elementwise rows use :func:`rules.scalar_rule`, as in :mod:`rules.arrays.elementwise`:

* ``expit`` :math:`\sigma(x) = 1/(1 + e^{-x})`: :math:`\sigma' = y (1 - y)`.
* ``logit`` :math:`\log(x/(1-x))`: :math:`1/(x (1 - x))` (``inf`` at 0 and 1).
* ``erf``: :math:`2 e^{-x^2}/\sqrt\pi`; ``erfc``: its negative (both holomorphic: complex too).
* ``gammaln`` :math:`\log|\Gamma(x)|`: :math:`\psi(x)` (real only, as scipy's ``gammaln``).
* ``digamma`` :math:`\psi`: the trigamma function ``polygamma(1, x)`` (real only: scipy's
  ``polygamma`` has no complex loop, so complex ``digamma`` input is not supported).
* ``xlogy(x, y) = x log y``: :math:`(\log y,\ x/y)`; ``xlog1py(x, y) = x log(1 + y)``:
  :math:`(\log(1 + y),\ x/(1 + y))`. Both are 0 at ``x = 0`` whatever ``y``, so their ``y``
  partial is 0 where ``x == 0`` (also at ``y = 0``, where ``x/y`` would be NaN).

Reductions over ``axis`` (``None``, an int or a tuple), with :math:`s = \operatorname{softmax}(a)`
along the axes and sums taken over them:

* ``logsumexp(a, axis, b)`` :math:`= \log \sum b\, e^{a}`: :math:`\bar a = \overline{b\,e^{a - y}}\,\bar y`
  and, when ``b`` is passed positionally, :math:`\bar b = \overline{e^{a - y}}\,\bar y` (summed over
  its broadcast axes). ``return_sign=True`` is refused.
* ``softmax`` :math:`y = s`: :math:`\bar a = \overline{s} \odot (\bar y - \sum \overline{s}\,\bar y)`
  (the Jacobian :math:`\operatorname{diag}(s) - s s^T` is symmetric, so only conjugated).
* ``log_softmax`` :math:`y = a - \operatorname{logsumexp}(a)`: :math:`\bar a = \bar y - \overline{s}\sum \bar y`.

References
----------
DLMF 5.15 (polygamma), 7.2 (erf); JAX ``jax/_src/scipy/special.py`` and
``jax/_src/nn/functions.py`` for the log-sum-exp family.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special as sc

from rules.arrays.reductions import expand_reduced
from rules.core.broadcasting import unbroadcast
from rules.core.cotangents import as_array_cotangent
from rules.core.definition import scalar_rule
from rules.core.nesting import as_array, call
from rules.core.options import normalize_axes, refuse, rrule_with_options
from rules.core.registry import frule
from tangents import AbstractZero, NoTangent, ProjectTo, Thunk, ZeroTangent, unthunk

__all__: list[str] = []

_TWO_OVER_SQRT_PI = 2 / np.sqrt(np.pi)


def _x_over(x: Any, d: Any) -> Any:
    """``x / d``, 0 where ``x == 0`` (the ``y`` partial of ``xlogy``/``xlog1py``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, 0, x / d)


def _quiet(log: Any, y: Any) -> Any:
    """``log(y)`` without a warning: ``-inf`` at 0 is the documented slope of ``x log y`` in ``x``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return log(y)


def _trigamma(x: Any) -> Any:
    """``polygamma(1, x)``, the derivative of ``digamma``, which scipy has for real ``x`` only."""
    if np.iscomplexobj(x):
        raise TypeError(
            "the rules of digamma support real input only (scipy has no complex trigamma)"
        )
    return call(sc.polygamma, 1, x)


# --- elementwise --------------------------------------------------------------------------------

scalar_rule(sc.expit, lambda x, y: y * (1 - y))
scalar_rule(sc.logit, lambda x, y: 1 / (x * (1 - x)))
scalar_rule(sc.erf, lambda x, y: _TWO_OVER_SQRT_PI * np.exp(-x * x))
scalar_rule(sc.erfc, lambda x, y: -_TWO_OVER_SQRT_PI * np.exp(-x * x))
scalar_rule(sc.gammaln, lambda x, y: sc.digamma(x))
scalar_rule(sc.digamma, lambda x, y: _trigamma(x))
scalar_rule(sc.xlogy, lambda x, y, out: (_quiet(np.log, y), _x_over(x, y)))
scalar_rule(sc.xlog1py, lambda x, y, out: (_quiet(np.log1p, y), _x_over(x, 1 + y)))


# --- logsumexp ----------------------------------------------------------------------------------


def _axes_of(x: Any, axis: Any) -> tuple[int, ...]:
    return normalize_axes(axis, np.ndim(x))


@rrule_with_options(sc.logsumexp)
def logsumexp_rrule(
    a: Any, axis: Any = None, b: Any = None, keepdims: bool = False, return_sign: bool = False
) -> Any:
    r"""``y = log sum(b exp(a))``: :math:`\bar a = \overline{b e^{a - y}}\,\bar y`, :math:`\bar b = \overline{e^{a - y}}\,\bar y`."""
    refuse("logsumexp", return_sign=return_sign)
    y = call(sc.logsumexp, a, axis, b, keepdims)
    axes = _axes_of(a, axis)
    project_a = ProjectTo(a)
    project_b = ProjectTo(b)

    def logsumexp_pullback(y_bar: Any) -> tuple[Any, ...]:
        g = expand_reduced(as_array_cotangent(y_bar, "logsumexp's pullback"), axes, keepdims)
        weights = np.exp(as_array(a) - expand_reduced(y, axes, keepdims))
        scaled = weights if b is None else b * weights
        a_bar = project_a(np.broadcast_to(np.conj(scaled) * g, np.shape(a)).copy())
        if b is None:
            return NoTangent(), a_bar
        b_bar = Thunk(lambda: project_b(unbroadcast(np.conj(weights) * g, np.shape(b))))
        return NoTangent(), a_bar, NoTangent(), b_bar

    return y, logsumexp_pullback


@frule.register(sc.logsumexp)
def logsumexp_frule(
    tangents: tuple[Any, ...],
    a: Any,
    axis: Any = None,
    b: Any = None,
    keepdims: bool = False,
    return_sign: bool = False,
) -> Any:
    r"""``ẏ = sum(b exp(a - y) ȧ) + sum(exp(a - y) ḃ)`` (the second when ``b`` is positional)."""
    refuse("logsumexp", return_sign=return_sign)
    y = call(sc.logsumexp, a, axis, b, keepdims)
    axes = _axes_of(a, axis)
    weights = np.exp(as_array(a) - expand_reduced(y, axes, keepdims))
    moved: Any = ZeroTangent()
    a_dot = unthunk(tangents[1])
    if not isinstance(a_dot, AbstractZero):
        scaled = weights if b is None else b * weights
        moved = scaled * as_array_cotangent(a_dot, "logsumexp's frule")
    b_dot = unthunk(tangents[3]) if len(tangents) > 3 else NoTangent()
    if b is not None and not isinstance(b_dot, AbstractZero):
        moved = moved + weights * as_array_cotangent(b_dot, "logsumexp's frule")
    if isinstance(moved, AbstractZero):
        return y, ZeroTangent()
    moved = np.broadcast_to(moved, np.broadcast_shapes(np.shape(a), np.shape(moved)))
    return y, ProjectTo(y)(np.sum(moved, axis=axes, keepdims=keepdims))


# --- softmax and log_softmax --------------------------------------------------------------------


@rrule_with_options(sc.softmax)
def softmax_rrule(x: Any, axis: Any = None) -> Any:
    r"""``s = softmax(x)``: :math:`\bar x = \overline{s} \odot (\bar s - \sum \overline{s}\,\bar s)`."""
    s = call(sc.softmax, x, axis=axis)
    axes = _axes_of(x, axis)
    project_x = ProjectTo(x)

    def softmax_pullback(s_bar: Any) -> tuple[Any, Any]:
        g = as_array_cotangent(s_bar, "softmax's pullback")
        s_conj = np.conj(s)
        return NoTangent(), project_x(s_conj * (g - np.sum(s_conj * g, axis=axes, keepdims=True)))

    return s, softmax_pullback


@frule.register(sc.softmax)
def softmax_frule(tangents: tuple[Any, ...], x: Any, axis: Any = None) -> Any:
    r"""``ṡ = s ⊙ (ẋ - sum(s ẋ))``."""
    s = call(sc.softmax, x, axis=axis)
    x_dot = as_array_cotangent(tangents[1], "softmax's frule")
    s_dot = s * (x_dot - np.sum(s * x_dot, axis=_axes_of(x, axis), keepdims=True))
    return s, ProjectTo(s)(s_dot)


@rrule_with_options(sc.log_softmax)
def log_softmax_rrule(x: Any, axis: Any = None) -> Any:
    r"""``y = x - logsumexp(x)``: :math:`\bar x = \bar y - \overline{s} \sum \bar y`, :math:`s = e^y`."""
    y = call(sc.log_softmax, x, axis=axis)
    axes = _axes_of(x, axis)
    project_x = ProjectTo(x)

    def log_softmax_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = as_array_cotangent(y_bar, "log_softmax's pullback")
        return NoTangent(), project_x(g - np.conj(np.exp(y)) * np.sum(g, axis=axes, keepdims=True))

    return y, log_softmax_pullback


@frule.register(sc.log_softmax)
def log_softmax_frule(tangents: tuple[Any, ...], x: Any, axis: Any = None) -> Any:
    r"""``ẏ = ẋ - sum(s ẋ)``."""
    y = call(sc.log_softmax, x, axis=axis)
    x_dot = as_array_cotangent(tangents[1], "log_softmax's frule")
    y_dot = x_dot - np.sum(np.exp(y) * x_dot, axis=_axes_of(x, axis), keepdims=True)
    return y, ProjectTo(y)(y_dot)
