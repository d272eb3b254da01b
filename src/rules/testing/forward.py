"""``check_frule``: prove a forward rule right against finite differences."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from rules.core.registry import frule, rrule
from rules.testing.arguments import (
    ambient_or_fail,
    argument_spaces,
    check_not_mutated,
    check_primal_output,
    function_name,
    owned,
    projection_mismatch,
    random_tangent,
    snapshot,
)
from rules.testing.finite_differences import DEFAULT_STEP, Differencer
from rules.testing.random import as_generator
from rules.testing.results import CheckReport, Failures, RuleCheckError, tolerances
from rules.testing.reverse import rand_output
from rules.testing.spaces import Space, inner, space_of
from tangents import (
    AbstractZero,
    NoTangent,
    NotImplementedTangent,
    Thunk,
    ZeroTangent,
    unthunk,
)

__all__ = ["check_frule"]


def check_frule(
    f: Callable[..., Any],
    *args: Any,
    tangents: tuple[Any, ...] | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    symmetric: Iterable[int] = (),
    constant: Iterable[int | tuple[int, Any]] = (),
    fkwargs: dict[str, Any] | None = None,
    rng: Any = None,
    fd_step: float = DEFAULT_STEP,
    **kwargs: Any,
) -> CheckReport:
    """Check the registered frule of ``f`` at ``args`` against finite differences.

    Checks: the primal output equals ``f(*args)`` in value, type, dtype, shape and structure;
    the output tangent equals the central finite-difference directional derivative along the
    input tangents; it has the type, dtype, shape and structure ``ProjectTo`` of ``f(*args)``
    gives; all-zero input tangents give a zero output tangent; thunked input tangents give the
    same result; neither inputs nor tangents are modified; and, when an rrule is registered,
    the dot-product test against it.

    Parameters
    ----------
    f : callable
        The function whose rule is checked.
    *args
        Primal inputs.
    tangents : tuple, optional
        Input tangents, one per argument (``f``'s own tangent is then ``NoTangent()``) or
        ``(f_dot, *x_dots)``. Default: random tangents of the inputs (symmetric ones for the
        positions in ``symmetric``).
    rtol, atol, symmetric, constant, fkwargs, rng, fd_step, **kwargs
        As for :func:`check_rrule`.

    Returns
    -------
    CheckReport

    Raises
    ------
    RuleCheckError
    """
    kwargs = {**(fkwargs or {}), **kwargs}
    name = function_name(f)
    generator = as_generator(rng)
    rtol, atol = tolerances(args, rtol, atol)
    failures = Failures(name, rtol, atol)
    spaces = argument_spaces(f, args, symmetric, constant)

    if tangents is None:
        dots = {
            i: random_tangent(s, f if i == -1 else args[i], generator)[0] for i, s in spaces.items()
        }
        all_tangents = tuple(dots.get(i, NoTangent()) for i in range(-1, len(args)))
    elif len(tangents) == len(args):
        all_tangents = (NoTangent(), *tangents)
    elif len(tangents) == len(args) + 1:
        all_tangents = tuple(tangents)
    else:
        raise ValueError(
            f"tangents= needs {len(args)} or {len(args) + 1} entries, got {len(tangents)}"
        )
    before = snapshot((args, all_tangents, f))

    expected = f(*snapshot(args), **kwargs)
    result = frule(all_tangents, f, *args, **kwargs)
    if result is None:
        raise RuleCheckError(f"{name}: no frule is registered")
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuleCheckError(
            f"{name}: an frule must return (y, y_dot), got {type(result).__name__}"
        )
    y, y_dot = result[0], owned(result[1])  # owned: a later call may reuse the rule's buffer
    out_space = space_of(expected)
    check_primal_output(failures, out_space, y, expected)

    moving = {i: s for i, s in spaces.items() if s.dim}
    coords = {}
    for i, space in moving.items():
        t = unthunk(all_tangents[i + 1])
        if not isinstance(t, AbstractZero):
            coords[i] = space.coordinates(t)
    differ = Differencer(f, args, kwargs, moving, out_space, fd_step)
    got = ambient_or_fail(failures, "output tangent", out_space, unthunk(y_dot))
    if got is not None:
        want = differ.jvp(coords) if coords else np.zeros_like(out_space.ambient(expected))
        failures.compare(
            "output tangent vs finite differences", got, want, getattr(out_space, "shape", None)
        )
        reason = projection_mismatch(unthunk(y_dot), expected)
        if reason:
            failures.fail("output tangent", reason)

    zeros = tuple(NoTangent() if i == -1 else ZeroTangent() for i in range(-1, len(args)))
    zero_result = frule(zeros, f, *args, **kwargs)
    if zero_result is None or not isinstance(zero_result[1], AbstractZero):
        failures.fail("zero input tangents", "must give a zero output tangent")
    thunked = tuple(Thunk(lambda t=t: t) for t in all_tangents)
    thunk_result = frule(thunked, f, *args, **kwargs)
    if got is not None and thunk_result is not None:
        again = ambient_or_fail(
            failures, "output tangent for thunked inputs", out_space, unthunk(thunk_result[1])
        )
        if again is not None:
            failures.compare("thunked input tangents vs plain ones", again, got)

    if got is not None and f in rrule:
        _frule_dot_product(
            failures, f, args, kwargs, spaces, out_space, all_tangents, got, generator
        )

    check_not_mutated(failures, "an input or input tangent", before, (args, all_tangents, f))
    return failures.raise_if_any()


def _frule_dot_product(
    failures: Failures,
    f: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    spaces: dict[int, Space],
    out_space: Space,
    all_tangents: tuple[Any, ...],
    y_dot_flat: np.ndarray,
    rng: np.random.Generator,
) -> None:
    """``<y_bar, y_dot> == sum <x_bar, x_dot>`` with the registered rrule's pullback."""
    reverse = rrule(f, *args, **kwargs)
    if reverse is None:
        return
    y, pullback = reverse
    y_bar = rand_output(y, rng)
    cotangents = pullback(y_bar)
    if not isinstance(cotangents, tuple) or len(cotangents) != len(args) + 1:
        failures.fail(
            "dot-product test", "the rrule's pullback returned the wrong number of cotangents"
        )
        return
    rhs = 0.0
    for i, space in spaces.items():
        if not space.dim or isinstance(unthunk(cotangents[i + 1]), NotImplementedTangent):
            continue
        x_bar = ambient_or_fail(
            failures, f"dot-product test, cotangent {i}", space, cotangents[i + 1]
        )
        x_dot = ambient_or_fail(
            failures, f"dot-product test, tangent {i}", space, all_tangents[i + 1]
        )
        if x_bar is None or x_dot is None:
            return
        rhs += inner(x_bar, x_dot)
    lhs = inner(out_space.ambient(y_bar), y_dot_flat)
    failures.compare("dot-product test <y_bar, y_dot> vs sum <x_bar, x_dot> (the rrule)", rhs, lhs)
