r"""Rules of finite differences and quadrature: ``diff``, ``gradient``, ``trapezoid``.

All three are linear in the sampled values; the pullbacks are the adjoints of those linear maps:

* ``diff`` along an axis, :math:`y_i = x_{i+1} - x_i`, has the adjoint
  :math:`\bar x_j = \bar y_{j-1} - \bar y_j` (out-of-range terms 0), that is
  ``-diff(pad(ȳ, 1))``, applied ``n`` times. ``prepend``/``append`` are joined to ``x`` first and
  get their part of the cotangent (summed back where a scalar was broadcast).
* ``gradient``: along each axis a banded matrix ``D`` (central differences inside, one-sided
  ones of ``edge_order`` at the ends; at most two entries off the diagonal) maps the samples to
  the output, and the pullback applies ``D^T``. ``D`` is read off ``np.gradient`` itself, applied
  to five comb vectors (entries ``j`` with ``j % 5 == r``): each row meets at most one column of
  each comb, so ``D`` is exact, built in O(n) and kept sparse. A scalar spacing ``h`` scales
  ``D`` by ``1/h``: :math:`\bar h = -\sum \bar y\, y / h`; coordinate arrays as spacing get
  ``NotImplementedTangent``.
* ``trapezoid(y, x)`` is :math:`\sum_i d_i (y_i + y_{i+1}) / 2` with :math:`d = \mathrm{diff}(x)`
  (or ``dx``): :math:`\bar y_i = \bar r\,(d_{i-1} + d_i)/2`, :math:`\bar d_i = \overline{(y_i +
  y_{i+1})/2}\,\bar r`, and ``x̄`` is ``diff``'s adjoint of ``d̄``.

References
----------
JAX ``jax/_src/numpy/lax_numpy.py`` (``diff``, ``gradient``, ``trapezoid`` written with slices,
whose transposes these are); HIPS autograd ``autograd/numpy/numpy_vjps.py`` (``grad_diff``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from rules.core.broadcasting import unbroadcast
from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array
from rules.core.options import (
    is_constant,
    normalize_axes,
    rrule_with_options,
    zero_tangent_array,
)
from rules.core.registry import frule, split_cotangent
from tangents import AbstractZero, NoTangent, NotImplementedTangent, ProjectTo, Tangent, unthunk

__all__: list[str] = []

_NO_VALUE = np._NoValue  # numpy's "not given" for diff's prepend/append


def _diff_adjoint(g: np.ndarray, axis: int) -> np.ndarray:
    """The adjoint of ``diff`` along ``axis``: ``-diff(pad(g, 1), axis)``."""
    pad = [(0, 0)] * g.ndim
    pad[axis] = (1, 1)
    return -np.diff(np.pad(g, pad), axis=axis)


def _edge(value: Any, a: Any, axis: int) -> Any:
    """``prepend``/``append`` as numpy joins them: a scalar is broadcast to one slice."""
    value = np.asanyarray(value)
    if value.ndim == 0:
        shape = list(np.shape(a))
        shape[axis] = 1
        value = np.broadcast_to(value, shape)
    return value


# --- diff ---------------------------------------------------------------------------------------


@rrule_with_options(np.diff)
def diff_rrule(
    a: Any, n: int = 1, axis: int = -1, prepend: Any = _NO_VALUE, append: Any = _NO_VALUE
) -> Any:
    r"""``y = diff(a, n, axis, prepend, append)``: ``n`` times :math:`\bar x = -\mathrm{diff}(\mathrm{pad}(\bar y))`."""
    y = np.diff(a, n, axis, prepend, append)
    along = normalize_axes(axis, np.ndim(a))[0]
    before = np.shape(_edge(prepend, a, along))[along] if prepend is not _NO_VALUE else 0
    length = np.shape(a)[along]
    project_a = ProjectTo(a)
    edges = []  # (start in the joined array, its length, the edge's shape, its projector)
    for value, start in ((prepend, 0), (append, before + length)):
        if value is _NO_VALUE or is_constant(value):
            edges.append(None)
        else:
            size = np.shape(_edge(value, a, along))[along]
            edges.append((start, size, np.shape(value), ProjectTo(value)))

    def diff_pullback(y_bar: Any) -> tuple[Any, ...]:
        g = as_array(as_array_cotangent(y_bar, "np.diff's pullback"))
        for _ in range(n):
            g = _diff_adjoint(g, along)
        a_bar = project_a(np.take(g, range(before, before + length), axis=along))
        edge_bars: list[Any] = []
        for edge in edges:
            if edge is None:
                edge_bars.append(NoTangent())
                continue
            start, size, shape, project = edge
            part = np.take(g, range(start, start + size), axis=along)
            edge_bars.append(project(unbroadcast(part, shape)))
        return (NoTangent(), a_bar, NoTangent(), NoTangent(), *edge_bars)

    return y, diff_pullback


@frule.register(np.diff)
def diff_frule(
    tangents: tuple[Any, ...],
    a: Any,
    n: int = 1,
    axis: int = -1,
    prepend: Any = _NO_VALUE,
    append: Any = _NO_VALUE,
) -> Any:
    """``ẏ = diff(ȧ, n, axis, prepend=ṗrepend, append=ȧppend)`` (zeros for constant edges)."""
    y = np.diff(a, n, axis, prepend, append)
    a_dot = as_array_cotangent(unthunk(tangents[1]), "np.diff's frule")
    edge_dots = []
    for position, value in ((4, prepend), (5, append)):
        if value is _NO_VALUE:
            edge_dots.append(_NO_VALUE)
            continue
        t = unthunk(tangents[position]) if len(tangents) > position else NoTangent()
        if isinstance(t, AbstractZero):
            edge_dots.append(np.zeros(np.shape(value)))
        else:
            edge_dots.append(as_array_cotangent(t, "np.diff's frule"))
    if isinstance(a_dot, AbstractZero):
        a_dot = zero_tangent_array(a)
    return y, ProjectTo(y)(np.diff(a_dot, n, axis, *edge_dots))


# --- gradient -----------------------------------------------------------------------------------


def _stencil(n: int, spacing: Any, edge_order: int) -> sp.csr_array:
    """The sparse ``n x n`` matrix ``D`` with ``gradient(x, spacing) = D x`` (module docstring)."""
    rows, cols, values = [], [], []
    i = np.arange(n)
    for r in range(min(n, 5)):
        comb = (i % 5 == r).astype(np.float64)
        column_values = np.gradient(comb, *spacing, edge_order=edge_order)
        for k in range(-2, 3):
            j = i + k
            inside = (j >= 0) & (j < n) & (j % 5 == r)
            rows.append(i[inside])
            cols.append(j[inside])
            values.append(column_values[inside])
    D = sp.csr_array(
        (np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
    )
    D.eliminate_zeros()
    return D


def _spacings(varargs: tuple[Any, ...], n_axes: int) -> list[tuple[Any, ...]]:
    """The spacing of each differentiated axis, as numpy reads ``*varargs``."""
    if not varargs:
        return [()] * n_axes
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return [varargs] * n_axes
    if len(varargs) != n_axes:
        raise TypeError("np.gradient: invalid number of spacing arguments")
    return [(h,) for h in varargs]


def _apply_transpose(D: sp.csr_array, g: np.ndarray, axis: int) -> np.ndarray:
    """``D^T`` applied along ``axis`` of ``g``."""
    moved = np.moveaxis(g, axis, 0)
    out = as_array(D.T @ moved.reshape(moved.shape[0], -1)).reshape(moved.shape)
    return np.moveaxis(out, 0, axis)


@rrule_with_options(np.gradient)
def gradient_rrule(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    r"""``y = gradient(f, *varargs)``: :math:`\bar f = \sum_{axes} D^T \bar y` (module docstring)."""
    y = np.gradient(f, *varargs, axis=axis, edge_order=edge_order)
    shape = np.shape(f)
    axes = normalize_axes(axis, len(shape))
    spacings = _spacings(varargs, len(axes))
    stencils = [_stencil(shape[ax], h, edge_order) for ax, h in zip(axes, spacings, strict=True)]
    outputs = (y,) if len(axes) == 1 else tuple(y)
    project_f = ProjectTo(f)
    project_h = [None if np.ndim(h) or is_constant(h) else ProjectTo(h) for h in varargs]

    def gradient_pullback(y_bar: Any) -> tuple[Any, ...]:
        parts = (y_bar,) if len(axes) == 1 else split_cotangent(y_bar, len(axes))
        f_bar = np.zeros(shape, dtype=np.result_type(f, np.float64))
        h_bars: list[Any] = [0.0] * len(varargs)
        for ax, D, part, out, h in zip(axes, stencils, parts, outputs, spacings, strict=True):
            part = unthunk(part)
            if isinstance(part, AbstractZero):
                continue
            g = as_array(as_array_cotangent(part, "np.gradient's pullback"))
            f_bar = f_bar + _apply_transpose(D, g, ax)
            if h and np.ndim(h[0]) == 0:  # y = D_1 f / h: the spacing scales the output
                k = 0 if len(varargs) == 1 else axes.index(ax)
                h_bars[k] = h_bars[k] - np.sum(np.real(np.conj(out) * g)) / h[0]
        h_cotangents = [
            _spacing_cotangent(h, project, value)
            for h, project, value in zip(varargs, project_h, h_bars, strict=True)
        ]
        return (NoTangent(), project_f(f_bar), *h_cotangents)

    return y, gradient_pullback


def _spacing_cotangent(h: Any, project: Any, value: Any) -> Any:
    if is_constant(h):
        return NoTangent()
    if project is None:
        return NotImplementedTangent("np.gradient: coordinate arrays as spacing")
    return project(value)


@frule.register(np.gradient)
def gradient_frule(
    tangents: tuple[Any, ...], f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1
) -> Any:
    """``ẏ = gradient(ḟ, *varargs) - y ḣ / h`` for scalar spacings ``h``."""
    y = np.gradient(f, *varargs, axis=axis, edge_order=edge_order)
    f_dot = unthunk(tangents[1])
    f_dot = (
        zero_tangent_array(f)
        if isinstance(f_dot, AbstractZero)
        else as_array_cotangent(f_dot, "np.gradient's frule")
    )
    y_dot = np.gradient(f_dot, *varargs, axis=axis, edge_order=edge_order)
    axes = normalize_axes(axis, np.ndim(f))
    outputs = [y] if len(axes) == 1 else list(y)
    dots = [y_dot] if len(axes) == 1 else list(y_dot)
    for k, (h, h_dot) in enumerate(zip(varargs, tangents[2:], strict=True)):
        h_dot = unthunk(h_dot)
        if isinstance(h_dot, AbstractZero) or np.ndim(h):
            continue
        h_dot = as_array_cotangent(h_dot, "np.gradient's frule")
        for i in range(len(axes)) if len(varargs) == 1 else (k,):
            dots[i] = dots[i] - outputs[i] * (h_dot / h)
    if len(axes) == 1:
        return y, ProjectTo(y)(dots[0])
    return y, Tangent(tuple, *(ProjectTo(o)(d) for o, d in zip(outputs, dots, strict=True)))


# --- trapezoid ----------------------------------------------------------------------------------


def _widths(y: Any, x: Any, dx: Any, axis: int) -> Any:
    """The interval widths ``d`` (``diff(x)`` or ``dx``), shaped to broadcast against ``y``."""
    if x is None:
        return dx
    d = np.diff(x, axis=axis if np.ndim(x) > 1 else -1)
    if np.ndim(x) == 1:
        shape = [1] * np.ndim(y)
        shape[axis] = d.shape[0]
        d = d.reshape(shape)
    return d


def _pair_means(y: np.ndarray, axis: int) -> np.ndarray:
    n = y.shape[axis]
    return 0.5 * (np.take(y, range(1, n), axis=axis) + np.take(y, range(n - 1), axis=axis))


@rrule_with_options(np.trapezoid)
def trapezoid_rrule(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    r"""``r = trapezoid(y, x, dx, axis)``: :math:`\bar y_i = \bar r (d_{i-1} + d_i)/2`, ``x̄``, ``d̄x``."""
    r = np.trapezoid(y, x, dx, axis)
    along = normalize_axes(axis, np.ndim(y))[0]
    d = _widths(y, x, dx, along)
    y_arr = as_array(y)
    project_y = ProjectTo(y)
    project_x = None if x is None else ProjectTo(x)
    project_dx = None if (x is not None or isinstance(dx, int)) else ProjectTo(dx)

    def trapezoid_pullback(r_bar: Any) -> tuple[Any, ...]:
        g = np.expand_dims(as_array_cotangent(r_bar, "np.trapezoid's pullback"), along)
        pad_before, pad_after = [(0, 0)] * y_arr.ndim, [(0, 0)] * y_arr.ndim
        pad_before[along], pad_after[along] = (1, 0), (0, 1)
        widths = np.broadcast_to(d, _pair_means(y_arr, along).shape)
        weights = 0.5 * (np.pad(widths, pad_before) + np.pad(widths, pad_after))
        y_bar = project_y(unbroadcast(np.conj(weights) * g, y_arr.shape))
        x_bar: Any = NoTangent()
        dx_bar: Any = NoTangent()
        d_bar = np.conj(_pair_means(y_arr, along)) * g
        if project_x is not None:
            if np.ndim(x) == 1:
                d_bar = np.sum(d_bar, axis=tuple(i for i in range(d_bar.ndim) if i != along))
                x_bar = project_x(_diff_adjoint(d_bar, 0))
            else:
                x_bar = project_x(unbroadcast(_diff_adjoint(d_bar, along), np.shape(x)))
        elif project_dx is not None:
            dx_bar = project_dx(np.sum(d_bar))
        return NoTangent(), y_bar, x_bar, dx_bar

    return r, trapezoid_pullback


@frule.register(np.trapezoid)
def trapezoid_frule(
    tangents: tuple[Any, ...], y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1
) -> Any:
    """``ṙ = trapezoid(ẏ, x, dx) + sum(ḋ (y_i + y_{i+1}) / 2)``."""
    r = np.trapezoid(y, x, dx, axis)
    along = normalize_axes(axis, np.ndim(y))[0]
    y_dot = unthunk(tangents[1])
    r_dot: Any = 0
    if not isinstance(y_dot, AbstractZero):
        r_dot = np.trapezoid(as_array_cotangent(y_dot, "np.trapezoid's frule"), x, dx, axis)
    position = 2 if x is not None else 3  # the tangent of x, else of dx (when positional)
    moving = unthunk(tangents[position]) if len(tangents) > position else NoTangent()
    if not isinstance(moving, AbstractZero):
        moving = as_array_cotangent(moving, "np.trapezoid's frule")
        d_dot = _widths(y, moving, None, along) if x is not None else moving
        r_dot = r_dot + np.sum(d_dot * _pair_means(as_array(y), along), axis=along)
    return r, ProjectTo(r)(r_dot)
