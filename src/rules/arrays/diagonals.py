r"""Rules of diagonals and triangles: ``diagonal``, ``diag`` (both directions), ``trace``, ``triu``, ``tril``.

All are linear, so their pushforwards apply the function to the tangent; the pullbacks:

* ``diagonal(a, offset, axis1, axis2)``: ``ā`` is zero except the ``offset`` diagonal of the
  ``(axis1, axis2)`` planes, which holds ``ȳ``;
* ``trace``: the same with ``ȳ`` repeated along the diagonal;
* ``diag(v, k)``: for a vector ``v`` (building a matrix) ``v̄ = diag(ȳ, k)``; for a matrix
  (extracting its diagonal) the ``diagonal`` pullback;
* ``triu(m, k)``/``tril(m, k)``: ``triu(ȳ, k)``/``tril(ȳ, k)`` (summed over the rows numpy
  broadcasts a 1-D ``m`` to).

References
----------
ChainRules.jl ``src/rulesets/LinearAlgebra/structured.jl`` (``diag``, ``diagm``, ``tr``,
``triu``, ``tril``) and ``dense.jl`` (``tr``); reference notes
``chainrules-linalg-and-testutils.md`` section 1.1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.arrays.indexing import scatter_into_zeros
from rules.core.broadcasting import unbroadcast
from rules.core.cotangents import as_array_cotangent
from rules.core.linear_frules import register_linear_frule
from rules.core.nesting import as_array, call, is_traced
from rules.core.options import refuse, rrule_with_options
from tangents import NoTangent, ProjectTo

__all__: list[str] = []


def _on_diagonal(
    g: Any, shape: tuple[int, ...], dtype: Any, offset: int, axis1: int, axis2: int
) -> np.ndarray:
    """Zeros of ``shape`` with ``g`` (shaped like ``np.diagonal``'s result) on the diagonal.

    A traced ``g`` (a nested differentiation) is scattered by the traced call
    :func:`rules.arrays.indexing.scatter_into_zeros`, which has rules, instead of written.
    """
    out = np.zeros(shape, dtype=dtype)
    planes = np.moveaxis(out, (axis1, axis2), (-2, -1))  # a view: writes land in out
    n1, n2 = planes.shape[-2:]
    length = max(0, min(n1 - max(0, -offset), n2 - max(0, offset)))
    rows = np.arange(length) + max(0, -offset)
    index = (Ellipsis, rows, rows + offset)
    if is_traced(g):
        moved = call(scatter_into_zeros, g, planes.shape, out.dtype, index, False)
        return np.moveaxis(moved, (-2, -1), (axis1, axis2))
    planes[index] = g
    return out


def _result_dtype(x: Any, g: Any) -> np.dtype[Any]:
    return np.result_type(np.result_type(x), np.result_type(g), np.float16)


@rrule_with_options(np.diagonal)
def diagonal_rrule(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """``y = diagonal(a, offset, axis1, axis2)``: ``ā`` holds ``ȳ`` on that diagonal, 0 elsewhere."""
    y = np.diagonal(a, offset, axis1, axis2)
    shape = np.shape(a)
    project_a = ProjectTo(a)

    def diagonal_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = as_array_cotangent(y_bar, "np.diagonal's pullback")
        a_bar = _on_diagonal(g, shape, _result_dtype(a, g), offset, axis1, axis2)
        return NoTangent(), project_a(a_bar)

    return y, diagonal_pullback


@rrule_with_options(np.trace)
def trace_rrule(
    a: Any,
    offset: int = 0,
    axis1: int = 0,
    axis2: int = 1,
    dtype: Any = None,
    out: Any = None,
) -> Any:
    """``y = trace(a, offset, axis1, axis2)``: ``ā`` holds ``ȳ`` all along that diagonal."""
    refuse("trace", out=out)
    y = np.trace(a, offset, axis1, axis2, dtype)
    shape = np.shape(a)
    project_a = ProjectTo(a)

    def trace_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = as_array(as_array_cotangent(y_bar, "np.trace's pullback"))
        a_bar = _on_diagonal(g[..., None], shape, _result_dtype(a, g), offset, axis1, axis2)
        return NoTangent(), project_a(a_bar)

    return y, trace_pullback


@rrule_with_options(np.diag)
def diag_rrule(v: Any, k: int = 0) -> Any:
    """``y = diag(v, k)``: a vector's ``v̄ = diag(ȳ, k)``; a matrix's ``v̄`` holds ``ȳ`` on diagonal ``k``."""
    y = np.diag(v, k)
    shape = np.shape(v)
    project_v = ProjectTo(v)

    def diag_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = as_array_cotangent(y_bar, "np.diag's pullback")
        if len(shape) == 1:
            return NoTangent(), project_v(np.diagonal(g, k).copy())
        return NoTangent(), project_v(_on_diagonal(g, shape, _result_dtype(v, g), k, 0, 1))

    return y, diag_pullback


def _register_triangle(f: Any, name: str) -> None:
    """``triu``/``tril``: the pullback keeps the same triangle of the cotangent."""

    def triangle_rrule(m: Any, k: int = 0) -> Any:
        y = f(m, k)
        shape = np.shape(m)
        project_m = ProjectTo(m)

        def triangle_pullback(y_bar: Any) -> tuple[Any, Any]:
            g = as_array_cotangent(y_bar, f"np.{name}'s pullback")
            return NoTangent(), project_m(unbroadcast(f(g, k), shape))

        triangle_pullback.__qualname__ = f"{name}_pullback"
        return y, triangle_pullback

    triangle_rrule.__qualname__ = f"{name}_rrule"
    triangle_rrule.__doc__ = f"``y = {name}(m, k)``: ``m̄ = {name}(ȳ, k)``."
    rrule_with_options(f)(triangle_rrule)


_register_triangle(np.triu, "triu")
_register_triangle(np.tril, "tril")

for _f, _name in (
    (np.diagonal, "diagonal"),
    (np.trace, "trace"),
    (np.diag, "diag"),
    (np.triu, "triu"),
    (np.tril, "tril"),
):
    register_linear_frule(_f, _name)
