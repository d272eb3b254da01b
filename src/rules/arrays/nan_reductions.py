r"""Rules of the NaN-ignoring reductions: ``nansum``, ``nanmean``, ``nanvar``, ``nanstd``, ``nanmax``, ...

Also ``nanmin``, ``nanprod``, ``nancumsum``, ``nancumprod`` and ``ptp``. A NaN entry is
replaced by the neutral element of the reduction (0 for sums, 1 for products, ``-inf``/``+inf``
for ``nanmax``/``nanmin``: numpy's own definitions), so its derivative is 0: each rule runs the
rule of the plain reduction (:mod:`rules.arrays.reductions`, :mod:`rules.arrays.cumulative`) on
the filled array and masks the NaN entries out of the (co)tangent. ``nanmax``/``nanmin`` share
ties as ``max``/``min`` do.

``nanmean``, ``nanvar`` and ``nanstd`` divide by the number ``n`` of non-NaN entries in each
slice: :math:`\bar a = \bar y / n`, :math:`\bar a = 2 (a - \mu) \mathrm{Re}(\bar y) / (n -
\mathrm{ddof})` and :math:`\bar a = (a - \mu) \mathrm{Re}(\bar y) / ((n - \mathrm{ddof}) \sigma)`
(0 where :math:`\sigma = 0`) on the non-NaN entries, 0 on the others.

``ptp = max - min``: the cotangent of ``max`` minus that of ``min``.

References
----------
JAX ``jax/_src/numpy/reductions.py`` (``nansum`` etc. as reductions of ``where(isnan, neutral,
a)``); HIPS autograd ``autograd/numpy/numpy_vjps.py`` (``grad_np_var``, ``grad_np_std``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.arrays.reductions import expand_reduced
from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array
from rules.core.options import normalize_axes, refuse, rrule_with_options
from rules.core.registry import frule, rrule
from tangents import NoTangent, ProjectTo, unthunk

__all__: list[str] = []

_NO_VALUE = np._NoValue  # numpy's "not given" for keepdims, initial, where


def _options(**given: Any) -> dict[str, Any]:
    """The options a caller actually gave (numpy's ``_NoValue`` means "not given")."""
    return {k: v for k, v in given.items() if v is not _NO_VALUE and v is not None}


def _filled(a: Any, value: float) -> tuple[np.ndarray, np.ndarray]:
    """``a`` with NaN entries replaced by ``value``, and where ``a`` is not NaN."""
    a = as_array(a)
    keep = ~np.isnan(a)
    return np.where(keep, a, as_array(value, dtype=a.dtype)), keep


def _register_filled(f: Any, name: str, plain: Any, fill: float, options: tuple[str, ...]) -> None:
    """``f(a, ...) = plain(where(isnan(a), fill, a), ...)``: the plain rule, masked."""
    full_name = f"np.{name}"

    def filled_rrule(a: Any, *args: Any, **kwargs: Any) -> Any:
        given = _options(**dict(zip(options, args, strict=False)), **kwargs)
        refuse(full_name, out=given.pop("out", None))
        y = f(a, *args, **kwargs)
        filled, keep = _filled(a, fill)
        _, pullback = rrule(plain, filled, **given)
        project_a = ProjectTo(a)

        def filled_pullback(y_bar: Any) -> tuple[Any, Any]:
            g = as_array_cotangent(y_bar, f"{full_name}'s pullback")
            a_bar = unthunk(pullback(as_array(g))[1])
            return NoTangent(), project_a(np.where(keep, a_bar, 0))

        filled_pullback.__qualname__ = f"{name}_pullback"
        return y, filled_pullback

    def filled_frule(tangents: tuple[Any, ...], a: Any, *args: Any, **kwargs: Any) -> Any:
        given = _options(**dict(zip(options, args, strict=False)), **kwargs)
        refuse(full_name, out=given.pop("out", None))
        y = f(a, *args, **kwargs)
        filled, keep = _filled(a, fill)
        a_dot = np.where(keep, as_array_cotangent(tangents[1], f"{full_name}'s frule"), 0)
        _, y_dot = frule((NoTangent(), a_dot), plain, filled, **given)
        return y, ProjectTo(y)(unthunk(y_dot))

    filled_rrule.__qualname__ = f"{name}_rrule"
    filled_rrule.__doc__ = f"``{name}(a) = {plain.__name__}(where(isnan(a), {fill}, a))``: masked."
    filled_frule.__qualname__ = f"{name}_frule"
    filled_frule.__doc__ = f"``ẏ`` of ``{plain.__name__}`` with ``ȧ`` masked at the NaN entries."
    rrule_with_options(f)(filled_rrule)
    frule.register(f)(filled_frule)


_SUM = ("axis", "dtype", "out", "keepdims", "initial", "where")
_EXTREMUM = ("axis", "out", "keepdims", "initial", "where")
_SCAN = ("axis", "dtype", "out")

_register_filled(np.nansum, "nansum", np.sum, 0.0, _SUM)
_register_filled(np.nanprod, "nanprod", np.prod, 1.0, _SUM)
_register_filled(np.nanmax, "nanmax", np.max, -np.inf, _EXTREMUM)
_register_filled(np.nanmin, "nanmin", np.min, np.inf, _EXTREMUM)
_register_filled(np.nancumsum, "nancumsum", np.cumsum, 0.0, _SCAN)
_register_filled(np.nancumprod, "nancumprod", np.cumprod, 1.0, _SCAN)


# --- nanmean, nanvar, nanstd ----------------------------------------------------------------------


def _counted(
    a: Any, axes: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``a`` with NaN as 0, where it is not NaN, the counts and the means (reduced axes kept)."""
    filled, keep = _filled(a, 0.0)
    count = np.sum(keep, axis=axes, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.sum(filled, axis=axes, keepdims=True) / count
    return filled, keep, count, mean


def _register_nan_moment(f: Any, name: str) -> None:
    """``nanmean``, ``nanvar`` and ``nanstd`` (module docstring)."""
    full_name = f"np.{name}"

    def moment_rrule(
        a: Any,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        refuse(full_name, out=out, where=kwargs.get("where", _NO_VALUE) is not _NO_VALUE)
        y = f(a, axis, dtype, None, *args, **kwargs)
        keepdims, ddof = _keepdims_and_ddof(name, args, kwargs)
        axes = normalize_axes(axis, np.ndim(a))
        filled, keep, count, mean = _counted(a, axes)
        project_a = ProjectTo(a)

        def moment_pullback(y_bar: Any) -> tuple[Any, Any]:
            g = as_array(as_array_cotangent(y_bar, f"{full_name}'s pullback"))
            g = expand_reduced(g, axes, keepdims)
            if name == "nanmean":
                a_bar = np.broadcast_to(g / count, np.shape(a))
            else:
                a_bar = (filled - mean) * np.real(g) / (count - ddof)
                if name == "nanstd":
                    sigma = expand_reduced(y, axes, keepdims)
                    a_bar = np.where(sigma == 0, 0, a_bar / np.where(sigma == 0, 1, sigma))
                else:
                    a_bar = 2 * a_bar
            return NoTangent(), project_a(np.where(keep, a_bar, 0))

        moment_pullback.__qualname__ = f"{name}_pullback"
        return y, moment_pullback

    def moment_frule(
        tangents: tuple[Any, ...],
        a: Any,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        refuse(full_name, out=out, where=kwargs.get("where", _NO_VALUE) is not _NO_VALUE)
        y = f(a, axis, dtype, None, *args, **kwargs)
        keepdims, ddof = _keepdims_and_ddof(name, args, kwargs)
        axes = normalize_axes(axis, np.ndim(a))
        filled, keep, count, mean = _counted(a, axes)
        a_dot = np.where(keep, as_array_cotangent(tangents[1], f"{full_name}'s frule"), 0)
        mean_dot = np.sum(a_dot, axis=axes, keepdims=True) / count
        if name == "nanmean":
            y_dot = mean_dot
        else:
            d = np.where(keep, filled - mean, 0)
            var_dot = (
                2 * np.sum(np.real(np.conj(d) * a_dot), axis=axes, keepdims=True) / (count - ddof)
            )
            if name == "nanstd":
                sigma = np.sqrt(np.sum(np.abs(d) ** 2, axis=axes, keepdims=True) / (count - ddof))
                y_dot = np.where(sigma == 0, 0, var_dot / (2 * np.where(sigma == 0, 1, sigma)))
            else:
                y_dot = var_dot
        if not keepdims:
            y_dot = np.squeeze(y_dot, axis=axes)
        return y, ProjectTo(y)(y_dot)

    moment_rrule.__qualname__ = f"{name}_rrule"
    moment_rrule.__doc__ = f"Reverse rule of ``{full_name}`` over the non-NaN entries."
    moment_frule.__qualname__ = f"{name}_frule"
    moment_frule.__doc__ = f"Forward rule of ``{full_name}`` over the non-NaN entries."
    rrule_with_options(f)(moment_rrule)
    frule.register(f)(moment_frule)


def _keepdims_and_ddof(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[bool, Any]:
    """``keepdims`` and ``ddof`` of a call (``nanvar(a, axis, dtype, out, ddof, keepdims)``)."""
    if name == "nanmean":
        keepdims = args[0] if args else kwargs.get("keepdims", False)
        return bool(keepdims is not _NO_VALUE and keepdims), 0
    ddof = args[0] if args else kwargs.get("ddof", 0)
    keepdims = args[1] if len(args) > 1 else kwargs.get("keepdims", False)
    if kwargs.get("correction", _NO_VALUE) is not _NO_VALUE:
        ddof = kwargs["correction"]
    if kwargs.get("mean", _NO_VALUE) is not _NO_VALUE:
        refuse(f"np.{name}", mean=True)
    return bool(keepdims is not _NO_VALUE and keepdims), ddof


_register_nan_moment(np.nanmean, "nanmean")
_register_nan_moment(np.nanvar, "nanvar")
_register_nan_moment(np.nanstd, "nanstd")


# --- ptp ----------------------------------------------------------------------------------------


@rrule_with_options(np.ptp)
def ptp_rrule(a: Any, axis: Any = None, out: Any = None, keepdims: Any = False) -> Any:
    r"""``y = ptp(a) = max(a) - min(a)``: :math:`\bar a = \bar a_{\max} - \bar a_{\min}`."""
    refuse("np.ptp", out=out)
    keepdims = bool(keepdims is not _NO_VALUE and keepdims)
    y = np.ptp(a, axis=axis, keepdims=keepdims)
    _, max_pullback = rrule(np.max, a, axis=axis, keepdims=keepdims)
    _, min_pullback = rrule(np.min, a, axis=axis, keepdims=keepdims)
    project_a = ProjectTo(a)

    def ptp_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = as_array(as_array_cotangent(y_bar, "np.ptp's pullback"))
        return NoTangent(), project_a(max_pullback(g)[1] - min_pullback(g)[1])

    return y, ptp_pullback


@frule.register(np.ptp)
def ptp_frule(
    tangents: tuple[Any, ...], a: Any, axis: Any = None, out: Any = None, keepdims: Any = False
) -> Any:
    """``ẏ = max'(a) ȧ - min'(a) ȧ``."""
    refuse("np.ptp", out=out)
    keepdims = bool(keepdims is not _NO_VALUE and keepdims)
    y = np.ptp(a, axis=axis, keepdims=keepdims)
    a_dot = as_array_cotangent(tangents[1], "np.ptp's frule")
    _, max_dot = frule((NoTangent(), a_dot), np.max, a, axis=axis, keepdims=keepdims)
    _, min_dot = frule((NoTangent(), a_dot), np.min, a, axis=axis, keepdims=keepdims)
    return y, ProjectTo(y)(unthunk(max_dot) - unthunk(min_dot))
