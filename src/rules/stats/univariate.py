r"""Rules for scipy.stats' univariate distributions: ``norm``, ``t``, ``gamma``, ``beta``, ``poisson``.

Each method (``pdf``, ``logpdf``, ``cdf``, ``logcdf``; ``pmf``, ``logpmf``, ``cdf``, ``logcdf``
for ``poisson``) is elementwise in its arguments and gets its rules from
:func:`rules.scalar_rule`, with the partials of every positional argument: ``x``, the shape
parameters, ``loc`` and ``scale``. Keyword arguments (``loc=1.0``) enter the partials but are
not differentiated.

Continuous distributions, with :math:`z = (x - \mathrm{loc})/\mathrm{scale}` and :math:`g(z;
\theta)` the standardized log-density, :math:`\log p(x) = g(z; \theta) - \log \mathrm{scale}`:

* ``logpdf``: :math:`\partial_x = g_z/s`, :math:`\partial_{\mathrm{loc}} = -g_z/s`,
  :math:`\partial_s = -(z g_z + 1)/s`, :math:`\partial_\theta = g_\theta`; ``pdf``: these times
  ``pdf``.
* ``cdf`` :math:`= F(z; \theta)`: :math:`\partial_x = p(x)`, :math:`\partial_{\mathrm{loc}} =
  -p(x)`, :math:`\partial_s = -z\,p(x)`; ``logcdf``: these divided by the cdf (as
  :math:`e^{\log p - \log F}`). The shape partials of the cdf (a series in ``df``, ``a``,
  ``b``) are ``NotImplementedTangent``.

The standardized log-densities and their partials:

* ``norm``: :math:`g = -z^2/2 - \log\sqrt{2\pi}`, :math:`g_z = -z`.
* ``t(df=ν)``: :math:`g_z = -(ν+1) z/(ν + z^2)`, :math:`g_ν = \tfrac12[\psi(\tfrac{ν+1}2) -
  \psi(\tfrac ν2) - \tfrac1ν - \log(1 + z^2/ν) + (ν+1) z^2/(ν(ν + z^2))]`.
* ``gamma(a)``: :math:`g_z = (a-1)/z - 1`, :math:`g_a = \log z - \psi(a)`.
* ``beta(a, b)``: :math:`g_z = (a-1)/z - (b-1)/(1-z)`, :math:`g_a = \log z - \psi(a) + \psi(a+b)`,
  :math:`g_b = \log(1-z) - \psi(b) + \psi(a+b)`.

``poisson(k, mu, loc)``: :math:`\partial_\mu \log p = k/\mu - 1` (0 where ``k`` is not an
integer, where the pmf is 0); :math:`\partial_\mu F(k) = -p(\lfloor k\rfloor)`. The count ``k``
and the integer shift ``loc`` are discrete: their cotangents are zeros.

References
----------
HIPS autograd, ``autograd/scipy/stats/{norm,t,gamma,beta,poisson}.py`` (which arguments are
differentiated, and the ``t`` formulas); DLMF 5.15 (digamma); the scipy.stats docs of each
distribution (standardized densities, loc/scale convention).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.special as sc
import scipy.stats as st

from rules.core.definition import scalar_rule
from rules.core.nesting import as_array
from tangents import NotImplementedTangent, ZeroTangent

__all__: list[str] = []

ShapePartials = Callable[..., tuple[Any, tuple[Any, ...]]]


def _shape_names(dist: Any) -> list[str]:
    return [s.strip() for s in dist.shapes.split(",")] if dist.shapes else []


def _parse(dist: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """``(x, *shapes, loc, scale)`` of a call, from positional and keyword arguments."""
    names = ["x", *_shape_names(dist), "loc", "scale"]
    defaults = {"loc": 0.0, "scale": 1.0}
    values = list(args) + [kwargs.get(n, defaults.get(n)) for n in names[len(args) :]]
    missing = [n for n, v in zip(names, values, strict=True) if v is None]
    if missing:
        raise TypeError(f"the rules of scipy.stats.{dist.name} need the argument(s) {missing}")
    return tuple(as_array(v) if not isinstance(v, int | float) else v for v in values)


def _cdf_shape(dist: str, names: list[str]) -> tuple[NotImplementedTangent, ...]:
    return tuple(
        NotImplementedTangent(
            f"the derivative of scipy.stats.{dist}.cdf with respect to its shape parameter "
            f"{n} is not implemented (a series without a closed form)"
        )
        for n in names
    )


def _register_continuous(dist: Any, log_density: ShapePartials) -> None:
    """Rules for ``dist``'s pdf, logpdf, cdf and logcdf.

    ``log_density(z, *shapes)`` gives ``(g_z, (g_theta, ...))`` at the standardized ``z``.
    """
    names = _shape_names(dist)

    def logpdf_row(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        x, *shapes, loc, scale = _parse(dist, args, kwargs)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (x - loc) / scale
            g_z, g_shapes = log_density(z, *shapes)
            return [g_z / scale, *g_shapes, -g_z / scale, -(z * g_z + 1) / scale]

    def cdf_row(args: tuple[Any, ...], kwargs: dict[str, Any], weight: Any) -> list[Any]:
        x, *_, loc, scale = _parse(dist, args, kwargs)
        z = (x - loc) / scale
        return [weight, *_cdf_shape(dist.name, names), -weight, -z * weight]

    def logpdf_partials(*args_y: Any, **kwargs: Any) -> tuple[Any, ...]:
        args = args_y[:-1]
        return tuple(logpdf_row(args, kwargs)[: len(args)])

    def pdf_partials(*args_y: Any, **kwargs: Any) -> tuple[Any, ...]:
        args, y = args_y[:-1], args_y[-1]
        return tuple(d * y for d in logpdf_row(args, kwargs)[: len(args)])

    def cdf_partials(*args_y: Any, **kwargs: Any) -> tuple[Any, ...]:
        args = args_y[:-1]
        return tuple(cdf_row(args, kwargs, dist.pdf(*args, **kwargs))[: len(args)])

    def logcdf_partials(*args_y: Any, **kwargs: Any) -> tuple[Any, ...]:
        args, y = args_y[:-1], args_y[-1]
        ratio = np.exp(dist.logpdf(*args, **kwargs) - y)
        return tuple(cdf_row(args, kwargs, ratio)[: len(args)])

    for method, partials in (
        ("logpdf", logpdf_partials),
        ("pdf", pdf_partials),
        ("cdf", cdf_partials),
        ("logcdf", logcdf_partials),
    ):
        scalar_rule(
            getattr(dist, method),
            partials,
            name=f"scipy.stats.{dist.name}.{method}",
            keywords=True,
        )


def _norm(z: Any) -> tuple[Any, tuple[Any, ...]]:
    return -z, ()


def _t(z: Any, df: Any) -> tuple[Any, tuple[Any, ...]]:
    z2 = z * z
    g_z = -(df + 1) * z / (df + z2)
    g_df = 0.5 * (
        sc.digamma((df + 1) / 2)
        - sc.digamma(df / 2)
        - 1 / df
        - np.log1p(z2 / df)
        + (df + 1) * z2 / (df * (df + z2))
    )
    return g_z, (g_df,)


def _gamma(z: Any, a: Any) -> tuple[Any, tuple[Any, ...]]:
    return (a - 1) / z - 1, (np.log(z) - sc.digamma(a),)


def _beta(z: Any, a: Any, b: Any) -> tuple[Any, tuple[Any, ...]]:
    both = sc.digamma(np.add(a, b))
    g_z = (a - 1) / z - (b - 1) / (1 - z)
    return g_z, (np.log(z) - sc.digamma(a) + both, np.log1p(-z) - sc.digamma(b) + both)


_register_continuous(st.norm, _norm)
_register_continuous(st.t, _t)
_register_continuous(st.gamma, _gamma)
_register_continuous(st.beta, _beta)


# --- poisson ------------------------------------------------------------------------------------


def _poisson_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, Any]:
    k, mu, *rest = [*args, *([kwargs["mu"]] if "mu" in kwargs else [])]
    loc = rest[0] if rest else kwargs.get("loc", 0)
    return as_array(k), as_array(mu), loc


def _discrete_row(mu_partial: Any, n: int) -> tuple[Any, ...]:
    """``(k, mu, loc)`` partials: the count and the shift are discrete."""
    return (ZeroTangent(), mu_partial, ZeroTangent())[:n]


def _poisson_logpmf(*args_y: Any, **kwargs: Any) -> tuple[Any, ...]:
    args = args_y[:-1]
    k, mu, loc = _poisson_args(args, kwargs)
    count = k - loc
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(count % 1 == 0, count / mu - 1, 0.0)
    return _discrete_row(slope, len(args))


def _poisson_pmf(*args_y: Any, **kwargs: Any) -> tuple[Any, ...]:
    args, y = args_y[:-1], args_y[-1]
    k, mu, loc = _poisson_args(args, kwargs)
    count = k - loc
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(count % 1 == 0, count / mu - 1, 0.0)
    return _discrete_row(y * slope, len(args))


def _poisson_cdf(*args_y: Any, **kwargs: Any) -> tuple[Any, ...]:
    args = args_y[:-1]
    k, mu, loc = _poisson_args(args, kwargs)
    return _discrete_row(-st.poisson.pmf(np.floor(k), mu, loc), len(args))


def _poisson_logcdf(*args_y: Any, **kwargs: Any) -> tuple[Any, ...]:
    args, y = args_y[:-1], args_y[-1]
    k, mu, loc = _poisson_args(args, kwargs)
    return _discrete_row(-np.exp(st.poisson.logpmf(np.floor(k), mu, loc) - y), len(args))


for _method, _partials in (
    ("logpmf", _poisson_logpmf),
    ("pmf", _poisson_pmf),
    ("cdf", _poisson_cdf),
    ("logcdf", _poisson_logcdf),
):
    scalar_rule(
        getattr(st.poisson, _method),
        _partials,
        name=f"scipy.stats.poisson.{_method}",
        keywords=True,
    )
