r"""Rules of ``np.unique`` and the array-API ``np.unique_values``/``_counts``/``_inverse``/``_all``.

The unique values are entries of the input: :math:`u_k = a_i` for every ``i`` in group ``k``
(the entries equal to :math:`u_k`). Away from ties (all groups of size 1) that is a permutation
of the entries and the values are differentiable; at a tie a perturbation that splits the group
changes the output's shape, so there only perturbations that keep the group together have a
derivative, moving :math:`u_k` by their common value. The rules share the cotangent evenly
within a group, :math:`\bar a_i = \bar u_k / |k|` (the convention of ``np.max`` at ties), and the
pushforward takes the group's mean tangent, its adjoint. The indices, inverse indices and
counts are integers: no tangent. With ``axis``, groups are equal slices along the axis.

numpy (2.4) returns ``unique_values`` of complex input in hash order, not sorted: that order
jumps under any perturbation, so as an ordered array the output has no derivative there; the
rule gives the cotangent for the order of the call at hand (the values as a set).

References
----------
ChainRules.jl ``src/rulesets/Base/sort.jl`` (``sort``: the cotangent through the permutation);
the tie convention of this project's ``np.max`` rule (:mod:`rules.arrays.reductions`).
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


class _Groups:
    """For each unique value (slice), the entries (slices) of ``a`` equal to it."""

    def __init__(self, a: Any, values: Any, axis: Any, **options: Any) -> None:
        a = as_array(a)
        self.shape, self.values_shape = a.shape, np.shape(values)
        self.axis = None if axis is None else int(axis) % max(a.ndim, 1)
        if self.axis is None:
            options = {**options, "sorted": True}  # for the search below
            u, inverse, counts = np.unique(
                a.ravel(), return_inverse=True, return_counts=True, **options
            )
            # the values may come in another order than np.unique's sorted one
            self.order = np.searchsorted(u, as_array(values).ravel())
        else:
            u, inverse, counts = np.unique(
                a, return_inverse=True, return_counts=True, axis=self.axis, **options
            )
            self.order = np.arange(u.shape[self.axis])
        self.inverse, self.counts, self.k = np.ravel(inverse), counts, len(counts)

    def _rows(self, x: np.ndarray) -> np.ndarray:
        """``x`` (the shape of ``a`` or of the values) as one row per entry or slice."""
        if self.axis is None:
            return x.reshape(-1, 1)
        return np.moveaxis(x, self.axis, 0).reshape(x.shape[self.axis], -1)

    def _unrows(self, rows: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        if self.axis is None:
            return rows.reshape(shape)
        moved = (shape[self.axis], *shape[: self.axis], *shape[self.axis + 1 :])
        return np.moveaxis(rows.reshape(moved), 0, self.axis)

    def pullback(self, g: np.ndarray) -> np.ndarray:
        """``a_bar``: each value's cotangent shared evenly by its group."""
        per_group = np.zeros((self.k, self._rows(g).shape[1]), dtype=g.dtype)
        per_group[self.order] = self._rows(g)
        shared = per_group / self.counts[:, None]
        return self._unrows(shared[self.inverse], self.shape)

    def pushforward(self, a_dot: np.ndarray) -> np.ndarray:
        """``u_dot``: the mean tangent of each group."""
        rows = self._rows(a_dot)
        sums = np.zeros((self.k, rows.shape[1]), dtype=rows.dtype)
        np.add.at(sums, self.inverse, rows)
        means = (sums / self.counts[:, None]).astype(rows.dtype, copy=False)
        return self._unrows(means[self.order], self.values_shape)


def _values_cotangent(y_bar: Any, n_outputs: int, name: str) -> Any:
    part = unthunk(split_cotangent(y_bar, n_outputs)[0] if n_outputs > 1 else y_bar)
    if isinstance(part, AbstractZero):
        return None
    return as_array(as_array_cotangent(part, f"{name}'s pullback"))


def _rule(name: str, groups: _Groups, a: Any, n_outputs: int) -> Any:
    project_a = ProjectTo(a)

    def unique_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = _values_cotangent(y_bar, n_outputs, name)
        if g is None:
            return NoTangent(), project_a(np.zeros(np.shape(a)))
        return NoTangent(), project_a(groups.pullback(g))

    unique_pullback.__qualname__ = f"{name.split('.')[-1]}_pullback"
    return unique_pullback


def _pushed(y: Any, groups: _Groups, tangent: Any, name: str, n_outputs: int) -> Any:
    values = y[0] if n_outputs > 1 else y
    a_dot = as_array(as_array_cotangent(unthunk(tangent), f"{name}'s frule"))
    u_dot = ProjectTo(values)(groups.pushforward(a_dot))
    if n_outputs == 1:
        return u_dot
    return Tangent(type(y), u_dot, *(NoTangent(),) * (n_outputs - 1))


def _flags(return_index: bool, return_inverse: bool, return_counts: bool) -> int:
    return 1 + int(bool(return_index)) + int(bool(return_inverse)) + int(bool(return_counts))


@rrule_with_options(np.unique)
def unique_rrule(
    ar: Any,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: Any = None,
    **kwargs: Any,
) -> Any:
    r"""``np.unique``: :math:`\bar a_i = \bar u_k / |k|` for ``i`` in group ``k`` (module doc)."""
    y = np.unique(ar, return_index, return_inverse, return_counts, axis, **kwargs)
    n = _flags(return_index, return_inverse, return_counts)
    values = y[0] if n > 1 else y
    groups = _Groups(ar, values, axis, **kwargs)
    return y, _rule("np.unique", groups, ar, n)


@frule.register(np.unique)
def unique_frule(
    tangents: tuple[Any, ...],
    ar: Any,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: Any = None,
    **kwargs: Any,
) -> Any:
    r"""``np.unique``: :math:`\dot u_k` is the mean of :math:`\dot a` over group ``k``."""
    y = np.unique(ar, return_index, return_inverse, return_counts, axis, **kwargs)
    n = _flags(return_index, return_inverse, return_counts)
    groups = _Groups(ar, y[0] if n > 1 else y, axis, **kwargs)
    return y, _pushed(y, groups, tangents[1], "np.unique", n)


def _register_array_api(f: Any, n_outputs: int) -> None:
    name = f"np.{f.__name__}"

    def array_api_rrule(x: Any) -> Any:
        y = f(x)
        values = y.values if n_outputs > 1 else y
        # np.unique_* are np.unique(x, ..., equal_nan=False) (numpy's documentation)
        return y, _rule(name, _Groups(x, values, None, equal_nan=False), x, n_outputs)

    def array_api_frule(tangents: tuple[Any, ...], x: Any) -> Any:
        y = f(x)
        groups = _Groups(x, y.values if n_outputs > 1 else y, None, equal_nan=False)
        return y, _pushed(y, groups, tangents[1], name, n_outputs)

    array_api_rrule.__qualname__ = f"{f.__name__}_rrule"
    array_api_frule.__qualname__ = f"{f.__name__}_frule"
    rrule_with_options(f)(array_api_rrule)
    frule.register(f)(array_api_frule)


_register_array_api(np.unique_values, 1)
_register_array_api(np.unique_counts, 2)
_register_array_api(np.unique_inverse, 2)
_register_array_api(np.unique_all, 4)
