"""The batch of a lifted call: its axes, how its arguments align, and checks before any compute.

A lifted call ``f(*args)`` has a *batch*: the broadcast of its array arguments' leading axes
(all axes but each argument's core axes, see :mod:`rules.dask.signatures`). dask's blockwise
machinery maps one in-memory rule call over each block of the batch. This module names the axes
for ``dask.array.blockwise``, turns numpy arguments into dask arrays where they carry batch axes,
and refuses, before anything is computed, the chunkings a chunk-by-chunk call cannot honour.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import dask.array as da
import numpy as np

from rules.core.registry import function_name

__all__ = ["MAX_CHUNK_BYTES", "Batch", "plan_batch"]

#: The largest block of one argument a single in-memory rule call receives. A call holds its
#: inputs, its outputs and the pullback's saved factors at once, a few times this; above it a
#: worker would need far more memory than the chunk suggests. Rechunk the batch axes below it.
MAX_CHUNK_BYTES = 1 << 30


@dataclass(frozen=True)
class Batch:
    """How the positional arguments of one lifted call map onto the batch axes.

    ``shape`` is the broadcast batch shape, ``index`` the blockwise names of its axes, ``args``
    the arguments as passed to blockwise (dask arrays, or constants), ``indices`` their blockwise
    indices (``None`` for a constant) and ``core`` the core-axis count of each argument.
    """

    shape: tuple[int, ...]
    index: tuple[str, ...]
    args: tuple[Any, ...]
    indices: tuple[tuple[str, ...] | None, ...]
    core: tuple[int, ...]

    def arg_index(self, i: int) -> tuple[str, ...]:
        """The blockwise index of argument ``i``'s batch axes (right-aligned) and core axes."""
        ndim = np.ndim(self.args[i])
        batch_ndim = ndim - self.core[i]
        batch = self.index[len(self.index) - batch_ndim :]
        return batch + tuple(f"core{i}_{j}" for j in range(self.core[i]))


def _is_array(a: Any) -> bool:
    return isinstance(a, da.Array | np.ndarray)


def plan_batch(f: Any, args: tuple[Any, ...], core: tuple[int, ...]) -> Batch:
    """Check the arguments of a lifted call of ``f`` and lay them out on the batch axes.

    Raises ``ValueError`` naming ``f`` when a core axis is split across chunks (with the
    ``rechunk`` that mends it), when a block exceeds :data:`MAX_CHUNK_BYTES`, or when the
    arguments' batch shapes do not broadcast.
    """
    name = function_name(f)
    batch_shapes = []
    for i, (a, k) in enumerate(zip(args, core, strict=True)):
        if not _is_array(a):
            continue
        if a.ndim < k:
            raise ValueError(f"{name}: argument {i} has {a.ndim} axes; it needs at least {k}")
        batch_shapes.append(a.shape[: a.ndim - k])
        if isinstance(a, da.Array):
            _check_chunks(name, i, a, k)
    try:
        shape = np.broadcast_shapes(*batch_shapes) if batch_shapes else ()
    except ValueError:
        raise ValueError(
            f"{name}: the batch shapes {batch_shapes} of the arguments do not broadcast"
        ) from None
    index = tuple(f"batch{j}" for j in range(len(shape)))
    chunks = _batch_chunks(args, core, shape)
    laid_out = []
    for a, k in zip(args, core, strict=True):
        if isinstance(a, np.ndarray) and a.ndim > k:
            # A numpy argument with batch axes joins the batch: give it the dask arguments' chunks.
            a = da.from_array(a, chunks=_chunks_for(a, k, shape, chunks), name=False)
        laid_out.append(a)
    batch = Batch(shape, index, tuple(laid_out), (), core)
    indices = tuple(
        batch.arg_index(i) if isinstance(a, da.Array) else None for i, a in enumerate(laid_out)
    )
    return Batch(shape, index, tuple(laid_out), indices, core)


def _check_chunks(name: str, i: int, a: da.Array, k: int) -> None:
    split = [axis for axis in range(a.ndim - k, a.ndim) if len(a.chunks[axis]) > 1]
    if split:
        fix = ", ".join(f"{axis - a.ndim}: -1" for axis in split)
        raise ValueError(
            f"{name}: argument {i} (shape {a.shape}, chunks {a.chunks}) is split across chunks "
            f"along its core axes {tuple(axis - a.ndim for axis in split)}; each chunk must hold "
            f"whole matrices. Rechunk it first: a.rechunk({{{fix}}})"
        )
    largest = math.prod(max(c) if c else 0 for c in a.chunks) * a.dtype.itemsize
    if largest > MAX_CHUNK_BYTES:
        raise ValueError(
            f"{name}: argument {i} has blocks of up to {largest} bytes, above the "
            f"{MAX_CHUNK_BYTES} bytes one rule call takes; rechunk its batch axes smaller "
            f"(chunks {a.chunks})"
        )


def _batch_chunks(
    args: tuple[Any, ...], core: tuple[int, ...], shape: tuple[int, ...]
) -> list[tuple[int, ...] | None]:
    """For each batch axis, the chunks a dask argument spanning it has (``None``: unchunked)."""
    chunks: list[tuple[int, ...] | None] = [None] * len(shape)
    for a, k in zip(args, core, strict=True):
        if not isinstance(a, da.Array):
            continue
        offset = len(shape) - (a.ndim - k)
        for axis in range(a.ndim - k):
            if a.shape[axis] == shape[offset + axis] and chunks[offset + axis] is None:
                chunks[offset + axis] = a.chunks[axis]
    return chunks


def _chunks_for(
    a: np.ndarray, k: int, shape: tuple[int, ...], chunks: list[tuple[int, ...] | None]
) -> tuple[Any, ...]:
    offset = len(shape) - (a.ndim - k)
    batch = tuple(
        chunks[offset + axis] if chunks[offset + axis] and a.shape[axis] > 1 else -1
        for axis in range(a.ndim - k)
    )
    return batch + (-1,) * k
