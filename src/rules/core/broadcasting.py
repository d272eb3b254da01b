"""Undoing numpy broadcasting in cotangents: sum a cotangent back to an input's shape."""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array
from tangents import AbstractZero, NotImplementedTangent

__all__ = ["broadcast_tangent", "unbroadcast"]


def unbroadcast(
    g: Any, shape: tuple[int, ...], operation: str = "summing a cotangent over broadcast axes"
) -> Any:
    """Sum the cotangent ``g`` of a broadcast result back to an input of shape ``shape``.

    The adjoint of numpy broadcasting ``x -> broadcast_to(x, g.shape)``: leading axes that
    broadcasting added are summed away, and axes where the input had size 1 are summed with
    ``keepdims``. Returns ``g`` itself when the shapes already agree (so any tangent type with a
    ``shape`` passes); summing needs an array, and ``operation`` names the rule in the
    ``TypeError`` a user's tangent type gets otherwise. Zeros and ``NotImplementedTangent`` (a
    partial derivative a rule does not implement, as ChainRulesCore allows) have no entries to
    sum and are returned as they are.
    """
    if isinstance(g, AbstractZero | NotImplementedTangent):
        return g
    g_shape = np.shape(g)
    if g_shape == shape:
        return g
    g = as_array(as_array_cotangent(g, operation))
    extra = g.ndim - len(shape)
    if extra < 0:
        raise ValueError(
            f"a cotangent of shape {g_shape} cannot come from an input of shape {shape}"
        )
    if extra:
        g = _sum_leading(g, extra)
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if stretched:
        g = g.sum(axis=stretched, keepdims=True)
    if g.shape != shape:
        raise ValueError(
            f"a cotangent of shape {g_shape} cannot come from an input of shape {shape}"
        )
    return g


_BLAS_SUMMED = frozenset(np.dtype(c) for c in "fdFD")


def _sum_leading(g: np.ndarray, extra: int) -> np.ndarray:
    """``g`` summed over its first ``extra`` axes.

    For plain float and complex ndarrays in C order, a product by a vector of ones (BLAS ``gemv``;
    a traced value of a nested differentiation is summed as it is):
    numpy's ``sum`` over leading axes adds one short row at a time, which on a solve's
    ``(10000, 4, 1)`` cotangent took 108 us against 10 us, and on ``(10000, 4, 4)`` 130 against
    17 us. Either way an entry is the sum of the same terms with one rounding per addition, in
    an order the library fixes: the results agree to rounding (up to the sign of a zero sum of
    negative zeros), and NaN and inf propagate alike.
    """
    lead = int(np.prod(g.shape[:extra]))
    if (
        type(g) is np.ndarray
        and g.dtype in _BLAS_SUMMED
        and g.flags.c_contiguous
        and lead > 1
        and g.size
    ):
        return (np.ones(lead, g.dtype) @ g.reshape(lead, -1)).reshape(g.shape[extra:])
    return g.sum(axis=tuple(range(extra)))


def broadcast_tangent(
    t: Any, shape: tuple[int, ...], operation: str = "broadcasting a tangent"
) -> Any:
    """A tangent of an input, broadcast (as a new writable array) to the output's ``shape``.

    Returns ``t`` itself when the shapes already agree (so any tangent type with a ``shape``
    passes); broadcasting needs an array, and ``operation`` names the rule in the ``TypeError``
    a user's tangent type gets otherwise (it is never converted silently). Zeros and
    ``NotImplementedTangent`` are returned as they are.
    """
    if isinstance(t, AbstractZero | NotImplementedTangent):
        return t
    if np.shape(t) == shape:
        return t
    return np.array(np.broadcast_to(as_array_cotangent(t, operation), shape))
