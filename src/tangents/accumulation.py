"""Gradient accumulation: ``add_inplace(acc, dx)`` adds in place when that is safe."""

from __future__ import annotations

from typing import Any

import numpy as np

from tangents.arithmetic import add
from tangents.thunk import InplaceableThunk, unthunk
from tangents.zero import AbstractZero


def is_inplace_destination(acc: Any) -> bool:
    """Whether ``acc`` may be written into: a writable float/complex ndarray with no stride-0 axis."""
    return (
        isinstance(acc, np.ndarray)
        and acc.flags.writeable
        and np.issubdtype(acc.dtype, np.inexact)
        and all(
            stride != 0 or size <= 1 for stride, size in zip(acc.strides, acc.shape, strict=True)
        )
    )


def _fits_into(acc: np.ndarray, dx: Any) -> bool:
    """Whether ``acc += dx`` keeps ``acc``'s shape and dtype and reads no memory it writes."""
    if not isinstance(dx, np.ndarray | np.generic | int | float | complex):
        return False
    dx_dtype = np.result_type(dx)
    return (
        np.can_cast(dx_dtype, acc.dtype, casting="same_kind")
        and np.broadcast_shapes(acc.shape, np.shape(dx)) == acc.shape
        and not (isinstance(dx, np.ndarray) and np.may_share_memory(acc, dx))
    )


def add_inplace(acc: Any, dx: Any) -> Any:
    """Accumulate a cotangent: return ``acc + dx``, written into ``acc`` when that is safe.

    ``acc`` is overwritten only when it is a writable float or complex ndarray without
    broadcast (stride-0) axes, ``dx`` broadcasts to its shape and casts to its dtype, and ``dx``
    shares no memory with it. An :class:`InplaceableThunk` then adds itself through its
    ``add_fn`` without forming its value. In every other case (read-only, integer or broadcast
    accumulators, zeros, structural tangents) a new value is returned and ``acc`` is untouched.

    Returns
    -------
    The sum: ``acc`` itself when written in place.
    """
    if isinstance(dx, AbstractZero):
        return add(acc, dx)
    if is_inplace_destination(acc):
        if isinstance(dx, InplaceableThunk):
            result = dx.add_fn(acc)
            if result is not acc:
                raise RuntimeError(
                    "an InplaceableThunk's add_fn must return the array it was given"
                )
            return acc
        value = unthunk(dx)
        if _fits_into(acc, value):
            np.add(acc, value, out=acc)
            return acc
        return add(acc, value)
    return add(acc, dx)
