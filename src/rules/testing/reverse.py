"""``check_rrule``: prove a reverse rule right against finite differences.

References are central finite differences of the primal function computed independently of the
rule (:mod:`rules.testing.finite_differences`), along an orthonormal basis of each input's
tangent space (:mod:`rules.testing.spaces`). All failed checks are collected and raised together
as one :class:`RuleCheckError`; each line names the argument, the check and the worst error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from rules.core.registry import frule, rrule
from rules.testing.arguments import (
    ambient_or_fail,
    argument_label,
    argument_spaces,
    check_not_mutated,
    check_primal_output,
    function_name,
    output_components,
    owned,
    projection_mismatch,
    random_tangent,
    snapshot,
    with_component,
)
from rules.testing.finite_differences import DEFAULT_STEP, Differencer
from rules.testing.random import as_generator
from rules.testing.results import CheckReport, Failures, RuleCheckError, tolerances
from rules.testing.second_order import check_pullback_derivative
from rules.testing.spaces import CompositeSpace, Space, inner, space_of
from tangents import (
    AbstractZero,
    NoTangent,
    NotImplementedTangent,
    Thunk,
    ZeroTangent,
    unthunk,
)

__all__ = ["check_rrule", "rand_output"]


def check_rrule(
    f: Callable[..., Any],
    *args: Any,
    output_tangent: Any = None,
    rtol: float | None = None,
    atol: float | None = None,
    symmetric: Iterable[int] = (),
    constant: Iterable[int | tuple[int, Any]] = (),
    fkwargs: dict[str, Any] | None = None,
    rng: Any = None,
    fd_step: float = DEFAULT_STEP,
    order: int = 1,
    vary_cotangent: bool = True,
    **kwargs: Any,
) -> CheckReport:
    """Check the registered rrule of ``f`` at ``args`` against finite differences.

    Checks: the primal output equals ``f(*args)`` in value, type, dtype, shape and structure;
    the pullback returns a tuple of ``1 + len(args)``; each cotangent (and the function's own,
    for a callable object with fields) equals the finite-difference vector-Jacobian product,
    projected onto the input's tangent space; the dot-product test ``<y_bar, J x_dot> == sum
    <x_bar, x_dot>`` with ``J x_dot`` from the frule (or finite differences when there is none);
    ``ZeroTangent()``, ``NoTangent()``, a ``Thunk`` of the output tangent and (for several
    outputs) partly zero output tangents are accepted and consistent; neither the inputs, the
    output tangent nor the returned ``y`` are modified by the rule or its pullback; each
    cotangent has the type, dtype, shape and structure ``ProjectTo`` of its input gives.

    Parameters
    ----------
    f : callable
        The function whose rule is checked.
    *args
        Primal inputs. Inputs without a tangent space (bools, strings, Python ints) must get an
        ``AbstractZero`` cotangent. An empty float array has a tangent space of dimension 0:
        its cotangent is a zero or an empty array of the shape and dtype ``ProjectTo`` gives.
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
    constant : iterable of int or (int, key)
        Positions of inputs held fixed (integer index arrays, say): not differenced, and their
        cotangent must be ``NoTangent()`` or ``ZeroTangent()``. A pair ``(i, key)`` holds fixed
        only component ``key`` of a tuple (or other composite) argument ``i``, e.g. ``(0, 1)``
        for the pivot indices in ``scipy.linalg.lu_solve((lu, piv), b)``.
    fkwargs : dict, optional
        Keyword arguments for ``f`` whose names clash with the checker's own.
    rng : numpy.random.Generator or int, optional
        Randomness for the tangents (default seed 0).
    fd_step : float
        Initial finite-difference step, relative to the size of the entries a direction moves:
        ``fd_step * max(1, m)`` and, for ``0 < m < 1``, ``fd_step * m``; each is halved while
        that improves the extrapolated derivative (:mod:`rules.testing.finite_differences`).
    order : int
        ``2`` also checks the pullback's own derivative, with respect to every array input and
        the cotangent, against finite differences of the pullback
        (:mod:`rules.testing.second_order`): the rule is then proved twice differentiable by
        the driver, as ``grad(grad(f))`` and ``hessian`` use it.
    vary_cotangent : bool
        With ``order=2``, whether the cotangent is differenced too; ``False`` holds it fixed, for
        outputs with a gauge (eigenvectors), where only gauge-invariant cotangents are valid.
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
    name = function_name(f)
    generator = as_generator(rng)
    rtol, atol = tolerances(args, rtol, atol)
    failures = Failures(name, rtol, atol)
    args_before, f_before = snapshot(args), snapshot(f)

    expected = f(*snapshot(args), **kwargs)
    result = rrule(f, *args, **kwargs)
    if result is None:
        raise RuleCheckError(f"{name}: no rrule is registered")
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuleCheckError(
            f"{name}: an rrule must return (y, pullback), got {type(result).__name__}"
        )
    y, pullback = result
    y_before = snapshot(y)
    out_space = space_of(expected)
    check_primal_output(failures, out_space, y, expected)
    if failures.lines:  # a wrong primal: the registry would refuse cotangents shaped like f's
        return failures.raise_if_any()

    y_bar = rand_output(y, generator) if output_tangent is None else output_tangent
    y_bar_before = snapshot(y_bar)
    cotangents = owned(pullback(y_bar))
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

    spaces = argument_spaces(f, args, symmetric, constant)
    differ = Differencer(
        f, args, kwargs, {i: s for i, s in spaces.items() if s.dim}, out_space, fd_step
    )
    y_bar_flat = out_space.ambient(y_bar)
    x_bars: dict[int, np.ndarray] = {}
    for i, space in spaces.items():
        label = argument_label(i, args)
        primal = f if i == -1 else args[i]
        x_bar = unthunk(cotangents[i + 1])
        if isinstance(x_bar, NotImplementedTangent):
            failures.report.not_implemented.append(label)
            continue
        if space.dim == 0:  # nothing to difference; a zero always fits
            if isinstance(x_bar, AbstractZero):
                continue
            if not space.has_tangents:
                failures.fail(
                    label,
                    f"has no tangent space, so its cotangent must be NoTangent(), got {x_bar!r}",
                )
            elif ambient_or_fail(failures, label, space, x_bar) is not None:
                reason = projection_mismatch(x_bar, primal)  # an empty array: an empty cotangent
                if reason:
                    failures.fail(label, f"cotangent {reason}")
            continue
        got = ambient_or_fail(failures, label, space, x_bar)
        if got is None:
            continue
        x_bars[i] = got
        want = space.ambient(space.tangent(differ.vjp(y_bar_flat, i)))
        failures.compare(f"{label} vs finite differences", got, want, getattr(space, "shape", None))
        reason = projection_mismatch(x_bar, primal) if i != -1 else None
        if reason:
            failures.fail(label, f"cotangent {reason}")

    _dot_product_test(
        failures, f, args, kwargs, spaces, differ, out_space, y_bar_flat, x_bars, generator
    )
    _zero_and_thunk_inputs(failures, pullback, y, y_bar, out_space, cotangents, spaces)
    if order == 2:
        check_pullback_derivative(
            failures, f, args, kwargs, spaces, y_bar, generator, fd_step, vary_cotangent
        )
    elif order != 1:
        raise ValueError(f"check_rrule: order must be 1 or 2, got {order!r}")

    check_not_mutated(failures, "an input", args_before, args)
    check_not_mutated(failures, "the function object", f_before, f)
    check_not_mutated(failures, "the output tangent", y_bar_before, y_bar)
    check_not_mutated(
        failures,
        "the primal output y",
        y_before,
        y,
        "the pullback must not write into the y its rrule returned: the caller owns it",
    )
    return failures.raise_if_any()


