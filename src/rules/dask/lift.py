"""``rrule`` and ``frule`` over dask arrays: one in-memory rule call per block of the batch.

The forward pass is a dask graph whose task per block is ``rrule(f, *blocks)``. That task keeps
the block's output *and* its pullback, so the pullback's tasks reuse the forward's saved factors
(the Cholesky factor, the LU pivots, the eigenvectors) when outputs and cotangents are computed
together, as ``dask.compute(y, A_bar)`` does; computed apart, the forward runs again. Outputs
and cotangents are dask arrays with the batch chunks of the inputs; nothing runs until the user
computes.

The container type of the outputs and the tangent kind of each cotangent are found once per
call, from the same rule applied to a stand-in of one matrix per argument (a diagonal matrix with
the distinct entries 1, 2, ..., on which every lifted function is defined and differentiable), so
the graph is typed before any block is computed. The cotangent of an argument broadcast over the
batch (fewer batch axes, or size-1 ones) is the blocks' cotangents summed by dask's reduction.

Each task takes its blocks as they are (blockwise with ``concatenate=False``; the core axes are
one chunk each, so nothing needs joining), not a concatenated copy. The saved forward reports
to dask's ``sizeof`` the arrays its pullback keeps, so a worker's memory accounting and the
scheduler's placement of the pullback see the factors, not a few hundred bytes of closure; the
pullback's task depends on the saved forward and the output cotangent only, not on the inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from types import FunctionType, ModuleType
from typing import Any

import dask.array as da
import numpy as np
from dask.array.core import blockwise
from dask.base import tokenize

from rules.core.registry import frule, function_name, rrule, split_cotangent
from rules.dask.blocks import Batch, plan_batch
from rules.dask.reductions import REDUCTIONS, reduction_frule, reduction_rrule
from rules.dask.signatures import core_ndims
from tangents import AbstractZero, NoTangent, ZeroTangent, unthunk

__all__ = ["lifted_frule", "lifted_rrule"]


def _structure(y: Any) -> tuple[Callable[[list[Any]], Any], list[Any]]:
    """A builder of ``y``'s container type, and ``y``'s components (``[y]`` for an array)."""
    if isinstance(y, tuple) and hasattr(y, "_fields"):
        return (lambda parts: type(y)(*parts)), list(y)
    if isinstance(y, tuple | list):
        kind = type(y)
        return (lambda parts: kind(parts)), list(y)
    return (lambda parts: parts[0]), [y]


def _probe(a: Any, k: int) -> Any:
    """One matrix (or vector, or element) standing in for the argument ``a`` with ``k`` core axes."""
    if not isinstance(a, da.Array | np.ndarray):
        return a
    core_shape = a.shape[a.ndim - k :]
    block = np.ones(core_shape, dtype=a.dtype)
    if k == 2:
        block = np.eye(*core_shape, dtype=a.dtype) * np.arange(1, core_shape[1] + 1)
        block = block.astype(a.dtype)
    return block.reshape((1,) * (a.ndim - k) + core_shape)


def _pairs(batch: Batch) -> list[Any]:
    pairs: list[Any] = []
    for a, index in zip(batch.args, batch.indices, strict=True):
        pairs += [a, index]
    return pairs


def _depths(out_index: tuple[str, ...], pairs: list[Any]) -> tuple[int, ...]:
    """For each (array, index) pair, how many of its axes blockwise contracts (hands as lists)."""
    return tuple(
        0 if index is None else sum(name not in out_index for name in index)
        for index in pairs[1::2]
    )


def _unnest(blocks: tuple[Any, ...], depths: tuple[int, ...]) -> list[Any]:
    """The numpy blocks, out of the one-element lists blockwise gives for contracted axes.

    The core axes are one chunk each (:func:`rules.dask.blocks.plan_batch` checks it), so each
    list holds one block. Taking it out, instead of letting blockwise concatenate, spares a copy
    of every block.
    """
    out = []
    for block, depth in zip(blocks, depths, strict=True):
        for _ in range(depth):
            (block,) = block
        out.append(block)
    return out


def _nbytes(value: Any, seen: set[int] | None = None, depth: int = 5) -> int:
    """The bytes of the distinct arrays reachable from ``value`` in ``depth`` steps.

    The steps: the items of containers, the cells of a closure, the attributes of an object
    (a pullback is a closure over the rule's saved objects, which hold the factors).
    """
    seen = set() if seen is None else seen
    if id(value) in seen or isinstance(value, type | ModuleType):
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return value.nbytes
    if depth == 0:
        return 0
    if isinstance(value, dict):
        parts = list(value.values())
    elif isinstance(value, tuple | list):
        parts = list(value)
    elif isinstance(value, FunctionType):
        parts = [c.cell_contents for c in value.__closure__ or () if _filled(c)]
    else:
        parts = list(getattr(value, "__dict__", {}).values())
        for cls in type(value).__mro__:
            slots = cls.__dict__.get("__slots__", ())
            slots = (slots,) if isinstance(slots, str) else slots
            parts += [getattr(value, name) for name in slots if hasattr(value, name)]
    return sum(_nbytes(part, seen, depth - 1) for part in parts)


def _filled(cell: Any) -> bool:
    try:
        return cell.cell_contents is not _filled  # reading an empty cell raises
    except ValueError:
        return False


class _Saved:
    """One block's forward: its output, its pullback and its arguments' block shapes.

    ``__sizeof__`` counts the arrays the pullback keeps (the factors), so that dask's memory
    accounting (what a worker holds, when it spills, where the pullback's task runs) sees them;
    a bare closure would count as a few hundred bytes.
    """

    __slots__ = ("pullback", "shapes", "y")

    def __init__(self, y: Any, pullback: Any, shapes: tuple[tuple[int, ...], ...]) -> None:
        self.y = y
        self.pullback = pullback
        self.shapes = shapes

    def __sizeof__(self) -> int:
        return object.__sizeof__(self) + _nbytes((self.y, self.pullback))


def _object_blocks(func: Callable[..., Any], batch: Batch, *pairs: Any, name: str, **kw: Any):
    """A blockwise graph whose blocks are Python objects, consumed only by later tasks."""
    return blockwise(
        func,
        batch.index,
        *pairs,
        concatenate=False,
        dtype=object,
        meta=np.empty((0,) * len(batch.shape), dtype=object),
        name=name,
        depths=_depths(batch.index, list(pairs)),
        **kw,
    )


def _block_rrule(*blocks: Any, f: Any, kwargs: dict[str, Any], depths: tuple[int, ...]) -> _Saved:
    blocks = tuple(_unnest(blocks, depths))
    result = rrule(f, *blocks, **kwargs)
    if result is None:
        raise TypeError(f"{function_name(f)}: the rule declined a block its stand-in passed")
    return _Saved(result[0], result[1], tuple(np.shape(b) for b in blocks))


def _block_frule(*blocks: Any, f: Any, kwargs: dict[str, Any], n: int, depths: tuple[int, ...]):
    blocks = tuple(_unnest(blocks, depths))
    args, dots = blocks[:n], blocks[n:]
    return frule((NoTangent(), *dots), f, *args, **kwargs)


def _block_pullback(
    saved: _Saved, *y_bar_blocks: Any, depths: tuple[int, ...]
) -> tuple[tuple[Any, ...], tuple[tuple[int, ...], ...]]:
    y_bars = _unnest(y_bar_blocks, depths[1:])
    y_bar = y_bars[0] if len(y_bars) == 1 else tuple(y_bars)
    return saved.pullback(y_bar), saved.shapes


def _block_part(pair: Any, *, slot: int, k: int, nout: int, out_dtype: Any) -> Any:
    """Component ``k`` of slot ``slot`` (0: the output, 1: its tangent) of a block's result."""
    value = unthunk(pair.y if isinstance(pair, _Saved) else pair[slot])
    if nout > 1:
        value = split_cotangent(value, nout)[k] if slot else list(value)[k]
    return np.asarray(unthunk(value), dtype=out_dtype)


def _block_cotangent(
    result: tuple[tuple[Any, ...], tuple[tuple[int, ...], ...]], *, i: int, nd: int, out_dtype: Any
) -> np.ndarray:
    """Argument ``i``'s cotangent of one block, left-padded with size-1 axes to ``nd`` axes."""
    bars, shapes = result
    bar = unthunk(bars[1 + i])
    if isinstance(bar, AbstractZero):
        bar = np.zeros(shapes[i], out_dtype)
    bar = np.asarray(bar, dtype=out_dtype)
    return bar.reshape((1,) * (nd - bar.ndim) + bar.shape)


def _components(
    batch: Batch, blocks: da.Array, probes: list[Any], slot: int, name: str
) -> list[Any]:
    """Slot ``slot`` of each block's result as dask arrays, one per component of ``probes``."""
    nb = len(batch.shape)
    parts: list[Any] = []
    for k, probe in enumerate(probes):
        probe = unthunk(probe)
        if isinstance(probe, AbstractZero):
            parts.append(ZeroTangent())
            continue
        probe = np.asarray(probe)
        core_shape = probe.shape[nb:]
        core_index = tuple(f"{name}-{k}-{j}" for j in range(len(core_shape)))
        parts.append(
            blockwise(
                _block_part,
                batch.index + core_index,
                blocks,
                batch.index,
                slot=slot,
                k=k,
                nout=len(probes),
                out_dtype=probe.dtype,
                dtype=probe.dtype,
                new_axes=dict(zip(core_index, core_shape, strict=True)),
                meta=np.empty((0,) * probe.ndim, probe.dtype),
                name=f"{name}-{k}",
            )
        )
    return parts


def _argument_cotangent(batch: Batch, bars: da.Array, i: int, probe_bar: Any, name: str) -> Any:
    """Argument ``i``'s cotangent: taken from each block, summed over axes it is broadcast on."""
    a = batch.args[i]
    probe_bar = unthunk(probe_bar)
    if not isinstance(a, da.Array | np.ndarray) or isinstance(probe_bar, NoTangent):
        return NoTangent()
    dtype = np.asarray(probe_bar).dtype
    nb, k = len(batch.shape), batch.core[i]
    core_shape = a.shape[a.ndim - k :]
    own = a.shape[: a.ndim - k]
    padded = (1,) * (nb - len(own)) + own
    summed = tuple(j for j in range(nb) if padded[j] != batch.shape[j])
    core_index = tuple(f"{name}-core-{j}" for j in range(k))
    bar = blockwise(
        _block_cotangent,
        batch.index + core_index,
        bars,
        batch.index,
        i=i,
        nd=nb + k,
        out_dtype=dtype,
        dtype=dtype,
        new_axes=dict(zip(core_index, core_shape, strict=True)),
        adjust_chunks={batch.index[j]: 1 for j in summed},
        meta=np.empty((0,) * (nb + k), dtype),
        name=name,
    )
    if summed:
        bar = bar.sum(axis=summed, keepdims=True, dtype=dtype)
    return bar.reshape(a.shape)


def _as_blocks(t: Any, like: da.Array) -> Any:
    """A cotangent or tangent component as a dask array chunked like ``like`` (zeros stay)."""
    t = unthunk(t)
    if isinstance(t, AbstractZero):
        return ZeroTangent()
    if not isinstance(t, da.Array):
        t = da.from_array(np.asarray(t), chunks=-1, name=False)
    if t.shape != like.shape:
        raise ValueError(f"got shape {t.shape}, where the array has shape {like.shape}")
    return t.rechunk(like.chunks)


def _lift(f: Any, args: tuple[Any, ...], kind: str) -> Batch:
    core = core_ndims(f, args)
    if core is None:
        raise TypeError(
            f"{kind} of {function_name(f)} does not take dask arrays: only the rules that act on "
            "each matrix or element of a stack run chunk by chunk (see rules.dask)"
        )
    return plan_batch(f, args, core)


def lifted_rrule(f: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``rrule(f, *args, **kwargs)`` for dask array arguments; ``None`` when ``f`` has no rule."""
    if f in REDUCTIONS:
        return reduction_rrule(f, args, kwargs)
    batch = _lift(f, args, "rrule")
    probe = rrule(f, *(_probe(a, k) for a, k in zip(batch.args, batch.core, strict=True)), **kwargs)
    if probe is None:
        return None
    build, probe_outputs = _structure(probe[0])
    nout = len(probe_outputs)
    token = f"{function_name(f).replace('.', '-')}-{tokenize(f, batch.args, kwargs)}"
    saved = _object_blocks(_block_rrule, batch, *_pairs(batch), f=f, kwargs=kwargs, name=token)
    outputs = _components(batch, saved, probe_outputs, 0, f"{token}-y")
    probe_y_bar = [
        np.ones_like(p) if np.issubdtype(np.asarray(p).dtype, np.inexact) else ZeroTangent()
        for p in probe_outputs
    ]
    probe_bars = probe[1](probe_y_bar[0] if nout == 1 else tuple(probe_y_bar))

    def dask_pullback(y_bar: Any) -> tuple[Any, ...]:
        parts = [y_bar] if nout == 1 else list(split_cotangent(y_bar, nout))
        parts = [_as_blocks(t, y) for t, y in zip(parts, outputs, strict=True)]
        pairs: list[Any] = [saved, batch.index]
        for t, y in zip(parts, outputs, strict=True):
            index = batch.index + tuple(f"{y.name}-{j}" for j in range(y.ndim - len(batch.shape)))
            pairs += [t, None] if isinstance(t, AbstractZero) else [t, index]
        name = f"{token}-pullback-{tokenize(*parts)}"
        bars = _object_blocks(_block_pullback, batch, *pairs, name=name)
        cotangents = (
            _argument_cotangent(batch, bars, i, probe_bars[1 + i], f"{name}-bar{i}")
            for i in range(len(args))
        )
        return (NoTangent(), *cotangents)

    return build(outputs), dask_pullback


def lifted_frule(
    tangents: tuple[Any, ...], f: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """``frule(tangents, f, *args, **kwargs)`` for dask array arguments."""
    if f in REDUCTIONS:
        return reduction_frule(tangents, f, args, kwargs)
    batch = _lift(f, args, "frule")
    probes = [_probe(a, k) for a, k in zip(batch.args, batch.core, strict=True)]
    dots: list[Any] = []
    probe_dots: list[Any] = []
    for t, a, p in zip(tangents[1:], batch.args, probes, strict=True):
        t = unthunk(t)
        if isinstance(t, AbstractZero) or not isinstance(a, da.Array | np.ndarray):
            dots.append(ZeroTangent())
            probe_dots.append(ZeroTangent())
            continue
        like = a if isinstance(a, da.Array) else da.from_array(a, chunks=-1, name=False)
        dots.append(_as_blocks(t, like))
        probe_dots.append(np.ones_like(p))
    probe = frule((NoTangent(), *probe_dots), f, *probes, **kwargs)
    if probe is None:
        return None
    build, probe_outputs = _structure(probe[0])
    nout = len(probe_outputs)
    probe_y_dot = [probe[1]] if nout == 1 else list(split_cotangent(probe[1], nout))
    token = f"{function_name(f).replace('.', '-')}-frule-{tokenize(f, batch.args, dots, kwargs)}"
    pairs = _pairs(batch)
    for t, index in zip(dots, batch.indices, strict=True):
        pairs += [t, None] if isinstance(t, AbstractZero) else [t, index]
    results = _object_blocks(
        _block_frule, batch, *pairs, f=f, kwargs=kwargs, n=len(args), name=token
    )
    y = _components(batch, results, probe_outputs, 0, f"{token}-y")
    y_dot = _components(batch, results, probe_y_dot, 1, f"{token}-ydot")
    if nout == 1:
        return y[0], y_dot[0]
    return build(y), tuple(y_dot)
