"""``wrap(f)``: a function with an ``rrule`` as a JAX operation, a ``jax.custom_vjp``.

The primal runs in a host callback (``jax.experimental.buffer_callback``, which reads and
writes XLA's buffers in place; ``jax.pure_callback`` before JAX 0.7); the forward pass of
reverse mode runs ``rrule(f, *arrays)`` in one and keeps the pullback on the host, handing JAX a
token; the backward pass runs the pullback in another. All callbacks use
``vmap_method="broadcast_all"``:
under ``vmap`` the rule gets the whole stack in one call (every operand tiled to the batch, so
that an operand that is not batched still gets one cotangent per slice), which is correct for
functions that broadcast over leading axes, such as every ``(..., n, n)`` linear-algebra function.

The choice of ``custom_vjp``: JAX allows ``custom_jvp`` or ``custom_vjp`` on a function, not
both, and derives reverse mode from a ``custom_jvp`` by transposing it, which a callback does not
allow. Reverse mode (``grad``, ``vjp``, ``jacrev``) is the point of the library's fast pullbacks,
so :func:`wrap` gives a ``custom_vjp``; :func:`wrap_forward` gives a ``custom_jvp`` through the
``frule`` for forward mode (``jvp``, ``jacfwd``, ``linearize``) instead.

Pullbacks are kept for the last :data:`KEPT_PULLBACKS` forward passes (an LRU on the host);
a backward pass whose pullback is gone, or whose cotangents are batched where the forward pass was
not (``jacrev``, ``vmap`` of ``vjp``), calls ``rrule`` again on the saved inputs. Either way the
answer is the rule's.

Conventions (``docs/interop.md`` has the table): a symbolic zero cotangent (``symbolic_zeros``)
or a ``float0`` one is ``ZeroTangent()``; integer and bool outputs get ``float0`` cotangents;
complex numbers: JAX's cotangents are the complex conjugates of this library's (JAX's ``grad``
of ``abs(z)**2`` at ``1+1j`` is ``2-2j``, the rules' cotangent is ``2+2j``), so the backward
pass conjugates on the way in and on the way out; CPU only: an array on another device raises
``ValueError`` naming the function, never a silent copy.
"""

from __future__ import annotations

import functools
import itertools
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

try:  # JAX 0.7 and later: callbacks on XLA's own buffers
    from jax.experimental.buffer_callback import buffer_callback as _buffer_callback
except ImportError:  # pragma: no cover - older JAX: jax.pure_callback only
    _buffer_callback = None

from rules import frule, rrule, split_cotangent
from rules.core.registry import function_name
from rules.interop._outputs import Structure, cotangent_array, flatten, is_differentiable_dtype
from tangents import NoTangent, ZeroTangent

__all__ = ["KEPT_PULLBACKS", "wrap", "wrap_forward"]

KEPT_PULLBACKS = 64
"""How many forward passes keep their pullback on the host for their backward pass."""

_TOKEN = np.dtype(np.uint32)


class _Pullbacks:
    """The host-side LRU of pullbacks, keyed by the token the forward callback returned."""

    def __init__(self) -> None:
        self._entries: OrderedDict[int, tuple[Any, tuple[tuple[int, ...], ...]]] = OrderedDict()
        self._lock = threading.Lock()
        self._counter = itertools.count(1)

    def keep(self, pullback: Any, shapes: tuple[tuple[int, ...], ...]) -> int:
        with self._lock:
            token = next(self._counter) % (2**32 - 1) + 1
            self._entries[token] = (pullback, shapes)
            while len(self._entries) > KEPT_PULLBACKS:
                self._entries.popitem(last=False)
            return token

    def find(self, token: np.ndarray, shapes: tuple[tuple[int, ...] | None, ...]) -> Any:
        """The pullback of ``token`` if it is kept and its outputs had ``shapes``, else ``None``.

        ``None`` in ``shapes`` matches any shape (an output whose cotangent is zero).
        """
        flat = token.ravel()
        if flat.size == 0 or (flat != flat[0]).any():
            return None
        entry = self._entries.get(int(flat[0]))  # one dict read: atomic, no lock needed
        if entry is None:
            return None
        pullback, kept = entry
        if any(s is not None and s != k for s, k in zip(shapes, kept, strict=True)):
            return None
        return pullback


_PULLBACKS = _Pullbacks()


