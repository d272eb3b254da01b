r"""Elementwise rules for numpy ufuncs: a table, one row per function with its partials.

Each row is ``scalar_rule(f, partials)`` (see :mod:`rules.core.definition`): ``partials(*args, y)``
returns :math:`\partial f / \partial x_i` at the inputs and the output ``y``. Every function here
is holomorphic where numpy defines it for complex numbers (the others are real only), so the
pullback :math:`\bar x_i = \overline{\partial_i f}\,\bar y` of ``scalar_rule`` is right for
complex inputs too. The linear ones (``add``, ``subtract``, ``negative``, ``positive``) are
written out by hand to skip a multiplication by one. Non-holomorphic functions (``absolute``,
``angle``, ``conj``, ``real``, ``imag``) are in :mod:`rules.arrays.elementwise_complex`; piecewise ones
(``maximum``, ``clip``, ``where``, ...) in :mod:`rules.arrays.selection`.

The operator functions ``operator.add``, ``sub``, ``mul``, ``truediv``, ``neg``, ``pos`` and
``pow`` share the rules of their ufuncs when every operand is a number or an ndarray (that is
what numpy routes ``a + b`` to); for other operands (lists, tuples, user classes) they have no
rule and ``rrule``/``frule`` return ``None``.

Degenerate points
-----------------
* ``sqrt`` and ``cbrt`` at 0: the derivative is ``+inf`` (no warning is raised; the
  one-sided derivative really is infinite). ``arcsin``/``arccos`` at ±1, ``arctanh`` at ±1,
  ``arccosh`` at 1 and ``log``-type functions at 0 give ``inf`` likewise.
* ``power(x, p)``: :math:`\partial_p = y \log|x|` for real ``x`` (the real part of the complex
  derivative, as ChainRules.jl does, so that a negative base with an integral float exponent has
  a finite exponent cotangent) and :math:`y \log x` for complex ``x``; both are 0 where ``x == 0``
  (there :math:`x^p` is 0 for every ``p > 0``). :math:`\partial_x = p x^{p-1}` is 0 where
  ``p == 0``, also at ``x == 0``.
* ``arctan2(0, 0)`` and ``hypot(0, 0)``: the partials are 0 (their limits do not exist).

References
----------
Partial derivatives as in ChainRules.jl ``src/rulesets/Base/fastmath_able.jl`` and ``base.jl``
(reference notes ``chainrules-linalg-and-testutils.md`` section 2.2-2.3); inverse trigonometric
and hyperbolic functions: DLMF 4.24 and 4.34.
"""

from __future__ import annotations

import numbers
import operator
from typing import Any

import numpy as np

from rules.core.broadcasting import broadcast_tangent, unbroadcast
from rules.core.definition import scalar_rule
from rules.core.nesting import as_array, innermost_value
from rules.core.options import is_constant, refuse
from rules.core.registry import frule, rrule
from tangents import AbstractZero, NoTangent, ProjectTo, ZeroTangent, unthunk

__all__: list[str] = []

_LN2 = np.log(2.0)
_LN10 = np.log(10.0)


def _inexact(x: Any) -> Any:
    """``x`` itself if it is a float or complex, else ``x`` as float64 (for integer powers)."""
    if np.issubdtype(np.result_type(x), np.inexact):
        return x
    return as_array(x, dtype=np.float64)


def _quiet(partials: Any) -> Any:
    """Evaluate ``partials`` without divide/invalid warnings: its infinities are documented."""

    def quiet_partials(*args: Any) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):
            return partials(*args)

    quiet_partials.__qualname__ = getattr(partials, "__qualname__", "partials")
    return quiet_partials


# --- linear: add, subtract, negative, positive -------------------------------------------------


