"""``wrap(f)``: a function with an ``rrule`` as a ``torch.autograd.Function``.

The forward pass runs ``rrule(f, *arrays)`` on numpy views of the CPU tensors and keeps the
pullback; ``backward`` calls it, ``jvp`` (forward mode) calls ``frule``. The rule is looked up
in the registry at each call, so a rule registered later works with no further code.

PyTorch's ``torch.func`` transforms reach numpy code only through an ``autograd.Function``
written with ``setup_context`` (PyTorch's "Extending torch.func with autograd.Function"), so
each derivative is itself an ``autograd.Function`` (``_Pullback``, ``_Pushforward``) and the
operation has an explicit ``vmap`` rule that hands the whole stack to the rule: the batch axis
goes in front of every operand (size 1 for an operand that is not batched, as JAX's
``vmap_method="expand_dims"``), which is correct for functions that broadcast over leading axes,
such as every ``(..., n, n)`` linear-algebra function.

Conventions (``docs/interop.md`` has the table):

* a gradient PyTorch passes as ``None`` (``ctx.set_materialize_grads(False)``) is
  ``ZeroTangent()``; a ``ZeroTangent()`` or ``NoTangent()`` from a pullback is ``None``;
* integer and bool outputs (pivots, permutations) are marked non-differentiable;
* complex numbers: PyTorch's gradient of a real loss is ``dL/dRe z + i dL/dIm z``, this
  library's convention, so cotangents pass unchanged;
* CPU tensors only: a tensor on another device raises ``ValueError`` naming the function,
  never a silent copy. CPU tensors are shared with numpy without a copy (``.detach().numpy()``
  after ``resolve_conj``/``resolve_neg``, which copy only a lazily conjugated or negated tensor).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from rules import frule, rrule, split_cotangent
from rules.core.registry import function_name
from rules.interop._outputs import Structure, cotangent_array, flatten, is_differentiable_dtype
from tangents import NoTangent, ZeroTangent

__all__ = ["wrap"]

_NUMPY_DTYPES = {
    torch.float32,
    torch.float64,
    torch.complex64,
    torch.complex128,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.uint8,
    torch.bool,
}


def to_numpy(name: str, x: Any) -> Any:
    """``x`` as a numpy array sharing its memory when ``x`` is a CPU tensor; other values as given."""
    if not isinstance(x, torch.Tensor):
        return x
    if x.device.type != "cpu":
        raise ValueError(
            f"{name}: only CPU tensors are supported, got a tensor on {x.device}; "
            "move it with .cpu() first (the library computes with numpy on the CPU)"
        )
    if x.dtype not in _NUMPY_DTYPES:
        raise TypeError(f"{name}: tensors of dtype {x.dtype} have no numpy equivalent")
    return x.detach().resolve_conj().resolve_neg().numpy()


def to_tensor(array: Any) -> torch.Tensor:
    """A numpy result as a tensor, sharing memory when numpy's layout allows it."""
    array = np.asarray(array)
    if not array.flags.writeable or any(s < 0 for s in array.strides):
        array = array.copy()  # torch.from_numpy refuses negative strides, warns on read-only
    return torch.from_numpy(array)


Layout = tuple[int | None, ...]
"""Per argument of a call: ``None`` for one value, ``n`` for a tuple of ``n`` values."""


def _regroup(layout: Layout, flat: tuple[Any, ...]) -> tuple[Any, ...]:
    """The positional arguments of a call from its flat values (tuple arguments rebuilt)."""
    it = iter(flat)
    return tuple(next(it) if n is None else tuple(next(it) for _ in range(n)) for n in layout)


def _flat_cotangents(layout: Layout, cotangents: tuple[Any, ...]) -> tuple[Any, ...]:
    """One cotangent per flat value from a pullback's per-argument cotangents."""
    flat: list[Any] = []
    for n, c in zip(layout, cotangents, strict=False):
        flat.extend((c,) if n is None else split_cotangent(c, n))
    return tuple(flat)


class _Saved:
    """What the forward pass keeps for the derivatives: the primal call and its pullback.

    ``arrays`` are the flat values of the call (a tuple argument's elements in its place),
    ``layout`` rebuilds the arguments from them.
    """

    __slots__ = ("arrays", "differentiable", "dtypes", "layout", "pullback", "shapes", "structure")

    def __init__(
        self, layout: Layout, arrays: tuple[Any, ...], pullback: Any, leaves: tuple[Any, ...]
    ) -> None:
        self.layout = layout
        self.arrays = arrays
        self.pullback = pullback
        self.structure: Structure = flatten(leaves)[1]
        self.dtypes = tuple(np.asarray(leaf).dtype for leaf in leaves)
        self.differentiable = tuple(is_differentiable_dtype(d) for d in self.dtypes)
        self.shapes = tuple(np.shape(leaf) for leaf in leaves)

    def arguments(self) -> tuple[Any, ...]:
        """The positional arguments of the primal call."""
        return _regroup(self.layout, self.arrays)


