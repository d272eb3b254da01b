r"""More elementwise rules: ``sinc``, ``fabs``, ``remainder``/``mod``, ``fmod``, ``degrees``, ``radians``.

Also ``nan_to_num`` and ``real_if_close``, elementwise maps that are not ufuncs. Partials
(``scalar_rule``, conjugated for complex input, where numpy defines it):

* ``sinc(x) = sin(pi x) / (pi x)``: :math:`(\cos(\pi x) - \mathrm{sinc}(x)) / x`, 0 at ``x = 0``
  (``sinc`` is even and smooth there); complex input too.
* ``fabs`` (real only): ``sign(x)``, 0 at ``x = 0`` (the subgradient numpy's ``sign`` gives).
* ``remainder(a, b) = a - floor(a/b) b`` (real only): ``(1, -floor(a/b))``; ``fmod`` the same with
  ``trunc``. Both jump where ``a/b`` is an integer, where no derivative exists.
* ``degrees``/``radians``: the constants ``180/pi`` and ``pi/180``.
* ``nan_to_num(x)``: 1 where ``x`` is finite, 0 where it was replaced (NaN, +-inf: the replacement
  values are keyword arguments and constant); for complex input per real and imaginary part.
* ``real_if_close(a, tol)``: the identity when the output keeps ``a``'s type; when it drops a
  negligible imaginary part it is ``Re``, whose adjoint embeds a real cotangent (ProjectTo makes
  it complex again). The choice is made once, at the primal, as numpy makes it.

References
----------
ChainRules.jl ``src/rulesets/Base/fastmath_able.jl`` (``abs``, ``rem``, ``deg2rad``); JAX
``jax/_src/numpy/ufuncs.py`` (``sinc`` via its Taylor-safe derivative, ``remainder``,
``nan_to_num``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.cotangents import as_array_cotangent
from rules.core.definition import scalar_rule
from rules.core.nesting import as_array
from rules.core.options import rrule_with_options
from rules.core.registry import frule
from tangents import NoTangent, ProjectTo

__all__: list[str] = []


def _sinc_partial(x: Any, y: Any) -> Any:
    x = as_array(x)
    at_zero = x == 0
    safe = np.where(at_zero, 1, x)
    return np.where(at_zero, 0, (np.cos(np.pi * x) - y) / safe)


scalar_rule(np.sinc, _sinc_partial, name="np.sinc")
scalar_rule(np.fabs, lambda x, y: np.sign(x))
scalar_rule(np.remainder, lambda a, b, y: (np.ones_like(y), -np.floor(np.divide(a, b))))
scalar_rule(np.fmod, lambda a, b, y: (np.ones_like(y), -np.trunc(np.divide(a, b))))
scalar_rule(np.degrees, lambda x, y: 180 / np.pi)
scalar_rule(np.radians, lambda x, y: np.pi / 180)


# --- nan_to_num ---------------------------------------------------------------------------------


def _kept(x: Any) -> Any:
    """Where ``nan_to_num`` keeps ``x`` (a complex ``x``: per real and imaginary part)."""
    x = as_array(x)
    if x.dtype.kind == "c":
        return np.isfinite(x.real), np.isfinite(x.imag)
    return np.isfinite(x) if x.dtype.kind == "f" else np.ones(x.shape, dtype=bool)


def _mask(t: Any, kept: Any) -> Any:
    if isinstance(kept, tuple):
        return np.where(kept[0], t.real, 0) + 1j * np.where(kept[1], t.imag, 0)
    return np.where(kept, t, 0)


@rrule_with_options(np.nan_to_num)
def nan_to_num_rrule(x: Any, copy: bool = True, **kwargs: Any) -> Any:
    """``y = nan_to_num(x)``: ``x̄ = ȳ`` where ``x`` is finite, 0 where it was replaced."""
    y = np.nan_to_num(x, copy=True, **kwargs)
    kept = _kept(x)
    project_x = ProjectTo(x)

    def nan_to_num_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = as_array_cotangent(y_bar, "np.nan_to_num's pullback")
        return NoTangent(), project_x(_mask(as_array(g), kept))

    return y, nan_to_num_pullback


@frule.register(np.nan_to_num)
def nan_to_num_frule(tangents: tuple[Any, ...], x: Any, copy: bool = True, **kwargs: Any) -> Any:
    """``ẏ = ẋ`` where ``x`` is finite, 0 elsewhere."""
    y = np.nan_to_num(x, copy=True, **kwargs)
    x_dot = as_array(as_array_cotangent(tangents[1], "np.nan_to_num's frule"))
    return y, ProjectTo(y)(_mask(x_dot, _kept(x)))


# --- real_if_close ------------------------------------------------------------------------------


@rrule_with_options(np.real_if_close)
def real_if_close_rrule(a: Any, tol: Any = 100) -> Any:
    """``y = real_if_close(a)``: the identity, or ``Re`` when the imaginary part was dropped."""
    y = np.real_if_close(a, tol)
    project_a = ProjectTo(a)

    def real_if_close_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = as_array_cotangent(y_bar, "np.real_if_close's pullback")
        return NoTangent(), project_a(np.real(g) if np.isrealobj(y) else g)

    return y, real_if_close_pullback


@frule.register(np.real_if_close)
def real_if_close_frule(tangents: tuple[Any, ...], a: Any, tol: Any = 100) -> Any:
    """``ẏ = ȧ``, or ``Re ȧ`` when the imaginary part was dropped."""
    y = np.real_if_close(a, tol)
    a_dot = as_array_cotangent(tangents[1], "np.real_if_close's frule")
    return y, ProjectTo(y)(np.real(a_dot) if np.isrealobj(y) else a_dot)