def _register_linear(f: Any, signs: tuple[int, ...]) -> None:
    """Rrule and frule of ``f(x1, ..., xn) = sum_i signs[i] * x_i`` (broadcasting)."""
    name = f.__name__
    summing = f"np.{name}'s pullback (summing over broadcast axes)"
    broadcasting = f"np.{name}'s frule (broadcasting a tangent)"

    def linear_rrule(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        refuse(name, out=kwargs.pop("out", None), where=kwargs.pop("where", True) is not True)
        y = f(*args, **kwargs)
        projectors = tuple(None if is_constant(x) else ProjectTo(x) for x in args)
        shapes = tuple(np.shape(x) for x in args)

        def linear_pullback(y_bar: Any) -> tuple[Any, ...]:
            y_bar = unthunk(y_bar)
            cotangents: list[Any] = [NoTangent()]
            for project, shape, sign in zip(projectors, shapes, signs, strict=True):
                if project is None:
                    cotangents.append(NoTangent())
                    continue
                g = y_bar if sign > 0 else -y_bar
                cotangents.append(project(unbroadcast(g, shape, summing)))
            return tuple(cotangents)

        linear_pullback.__qualname__ = f"{name}_pullback"
        return y, linear_pullback

    def linear_frule(tangents: tuple[Any, ...], *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        refuse(name, out=kwargs.pop("out", None), where=kwargs.pop("where", True) is not True)
        y = f(*args, **kwargs)
        y_dot: Any = ZeroTangent()
        for x, x_dot, sign in zip(args, tangents[1:], signs, strict=True):
            if is_constant(x):
                continue
            x_dot = unthunk(x_dot)
            y_dot = y_dot + x_dot if sign > 0 else y_dot - x_dot
        if isinstance(y_dot, AbstractZero):
            return y, ZeroTangent()
        return y, ProjectTo(y)(broadcast_tangent(y_dot, np.shape(y), broadcasting))

    linear_rrule.__qualname__ = f"{name}_rrule"
    linear_frule.__qualname__ = f"{name}_frule"
    rrule.register(f)(linear_rrule)
    frule.register(f)(linear_frule)


_register_linear(np.add, (1, 1))
_register_linear(np.subtract, (1, -1))
_register_linear(np.negative, (-1,))
_register_linear(np.positive, (1,))


# --- arithmetic and powers ----------------------------------------------------------------------


def _power_partials(x: Any, p: Any, y: Any) -> tuple[Any, Any]:
    """Partials of ``x**p``; see "Degenerate points" in the module docstring."""
    x = _inexact(x)
    dx = np.where(p == 0, 0, p * x ** (p - 1))
    log_x = np.log(x) if np.iscomplexobj(x) else np.log(np.abs(x))
    dp = np.where(x == 0, 0, log_x * y)
    return dx, dp


def _float_power_partials(x: Any, p: Any, y: Any) -> tuple[Any, Any]:
    """Partials of ``float_power(x, p)``: those of ``power``, in double precision."""
    return _power_partials(as_array(x, dtype=np.result_type(x, np.float64)), p, y)


scalar_rule(np.multiply, lambda a, b, y: (b, a))
scalar_rule(np.divide, _quiet(lambda a, b, y: (1 / b, -y / b)))
scalar_rule(np.power, _quiet(_power_partials))
scalar_rule(np.float_power, _quiet(_float_power_partials))
scalar_rule(np.square, lambda x, y: 2 * x)
scalar_rule(np.sqrt, _quiet(lambda x, y: 0.5 / y))
scalar_rule(np.cbrt, _quiet(lambda x, y: 1 / (3 * y * y)))
scalar_rule(np.reciprocal, lambda x, y: -(y * y))

# --- exponentials and logarithms ----------------------------------------------------------------

scalar_rule(np.exp, lambda x, y: y)
scalar_rule(np.exp2, lambda x, y: _LN2 * y)
scalar_rule(np.expm1, lambda x, y: y + 1)
scalar_rule(np.log, _quiet(lambda x, y: 1 / x))
scalar_rule(np.log2, _quiet(lambda x, y: 1 / (_LN2 * x)))
scalar_rule(np.log10, _quiet(lambda x, y: 1 / (_LN10 * x)))
scalar_rule(np.log1p, _quiet(lambda x, y: 1 / (1 + x)))
# d/da log(e^a + e^b) = e^(a - y): a softmax weight, computed without overflow.
scalar_rule(np.logaddexp, lambda a, b, y: (np.exp(a - y), np.exp(b - y)))
scalar_rule(np.logaddexp2, lambda a, b, y: (np.exp2(a - y), np.exp2(b - y)))

# --- trigonometric ------------------------------------------------------------------------------

scalar_rule(np.sin, lambda x, y: np.cos(x))
scalar_rule(np.cos, lambda x, y: -np.sin(x))
scalar_rule(np.tan, lambda x, y: 1 + y * y)
scalar_rule(np.arcsin, _quiet(lambda x, y: 1 / np.sqrt(1 - x * x)))
scalar_rule(np.arccos, _quiet(lambda x, y: -1 / np.sqrt(1 - x * x)))
scalar_rule(np.arctan, lambda x, y: 1 / (1 + x * x))


def _arctan2_partials(a: Any, b: Any, y: Any) -> tuple[Any, Any]:
    """``arctan2(a, b)``: ``(b, -a) / (a^2 + b^2)``, 0 at the origin."""
    r2 = a * a + b * b
    safe = np.where(r2 == 0, 1, r2)
    return np.where(r2 == 0, 0, b / safe), np.where(r2 == 0, 0, -a / safe)


def _hypot_partials(a: Any, b: Any, y: Any) -> tuple[Any, Any]:
    """``hypot(a, b)``: ``(a, b) / y``, 0 at the origin."""
    safe = np.where(y == 0, 1, y)
    return a / safe, b / safe


scalar_rule(np.arctan2, _arctan2_partials)
scalar_rule(np.hypot, _hypot_partials)
scalar_rule(np.deg2rad, lambda x, y: np.pi / 180)
scalar_rule(np.rad2deg, lambda x, y: 180 / np.pi)

# --- hyperbolic ---------------------------------------------------------------------------------

scalar_rule(np.sinh, lambda x, y: np.cosh(x))
scalar_rule(np.cosh, lambda x, y: np.sinh(x))
scalar_rule(np.tanh, lambda x, y: 1 - y * y)
scalar_rule(np.arcsinh, lambda x, y: 1 / np.sqrt(x * x + 1))
# sqrt(x - 1) sqrt(x + 1), not sqrt(x^2 - 1): the branch of numpy's complex arccosh (DLMF 4.37.19).
scalar_rule(np.arccosh, _quiet(lambda x, y: 1 / (np.sqrt(x - 1) * np.sqrt(x + 1))))
scalar_rule(np.arctanh, _quiet(lambda x, y: 1 / (1 - x * x)))


# --- operators ----------------------------------------------------------------------------------

_OPERATORS = {
    operator.add: np.add,
    operator.sub: np.subtract,
    operator.mul: np.multiply,
    operator.truediv: np.divide,
    operator.neg: np.negative,
    operator.pos: np.positive,
    operator.pow: np.power,
}


def _numeric(args: tuple[Any, ...]) -> bool:
    """Every operand an ndarray or a number (a traced one standing for one counts too)."""
    return all(
        isinstance(innermost_value(x), np.ndarray | np.generic | numbers.Number) for x in args
    )


def _register_operator(op: Any, ufunc: Any) -> None:
    """``op`` uses the rules of ``ufunc`` when every operand is a number or an ndarray."""
    name = op.__name__

    def operator_rrule(*args: Any) -> Any:
        return rrule(ufunc, *args) if _numeric(args) else None

    def operator_frule(tangents: tuple[Any, ...], *args: Any) -> Any:
        return frule(tangents, ufunc, *args) if _numeric(args) else None

    operator_rrule.__qualname__ = f"operator_{name}_rrule"
    operator_frule.__qualname__ = f"operator_{name}_frule"
    rrule.register(op)(operator_rrule)
    frule.register(op)(operator_frule)


for _op, _ufunc in _OPERATORS.items():
    _register_operator(_op, _ufunc)
