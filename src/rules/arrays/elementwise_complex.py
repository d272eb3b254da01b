r"""Elementwise rules of the non-holomorphic functions: ``absolute``, ``angle``, ``sign``, ``conj``, ``real``, ``imag``.

These do not fit :func:`rules.scalar_rule` (which multiplies by a conjugated complex derivative),
so each is derived by hand in the convention of DESIGN.md section 3: for a complex input
:math:`z = a + ib` the cotangent is :math:`\bar z = \partial L/\partial a + i\,\partial L/\partial b`,
and for a real output :math:`y(a, b)` that is :math:`\bar z = \bar y\,(\partial_a y + i\,\partial_b y)`.

* ``absolute``: :math:`\bar z = \operatorname{Re}(\bar y)\,z/|z|` (``sign(x) ȳ`` for real ``x``);
  :math:`\dot y = \operatorname{Re}(\overline{z}\,\dot z)/|z|`.
* ``angle``: :math:`\bar z = \operatorname{Re}(\bar y)\,i z/|z|^2`;
  :math:`\dot y = \operatorname{Im}(\overline{z}\,\dot z)/|z|^2`; 0 for real input (it is
  piecewise constant).
* ``sign`` (complex: :math:`y = z/|z|`, numpy 2's definition):
  :math:`\bar z = (\bar y - y\operatorname{Re}(\overline{y}\,\bar y))/|z|`;
  :math:`\dot y = (\dot z - y\operatorname{Re}(\overline{y}\,\dot z))/|z|`. For real input
  ``sign`` is piecewise constant and both are ``NoTangent()`` (non-differentiable, as listed in
  :mod:`rules.arrays.nondiff`).
* ``conj``: :math:`\bar z = \overline{\bar y}`; :math:`\dot y = \overline{\dot z}`.
* ``real``: :math:`\bar z = \operatorname{Re}\bar y` (promoted to complex for complex ``z``);
  :math:`\dot y = \operatorname{Re}\dot z`.
* ``imag``: :math:`\bar z = i\operatorname{Re}\bar y`; :math:`\dot y = \operatorname{Im}\dot z`;
  0 for real input.

(``angle`` is scaled by :math:`180/\pi` when ``deg=True``.)

Degenerate points
-----------------
``absolute``, ``angle`` and complex ``sign`` at 0 have no derivative (``|z|`` has a cone there,
``angle`` and ``sign`` jump); the rules return a cotangent (and tangent) of exactly 0 at such
entries, finite and never NaN, as ChainRules.jl does for ``abs`` (a subgradient of ``|x|`` at 0).

References
----------
ChainRulesCore.jl, ``docs/src/maths/complex.md``; ChainRules.jl ``fastmath_able.jl`` (``abs``,
``angle``, ``sign``) and ``base.jl`` (``real``, ``imag``, ``conj``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.cotangents import as_array_cotangent
from rules.core.options import refuse, rrule_with_options
from rules.core.registry import frule, rrule
from tangents import NoTangent, ProjectTo, ZeroTangent, unthunk
from tangents.arithmetic import conj

__all__: list[str] = []


def _safe_divide(numerator: Any, denominator: Any) -> Any:
    """``numerator / denominator``, 0 where the denominator is 0."""
    zero = denominator == 0
    return np.where(zero, 0, numerator / np.where(zero, 1, denominator))


# --- absolute -----------------------------------------------------------------------------------


def _absolute_direction(x: Any, y: Any) -> Any:
    r""":math:`\partial |x|`: ``sign(x)`` for real ``x``, ``x / |x|`` for complex, 0 at 0."""
    if np.iscomplexobj(x):
        return _safe_divide(x, y)
    return np.sign(x)


@rrule.register(np.absolute)
def absolute_rrule(x: Any, out: Any = None, *, where: Any = True, **kwargs: Any) -> Any:
    r"""``y = |x|``: :math:`\bar x = \operatorname{Re}(\bar y)\,x/|x|` (``sign(x) ȳ`` if real), 0 at 0."""
    refuse("absolute", out=out, where=where is not True)
    y = np.absolute(x, **kwargs)
    project_x = ProjectTo(x)

    def absolute_pullback(y_bar: Any) -> tuple[Any, Any]:
        y_bar = np.real(as_array_cotangent(y_bar, "np.absolute's pullback"))
        return NoTangent(), project_x(y_bar * _absolute_direction(x, y))

    return y, absolute_pullback


@frule.register(np.absolute)
def absolute_frule(
    tangents: tuple[Any, ...], x: Any, out: Any = None, *, where: Any = True, **kwargs: Any
) -> Any:
    """``ẏ = Re(conj(x) ẋ) / |x|`` (``sign(x) ẋ`` if real), 0 at 0."""
    refuse("absolute", out=out, where=where is not True)
    y = np.absolute(x, **kwargs)
    x_dot = as_array_cotangent(tangents[1], "np.absolute's frule")
    y_dot = np.real(np.conj(_absolute_direction(x, y)) * x_dot)
    return y, ProjectTo(y)(y_dot)


# --- angle --------------------------------------------------------------------------------------


def _degrees(deg: bool) -> float:
    return 180 / np.pi if deg else 1.0


@rrule_with_options(np.angle)
def angle_rrule(z: Any, deg: bool = False) -> Any:
    r"""``y = arg z``: :math:`\bar z = \operatorname{Re}(\bar y)\, i z / |z|^2`; 0 for real ``z``."""
    y = np.angle(z, deg)
    project_z = ProjectTo(z)
    scale = _degrees(deg)

    def angle_pullback(y_bar: Any) -> tuple[Any, ...]:
        if not np.iscomplexobj(z):
            return NoTangent(), ZeroTangent()
        y_bar = np.real(as_array_cotangent(y_bar, "np.angle's pullback"))
        z_bar = (scale * y_bar) * _safe_divide(1j * z, np.abs(z) ** 2)
        return NoTangent(), project_z(z_bar)

    return y, angle_pullback


@frule.register(np.angle)
def angle_frule(tangents: tuple[Any, ...], z: Any, deg: bool = False) -> Any:
    """``ẏ = Im(conj(z) ż) / |z|^2``; 0 for real ``z``."""
    y = np.angle(z, deg)
    if not np.iscomplexobj(z):
        return y, ZeroTangent()
    z_dot = as_array_cotangent(tangents[1], "np.angle's frule")
    y_dot = _degrees(deg) * _safe_divide(np.imag(np.conj(z) * z_dot), np.abs(z) ** 2)
    return y, ProjectTo(y)(y_dot)


# --- sign ---------------------------------------------------------------------------------------


@rrule.register(np.sign)
def sign_rrule(z: Any, out: Any = None, *, where: Any = True, **kwargs: Any) -> Any:
    r"""``y = z/|z|``: :math:`\bar z = (\bar y - y \operatorname{Re}(\overline{y}\,\bar y))/|z|`; real: ``NoTangent()``."""
    refuse("sign", out=out, where=where is not True)
    y = np.sign(z, **kwargs)
    project_z = ProjectTo(z)

    def sign_pullback(y_bar: Any) -> tuple[Any, Any]:
        if not np.iscomplexobj(z):
            return NoTangent(), NoTangent()
        g = as_array_cotangent(y_bar, "np.sign's pullback")
        along = g - y * np.real(np.conj(y) * g)
        return NoTangent(), project_z(_safe_divide(along, np.abs(z)))

    return y, sign_pullback


@frule.register(np.sign)
def sign_frule(
    tangents: tuple[Any, ...], z: Any, out: Any = None, *, where: Any = True, **kwargs: Any
) -> Any:
    r"""``ẏ = (ż - y Re(conj(y) ż))/|z|``; real: ``NoTangent()``."""
    refuse("sign", out=out, where=where is not True)
    y = np.sign(z, **kwargs)
    if not np.iscomplexobj(z):
        return y, NoTangent()
    z_dot = as_array_cotangent(tangents[1], "np.sign's frule")
    along = z_dot - y * np.real(np.conj(y) * z_dot)
    return y, ProjectTo(y)(_safe_divide(along, np.abs(z)))


# --- conj, real, imag ---------------------------------------------------------------------------


@rrule.register(np.conjugate)
def conjugate_rrule(z: Any, out: Any = None, *, where: Any = True, **kwargs: Any) -> Any:
    r"""``y = conj(z)``: :math:`\bar z = \overline{\bar y}` (the identity for real ``z``)."""
    refuse("conjugate", out=out, where=where is not True)
    y = np.conjugate(z, **kwargs)
    project_z = ProjectTo(z)

    def conjugate_pullback(y_bar: Any) -> tuple[Any, Any]:
        return NoTangent(), project_z(conj(unthunk(y_bar)))

    return y, conjugate_pullback


@frule.register(np.conjugate)
def conjugate_frule(
    tangents: tuple[Any, ...], z: Any, out: Any = None, *, where: Any = True, **kwargs: Any
) -> Any:
    """``ẏ = conj(ż)``."""
    refuse("conjugate", out=out, where=where is not True)
    y = np.conjugate(z, **kwargs)
    return y, ProjectTo(y)(conj(unthunk(tangents[1])))


@rrule.register(np.real)
def real_rrule(z: Any) -> Any:
    r"""``y = Re z``: :math:`\bar z = \operatorname{Re}\bar y` (promoted to complex for complex ``z``)."""
    y = np.real(z)
    project_z = ProjectTo(z)

    def real_pullback(y_bar: Any) -> tuple[Any, Any]:
        return NoTangent(), project_z(unthunk(y_bar).real)

    return y, real_pullback


@frule.register(np.real)
def real_frule(tangents: tuple[Any, ...], z: Any) -> Any:
    """``ẏ = Re ż``."""
    y = np.real(z)
    return y, ProjectTo(y)(unthunk(tangents[1]).real)


@rrule.register(np.imag)
def imag_rrule(z: Any) -> Any:
    r"""``y = Im z``: :math:`\bar z = i \operatorname{Re}\bar y`; 0 for real ``z``."""
    y = np.imag(z)
    project_z = ProjectTo(z)

    def imag_pullback(y_bar: Any) -> tuple[Any, Any]:
        if not np.iscomplexobj(z):
            return NoTangent(), ZeroTangent()
        return NoTangent(), project_z(1j * unthunk(y_bar).real)

    return y, imag_pullback


@frule.register(np.imag)
def imag_frule(tangents: tuple[Any, ...], z: Any) -> Any:
    """``ẏ = Im ż``; 0 for real ``z``."""
    y = np.imag(z)
    if not np.iscomplexobj(z):
        return y, ZeroTangent()
    return y, ProjectTo(y)(unthunk(tangents[1]).imag)
