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
"""

from __future__ import annotations

from collections.abc import Callable
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


def _object_blocks(func: Callable[..., Any], batch: Batch, *pairs: Any, name: str, **kw: Any):
    """A blockwise graph whose blocks are Python objects, consumed only by later tasks."""
    return blockwise(
        func,
        batch.index,
        *pairs,
        concatenate=True,
        dtype=object,
        meta=np.empty((0,) * len(batch.shape), dtype=object),
        name=name,
        **kw,
    )


def _block_rrule(*blocks: Any, f: Any, kwargs: dict[str, Any]) -> tuple[Any, Any]:
    result = rrule(f, *blocks, **kwargs)
    if result is None:
        raise TypeError(f"{function_name(f)}: the rule declined a block its stand-in passed")
    return result


def _block_frule(*blocks: Any, f: Any, kwargs: dict[str, Any], n: int) -> Any:
    args, dots = blocks[:n], blocks[n:]
    return frule((NoTangent(), *dots), f, *args, **kwargs)


def _block_pullback(saved: tuple[Any, Any], *y_bar_blocks: Any) -> tuple[Any, ...]:
    y_bar = y_bar_blocks[0] if len(y_bar_blocks) == 1 else tuple(y_bar_blocks)
    return saved[1](y_bar)


def _block_part(pair: tuple[Any, Any], *, slot: int, k: int, nout: int, out_dtype: Any) -> Any:
    """Component ``k`` of slot ``slot`` (0: the output, 1: its tangent) of a block's result."""
    value = unthunk(pair[slot])
    if nout > 1:
        value = split_cotangent(value, nout)[k] if slot else list(value)[k]
    return np.asarray(unthunk(value), dtype=out_dtype)


def _block_cotangent(
    bars: tuple[Any, ...], *arg: Any, i: int, nd: int, shape: Any, out_dtype: Any
) -> np.ndarray:
    """Argument ``i``'s cotangent of one block, left-padded with size-1 axes to ``nd`` axes."""
    bar = unthunk(bars[1 + i])
    if isinstance(bar, AbstractZero):
        bar = np.zeros(arg[0].shape if arg else shape, out_dtype)
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
    extra = [a, batch.indices[i]] if isinstance(a, da.Array) else []
    bar = blockwise(
        _block_cotangent,
        batch.index + core_index,
        bars,
        batch.index,
        *extra,
        i=i,
        nd=nb + k,
        shape=a.shape,
        out_dtype=dtype,
        dtype=dtype,
        new_axes=dict(zip(core_index, core_shape, strict=True)),
        adjust_chunks={batch.index[j]: 1 for j in summed},
        concatenate=True,
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
