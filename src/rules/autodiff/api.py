"""The user's entry points, with JAX's semantics for the same names.

``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``jacobian`` and ``elementwise_grad`` (HIPS
autograd's meaning for that one).

Every one of them traces the user's function once per call: the arguments being differentiated
have their leaves (arrays, numbers, structured matrices, inside tuples, lists, dicts,
namedtuples and dataclasses) replaced by traced values, the function runs as plain numpy code,
and the recorded calls are played back (:mod:`rules.autodiff.reverse`) or their tangents
pushed along (:mod:`rules.autodiff.forward`). Arguments not named in ``argnums`` are passed as
they are: nothing about them is traced or computed.

Results follow JAX: a gradient has the form of its argument (for containers the project's
structural ``Tangent`` of it, :mod:`rules.autodiff.structures`), with zeros as arrays where no
cotangent arrived and ``NoTangent()`` for ``int``/``bool`` leaves; each leaf's gradient is
``ProjectTo`` of that leaf applied to its cotangent, so float32 stays float32, a real input has a
real gradient and a ``Diagonal`` input a ``Diagonal`` gradient.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rules.autodiff import projection as _projection  # noqa: F401 (registers ProjectTo of Traced)
from rules.autodiff.forward import ForwardTrace
from rules.autodiff.reverse import backward
from rules.autodiff.structures import Structure, flatten, leaf_kind
from rules.autodiff.tape import ReverseTrace
from rules.autodiff.trace import Trace, open_trace
from rules.autodiff.traced import Traced
from rules.core.registry import is_foreign_array
from tangents import AbstractZero, NoTangent, ProjectTo, tangent_dtype, unthunk

__all__ = ["elementwise_grad", "grad", "jacobian", "jvp", "value_and_grad", "vjp"]


def _argnums(argnums: int | Sequence[int], n: int, name: str) -> tuple[int, ...]:
    numbers = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in numbers:
        if not isinstance(i, int) or not -n <= i < n:
            raise ValueError(f"{name}: argnums {argnums!r} does not name one of the {n} arguments")
    return tuple(i % n for i in numbers)


def _zeros_for(leaf: Any) -> Any:
    """The gradient of ``leaf`` when no cotangent reached it: zeros of its tangent space."""
    dtype = tangent_dtype(np.result_type(leaf))
    return ProjectTo(leaf)(np.zeros(np.shape(leaf), dtype))


def _finish(leaf: Any, dx: Any) -> Any:
    """A leaf's gradient: its cotangent unthunked and projected, zeros made concrete."""
    dx = ProjectTo(leaf)(unthunk(dx))
    return _zeros_for(leaf) if isinstance(dx, AbstractZero) else unthunk(dx)


class _Input:
    """One differentiated argument: its structure, leaves and the traced value of each leaf."""

    __slots__ = ("leaves", "structure", "traced")

    def __init__(self, arg: Any, make: Callable[[Any, int], Any], function: str) -> None:
        self.leaves, self.structure = flatten(arg)
        self.traced: list[Any] = []
        for position, leaf in enumerate(self.leaves):
            kind = leaf_kind(leaf)
            if kind == "other":
                raise TypeError(
                    f"{function} cannot differentiate with respect to a {type(leaf).__name__}: "
                    "arguments must be arrays, numbers or structured matrices, or tuples, lists, "
                    "dicts, namedtuples and dataclasses of them"
                )
            self.traced.append(make(leaf, position) if kind == "diff" else None)

    def boxed(self) -> Any:
        it = iter(
            t if t is not None else leaf for t, leaf in zip(self.traced, self.leaves, strict=False)
        )
        return self.structure.rebuild(lambda: next(it))

    def gradient(self, cotangents: dict[int, Any]) -> Any:
        """The argument's gradient from the cotangent of each traced leaf (by position)."""
        parts = iter(
            _finish(leaf, cotangents[p]) if t is not None else NoTangent()
            for p, (t, leaf) in enumerate(zip(self.traced, self.leaves, strict=False))
        )
        return self.structure.rebuild_tangent(lambda: next(parts))


def _values_of(out: Any, trace: Trace) -> Any:
    """``out`` with ``trace``'s traced values replaced by their values."""
    leaves, structure = flatten(out)
    it = iter(
        leaf._value if isinstance(leaf, Traced) and leaf._trace is trace else leaf
        for leaf in leaves
    )
    return structure.rebuild(lambda: next(it))


