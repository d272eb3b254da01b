r"""Rules of scipy.linalg's structured constructors: ``block_diag``, ``toeplitz``, ``circulant``.

Each output entry is one entry of the inputs (``toeplitz`` without ``r``: its conjugate), so the
maps are linear and their adjoints scatter-add the cotangent back:

* ``block_diag(*arrs)``: the blocks of ``ȳ`` on the diagonal (a 1-D or 0-D input is a row);
* ``toeplitz(c, r)``: :math:`T_{ij} = c_{i-j}` (``i >= j``), :math:`r_{j-i}` (``j > i``), so
  :math:`\bar c_k = \sum_{i-j=k} \bar T_{ij}`, :math:`\bar r_k = \sum_{j-i=k} \bar T_{ij}` for
  ``k >= 1`` and :math:`\bar r_0 = 0` (``r[0]`` is ignored); without ``r`` it is ``conj(c)``,
  whose cotangent adds :math:`\overline{\bar r}` to :math:`\bar c`;
* ``circulant(c)``: :math:`C_{ij} = c_{(i-j) \bmod n}`, :math:`\bar c_k = \sum_{(i-j) \bmod n = k}
  \bar C_{ij}`.

Leading axes of ``c`` and ``r`` are batches (scipy's convention).

References
----------
JAX ``jax/_src/scipy/linalg.py`` (``toeplitz``, ``block_diag`` as gathers and pads); ChainRules.jl
``src/rulesets/Base/array.jl`` (indexing and ``cat``: their adjoints scatter).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from rules.core.broadcasting import unbroadcast
from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array, call
from rules.core.options import rrule_with_options
from rules.core.registry import frule
from tangents import AbstractZero, NoTangent, ProjectTo, unthunk

__all__: list[str] = []


def _array(t: Any, name: str, what: str = "pullback") -> np.ndarray:
    return as_array(as_array_cotangent(t, f"scipy.linalg.{name}'s {what}"))


def _scatter(G: np.ndarray, index: np.ndarray, size: int) -> np.ndarray:
    """``out[..., k] = sum of G[..., i, j] with index[i, j] == k`` (batch axes kept)."""
    flat = G.reshape(*G.shape[:-2], -1)
    out = np.zeros((size, *flat.shape[:-1]), dtype=G.dtype)
    np.add.at(out, index.reshape(-1), np.moveaxis(flat, -1, 0))
    return np.moveaxis(out, 0, -1)


# --- block_diag ---------------------------------------------------------------------------------


@rrule_with_options(sla.block_diag)
def block_diag_rrule(*arrs: Any) -> Any:
    """``y = block_diag(*arrs)``: each ``x̄_k`` is the ``k``-th diagonal block of ``ȳ``."""
    y = call(sla.block_diag, *arrs)
    shapes = [np.shape(np.atleast_2d(a)) for a in arrs]
    starts = np.cumsum([(0, 0), *shapes], axis=0)
    projectors = [ProjectTo(a) for a in arrs]

    def block_diag_pullback(y_bar: Any) -> tuple[Any, ...]:
        G = _array(y_bar, "block_diag")
        bars = [
            project(np.reshape(G[r : r + m, c : c + n], np.shape(a)))
            for a, project, (r, c), (m, n) in zip(arrs, projectors, starts, shapes, strict=False)
        ]
        return (NoTangent(), *bars)

    return y, block_diag_pullback


@frule.register(sla.block_diag)
def block_diag_frule(tangents: tuple[Any, ...], *arrs: Any) -> Any:
    """``ẏ = block_diag(*ẋs)`` (zeros for zero tangents)."""
    y = call(sla.block_diag, *arrs)
    dots = []
    for a, t in zip(arrs, tangents[1:], strict=True):
        t = unthunk(t)
        dots.append(
            np.zeros(np.shape(a))
            if isinstance(t, AbstractZero)
            else _array(t, "block_diag", "frule")
        )
    return y, ProjectTo(y)(call(sla.block_diag, *dots))


# --- toeplitz and circulant ---------------------------------------------------------------------


def _toeplitz_index(m: int, n: int) -> np.ndarray:
    """Where ``T_{ij}`` comes from in ``concatenate([c, r[1:]])``."""
    i, j = np.arange(m)[:, None], np.arange(n)[None, :]
    return np.where(i >= j, i - j, m + j - i - 1)


@rrule_with_options(sla.toeplitz)
def toeplitz_rrule(c: Any, r: Any = None) -> Any:
    r"""``T = toeplitz(c, r)``: :math:`\bar c_k = \sum_{i-j=k} \bar T_{ij}`, :math:`\bar r_k = \sum_{j-i=k} \bar T_{ij}`."""
    T = call(sla.toeplitz, c, r)
    m, n = T.shape[-2:]
    index = _toeplitz_index(m, n)
    project_c = ProjectTo(c)
    project_r = None if r is None else ProjectTo(r)

    def toeplitz_pullback(T_bar: Any) -> tuple[Any, ...]:
        source = _scatter(_array(T_bar, "toeplitz"), index, m + n - 1)
        c_bar, r_tail = source[..., :m], source[..., m:]
        r_bar = np.concatenate([np.zeros((*r_tail.shape[:-1], 1), dtype=r_tail.dtype), r_tail], -1)
        if project_r is None:  # r = conj(c): its cotangent comes back conjugated
            c_bar = c_bar + np.conj(r_bar[..., :m])
            return NoTangent(), project_c(unbroadcast(c_bar, np.shape(c)))
        return (
            NoTangent(),
            project_c(unbroadcast(c_bar, np.shape(c))),
            project_r(unbroadcast(r_bar, np.shape(r))),
        )

    return T, toeplitz_pullback


@frule.register(sla.toeplitz)
def toeplitz_frule(tangents: tuple[Any, ...], c: Any, r: Any = None) -> Any:
    """``Ṫ = toeplitz(ċ, ṙ)`` (without ``r``: ``toeplitz(ċ)``, which conjugates it)."""
    T = call(sla.toeplitz, c, r)
    dots = []
    for value, t in zip((c, r), tangents[1:3] if r is not None else tangents[1:2], strict=False):
        t = unthunk(t)
        zero = isinstance(t, AbstractZero)
        dots.append(np.zeros(np.shape(value)) if zero else _array(t, "toeplitz", "frule"))
    if r is None:
        return T, ProjectTo(T)(call(sla.toeplitz, dots[0]))
    c_dot, r_dot = (as_array(d, dtype=np.result_type(*dots, float)) for d in dots)
    return T, ProjectTo(T)(call(sla.toeplitz, c_dot, r_dot))


@rrule_with_options(sla.circulant)
def circulant_rrule(c: Any) -> Any:
    r"""``C = circulant(c)``: :math:`\bar c_k = \sum_{(i-j) \bmod n = k} \bar C_{ij}`."""
    C = call(sla.circulant, c)
    n = C.shape[-1]
    index = (np.arange(n)[:, None] - np.arange(n)[None, :]) % n
    project_c = ProjectTo(c)

    def circulant_pullback(C_bar: Any) -> tuple[Any, Any]:
        return NoTangent(), project_c(_scatter(_array(C_bar, "circulant"), index, n))

    return C, circulant_pullback


@frule.register(sla.circulant)
def circulant_frule(tangents: tuple[Any, ...], c: Any) -> Any:
    """``Ċ = circulant(ċ)``."""
    C = call(sla.circulant, c)
    return C, ProjectTo(C)(call(sla.circulant, _array(tangents[1], "circulant", "frule")))