def _check_device(name: str, x: Any) -> None:
    """Refuse arrays on a device other than the CPU (tracers: the default backend)."""
    if isinstance(x, jax.core.Tracer):
        platforms = {jax.default_backend()}
    elif isinstance(x, jax.Array):
        platforms = {device.platform for device in x.devices()}
    else:
        return
    if platforms != {"cpu"}:
        raise ValueError(
            f"{name}: only CPU arrays are supported, got one on {', '.join(sorted(platforms))}; "
            "move it with jax.device_put(x, jax.devices('cpu')[0]) first "
            "(the library computes with numpy on the CPU)"
        )


def _is_static(x: Any) -> bool:
    """Python ints, bools, strings and ``None`` are options of the call, not operands."""
    return x is None or isinstance(x, bool | int | str)


def _dummy(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An input of ``shape`` on which linear-algebra functions succeed: identities, else zeros."""
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        return np.array(np.broadcast_to(np.eye(shape[-1], dtype=dtype), shape))
    return np.zeros(shape, dtype)


def _leaf_specs(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """The specs of the leaves of a call: a tuple argument's elements in place of it."""
    return tuple(leaf for spec in key for leaf in (spec[1] if spec[0] == "tuple" else (spec,)))


def _regroup(key: tuple[Any, ...], leaves: tuple[Any, ...]) -> tuple[Any, ...]:
    """The positional arguments of a call from its leaves (the inverse of :func:`_leaf_specs`)."""
    it = iter(leaves)
    return tuple(
        tuple(next(it) for _ in spec[1]) if spec[0] == "tuple" else next(it) for spec in key
    )


@functools.lru_cache(maxsize=1024)
def _result_spec(
    f: Callable[..., Any], kwargs: tuple[Any, ...], inputs: tuple[Any, ...]
) -> tuple[tuple[jax.ShapeDtypeStruct, ...], Structure]:
    """Output shapes and dtypes of ``f`` on inputs of these shapes and dtypes (cached).

    JAX needs them before the callback runs; they come from calling ``f`` once on identity
    matrices (zeros for other shapes) of the same shapes and dtypes.
    """
    dummies = tuple(
        spec[1] if spec[0] == "static" else _dummy(*spec) for spec in _leaf_specs(inputs)
    )
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = f(*_regroup(inputs, dummies), **dict(kwargs))
    leaves, structure = flatten(y)
    specs = tuple(
        jax.ShapeDtypeStruct(np.shape(leaf), jax.dtypes.canonicalize_dtype(np.asarray(leaf).dtype))
        for leaf in leaves
    )
    return specs, structure


def _host(x: Any) -> np.ndarray:
    return np.asarray(x)  # zero-copy for CPU arrays handed to a callback


def _batch_shape(arrays: tuple[np.ndarray, ...], ranks: tuple[int, ...]) -> tuple[int, ...]:
    """The vmap batch axes in front of the callback's operands (``()`` when not vmapped)."""
    for a, r in zip(arrays, ranks, strict=True):
        return a.shape[: a.ndim - r]
    return ()


def _outputs(leaves: tuple[Any, ...], specs: Any, batch: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """The rule's outputs as arrays of the declared shapes and dtypes."""
    return tuple(
        np.broadcast_to(np.asarray(leaf, dtype=spec.dtype), batch + spec.shape)
        for leaf, spec in zip(leaves, specs, strict=True)
    )


def _conj(x: np.ndarray) -> np.ndarray:
    return np.conj(x) if np.iscomplexobj(x) else x


class _Call:
    """One call signature of a wrapped function: which arguments are operands, their specs.

    ``key`` holds one spec per argument: ``("static", value)``, ``(shape, dtype)`` for an
    operand, or ``("tuple", specs)`` for a tuple argument such as ``cho_solve``'s
    ``(c, lower)``, whose elements are static options or operands in turn (its leaves).
    """

    def __init__(self, f: Callable[..., Any], kwargs: dict[str, Any], key: tuple[Any, ...]):
        self.f = f
        self.kwargs = kwargs
        self.key = key
        self.name = f"rules.interop.jax.wrap({function_name(f)})"
        leaves = _leaf_specs(key)
        self.static = tuple(spec[0] == "static" for spec in leaves)
        self.statics = tuple(spec[1] for spec in leaves if spec[0] == "static")
        self.specs, self.structure = _result_spec(f, tuple(sorted(kwargs.items())), key)
        self.ranks = tuple(len(spec[0]) for spec in leaves if spec[0] != "static")
        self._transports: dict[tuple[str, Any], Callable[..., Any]] = {}

    def transport(self, method: str, live: tuple[bool, ...] | None = None) -> Callable[..., Any]:
        """The callback running ``self.<method>`` (with ``live`` first), one object per key."""
        key = (method, live)
        found = self._transports.get(key)
        if found is None:
            bound = getattr(self, method)
            if live is not None:
                bound = functools.partial(bound, live)
            found = self._transports[key] = _in_place(bound, owned=method == "forward")
        return found

    def arguments(self, operands: tuple[np.ndarray, ...]) -> tuple[Any, ...]:
        """The call's positional arguments: the operands with the static options in place."""
        it, statics = iter(operands), iter(self.statics)
        return _regroup(self.key, tuple(next(statics) if s else next(it) for s in self.static))

    def rule(self, operands: tuple[np.ndarray, ...]) -> tuple[Any, Any]:
        result = rrule(self.f, *self.arguments(operands), **self.kwargs)
        if result is None:
            raise TypeError(f"{self.name}: no rrule is registered for {function_name(self.f)}")
        return result

    def operand_cotangents(self, cotangents: tuple[Any, ...]) -> tuple[Any, ...]:
        """The cotangents of the operands among a pullback's ``(x1_bar, ..., xn_bar)``."""
        leaves = []
        for spec, c in zip(self.key, cotangents, strict=False):
            leaves.extend(split_cotangent(c, len(spec[1])) if spec[0] == "tuple" else (c,))
        return tuple(c for c, s in zip(leaves, self.static, strict=False) if not s)

    # --- the three callbacks -----------------------------------------------------------------

    def primal(self, *operands: Any) -> tuple[np.ndarray, ...]:
        arrays = tuple(_host(x) for x in operands)
        y = self.f(*self.arguments(arrays), **self.kwargs)
        return _outputs(flatten(y)[0], self.specs, _batch_shape(arrays, self.ranks))

    def forward(self, *operands: Any) -> tuple[Any, ...]:
        arrays = tuple(_host(x) for x in operands)
        y, pullback = self.rule(arrays)
        leaves = flatten(y)[0]
        token = _PULLBACKS.keep(pullback, tuple(np.shape(leaf) for leaf in leaves))
        batch = _batch_shape(arrays, self.ranks)
        return (*_outputs(leaves, self.specs, batch), np.full(batch, token, _TOKEN))

    def backward(self, live: tuple[bool, ...], token: Any, *values: Any) -> tuple[np.ndarray, ...]:
        arrays = tuple(_host(x) for x in values[: len(self.ranks)])
        given = iter(_host(g) for g in values[len(self.ranks) :])
        cotangents = tuple(_conj(next(given)) if on else ZeroTangent() for on in live)
        shapes = tuple(np.shape(c) if on else None for c, on in zip(cotangents, live, strict=True))
        pullback = _PULLBACKS.find(_host(token), shapes)
        if pullback is None:  # gone, or batched where the forward pass was not: rrule again
            pullback = self.rule(arrays)[1]
        y_bar = cotangents if self.structure.kind is not None else cotangents[0]
        grads = self.operand_cotangents(pullback(y_bar)[1:])
        out = []
        for x, dx in zip(arrays, grads, strict=True):
            array = cotangent_array(self.f, dx, "a cotangent")
            array = np.zeros_like(x) if array is None else _conj(array)
            out.append(np.broadcast_to(array.astype(x.dtype, copy=False), x.shape))
        return tuple(out)

    def pushforward(self, live: tuple[bool, ...], *values: Any) -> tuple[np.ndarray, ...]:
        arrays = tuple(_host(x) for x in values[: len(self.ranks)])
        given = iter(_host(t) for t in values[len(self.ranks) :])
        dots = tuple(next(given) if on else ZeroTangent() for on in live)
        it = iter(dots)
        tangents = _regroup(self.key, tuple(NoTangent() if s else next(it) for s in self.static))
        result = frule((NoTangent(), *tangents), self.f, *self.arguments(arrays), **self.kwargs)
        if result is None:
            raise TypeError(
                f"{self.name}: forward mode needs an frule; none is registered for "
                f"{function_name(self.f)}"
            )
        batch = _batch_shape(arrays, self.ranks)
        parts = []
        for spec, dy in zip(self.specs, self.structure.split(result[1]), strict=True):
            differentiable = is_differentiable_dtype(spec.dtype)
            array = cotangent_array(self.f, dy, "a tangent") if differentiable else None
            parts.append(np.zeros(batch + spec.shape, spec.dtype) if array is None else array)
        return _outputs(tuple(parts), self.specs, batch)


def _callback(method: Callable[..., Any], specs: Any, *args: Any) -> Any:
    """``method(*args)`` on the host; under ``vmap``, once for the whole (tiled) stack.

    With ``jax.experimental.buffer_callback`` (JAX 0.7 and later) the method reads XLA's input
    buffers in place and its results are written straight into the output buffers: one copy
    per output, where ``jax.pure_callback`` copies every input onto a device and every output
    back (and costs tens of microseconds more per call). ``method`` comes from
    :meth:`_Call.transport`, the same object at every call of one signature, so that JAX's
    caches of lowered callbacks hit.
    """
    if _buffer_callback is None:
        return jax.pure_callback(method, specs, *args, vmap_method="broadcast_all")
    return _buffer_callback(method, specs, vmap_method="broadcast_all")(*args)


def _in_place(method: Callable[..., Any], owned: bool) -> Callable[..., Any]:
    """``method`` as a ``buffer_callback``: numpy views in, results written into ``out``.

    ``owned``: the method keeps its inputs after the call (the forward pass's pullback), so it
    gets copies, since XLA's buffers live only for the call.
    """
    if _buffer_callback is None:
        return method

    def run(ctx: Any, out: Any, *buffers: Any) -> None:
        arrays = tuple(np.asarray(b).copy() if owned else np.asarray(b) for b in buffers)
        for buffer, result in zip(out, method(*arrays), strict=True):
            target = np.asarray(buffer)
            if target.size:
                np.copyto(target, result, casting="unsafe")

    return run


def _is_zero(ct: Any) -> bool:
    """A cotangent JAX marks as zero: symbolic, or ``float0`` (of an integer output)."""
    if isinstance(ct, jax.custom_derivatives.SymbolicZero):
        return True
    return getattr(ct, "dtype", None) == jax.dtypes.float0


def _vjp_operation(call: _Call) -> Callable[..., Any]:
    """The ``custom_vjp`` of one call signature, over the operands only."""

    @jax.custom_vjp
    def operation(*operands: Any) -> Any:
        return _callback(call.transport("primal"), call.specs, *operands)

    def operation_fwd(*primals: Any) -> Any:
        operands = tuple(p.value for p in primals)
        specs = (*call.specs, jax.ShapeDtypeStruct((), _TOKEN))
        *outputs, token = _callback(call.transport("forward"), specs, *operands)
        return tuple(outputs), (token, operands)

    def operation_bwd(residuals: Any, cotangents: Any) -> Any:
        token, operands = residuals
        live = tuple(
            not _is_zero(c) and is_differentiable_dtype(s.dtype)
            for c, s in zip(cotangents, call.specs, strict=True)
        )
        zeros = tuple(
            None if is_differentiable_dtype(x.dtype) else np.zeros(x.shape, jax.dtypes.float0)
            for x in operands
        )
        if not any(live):
            return tuple(
                z if z is not None else jnp.zeros_like(x)
                for z, x in zip(zeros, operands, strict=True)
            )
        given = tuple(c for c, on in zip(cotangents, live, strict=True) if on)
        specs = tuple(jax.ShapeDtypeStruct(x.shape, x.dtype) for x in operands)
        grads = _callback(call.transport("backward", live), specs, token, *operands, *given)
        return tuple(g if z is None else z for g, z in zip(grads, zeros, strict=True))

    operation.defvjp(operation_fwd, operation_bwd, symbolic_zeros=True)
    return operation


def _jvp_operation(call: _Call) -> Callable[..., Any]:
    """The ``custom_jvp`` of one call signature, over the operands only."""

    @jax.custom_jvp
    def operation(*operands: Any) -> Any:
        return _callback(call.transport("primal"), call.specs, *operands)

    def operation_jvp(primals: Any, tangents: Any) -> Any:
        live = tuple(
            not isinstance(t, jax.custom_derivatives.SymbolicZero)
            and is_differentiable_dtype(x.dtype)
            for x, t in zip(primals, tangents, strict=True)
        )
        given = tuple(t for t, on in zip(tangents, live, strict=True) if on)
        y_dot = _callback(call.transport("pushforward", live), call.specs, *primals, *given)
        y_dot = tuple(
            d if is_differentiable_dtype(s.dtype) else np.zeros(s.shape, jax.dtypes.float0)
            for d, s in zip(y_dot, call.specs, strict=True)
        )
        # The primal from its own callback: under jacfwd (vmap over the tangents only) it stays
        # unbatched, as JAX requires.
        return tuple(_callback(call.transport("primal"), call.specs, *primals)), y_dot

    operation.defjvp(operation_jvp, symbolic_zeros=True)
    return operation


def _wrap(
    f: Callable[..., Any], static_kwargs: dict[str, Any], build: Any, table: Any
) -> Callable[..., Any]:
    name = f"rules.interop.jax.wrap({function_name(f)})"

    @functools.wraps(f)
    def wrapped(*args: Any) -> Any:
        # Checked while tracing: an exception inside a callback reaches the user as an XLA error.
        if f not in table:
            raise TypeError(f"{name}: no {table.kind} is registered for {function_name(f)}")
        for a in args:
            for e in a if isinstance(a, tuple) else (a,):
                _check_device(name, e)
        operands: list[jax.Array] = []

        def spec(a: Any) -> tuple[Any, Any]:
            if _is_static(a):
                return ("static", a)
            x = jnp.asarray(a)
            operands.append(x)
            return (tuple(x.shape), np.dtype(x.dtype))

        key = tuple(
            ("tuple", tuple(spec(e) for e in a)) if isinstance(a, tuple) else spec(a) for a in args
        )
        call, operation = built(key)
        return call.structure.build(tuple(operation(*operands)))

    @functools.lru_cache(maxsize=256)
    def built(key: tuple[Any, ...]) -> tuple[_Call, Callable[..., Any]]:
        # One operation per call signature, so that JAX's caches of traced and compiled
        # callbacks hit on the next call instead of compiling a new computation.
        call = _Call(f, static_kwargs, key)
        return call, build(call)

    wrapped.__doc__ = (
        f"{function_name(f)} on JAX arrays, differentiated by the library's rules "
        "(see rules.interop.jax.wrap)."
    )
    return wrapped


def wrap(f: Callable[..., Any], **static_kwargs: Any) -> Callable[..., Any]:
    """``f`` as a function of JAX arrays whose reverse-mode derivative is the library's ``rrule``.

    Parameters
    ----------
    f : callable
        A function with an ``rrule``, e.g. ``np.linalg.eigh``; called with numpy arrays.
    **static_kwargs
        Keyword arguments passed to ``f`` at every call; never differentiated.

    Returns
    -------
    callable
        ``wrapped(*args)``: ``f``'s output with each array a JAX array (the same structure).
        Python ints, bools, strings and ``None`` among ``args`` are static options; every other
        argument is an operand (converted with ``jnp.asarray``) on the CPU. A tuple argument,
        such as ``scipy.linalg.cho_solve``'s ``(c, lower)``, is passed to ``f`` as a tuple of
        its elements, each a static option or an operand.

    Notes
    -----
    A ``jax.custom_vjp`` over ``jax.pure_callback``: works under ``jit``, ``grad``, ``vjp``,
    ``jacrev``, ``vmap`` (the whole stack to the rule in one call) and their compositions;
    forward mode (``jvp``, ``jacfwd``) and second derivatives raise JAX's error for a
    ``custom_vjp``. Use :func:`wrap_forward` for forward mode. Output shapes come from calling
    ``f`` once per input signature on identity matrices (see the module docstring).
    """
    return _wrap(f, static_kwargs, _vjp_operation, rrule)


def wrap_forward(f: Callable[..., Any], **static_kwargs: Any) -> Callable[..., Any]:
    """``f`` as a function of JAX arrays whose forward-mode derivative is the library's ``frule``.

    A ``jax.custom_jvp`` over ``jax.pure_callback``: works under ``jit``, ``jvp``, ``jacfwd``,
    ``linearize`` and ``vmap``; reverse mode (``grad``) is not available, since JAX would have to
    transpose the callback. Arguments as in :func:`wrap`.
    """
    return _wrap(f, static_kwargs, _jvp_operation, frule)
