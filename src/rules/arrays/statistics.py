r"""Rules of order statistics and covariances: ``quantile``, ``percentile``, ``median``, ``cov``, ...

Also ``nanquantile``, ``nanpercentile``, ``nanmedian`` and ``corrcoef``.

Quantiles (``method="linear"``, numpy's default; other methods are refused). Along the reduced
entries sorted as :math:`s_0 \le \dots \le s_{n-1}` (``n`` the number of non-NaN entries for the
``nan`` versions, whose NaNs sort last and are never used), the quantile ``q`` is
:math:`y = (1 - g) s_j + g s_{j+1}` with :math:`v = q (n - 1)`, :math:`j = \lfloor v \rfloor`
(at most ``n - 2``) and :math:`g = v - j`. The weights depend on ``q`` and ``n`` only, so
:math:`\bar s_j \mathrel{+}= (1 - g) \bar y`, :math:`\bar s_{j+1} \mathrel{+}= g \bar y`, put back
through the sorting permutation; and :math:`\partial y / \partial q = (n - 1)(s_{j+1} - s_j)`
(divided by 100 for ``percentile``; a ``q`` given as a list or tuple is a constant). ``median`` is the quantile 1/2. Where entries tie or ``v``
is an integer the function has a kink and this is one of its one-sided derivatives.

Covariance: with the variables as rows of ``X`` (``rowvar``; ``y`` stacked below ``m``), the
centred :math:`X_c = X - \bar X` and :math:`f = N - \mathrm{ddof}`,
:math:`C = X_c X_c^H / f`, so :math:`\dot C = (\dot X_c X_c^H + X_c \dot X_c^H)/f` and
:math:`\bar X = (\bar C + \bar C^H) X_c / f` (its rows already have mean 0). Weights
(``fweights``, ``aweights``) are refused.

Correlation :math:`R_{ij} = C_{ij} / (s_i s_j)` with :math:`s = \sqrt{\mathrm{Re}\,
\mathrm{diag}\,C}`: :math:`\bar C = \bar R / (s s^T) + \mathrm{diag}(\bar s / (2 s))`,
:math:`\bar s_k = -\sum_j \mathrm{Re}(\overline{\bar R_{kj}} R_{kj} + \overline{\bar R_{jk}}
R_{jk}) / s_k`. numpy's clipping of ``R`` to ``[-1, 1]`` is ignored (it only rounds).

References
----------
JAX ``jax/_src/numpy/reductions.py`` (``quantile`` by sorting and a linear combination,
``cov``, ``corrcoef`` as array expressions); HIPS autograd ``autograd/numpy/numpy_vjps.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array
from rules.core.options import is_constant, normalize_axes, refuse, rrule_with_options
from rules.core.registry import frule
from tangents import AbstractZero, NoTangent, ProjectTo, unthunk

__all__: list[str] = []


class _Quantile:
    """The sorted reduced entries and the interpolation weights of a quantile call."""

    def __init__(self, a: Any, q: Any, axis: Any, scale: float, ignore_nan: bool) -> None:
        a = as_array(a)
        self.shape = a.shape
        self.axes = normalize_axes(axis, a.ndim)
        kept = [i for i in range(a.ndim) if i not in self.axes]
        self.perm = (*kept, *self.axes)
        moved = np.transpose(a, self.perm)
        self.moved_shape = moved.shape
        n = int(np.prod([a.shape[i] for i in self.axes], dtype=int))
        flat = moved.reshape(-1, n)  # (batch, n)
        self.order = np.argsort(flat, axis=-1, kind="stable")
        self.sorted = np.take_along_axis(flat, self.order, axis=-1)
        count = np.sum(~np.isnan(flat), axis=-1) if ignore_nan else np.full(flat.shape[0], n)
        self.q = as_array(q, dtype=np.float64)
        v = self.q.reshape(-1, 1) / scale * (count - 1)  # (Q, batch)
        self.j = np.clip(np.floor(v), 0, np.maximum(count - 2, 0)).astype(np.intp)
        self.j1 = np.minimum(self.j + 1, np.maximum(count - 1, 0))
        self.g = v - self.j
        self.slope = (count - 1) / scale  # dy/dq = slope (s_{j+1} - s_j)
        self.rows = np.arange(flat.shape[0])
        self.n = n

    def _at(self, values: np.ndarray, index: np.ndarray) -> np.ndarray:
        return values[self.rows, index]

    def cotangent(self, g: np.ndarray) -> np.ndarray:
        """``ā`` from the cotangent ``g`` of shape ``(Q, batch)``."""
        s_bar = np.zeros(self.sorted.shape, dtype=np.result_type(g, self.sorted.real.dtype))
        for k in range(g.shape[0]):
            np.add.at(s_bar, (self.rows, self.j[k]), (1 - self.g[k]) * g[k])
            np.add.at(s_bar, (self.rows, self.j1[k]), self.g[k] * g[k])
        flat_bar = np.empty_like(s_bar)
        np.put_along_axis(flat_bar, self.order, s_bar, axis=-1)
        return np.transpose(flat_bar.reshape(self.moved_shape), np.argsort(self.perm))

    def tangent(self, a_dot: np.ndarray) -> np.ndarray:
        """``ẏ`` of shape ``(Q, batch)`` from the tangent ``ȧ``."""
        flat = np.transpose(a_dot, self.perm).reshape(-1, self.n)
        s_dot = np.take_along_axis(flat, self.order, axis=-1)
        return np.stack(
            [
                (1 - self.g[k]) * self._at(s_dot, self.j[k])
                + self.g[k] * self._at(s_dot, self.j1[k])
                for k in range(self.j.shape[0])
            ]
        )

    def q_slopes(self) -> np.ndarray:
        """``dy/dq`` of shape ``(Q, batch)``."""
        return np.stack(
            [
                self.slope * (self._at(self.sorted, self.j1[k]) - self._at(self.sorted, self.j[k]))
                for k in range(self.j.shape[0])
            ]
        )


def _check_options(name: str, kwargs: dict[str, Any]) -> None:
    method = kwargs.get("method", "linear")
    refuse(
        name,
        out=kwargs.get("out"),
        overwrite_input=kwargs.get("overwrite_input"),
        weights=kwargs.get("weights"),
        interpolation=kwargs.get("interpolation"),
        method=None if method == "linear" else repr(method),
    )


_QUANTILE_OPTIONS = ("axis", "out", "overwrite_input", "method", "keepdims")
_MEDIAN_OPTIONS = ("axis", "out", "overwrite_input", "keepdims")


def _register_quantile(f: Any, name: str, scale: float | None, ignore_nan: bool) -> None:
    """``quantile``-like ``f(a, q, ...)`` (``scale`` 1 or 100), or ``median``-like (``None``)."""
    full_name = f"np.{name}"
    has_q = scale is not None
    option_names = _QUANTILE_OPTIONS if has_q else _MEDIAN_OPTIONS

    def split(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        q, rest = (args[0], args[1:]) if has_q else (0.5, args)
        options = {**dict(zip(option_names, rest, strict=False)), **kwargs}
        _check_options(full_name, options)
        return q, options

    def quantile_rrule(a: Any, *args: Any, **kwargs: Any) -> Any:
        q, options = split(args, kwargs)
        y = f(a, *args, **kwargs)
        plan = _Quantile(a, q, options.get("axis"), scale or 1.0, ignore_nan)
        project_a = ProjectTo(a)
        project_q = (
            None if not has_q or is_constant(q) or isinstance(q, list | tuple) else ProjectTo(q)
        )

        def quantile_pullback(y_bar: Any) -> tuple[Any, ...]:
            g = as_array(as_array_cotangent(y_bar, f"{full_name}'s pullback"))
            g = g.reshape(plan.j.shape)
            a_bar = project_a(plan.cotangent(g))
            if not has_q:
                return NoTangent(), a_bar
            q_bar: Any = NoTangent()
            if project_q is not None:
                q_bar = project_q(
                    np.sum(np.real(np.conj(plan.q_slopes()) * g), axis=1).reshape(np.shape(q))
                )
            return NoTangent(), a_bar, q_bar

        quantile_pullback.__qualname__ = f"{name}_pullback"
        return y, quantile_pullback

    def quantile_frule(tangents: tuple[Any, ...], a: Any, *args: Any, **kwargs: Any) -> Any:
        q, options = split(args, kwargs)
        y = f(a, *args, **kwargs)
        plan = _Quantile(a, q, options.get("axis"), scale or 1.0, ignore_nan)
        a_dot = unthunk(tangents[1])
        y_dot: Any = 0
        if not isinstance(a_dot, AbstractZero):
            y_dot = plan.tangent(as_array(as_array_cotangent(a_dot, f"{full_name}'s frule")))
        q_dot = unthunk(tangents[2]) if has_q and len(tangents) > 2 else NoTangent()
        if not isinstance(q_dot, AbstractZero):
            q_dot = as_array(as_array_cotangent(q_dot, f"{full_name}'s frule")).reshape(-1, 1)
            y_dot = y_dot + plan.q_slopes() * q_dot
        return y, ProjectTo(y)(np.reshape(y_dot, np.shape(y)))

    quantile_rrule.__qualname__ = f"{name}_rrule"
    quantile_rrule.__doc__ = (
        f"Reverse rule of ``{full_name}`` (linear interpolation; module docstring)."
    )
    quantile_frule.__qualname__ = f"{name}_frule"
    quantile_frule.__doc__ = f"Forward rule of ``{full_name}``."
    rrule_with_options(f)(quantile_rrule)
    frule.register(f)(quantile_frule)


_register_quantile(np.quantile, "quantile", 1.0, False)
_register_quantile(np.percentile, "percentile", 100.0, False)
_register_quantile(np.median, "median", None, False)
_register_quantile(np.nanquantile, "nanquantile", 1.0, True)
_register_quantile(np.nanpercentile, "nanpercentile", 100.0, True)
_register_quantile(np.nanmedian, "nanmedian", None, True)


# --- cov and corrcoef ------------------------------------------------------------------------------


class _Covariance:
    """The variables-as-rows matrix of a ``cov`` call and the maps of its derivative."""

    def __init__(self, name: str, m: Any, y: Any, rowvar: bool, bias: bool, ddof: Any) -> None:
        self.parts = [p for p in (m, y) if p is not None]
        self.transposed = []
        blocks = []
        for part in self.parts:
            X = np.array(part, ndmin=2)
            flip = not rowvar and X.shape[0] != 1
            self.transposed.append(flip)
            blocks.append(X.T if flip else X)
        self.rows = [b.shape[0] for b in blocks]
        X = np.concatenate(blocks, axis=0)
        ddof = (0 if bias else 1) if ddof is None else ddof
        self.fact = X.shape[1] - ddof
        self.Xc = X - X.mean(axis=1, keepdims=True)
        self.projectors = [ProjectTo(p) for p in self.parts]
        self.name = name

    def matrix_tangent(self, dots: list[Any]) -> np.ndarray:
        """``Ċ`` (full matrix) from the tangents of ``m`` and ``y``."""
        blocks = []
        for part, dot, flip in zip(self.parts, dots, self.transposed, strict=True):
            dot = unthunk(dot)
            if isinstance(dot, AbstractZero):
                dot = np.zeros(np.shape(part))
            D = np.array(as_array_cotangent(dot, f"{self.name}'s frule"), ndmin=2)
            blocks.append(D.T if flip else D)
        D = np.concatenate(blocks, axis=0)
        Dc = D - D.mean(axis=1, keepdims=True)
        return (Dc @ self.Xc.conj().T + self.Xc @ Dc.conj().T) / self.fact

    def cotangents(self, C_bar: np.ndarray) -> list[Any]:
        """``(m̄, ȳ)`` from the cotangent of the full matrix ``C``."""
        X_bar = (C_bar + C_bar.conj().T) @ self.Xc / self.fact
        out = []
        for block, part, flip, project in zip(
            np.split(X_bar, np.cumsum(self.rows)[:-1], axis=0),
            self.parts,
            self.transposed,
            self.projectors,
            strict=True,
        ):
            out.append(project(np.reshape(block.T if flip else block, np.shape(part))))
        return out


def _cov_call(name: str, m: Any, y: Any, rowvar: bool, bias: bool, ddof: Any, kwargs: Any) -> Any:
    refuse(name, fweights=kwargs.get("fweights"), aweights=kwargs.get("aweights"))
    return _Covariance(name, m, y, rowvar, bias, ddof)


@rrule_with_options(np.cov)
def cov_rrule(
    m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None, **kwargs: Any
) -> Any:
    r"""``C = cov(m, y)``: :math:`\bar X = (\bar C + \bar C^H) X_c / (N - \mathrm{ddof})`."""
    plan = _cov_call("np.cov", m, y, rowvar, bias, ddof, kwargs)
    C = np.cov(m, y, rowvar, bias, ddof, **kwargs)
    k = plan.Xc.shape[0]

    def cov_pullback(C_bar: Any) -> tuple[Any, ...]:
        g = as_array(as_array_cotangent(C_bar, "np.cov's pullback")).reshape(k, k)
        bars = plan.cotangents(g)
        return (NoTangent(), *bars) if y is not None else (NoTangent(), bars[0], NoTangent())

    return C, cov_pullback


@frule.register(np.cov)
def cov_frule(
    tangents: tuple[Any, ...],
    m: Any,
    y: Any = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: Any = None,
    **kwargs: Any,
) -> Any:
    r"""``Ċ = (Ẋ_c X_c^H + X_c Ẋ_c^H) / (N - ddof)``."""
    plan = _cov_call("np.cov", m, y, rowvar, bias, ddof, kwargs)
    C = np.cov(m, y, rowvar, bias, ddof, **kwargs)
    dots = [tangents[1]] + ([tangents[2]] if y is not None else [])
    return C, ProjectTo(C)(np.reshape(plan.matrix_tangent(dots), np.shape(C)))


def _correlation(C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = np.sqrt(np.real(np.diag(C)))
    return C / np.outer(s, s), s


@rrule_with_options(np.corrcoef)
def corrcoef_rrule(x: Any, y: Any = None, rowvar: bool = True, **kwargs: Any) -> Any:
    r"""``R = corrcoef(x, y)``: :math:`\bar C = \bar R/(s s^T) + \mathrm{diag}(\bar s/(2 s))` (module docstring)."""
    plan = _cov_call("np.corrcoef", x, y, rowvar, False, None, {})
    R_out = np.corrcoef(x, y, rowvar, **kwargs)
    R, s = _correlation(plan.Xc @ plan.Xc.conj().T / plan.fact)

    def corrcoef_pullback(R_bar: Any) -> tuple[Any, ...]:
        g = as_array(as_array_cotangent(R_bar, "np.corrcoef's pullback")).reshape(R.shape)
        weighted = np.real(np.conj(g) * R)
        s_bar = -(weighted.sum(axis=1) + weighted.sum(axis=0)) / s
        C_bar = g / np.outer(s, s) + np.diag(s_bar / (2 * s))
        bars = plan.cotangents(C_bar)
        return (NoTangent(), *bars) if y is not None else (NoTangent(), bars[0], NoTangent())

    return R_out, corrcoef_pullback


@frule.register(np.corrcoef)
def corrcoef_frule(
    tangents: tuple[Any, ...], x: Any, y: Any = None, rowvar: bool = True, **kwargs: Any
) -> Any:
    r"""``Ṙ = Ċ/(s s^T) - R (ṡ/s + (ṡ/s)^T)`` with ``ṡ = Re diag(Ċ) / (2 s)``."""
    plan = _cov_call("np.corrcoef", x, y, rowvar, False, None, {})
    R_out = np.corrcoef(x, y, rowvar, **kwargs)
    R, s = _correlation(plan.Xc @ plan.Xc.conj().T / plan.fact)
    C_dot = plan.matrix_tangent([tangents[1]] + ([tangents[2]] if y is not None else []))
    rate = np.real(np.diag(C_dot)) / (2 * s * s)
    R_dot = C_dot / np.outer(s, s) - R * (rate[:, None] + rate[None, :])
    return R_out, ProjectTo(R_out)(np.reshape(R_dot, np.shape(R_out)))