def _gradients(f: Any, arrays: tuple[Any, ...], cotangents: tuple[Any, ...]) -> tuple[Any, ...]:
    """One gradient (tensor or ``None``) per input, from the rule's cotangents."""
    grads = []
    for x, dx in zip(arrays, cotangents, strict=False):
        if not isinstance(x, np.ndarray) or not is_differentiable_dtype(x.dtype):
            grads.append(None)
            continue
        array = cotangent_array(f, dx, "a cotangent")
        grads.append(None if array is None else to_tensor(array))
    grads += [None] * (len(arrays) - len(grads))
    return tuple(grads)


def _front(x: Any, dim: int | None, size: int) -> Any:
    """``x`` with its vmap batch axis ``dim`` in front; expanded (a view) when not batched."""
    if not isinstance(x, torch.Tensor):
        return x
    if dim is None:
        return x.expand(size, *x.shape)
    return x.movedim(dim, 0)


def _batched(apply: Any, saved: _Saved, values: tuple[Any, ...], shapes: Any, size: int) -> Any:
    """``apply(saved, *values)`` for values with a batch axis in front: ``(outputs, out_dims)``.

    When the primal call saw the whole stack (``vmap(grad(f))``: the values have the primal
    shapes ``shapes``), one call; when it saw one slice (``jacrev``/``jacfwd``: each value
    slice is one (co)tangent of that call), one call per slice, stacked.
    """
    if all(v is None or tuple(v.shape) == s for v, s in zip(values, shapes, strict=True)):
        out = apply(saved, *values)
    else:
        slices = [apply(saved, *(None if v is None else v[i] for v in values)) for i in range(size)]
        out = tuple(
            None if parts[0] is None else torch.stack(parts) for parts in zip(*slices, strict=True)
        )
    return out, tuple(None if v is None else 0 for v in out)


def _make_function(f: Callable[..., Any], static_kwargs: dict[str, Any]) -> type:
    """The ``autograd.Function`` of ``f``; its two derivatives are autograd Functions too."""
    name = f"rules.interop.torch.wrap({function_name(f)})"

    class _Pullback(torch.autograd.Function):
        """Gradients of the inputs from the output cotangents: one call of the saved pullback."""

        @staticmethod
        def forward(saved: _Saved, *grads: Any) -> tuple[Any, ...]:
            cotangents = tuple(
                ZeroTangent() if g is None or not on else to_numpy(name, g)
                for g, on in zip(grads, saved.differentiable, strict=True)
            )
            y_bar = cotangents if saved.structure.kind is not None else cotangents[0]
            x_bars = _flat_cotangents(saved.layout, saved.pullback(y_bar)[1:])
            return _gradients(f, saved.arrays, x_bars)

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            pass

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            raise NotImplementedError(
                f"{name}: second derivatives through the adapter are not supported"
            )

        @staticmethod
        def jvp(ctx: Any, *tangents: Any) -> Any:
            raise NotImplementedError(
                f"{name}: second derivatives through the adapter are not supported "
                "(forward mode over its backward pass, as in torch.func.hessian)"
            )

        @staticmethod
        def vmap(info: Any, in_dims: Any, saved: _Saved, *grads: Any) -> Any:
            size = info.batch_size
            stacked = tuple(_front(g, d, size) for g, d in zip(grads, in_dims[1:], strict=True))
            return _batched(_Pullback.apply, saved, stacked, saved.shapes, size)

    class _Pushforward(torch.autograd.Function):
        """Output tangents from input tangents: one ``frule`` call."""

        @staticmethod
        def forward(saved: _Saved, *tangents: Any) -> tuple[Any, ...]:
            dots = tuple(
                ZeroTangent()
                if t is None
                else NoTangent()
                if not isinstance(x, np.ndarray) or not is_differentiable_dtype(x.dtype)
                else to_numpy(name, t)
                for x, t in zip(saved.arrays, tangents, strict=True)
            )
            args, dots = saved.arguments(), _regroup(saved.layout, dots)
            result = frule((NoTangent(), *dots), f, *args, **static_kwargs)
            if result is None:
                raise TypeError(
                    f"{name}: forward mode needs an frule; none is registered for "
                    f"{function_name(f)}"
                )
            outputs = []
            parts = saved.structure.split(result[1])
            for dtype, shape, dy in zip(saved.dtypes, saved.shapes, parts, strict=True):
                if not is_differentiable_dtype(dtype):
                    outputs.append(None)
                    continue
                # PyTorch's forward AD takes no None for a differentiable output: zeros.
                array = cotangent_array(f, dy, "a tangent")
                outputs.append(to_tensor(np.zeros(shape, dtype) if array is None else array))
            return tuple(outputs)

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            pass

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            raise NotImplementedError(
                f"{name}: derivatives of forward-mode tangents are not supported"
            )

        @staticmethod
        def jvp(ctx: Any, *tangents: Any) -> Any:
            raise NotImplementedError(
                f"{name}: second derivatives through the adapter are not supported"
            )

        @staticmethod
        def vmap(info: Any, in_dims: Any, saved: _Saved, *tangents: Any) -> Any:
            size = info.batch_size
            stacked = tuple(_front(t, d, size) for t, d in zip(tangents, in_dims[1:], strict=True))
            shapes = tuple(np.shape(a) for a in saved.arrays)
            return _batched(_Pushforward.apply, saved, stacked, shapes, size)

    class _Operation(torch.autograd.Function):
        """``f`` through its ``rrule``; the last output is the :class:`_Saved` call (no tensor).

        Its inputs are the call's :data:`Layout`, then the flat values of the arguments.
        """

        @staticmethod
        def forward(layout: Layout, *args: Any) -> tuple[Any, ...]:
            arrays = tuple(to_numpy(name, a) for a in args)
            result = rrule(f, *_regroup(layout, arrays), **static_kwargs)
            if result is None:
                raise TypeError(f"{name}: no rrule is registered for {function_name(f)}")
            y, pullback = result
            leaves, structure = flatten(y)
            saved = _Saved(layout, arrays, pullback, leaves)
            saved.structure = structure
            return (*(to_tensor(leaf) for leaf in leaves), saved)

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            saved = output[-1]
            ctx.saved = saved
            ctx.set_materialize_grads(False)  # zero gradients arrive as None: ZeroTangent()
            fixed = [y for y, on in zip(output[:-1], saved.differentiable, strict=True) if not on]
            if fixed:
                ctx.mark_non_differentiable(*fixed)

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            if not torch.is_grad_enabled() and not torch._C._are_functorch_transforms_active():
                # A plain backward pass (no create_graph, no torch.func): the pullback itself,
                # without the autograd.Function that lets torch.func and double backward see it.
                return (None, *_Pullback.forward(ctx.saved, *grads[:-1]))
            return (None, *_Pullback.apply(ctx.saved, *grads[:-1]))

        @staticmethod
        def jvp(ctx: Any, *tangents: Any) -> Any:
            return (*_Pushforward.apply(ctx.saved, *tangents[1:]), None)

        @staticmethod
        def vmap(info: Any, in_dims: Any, layout: Layout, *args: Any) -> Any:
            # The whole stack in one call, every operand batched in front (an operand that is
            # not batched is expanded, a view, so that its per-slice gradients stay apart).
            size = info.batch_size
            stacked = tuple(_front(a, d, size) for a, d in zip(args, in_dims[1:], strict=True))
            *outputs, saved = _Operation.apply(layout, *stacked)
            return (*outputs, saved), (0,) * len(outputs) + (None,)

    _Operation.__name__ = _Operation.__qualname__ = f"Rule[{function_name(f)}]"
    return _Operation


