r"""Rules of ``np.histogram`` and ``np.histogram_bin_edges``: the edges move, the counts do not.

The counts are piecewise constant in ``a`` (an entry changes bins only by crossing an edge), so
``a`` gets no cotangent through them. The edges are differentiable in ``a``: with ``bins`` a
count (or a string, whose count is piecewise constant) and no ``range``, numpy takes
:math:`e_k = l + (h - l) k / m` with :math:`l = \min a`, :math:`h = \max a` (widened by 1/2 on
each side when they are equal), so :math:`\bar l = \sum_k (1 - k/m) \bar e_k`,
:math:`\bar h = \sum_k (k/m) \bar e_k`, each shared evenly by the entries attaining the minimum
(maximum), as ``np.max`` does at ties. Given edges (``bins`` an array) are the output edges:
:math:`\bar{bins} = \bar e`. With a ``range`` :math:`(l, h)` the edges are the same linear
function of it, and ``range`` gets :math:`(\bar l, \bar h)` instead of ``a``.

The histogram itself depends differentiably on the ``weights`` (positional; passed by keyword
they are an option, per the registry's convention): :math:`n_k = \sum_{i \in k} w_i`, and with
``density=True`` on the edges too: :math:`d_k = n_k / (\Delta_k S)`, :math:`S = \sum n`,
:math:`\Delta_k = e_{k+1} - e_k`, so :math:`\bar n_k = \bar d_k / (\Delta_k S) - \sum_j \bar d_j
d_j / S` and :math:`\bar\Delta_k = -\bar d_k d_k / \Delta_k`.

References
----------
numpy ``lib/_histograms_impl.py`` (``_get_outer_edges``: the edges' definition); the tie
convention of this project's ``np.max`` rule (:mod:`rules.arrays.reductions`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array
from rules.core.options import rrule_with_options
from rules.core.registry import frule, split_cotangent
from tangents import AbstractZero, NoTangent, ProjectTo, Tangent, unthunk

__all__: list[str] = []


def _array(t: Any, what: str) -> Any:
    t = unthunk(t)
    if t is None or isinstance(t, AbstractZero):
        return None
    return as_array(as_array_cotangent(t, what))


def _pair(t: Any) -> Any:
    """The tangent of ``range`` (a pair of numbers), ``None`` for a zero."""
    t = unthunk(t)
    return None if t is None or isinstance(t, AbstractZero) else t


class _Edges:
    """How the edges depend on ``a`` (through its extremes) or on ``bins`` (they are the edges)."""

    def __init__(self, a: Any, bins: Any, range_: Any, edges: np.ndarray) -> None:
        self.a = as_array(a)
        self.given = not isinstance(bins, str) and np.ndim(bins) == 1
        self.ranged = not self.given and range_ is not None
        self.moves = not self.given and range_ is None and self.a.size > 0
        m = len(edges) - 1
        self.t = np.arange(m + 1) / max(m, 1)  # e_k = l + (h - l) t_k
        if self.moves:
            flat = self.a.ravel()
            self.at_min = (flat == flat.min()).astype(np.float64)
            self.at_max = (flat == flat.max()).astype(np.float64)
            self.at_min /= self.at_min.sum()
            self.at_max /= self.at_max.sum()

    def pullback(self, e_bar: Any) -> tuple[Any, Any, Any]:
        """``(a_bar, bins_bar, range_bar)`` (``None`` for no cotangent)."""
        if e_bar is None:
            return None, None, None
        if self.given:
            return None, e_bar, None
        l_bar, h_bar = np.sum((1 - self.t) * e_bar), np.sum(self.t * e_bar)
        if self.ranged:
            return None, None, (l_bar, h_bar)
        if not self.moves:
            return None, None, None
        return (l_bar * self.at_min + h_bar * self.at_max).reshape(self.a.shape), None, None

    def pushforward(self, a_dot: Any, bins_dot: Any, range_dot: Any) -> Any:
        if self.given:
            return bins_dot
        if self.ranged:
            if range_dot is None:
                return None
            l_dot, h_dot = (_number(t) for t in split_cotangent(range_dot, 2))
        elif not self.moves or a_dot is None:
            return None
        else:
            flat = np.ravel(a_dot)
            l_dot, h_dot = flat @ self.at_min, flat @ self.at_max
        return (1 - self.t) * l_dot + self.t * h_dot


class _Projections:
    """The cotangents of ``a``, ``bins`` and ``range`` from :meth:`_Edges.pullback`'s parts."""

    def __init__(self, a: Any, bins: Any, range_: Any) -> None:
        self.a, self.project_a = a, ProjectTo(a)
        self.project_bins, self.project_range = ProjectTo(bins), ProjectTo(range_)

    def __call__(self, a_bar: Any, bins_bar: Any, range_bar: Any) -> tuple[Any, Any, Any]:
        return (
            self.project_a(np.zeros(np.shape(self.a)) if a_bar is None else a_bar),
            NoTangent() if bins_bar is None else self.project_bins(bins_bar),
            NoTangent() if range_bar is None else self.project_range(range_bar),
        )


def _number(t: Any) -> Any:
    t = unthunk(t)
    return 0.0 if isinstance(t, AbstractZero) else t