def rand_output(y: Any, rng: np.random.Generator) -> Any:
    """A random cotangent for the output ``y`` (as ``rand_tangent``)."""
    space = space_of(y)
    return random_tangent(space, y, rng)[0]


def _dot_product_test(
    failures: Failures,
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
        dots[i], coords[i] = random_tangent(spaces[i], primal, rng)
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
    failures: Failures,
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
            got = ambient_or_fail(failures, f"{what}, {i}", space, result[i + 1])
            want = ambient_or_fail(failures, f"{what}, {i}", space, reference[i + 1])
            if got is not None and want is not None:
                failures.compare(f"{what}: cotangent {i}", got, want)

    agree(
        "pullback(Thunk(y_bar)) vs pullback(y_bar)",
        owned(pullback(Thunk(lambda: y_bar))),
        cotangents,
    )

    for key in output_components(y, out_space):
        assert isinstance(out_space, CompositeSpace)
        component_space = out_space.spaces[key]
        dense_zero = component_space.tangent(np.zeros(component_space.dim))
        with_zero = with_component(y, y_bar, out_space, key, ZeroTangent())
        with_dense = with_component(y, y_bar, out_space, key, dense_zero)
        from_zero = owned(pullback(with_zero))  # owned: a pullback may reuse one output buffer
        agree(
            f"output component {key!r} as ZeroTangent() vs as zeros",
            from_zero,
            owned(pullback(with_dense)),
        )