class _Reverse:
    """One traced run of ``f`` in reverse mode, ready to pull back cotangents of its output."""

    def __init__(
        self, f: Callable[..., Any], args: tuple[Any, ...], argnums: tuple[int, ...], name: str
    ):
        self.trace = ReverseTrace()
        self.inputs: dict[int, _Input] = {}
        call = list(args)
        with open_trace(self.trace):
            for i in argnums:
                self.inputs[i] = _Input(args[i], lambda leaf, p: self.trace.new_input(leaf), name)
                call[i] = self.inputs[i].boxed()
            self.out = f(*call)
        self.name = name

    def output(self, out: Any) -> tuple[list[Any], Structure]:
        return flatten(out)

    def pull(self, out: Any, y_bar: Any) -> dict[int, Any]:
        """The gradient of each differentiated argument for the cotangent ``y_bar`` of ``out``."""
        leaves, structure = flatten(out)
        bars = structure.split_cotangent(y_bar) if structure.kind != "leaf" else [y_bar]
        seeds = []
        for leaf, dx in zip(leaves, bars, strict=True):
            if isinstance(leaf, Traced) and leaf._trace is self.trace:
                _check_cotangent(self.name, leaf._value, dx)
                seeds.append((leaf._payload, leaf._index, dx))
        nodes = [
            (i, p, t._payload)
            for i, inp in self.inputs.items()
            for p, t in enumerate(inp.traced)
            if t is not None
        ]
        found = backward(seeds, [node for _, _, node in nodes], self.trace.tape)
        per_arg: dict[int, dict[int, Any]] = {i: {} for i in self.inputs}
        for (i, p, _), dx in zip(nodes, found, strict=True):
            per_arg[i][p] = dx
        return {i: self.inputs[i].gradient(per_arg[i]) for i in self.inputs}


def _check_cotangent(name: str, value: Any, dx: Any) -> None:
    got = getattr(dx, "shape", None)
    if got is not None and tuple(got) != np.shape(value):
        raise ValueError(
            f"{name}: a cotangent of shape {tuple(got)} for an output of shape {np.shape(value)}"
        )


def _scalar_output(name: str, value: Any) -> Any:
    inner = value._value if isinstance(value, Traced) else value
    while isinstance(inner, Traced):
        inner = inner._value
    array = isinstance(inner, np.ndarray | np.generic) or is_foreign_array(inner)
    if not (array or isinstance(inner, int | float)) or isinstance(inner, bool):
        raise TypeError(f"{name} needs f to return a real scalar, got a {type(inner).__name__}")
    if np.ndim(inner) != 0 or np.iscomplexobj(inner):
        what = f"shape {np.shape(inner)}" if np.ndim(inner) else f"dtype {np.result_type(inner)}"
        raise TypeError(
            f"{name} needs f to return a real scalar, got {what}; use vjp or jacobian for "
            "other outputs"
        )
    dtype = inner.dtype if hasattr(inner, "dtype") else np.result_type(inner)
    return dtype.type(1) if dtype.kind == "f" else np.float64(1.0)