@rrule_with_options(np.histogram_bin_edges)
def histogram_bin_edges_rrule(a: Any, bins: Any = 10, range: Any = None, weights: Any = None):
    r"""``e = histogram_bin_edges(a, bins)``: :math:`\bar l`, :math:`\bar h` onto the extremes."""
    y = np.histogram_bin_edges(a, bins, range, weights)
    edges = _Edges(a, bins, range, y)
    project = _Projections(a, bins, range)

    def histogram_bin_edges_pullback(y_bar: Any) -> tuple[Any, ...]:
        e_bar = _array(y_bar, "np.histogram_bin_edges's pullback")
        return (NoTangent(), *project(*edges.pullback(e_bar)))

    return y, histogram_bin_edges_pullback


@frule.register(np.histogram_bin_edges)
def histogram_bin_edges_frule(
    tangents: tuple[Any, ...],
    a: Any,
    bins: Any = 10,
    range: Any = None,
    weights: Any = None,
) -> Any:
    r"""``ė = (1 - t) l̇ + t ḣ`` (``l̇``, ``ḣ``: the extremes' mean tangents)."""
    y = np.histogram_bin_edges(a, bins, range, weights)
    dots = [*tangents[1:], *(NoTangent(),) * 3][:3]
    what = "np.histogram_bin_edges's frule"
    e_dot = _Edges(a, bins, range, y).pushforward(
        _array(dots[0], what), _array(dots[1], what), _pair(dots[2])
    )
    return y, NoTangent() if e_dot is None else ProjectTo(y)(e_dot)


class _Histogram:
    """The bins of the entries and the density's factors, for the weights' and edges' cotangents."""

    def __init__(self, a: Any, edges: np.ndarray, hist: np.ndarray, density: Any, weights: Any):
        flat = np.ravel(a)
        m = len(edges) - 1
        index = np.searchsorted(edges, flat, side="right") - 1
        index[flat == edges[-1]] = m - 1  # the last bin is closed
        self.inside = (flat >= edges[0]) & (flat <= edges[-1])
        self.index = np.where(self.inside, index, 0)
        self.density = bool(density)
        self.hist, self.weights = hist, weights
        if self.density:
            w = np.ones(flat.shape) if weights is None else np.ravel(weights)
            self.total = np.sum(np.where(self.inside, w, 0))
            self.widths = np.diff(edges)

    def pullback(self, h_bar: np.ndarray) -> tuple[Any, Any]:
        """``(n_bar per entry, e_bar)``: the cotangents of the weights and of the edges."""
        if not self.density:
            return np.where(self.inside, h_bar[self.index], 0), None
        d, widths = self.hist, self.widths
        n_bar = h_bar / (widths * self.total) - np.sum(h_bar * d) / self.total
        width_bar = -h_bar * d / widths
        e_bar = np.concatenate(([0.0], width_bar)) - np.concatenate((width_bar, [0.0]))
        return np.where(self.inside, n_bar[self.index], 0), e_bar

    def pushforward(self, w_dot: Any, e_dot: Any) -> Any:
        m = len(self.hist)
        n_dot = np.zeros(m)
        if w_dot is not None:
            np.add.at(n_dot, self.index[self.inside], np.ravel(w_dot)[self.inside])
        if not self.density:
            return None if w_dot is None else n_dot
        d, widths = self.hist, self.widths
        h_dot = n_dot / (widths * self.total) - d * np.sum(n_dot) / self.total
        if e_dot is not None:
            h_dot = h_dot - d * np.diff(e_dot) / widths
        return h_dot


@rrule_with_options(np.histogram)
def histogram_rrule(
    a: Any,
    bins: Any = 10,
    range: Any = None,
    density: Any = None,
    weights: Any = None,
) -> Any:
    r"""``hist, e = histogram(a, ...)``: the edges' rule, plus the weights' and ``density``'s."""
    hist, e = np.histogram(a, bins, range, density, weights)
    edges = _Edges(a, bins, range, e)
    counts = _Histogram(a, e, hist, density, weights)
    project, project_w = _Projections(a, bins, range), ProjectTo(weights)

    def histogram_pullback(y_bar: Any) -> tuple[Any, ...]:
        what = "np.histogram's pullback"
        h_bar, e_bar = (_array(t, what) for t in split_cotangent(y_bar, 2))
        w_bar = None
        if h_bar is not None:
            w_bar, e_from_density = counts.pullback(h_bar)
            if e_from_density is not None:
                e_bar = e_from_density if e_bar is None else e_bar + e_from_density
        return (
            NoTangent(),
            *project(*edges.pullback(e_bar)),
            NoTangent(),
            NoTangent()
            if weights is None
            else project_w(
                np.zeros(np.shape(weights)) if w_bar is None else w_bar.reshape(np.shape(weights))
            ),
        )

    return (hist, e), histogram_pullback


@frule.register(np.histogram)
def histogram_frule(
    tangents: tuple[Any, ...],
    a: Any,
    bins: Any = 10,
    range: Any = None,
    density: Any = None,
    weights: Any = None,
) -> Any:
    r"""``ė`` from the extremes (or ``bins``), ``ḣ`` from the weights and, with density, ``ė``."""
    hist, e = np.histogram(a, bins, range, density, weights)
    what = "np.histogram's frule"
    dots = [*tangents[1:], *(NoTangent(),) * 5][:5]
    a_dot, bins_dot, w_dot = (_array(dots[k], what) for k in (0, 1, 4))
    e_dot = _Edges(a, bins, range, e).pushforward(a_dot, bins_dot, _pair(dots[2]))
    h_dot = _Histogram(a, e, hist, density, weights).pushforward(w_dot, e_dot)
    return (hist, e), Tangent(
        tuple,
        NoTangent() if h_dot is None else ProjectTo(hist)(h_dot),
        NoTangent() if e_dot is None else ProjectTo(e)(e_dot),
    )
