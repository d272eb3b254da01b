"""``check_rrule`` and ``check_frule``: prove a rule right against finite differences.

Every check compares the rule with central finite differences of the primal function computed
independently of the rule (:mod:`rules.testing.finite_differences`), along an orthonormal basis
of each input's tangent space (:mod:`rules.testing.spaces`). All failed checks are collected and
raised together as one :class:`RuleCheckError`; each line names the argument, the check and the
worst error.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import scipy.sparse as sp

from rules.registry import frule, rrule
from rules.testing.finite_differences import DEFAULT_STEP, Differencer
from rules.testing.random import as_generator
from rules.testing.spaces import CompositeSpace, EmptySpace, Space, inner, space_of
from tangents import (
    AbstractZero,
    NoTangent,
    NotImplementedTangent,
    ProjectTo,
    Tangent,
    Thunk,
    ZeroTangent,
    unthunk,
)

__all__ = ["CheckReport", "RuleCheckError", "check_frule", "check_rrule"]


class RuleCheckError(AssertionError):
    """A rule failed one or more checks; the message lists each of them."""


@dataclasses.dataclass
class CheckReport:
    """What a passing check measured.

    Attributes
    ----------
    function : str
        Name of the checked function.
    errors : dict
        Worst error of each numerical comparison, relative to the size of the reference.
    not_implemented : list
        Cotangents that were ``NotImplementedTangent`` (reported, not failed).
    """

    function: str
    errors: dict[str, float] = dataclasses.field(default_factory=dict)
    not_implemented: list[str] = dataclasses.field(default_factory=list)


# --- tolerances and comparisons ------------------------------------------------------------------

_TOLERANCES = {  # (rtol, atol) by the lowest precision among the inputs
    2: (1e-2, 1e-3),
    4: (1e-3, 1e-5),
    8: (1e-6, 1e-9),
}


def _leaves(x: Any) -> Iterable[Any]:
    if isinstance(x, tuple | list):
        for v in x:
            yield from _leaves(v)
    elif isinstance(x, dict):
        for v in x.values():
            yield from _leaves(v)
    elif dataclasses.is_dataclass(x) and not isinstance(x, type):
        for field in dataclasses.fields(x):
            yield from _leaves(getattr(x, field.name))
    else:
        yield x


def _precision(x: Any) -> int:
    """Bytes per real number of the least precise float in ``x`` (8 when there is none)."""
    sizes = [8]
    for leaf in _leaves(x):
        dtype = getattr(leaf, "dtype", None)
        if dtype is not None and np.issubdtype(dtype, np.inexact):
            sizes.append(
                np.dtype(dtype).itemsize // (2 if np.issubdtype(dtype, np.complexfloating) else 1)
            )
    return min(sizes)


def _tolerances(
    args: tuple[Any, ...], rtol: float | None, atol: float | None
) -> tuple[float, float]:
    default_rtol, default_atol = _TOLERANCES[min(_precision(args), 8)]
    return (default_rtol if rtol is None else rtol, default_atol if atol is None else atol)


class _Failures:
    """Collects failed checks for one rule and the errors of passed ones."""

    def __init__(self, name: str, rtol: float, atol: float) -> None:
        self.report = CheckReport(name)
        self.lines: list[str] = []
        self.rtol = rtol
        self.atol = atol

    def fail(self, what: str, message: str) -> None:
        self.lines.append(f"{what}: {message}")

    def compare(self, what: str, got: Any, want: Any) -> None:
        got = np.asarray(got)
        want = np.asarray(want)
        if got.shape != want.shape:
            self.fail(what, f"has {got.size} entries, the reference has {want.size}")
            return
        if not np.all(np.isfinite(want)):
            self.fail(what, "the finite-difference reference is not finite here; pick other inputs")
            return
        if not np.all(np.isfinite(got)):
            self.fail(what, "the rule returned non-finite values")
            return
        scale = max(
            float(np.max(np.abs(want), initial=0.0)), float(np.max(np.abs(got), initial=0.0))
        )
        error = float(np.max(np.abs(got - want), initial=0.0))
        self.report.errors[what] = error / scale if scale else error
        if error > self.atol + self.rtol * scale:
            self.fail(
                what,
                f"worst error {error:.3g} exceeds atol + rtol * scale = {self.atol:.1g} + "
                f"{self.rtol:.1g} * {scale:.3g}",
            )

    def raise_if_any(self) -> CheckReport:
        if self.lines:
            lines = "\n".join(f"  - {line}" for line in self.lines)
            raise RuleCheckError(
                f"{self.report.function} failed {len(self.lines)} check(s):\n{lines}"
            )
        return self.report


# --- helpers -------------------------------------------------------------------------------------


def _name(f: Any) -> str:
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or type(f).__name__


def _label(i: int, args: tuple[Any, ...]) -> str:
    if i == -1:
        return "cotangent of the function object"
    x = args[i]
    shape = getattr(x, "shape", None)
    described = f"{type(x).__name__}{'' if shape is None else ' ' + str(tuple(shape))}"
    return f"argument {i} ({described})"


def _function_space(f: Any) -> Space:
    if isinstance(f, type) or (
        callable(f) and not dataclasses.is_dataclass(f) and not getattr(f, "__dict__", None)
    ):
        return EmptySpace()
    try:
        space = space_of(f)
    except (TypeError, ValueError):
        return EmptySpace()
    return space if isinstance(space, CompositeSpace) else EmptySpace()


def _spaces(f: Any, args: tuple[Any, ...], symmetric: Iterable[int]) -> dict[int, Space]:
    symmetric = set(symmetric)
    unknown = symmetric - set(range(len(args)))
    if unknown:
        raise ValueError(f"symmetric= names argument(s) {sorted(unknown)} that were not given")
    spaces = {i: space_of(x, symmetric=i in symmetric) for i, x in enumerate(args)}
    f_space = _function_space(f)
    if f_space.dim:
        spaces[-1] = f_space
    return spaces


def _same_kind(got: Any, want: Any) -> str | None:
    """Why ``got`` does not have the type/dtype/structure of ``want`` (``None`` if it does)."""
    if isinstance(got, AbstractZero) or isinstance(want, AbstractZero):
        return None
    if isinstance(got, np.ndarray) and got.dtype == object:
        return "is an object array"
    if type(got) is not type(want):
        return f"is a {type(got).__name__}; ProjectTo of the primal gives a {type(want).__name__}"
    if isinstance(got, Tangent):
        for a, b in zip(got, want, strict=False):
            reason = _same_kind(unthunk(a), unthunk(b))
            if reason:
                return f"has a component that {reason}"
        return None
    got_dtype, want_dtype = getattr(got, "dtype", None), getattr(want, "dtype", None)
    if got_dtype is not None and got_dtype != want_dtype:
        return f"has dtype {got_dtype}; the primal's tangent dtype is {want_dtype}"
    return None


def _snapshot(values: Any) -> Any:
    return copy.deepcopy(values)


def _unchanged(before: Any, after: Any) -> bool:
    """Deep equality that treats NaN as equal and compares arrays by value and dtype."""
    if isinstance(before, np.ndarray | np.generic) or isinstance(after, np.ndarray | np.generic):
        a, b = np.asarray(before), np.asarray(after)
        return (
            a.shape == b.shape
            and a.dtype == b.dtype
            and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        )
    if sp.issparse(before):
        return sp.issparse(after) and _unchanged(before.toarray(), after.toarray())
    if isinstance(before, tuple | list):
        return (
            type(before) is type(after)
            and len(before) == len(after)
            and all(map(_unchanged, before, after))
        )
    if isinstance(before, dict):
        return before.keys() == after.keys() and all(
            _unchanged(before[k], after[k]) for k in before
        )
    if isinstance(before, Tangent):
        return isinstance(after, Tangent) and _unchanged(before.backing, after.backing)
    data = getattr(before, "data", None)
    if isinstance(data, np.ndarray):
        return _unchanged(data, getattr(after, "data", None))
    fields = getattr(before, "__dict__", None)
    if fields:
        return _unchanged(fields, getattr(after, "__dict__", None))
    return True


def _check_not_mutated(failures: _Failures, label: str, before: Any, after: Any) -> None:
    if not _unchanged(before, after):
        failures.fail(label, "was modified in place (rules must not mutate their inputs)")


def _ambient(failures: _Failures, what: str, space: Space, t: Any) -> np.ndarray | None:
    try:
        return space.ambient(t)
    except (TypeError, ValueError) as error:
        failures.fail(what, str(error))
        return None


def _random_tangent(space: Space, primal: Any, rng: np.random.Generator) -> tuple[Any, np.ndarray]:
    coords = rng.standard_normal(space.dim)
    return ProjectTo(primal)(space.tangent(coords)), coords


def _output_components(y: Any, space: Space) -> list[Any]:
    if isinstance(space, CompositeSpace) and len(space.spaces) > 1:
        return list(space.spaces)
    return []


def _with_component(y: Any, y_bar: Any, space: CompositeSpace, key: Any, value: Any) -> Tangent:
    parts = space.components(y_bar)
    parts[key] = value
    if space.positional:
        return Tangent.from_backing(type(y), tuple(parts[k] for k in space.spaces))
    return Tangent.from_backing(type(y), parts)


# --- check_rrule ---------------------------------------------------------------------------------


def check_rrule(
    f: Callable[..., Any],
    *args: Any,
    output_tangent: Any = None,
    rtol: float | None = None,
    atol: float | None = None,
    symmetric: Iterable[int] = (),
    fkwargs: dict[str, Any] | None = None,
    rng: Any = None,
    fd_step: float = DEFAULT_STEP,
    **kwargs: Any,
) -> CheckReport:
    """Check the registered rrule of ``f`` at ``args`` against finite differences.

    Checks: the primal output equals ``f(*args)``; the pullback returns a tuple of
    ``1 + len(args)``; each cotangent (and the function's own, for a callable object with fields)
    equals the finite-difference vector-Jacobian product, projected onto the input's tangent
    space; the dot-product test ``<y_bar, J x_dot> == sum <x_bar, x_dot>`` with ``J x_dot`` from
    the frule (or finite differences when there is none); ``ZeroTangent()``, ``NoTangent()``, a
    ``Thunk`` of the output tangent and (for several outputs) partly zero output tangents are
    accepted and consistent; neither the inputs nor the output tangent are modified; each
    cotangent has the type, dtype and structure ``ProjectTo`` of its input gives.

    Parameters
    ----------
    f : callable
        The function whose rule is checked.
    *args
        Primal inputs. Inputs without a tangent space (bools, strings, Python ints) must get an
        ``AbstractZero`` cotangent.
    output_tangent : optional
        The output cotangent; default: ``rand_tangent(y)``. Give a gauge-invariant one for
        functions whose output has a free gauge (eigenvectors, singular vectors).
    rtol, atol : float, optional
        Tolerances; default by the least precise input: 1e-6/1e-9 for double precision, 1e-3/1e-5
        for single and 1e-2/1e-3 for half. An error passes when ``max|got - want| <= atol + rtol *
        max(|want|, |got|)``.
    symmetric : iterable of int
        Positions of ndarray inputs that ``f`` reads as symmetric (Hermitian, if complex)
        matrices: they are differenced along symmetric directions only. Structured inputs
        (``Symmetric(A)``) are recognised without this.
    fkwargs : dict, optional
        Keyword arguments for ``f`` whose names clash with the checker's own.
    rng : numpy.random.Generator or int, optional
        Randomness for the tangents (default seed 0).
    fd_step : float
        Base finite-difference step.
    **kwargs
        Keyword arguments passed to ``f`` (never differentiated).

    Returns
    -------
    CheckReport
        The measured errors, when every check passes.

    Raises
    ------
    RuleCheckError
        Listing every failed check.
    """
    kwargs = {**(fkwargs or {}), **kwargs}
    name = _name(f)
    generator = as_generator(rng)
    rtol, atol = _tolerances(args, rtol, atol)
    failures = _Failures(name, rtol, atol)
    args_before, f_before = _snapshot(args), _snapshot(f)

    expected = f(*_snapshot(args), **kwargs)
    result = rrule(f, *args, **kwargs)
    if result is None:
        raise RuleCheckError(f"{name}: no rrule is registered")
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuleCheckError(
            f"{name}: an rrule must return (y, pullback), got {type(result).__name__}"
        )
    y, pullback = result
    out_space = space_of(expected)
    got_y = _ambient(failures, "primal output", out_space, y)
    if got_y is not None:
        failures.compare("primal output", got_y, out_space.ambient(expected))

    y_bar = rand_output(y, generator) if output_tangent is None else output_tangent
    y_bar_before = _snapshot(y_bar)
    cotangents = pullback(y_bar)
    if not isinstance(cotangents, tuple):
        failures.fail(
            "pullback", f"must return a tuple (f_bar, *x_bars), got {type(cotangents).__name__}"
        )
        return failures.raise_if_any()
    if len(cotangents) != len(args) + 1:
        failures.fail(
            "pullback",
            f"returned {len(cotangents)} cotangents; expected {len(args) + 1} (f_bar and one per argument)",
        )
        return failures.raise_if_any()

    spaces = _spaces(f, args, symmetric)
    differ = Differencer(
        f, args, kwargs, {i: s for i, s in spaces.items() if s.dim}, out_space, fd_step
    )
    y_bar_flat = out_space.ambient(y_bar)
    x_bars: dict[int, np.ndarray] = {}
    for i, space in spaces.items():
        label = _label(i, args)
        primal = f if i == -1 else args[i]
        x_bar = unthunk(cotangents[i + 1])
        if isinstance(x_bar, NotImplementedTangent):
            failures.report.not_implemented.append(label)
            continue
        if space.dim == 0:
            if not isinstance(x_bar, AbstractZero):
                failures.fail(
                    label,
                    f"has no tangent space, so its cotangent must be NoTangent(), got {x_bar!r}",
                )
            continue
        got = _ambient(failures, label, space, x_bar)
        if got is None:
            continue
        x_bars[i] = got
        want = space.ambient(space.tangent(differ.vjp(y_bar_flat, i)))
        failures.compare(f"{label} vs finite differences", got, want)
        reason = _same_kind(x_bar, ProjectTo(primal)(x_bar)) if i != -1 else None
        if reason:
            failures.fail(label, f"cotangent {reason}")

    _dot_product_test(
        failures, f, args, kwargs, spaces, differ, out_space, y_bar_flat, x_bars, generator
    )
    _zero_and_thunk_inputs(failures, pullback, y, y_bar, out_space, cotangents, spaces)

    _check_not_mutated(failures, "an input", args_before, args)
    _check_not_mutated(failures, "the function object", f_before, f)
    _check_not_mutated(failures, "the output tangent", y_bar_before, y_bar)
    return failures.raise_if_any()


def rand_output(y: Any, rng: np.random.Generator) -> Any:
    """A random cotangent for the output ``y`` (as ``rand_tangent``)."""
    space = space_of(y)
    return _random_tangent(space, y, rng)[0]


def _dot_product_test(
    failures: _Failures,
    f: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    spaces: dict[int, Space],
    differ: Differencer,
    out_space: Space,
    y_bar_flat: np.ndarray,
    x_bars: dict[int, np.ndarray],
    rng: np.random.Generator,
) -> None:
    """``<y_bar, J x_dot> == sum_i <x_bar_i, x_dot_i>``, J from the frule or finite differences."""
    if not x_bars:
        return
    dots: dict[int, Any] = {}
    coords: dict[int, np.ndarray] = {}
    for i in x_bars:
        primal = f if i == -1 else args[i]
        dots[i], coords[i] = _random_tangent(spaces[i], primal, rng)
    rhs = sum(inner(x_bars[i], spaces[i].ambient(dots[i])) for i in x_bars)
    source = "finite differences"
    if f in frule and all(i in x_bars or spaces[i].dim == 0 for i in spaces):
        tangents = tuple(dots.get(i, NoTangent()) for i in range(-1, len(args)))
        try:
            _, y_dot = frule(tangents, f, *args, **kwargs)
            y_dot_flat = out_space.ambient(y_dot)
            source = "the frule"
        except Exception as error:  # noqa: BLE001 (any failure of the frule is reported, not raised)
            failures.fail("dot-product test", f"the frule raised {type(error).__name__}: {error}")
            return
    else:
        y_dot_flat = differ.jvp(coords)
    lhs = inner(y_bar_flat, y_dot_flat)
    failures.compare(
        f"dot-product test <y_bar, J x_dot> (J x_dot from {source}) vs sum <x_bar, x_dot>", rhs, lhs
    )


def _zero_and_thunk_inputs(
    failures: _Failures,
    pullback: Callable[[Any], Any],
    y: Any,
    y_bar: Any,
    out_space: Space,
    cotangents: tuple[Any, ...],
    spaces: dict[int, Space],
) -> None:
    """Zeros give zeros; a thunk of ``y_bar`` and partly zero output tangents agree with dense ones."""
    for zero in (ZeroTangent(), NoTangent()):
        result = pullback(zero)
        if not (isinstance(result, tuple) and all(isinstance(r, AbstractZero) for r in result)):
            failures.fail(f"pullback({zero!r})", f"must return zeros, got {result!r}")

    def agree(what: str, result: Any, reference: tuple[Any, ...]) -> None:
        if not isinstance(result, tuple) or len(result) != len(reference):
            failures.fail(what, "returned a different number of cotangents")
            return
        for i, space in spaces.items():
            if space.dim == 0 or isinstance(unthunk(reference[i + 1]), NotImplementedTangent):
                continue
            got = _ambient(failures, f"{what}, {i}", space, result[i + 1])
            want = _ambient(failures, f"{what}, {i}", space, reference[i + 1])
            if got is not None and want is not None:
                failures.compare(f"{what}: cotangent {i}", got, want)

    agree("pullback(Thunk(y_bar)) vs pullback(y_bar)", pullback(Thunk(lambda: y_bar)), cotangents)

    for key in _output_components(y, out_space):
        assert isinstance(out_space, CompositeSpace)
        component_space = out_space.spaces[key]
        dense_zero = component_space.tangent(np.zeros(component_space.dim))
        with_zero = _with_component(y, y_bar, out_space, key, ZeroTangent())
        with_dense = _with_component(y, y_bar, out_space, key, dense_zero)
        agree(
            f"output component {key!r} as ZeroTangent() vs as zeros",
            pullback(with_zero),
            pullback(with_dense),
        )


# --- check_frule ---------------------------------------------------------------------------------


def check_frule(
    f: Callable[..., Any],
    *args: Any,
    tangents: tuple[Any, ...] | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    symmetric: Iterable[int] = (),
    fkwargs: dict[str, Any] | None = None,
    rng: Any = None,
    fd_step: float = DEFAULT_STEP,
    **kwargs: Any,
) -> CheckReport:
    """Check the registered frule of ``f`` at ``args`` against finite differences.

    Checks: the primal output equals ``f(*args)``; the output tangent equals the central
    finite-difference directional derivative along the input tangents; it has the type, dtype
    and structure ``ProjectTo`` of the output gives; all-zero input tangents give a zero output
    tangent; thunked input tangents give the same result; neither inputs nor tangents are
    modified; and, when an rrule is registered, the dot-product test against it.

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
    rtol, atol, symmetric, fkwargs, rng, fd_step, **kwargs
        As for :func:`check_rrule`.

    Returns
    -------
    CheckReport

    Raises
    ------
    RuleCheckError
    """
    kwargs = {**(fkwargs or {}), **kwargs}
    name = _name(f)
    generator = as_generator(rng)
    rtol, atol = _tolerances(args, rtol, atol)
    failures = _Failures(name, rtol, atol)
    spaces = _spaces(f, args, symmetric)

    if tangents is None:
        dots = {
            i: _random_tangent(s, f if i == -1 else args[i], generator)[0]
            for i, s in spaces.items()
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
    before = _snapshot((args, all_tangents, f))

    expected = f(*_snapshot(args), **kwargs)
    result = frule(all_tangents, f, *args, **kwargs)
    if result is None:
        raise RuleCheckError(f"{name}: no frule is registered")
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuleCheckError(
            f"{name}: an frule must return (y, y_dot), got {type(result).__name__}"
        )
    y, y_dot = result
    out_space = space_of(expected)
    got_y = _ambient(failures, "primal output", out_space, y)
    if got_y is not None:
        failures.compare("primal output", got_y, out_space.ambient(expected))

    moving = {i: s for i, s in spaces.items() if s.dim}
    coords = {}
    for i, space in moving.items():
        t = unthunk(all_tangents[i + 1])
        if not isinstance(t, AbstractZero):
            coords[i] = space.coordinates(t)
    differ = Differencer(f, args, kwargs, moving, out_space, fd_step)
    got = _ambient(failures, "output tangent", out_space, unthunk(y_dot))
    if got is not None:
        want = differ.jvp(coords) if coords else np.zeros_like(out_space.ambient(expected))
        failures.compare("output tangent vs finite differences", got, want)
        reason = _same_kind(unthunk(y_dot), ProjectTo(y)(unthunk(y_dot)))
        if reason:
            failures.fail("output tangent", reason)

    zeros = tuple(NoTangent() if i == -1 else ZeroTangent() for i in range(-1, len(args)))
    zero_result = frule(zeros, f, *args, **kwargs)
    if zero_result is None or not isinstance(zero_result[1], AbstractZero):
        failures.fail("zero input tangents", "must give a zero output tangent")
    thunked = tuple(Thunk(lambda t=t: t) for t in all_tangents)
    thunk_result = frule(thunked, f, *args, **kwargs)
    if got is not None and thunk_result is not None:
        again = _ambient(
            failures, "output tangent for thunked inputs", out_space, unthunk(thunk_result[1])
        )
        if again is not None:
            failures.compare("thunked input tangents vs plain ones", again, got)

    if got is not None and f in rrule:
        _frule_dot_product(
            failures, f, args, kwargs, spaces, out_space, all_tangents, got, generator
        )

    _check_not_mutated(failures, "an input or input tangent", before, (args, all_tangents, f))
    return failures.raise_if_any()


def _frule_dot_product(
    failures: _Failures,
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
        x_bar = _ambient(failures, f"dot-product test, cotangent {i}", space, cotangents[i + 1])
        x_dot = _ambient(failures, f"dot-product test, tangent {i}", space, all_tangents[i + 1])
        if x_bar is None or x_dot is None:
            return
        rhs += inner(x_bar, x_dot)
    lhs = inner(out_space.ambient(y_bar), y_dot_flat)
    failures.compare("dot-product test <y_bar, y_dot> vs sum <x_bar, x_dot> (the rrule)", rhs, lhs)