def wrap(f: Callable[..., Any], **static_kwargs: Any) -> Callable[..., Any]:
    """``f`` as a function of torch tensors, differentiated by the library's rules for ``f``.

    Parameters
    ----------
    f : callable
        A function with an ``rrule`` (reverse mode) and, for forward mode, an ``frule``, e.g.
        ``np.linalg.eigh``. It is called with numpy arrays that share the tensors' memory.
    **static_kwargs
        Keyword arguments passed to ``f`` at every call; never differentiated.

    Returns
    -------
    callable
        ``wrapped(*tensors)``: ``f``'s output with each array a tensor (same structure: one
        tensor, a tuple or numpy's namedtuple). Tensor arguments must be on the CPU; other
        arguments are passed through to ``f`` unchanged. A tuple argument, such as
        ``scipy.linalg.lu_solve``'s ``(lu, piv)``, is passed as a tuple of arrays and values,
        each tensor in it differentiated.

    Notes
    -----
    ``backward`` (``loss.backward()``, ``torch.autograd.grad``) runs the rule's pullback;
    forward-mode AD (``torch.autograd.forward_ad``, ``torch.func.jvp``) runs the ``frule``.
    ``torch.func.grad``, ``vjp``, ``jacrev``, ``jvp``, ``jacfwd`` and ``vmap`` (which hands the
    whole stack to the rule in one call) work, and so do ``vmap`` of ``grad``/``jacrev`` and
    ``grad`` of ``vmap``. Second derivatives (``torch.func.hessian``, double backward) raise
    ``NotImplementedError``: the derivative is one numpy call, not a torch graph.
    ``docs/interop.md`` lists the conventions.
    """
    operation = _make_function(f, static_kwargs)

    @functools.wraps(f)
    def wrapped(*args: Any) -> Any:
        layout = tuple(len(a) if isinstance(a, tuple) else None for a in args)
        flat = [e for a in args for e in (a if isinstance(a, tuple) else (a,))]
        *outputs, saved = operation.apply(layout, *flat)
        return saved.structure.build(tuple(outputs))

    wrapped.__doc__ = (
        f"{function_name(f)} on torch tensors, differentiated by the library's rules "
        "(see rules.interop.torch.wrap)."
    )
    return wrapped
