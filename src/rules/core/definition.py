"""Tools that define rules declaratively: ``scalar_rule`` and ``non_differentiable``.

``scalar_rule(f, partials)`` turns the partial derivatives of an elementwise function into both
an rrule and an frule, as ChainRulesCore's ``@scalar_rule`` does; ``non_differentiable(*fs)``
registers rules whose cotangents are all ``NoTangent()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rules.core.broadcasting import broadcast_tangent, unbroadcast
from rules.core.cotangents import as_array_cotangent, conj
from rules.core.registry import frule, function_name, rrule, split_cotangent
from tangents import (
    AbstractZero,
    NoTangent,
    NotImplementedTangent,
    ProjectTo,
    Tangent,
    ZeroTangent,
    unthunk,
)

__all__ = ["non_differentiable", "scalar_rule"]


def non_differentiable(*fs: Any) -> None:
    """Register rules for functions whose output does not depend differentiably on any input.

    Their pullbacks return ``NoTangent()`` for the function and every argument, and their
    pushforwards return ``NoTangent()`` (integers, booleans, indices and the like).
    """
    for f in fs:
        _register_non_differentiable(f)


def _register_non_differentiable(f: Any) -> None:
    name = function_name(f)

    def non_differentiable_rrule(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        y = f(*args, **kwargs)
        cotangents = (NoTangent(),) * (len(args) + 1)

        def non_differentiable_pullback(y_bar: Any) -> tuple[Any, ...]:
            return cotangents

        return y, non_differentiable_pullback

    def non_differentiable_frule(tangents: tuple[Any, ...], *args: Any, **kwargs: Any) -> Any:
        return f(*args, **kwargs), NoTangent()

    non_differentiable_rrule.__qualname__ = f"{name}_rrule"
    non_differentiable_frule.__qualname__ = f"{name}_frule"
    rrule.register(f)(non_differentiable_rrule)
    frule.register(f)(non_differentiable_frule)


def _partials_tuple(partials: Any, n: int, name: str) -> tuple[Any, ...]:
    if n == 1 and not isinstance(partials, tuple):
        return (partials,)
    if not isinstance(partials, tuple) or len(partials) != n:
        raise ValueError(f"the partials of {name} must be a tuple of {n}, one per input")
    return partials


def _partials_rows(partials: Any, outputs: int, n: int, name: str) -> tuple[tuple[Any, ...], ...]:
    """The partials as one row per output, each a tuple with one entry per input."""
    if outputs == 1:
        return (_partials_tuple(partials, n, name),)
    if not isinstance(partials, tuple) or len(partials) != outputs:
        raise ValueError(
            f"the partials of {name} must be a tuple of {outputs} rows, one per output"
        )
    return tuple(_partials_tuple(row, n, name) for row in partials)


def _constant(x: Any) -> bool:
    """Python ints and bools are exact constants (exponents, counts): they get ``NoTangent()``."""
    return isinstance(x, int)


def _elementwise_operand(t: Any, operation: str) -> Any:
    """``t`` ready for an elementwise product with an array of partials.

    ndarrays, zeros and ``NotImplementedTangent`` stay as they are (the arithmetic table handles
    the symbolic ones); anything else goes through :func:`rules.core.cotangents.as_array_cotangent`,
    so numbers pass, structured and sparse matrices become ndarrays, and a user's tangent type
    gets a ``TypeError`` naming ``operation`` (the tangent algebra has no elementwise product).
    """
    if type(t) is np.ndarray or isinstance(t, AbstractZero | NotImplementedTangent):
        return t
    return as_array_cotangent(t, operation)


_UNSUPPORTED_KWARGS = ("out", "where")


def scalar_rule(
    f: Any,
    partials: Callable[..., Any],
    *,
    name: str | None = None,
    outputs: int = 1,
    keywords: bool = False,
) -> None:
    r"""Register an rrule and an frule for the elementwise function ``f`` from its partials.

    Parameters
    ----------
    f : callable
        An elementwise function of one or more array arguments (a numpy ufunc, a
        scipy.special function, ...), broadcasting its inputs as numpy does.
    partials : callable
        ``partials(*args, y)`` returns :math:`\partial f/\partial x_i` evaluated at the inputs
        and the output ``y = f(*args)``: a single array for one input, a tuple for several.
        For a function with several outputs (``outputs > 1``; ``y`` is then the tuple of
        outputs) it returns one row per output, each row as for one output:
        :math:`\partial y_k/\partial x_i` is ``partials(*args, y)[k][i]``. An entry may be
        ``ZeroTangent()`` (an output that does not move with that input, such as ``np.modf``'s
        integral part) or ``NotImplementedTangent(info)`` (a partial the rule does not
        implement: it reaches that input's cotangent, and the output tangent when that input
        moves, as in ChainRulesCore).
    name : str, optional
        Name used for the generated rules and messages (default:
        :func:`rules.core.registry.function_name`, e.g. ``np.sin``).
    outputs : int
        How many outputs ``f`` returns (as a tuple) when more than one: ``np.modf`` and
        ``np.frexp`` have 2. The cotangent is then a tuple or a ``Tangent(tuple, ...)`` with a
        component per output (zeros allowed), and the frule returns ``Tangent(type(y), ...)``.
    keywords : bool
        Whether ``partials`` also receives the call's keyword arguments, as
        ``partials(*args, y, **kwargs)``: for functions whose keyword options change the value
        (``scipy.stats.norm.logpdf(x, loc=1.0)``). Keyword arguments are still not
        differentiated. By default they are passed to ``f`` only.

    Notes
    -----
    ``f`` is assumed holomorphic where it is complex (or real): the pullback multiplies the
    output cotangent by the **conjugate** partial, :math:`\bar x_i = \sum_k \overline{\partial_i
    f_k}\,\bar y_k`, which is the convention of DESIGN.md (``dL/dRe z + i dL/dIm z``);
    non-holomorphic functions (``abs``, ``angle``, ``real``, ...) need hand-written rules.
    Cotangents are summed back over broadcast axes and projected onto each input (float32 stays
    float32, real stays real). Python ``int`` and ``bool`` arguments are treated as exact
    constants and get ``NoTangent()``; integer *arrays* are real numbers with float64
    cotangents. Keyword arguments are passed to ``f``; ``out=`` and ``where=`` are refused,
    since they leave parts of the output undefined or alias an input. Both rules multiply
    (co)tangents elementwise, which the tangent algebra does not offer: a (co)tangent that is
    not an ndarray or a number goes through :func:`rules.core.cotangents.as_array_cotangent` (a
    user's tangent type gets a ``TypeError`` naming the rule).
    """
    rule_name = name or function_name(f)
    pullback_operation = f"{rule_name}'s pullback (an elementwise product)"
    frule_operation = f"{rule_name}'s frule (an elementwise product)"

    def check_kwargs(kwargs: dict[str, Any]) -> None:
        bad = [k for k in _UNSUPPORTED_KWARGS if k in kwargs]
        if bad:
            raise ValueError(f"the rules of {rule_name} do not support the keyword(s) {bad}")

    def call_partials(args: tuple[Any, ...], y: Any, kwargs: dict[str, Any]) -> Any:
        return partials(*args, y, **kwargs) if keywords else partials(*args, y)

    def output_cotangents(y_bar: Any) -> tuple[Any, ...]:
        if outputs == 1:
            return (_elementwise_operand(unthunk(y_bar), pullback_operation),)
        return tuple(
            _elementwise_operand(unthunk(part), pullback_operation)
            for part in split_cotangent(y_bar, outputs)
        )

    def elementwise_rrule(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        check_kwargs(kwargs)
        y = f(*args, **kwargs)
        projectors = tuple(None if _constant(x) else ProjectTo(x) for x in args)
        shapes = tuple(np.shape(x) for x in args)

        def elementwise_pullback(y_bar: Any) -> tuple[Any, ...]:
            y_bars = output_cotangents(y_bar)
            rows = _partials_rows(call_partials(args, y, kwargs), outputs, len(args), rule_name)
            cotangents: list[Any] = [NoTangent()]
            for i, (project, shape) in enumerate(zip(projectors, shapes, strict=True)):
                if project is None:
                    cotangents.append(NoTangent())
                    continue
                x_bar: Any = ZeroTangent()
                for row, g in zip(rows, y_bars, strict=True):
                    if not isinstance(g, AbstractZero) and not isinstance(row[i], AbstractZero):
                        x_bar = x_bar + conj(row[i]) * g
                cotangents.append(project(unbroadcast(x_bar, shape)))
            return tuple(cotangents)

        elementwise_pullback.__qualname__ = f"{rule_name}_pullback"
        return y, elementwise_pullback

    def elementwise_frule(tangents: tuple[Any, ...], *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        check_kwargs(kwargs)
        y = f(*args, **kwargs)
        rows = _partials_rows(call_partials(args, y, kwargs), outputs, len(args), rule_name)
        ys = (y,) if outputs == 1 else tuple(y)
        y_dots = []
        for y_k, row in zip(ys, rows, strict=True):
            y_dot: Any = ZeroTangent()
            for x, d, x_dot in zip(args, row, tangents[1:], strict=True):
                if isinstance(x_dot, AbstractZero) or isinstance(d, AbstractZero) or _constant(x):
                    continue
                y_dot = y_dot + d * _elementwise_operand(unthunk(x_dot), frule_operation)
            if not isinstance(y_dot, AbstractZero):
                y_dot = ProjectTo(y_k)(broadcast_tangent(y_dot, np.shape(y_k)))
            y_dots.append(y_dot)
        if outputs == 1:
            return y, y_dots[0]
        if all(isinstance(t, AbstractZero) for t in y_dots):
            return y, ZeroTangent()
        return y, Tangent(type(y), *y_dots)

    elementwise_rrule.__qualname__ = f"{rule_name}_rrule"
    elementwise_frule.__qualname__ = f"{rule_name}_frule"
    rrule.register(f)(elementwise_rrule)
    frule.register(f)(elementwise_frule)