def value_and_grad(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """A function returning ``f``'s value and its gradient with respect to ``argnums``.

    Parameters
    ----------
    f : callable
        Plain numpy code returning a real scalar (``(scalar, aux)`` with ``has_aux``).
    argnums : int or tuple of int
        The positional arguments to differentiate; a tuple gives a tuple of gradients.
    has_aux : bool
        ``f`` returns ``(value, aux)``; ``aux`` is returned as computed, not differentiated.

    Returns
    -------
    callable
        ``(*args) -> (value, gradient)``, or ``((value, aux), gradient)`` with ``has_aux``.
    """

    @functools.wraps(f)
    def value_and_grad_f(*args: Any, **kwargs: Any) -> Any:
        numbers = _argnums(argnums, len(args), "value_and_grad")
        run = _Reverse(functools.partial(f, **kwargs), args, numbers, "grad")
        out = run.out
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError("with has_aux=True, f must return a pair (value, aux)")
            out, aux = out
        seed = _scalar_output("grad", out)
        grads = run.pull(out, seed)
        result = grads[numbers[0]] if isinstance(argnums, int) else tuple(grads[i] for i in numbers)
        value = _values_of(out, run.trace)
        if has_aux:
            return (value, _values_of(aux, run.trace)), result
        return value, result

    return value_and_grad_f


def grad(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The gradient of ``f``, a function returning a real scalar (see :func:`value_and_grad`).

    Returns
    -------
    callable
        ``(*args) -> gradient``, or ``(gradient, aux)`` with ``has_aux``.
    """
    both = value_and_grad(f, argnums, has_aux)

    @functools.wraps(f)
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        value, gradient = both(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return grad_f


def vjp(f: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``f(*primals)`` and its pullback: ``(y, pullback)``, ``pullback(y_bar)`` a tuple.

    ``y_bar`` has the form of ``y`` (a container of cotangents, or a structural ``Tangent``);
    any tangent type works, e.g. a low-rank one, and flows through the rules' generic paths. The
    pullback returns one cotangent per primal and may be called many times. With ``has_aux``,
    ``f`` returns ``(y, aux)`` and the result is ``(y, pullback, aux)``.
    """
    run = _Reverse(f, primals, tuple(range(len(primals))), "vjp")
    out = run.out
    if has_aux:
        out, aux = out

    def pullback(y_bar: Any) -> tuple[Any, ...]:
        grads = run.pull(out, y_bar)
        return tuple(grads[i] for i in range(len(primals)))

    y = _values_of(out, run.trace)
    if has_aux:
        return y, pullback, _values_of(aux, run.trace)
    return y, pullback


def jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """``(f(*primals), y_dot)``: the output and its tangent along ``tangents``, by forward mode.

    ``tangents`` has one tangent per primal, each of its primal's form; ``y_dot`` has the form of
    the output, with zeros (arrays) for outputs that do not depend on the primals.
    """
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(f"jvp got {len(primals)} primals and {len(tangents)} tangents")
    trace = ForwardTrace()
    call = []
    with open_trace(trace):
        for primal, tangent in zip(primals, tangents, strict=True):
            leaves, structure = flatten(primal)
            dots = structure.split_cotangent(tangent) if structure.kind != "leaf" else [tangent]
            boxed = iter(
                trace.new_input(leaf, dot) if leaf_kind(leaf) == "diff" else leaf
                for leaf, dot in zip(leaves, dots, strict=True)
            )
            call.append(structure.rebuild(lambda it=boxed: next(it)))
        out = f(*call)
    leaves, structure = flatten(out)
    values = iter(_values_of(leaf, trace) for leaf in leaves)
    dots = iter(
        _tangent_of(leaf._value, leaf._payload)
        if isinstance(leaf, Traced) and leaf._trace is trace
        else _zeros_for(leaf)
        for leaf in leaves
    )
    return structure.rebuild(lambda: next(values)), structure.rebuild(lambda: next(dots))


def _tangent_of(value: Any, dot: Any) -> Any:
    dot = unthunk(dot)
    return _zeros_for(value) if isinstance(dot, AbstractZero) else dot


def elementwise_grad(f: Callable[..., Any], argnums: int = 0) -> Callable[..., Any]:
    """HIPS autograd's ``elementwise_grad``: the pullback of ``f`` applied to ``ones_like(y)``.

    For an elementwise ``f`` this is the derivative of each output element with respect to its
    own input element; in general the sum over the output of the Jacobian's rows.
    """

    @functools.wraps(f)
    def elementwise_grad_f(*args: Any, **kwargs: Any) -> Any:
        numbers = _argnums(argnums, len(args), "elementwise_grad")
        run = _Reverse(functools.partial(f, **kwargs), args, numbers, "elementwise_grad")
        ones = np.ones(np.shape(_values_of(run.out, run.trace)))
        value = _values_of(run.out, run.trace)
        if np.iscomplexobj(value):
            ones = ones.astype(np.result_type(value))
        return run.pull(run.out, ones.astype(np.result_type(value, np.float32)))[numbers[0]]

    return elementwise_grad_f


def jacobian(f: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The Jacobian of ``f`` with respect to array arguments ``argnums``.

    Its shape is ``y.shape + x.shape``.
    Computed by reverse mode (one pullback per output element) when the output has no more
    elements than the inputs, else by forward mode (one pushforward per input element).
    """

    @functools.wraps(f)
    def jacobian_f(*args: Any, **kwargs: Any) -> Any:
        numbers = _argnums(argnums, len(args), "jacobian")
        g = functools.partial(f, **kwargs)
        run = _Reverse(g, args, numbers, "jacobian")
        y = _values_of(run.out, run.trace)
        for i in numbers:
            if not isinstance(args[i], np.ndarray | np.generic | float | complex):
                raise TypeError(f"jacobian differentiates arrays, not {type(args[i]).__name__}")
        if not isinstance(y, np.ndarray | np.generic | float | complex | int):
            raise TypeError(f"jacobian needs f to return an array, got {type(y).__name__}")
        y_shape, y_dtype = np.shape(y), np.result_type(y, np.float32)
        n_in = sum(np.size(args[i]) for i in numbers)
        if np.size(y) <= n_in:
            rows = []
            for k in range(int(np.size(y))):
                e = np.zeros(np.size(y), y_dtype)
                e[k] = 1
                rows.append(run.pull(run.out, e.reshape(y_shape)))
            jac = {
                i: np.stack([r[i] for r in rows]).reshape(y_shape + np.shape(args[i]))
                if rows
                else np.zeros(y_shape + np.shape(args[i]))
                for i in numbers
            }
        else:
            jac = {i: _forward_jacobian(g, args, i, y_shape) for i in numbers}
        return jac[numbers[0]] if isinstance(argnums, int) else tuple(jac[i] for i in numbers)

    return jacobian_f


def _forward_jacobian(g: Callable[..., Any], args: tuple[Any, ...], i: int, y_shape: Any) -> Any:
    x = args[i]
    dtype = tangent_dtype(np.result_type(x))
    columns = []
    for k in range(int(np.size(x))):
        e = np.zeros(np.size(x), dtype)
        e[k] = 1

        def along(x_i: Any) -> Any:
            return g(*args[:i], x_i, *args[i + 1 :])

        columns.append(np.asarray(jvp(along, (x,), (e.reshape(np.shape(x)),))[1]))
    stacked = np.stack(columns, axis=-1) if columns else np.zeros((*y_shape, 0))
    return stacked.reshape(y_shape + np.shape(x))
