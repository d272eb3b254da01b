r"""The second-order check of ``check_rrule(..., order=2)``: the pullback's own derivative.

A rule is twice differentiable when its pullback, as a function of the primal inputs *and* the
output cotangent, has the right derivative. The check reduces the pullback to one real scalar,

.. math::  s(x_1, \dots, x_n, \bar y) = \sum_i \mathrm{Re} \langle w_i, \bar x_i \rangle,
   \qquad (\bar x_1, \dots, \bar x_n) = \mathrm{pullback}_{x}(\bar y),

with fixed random weights :math:`w_i` in each input's tangent space, and compares the gradient of
``s`` that the driver computes (:func:`rules.autodiff.grad`, which differentiates the pullback
by running it on traced values) with central finite differences of ``s`` itself, computed with
plain numbers: the pullback is *evaluated* at perturbed inputs, never differentiated. That is
PyTorch's ``gradgradcheck`` idea, and HIPS autograd's ``check_grads(order=2)``.

The derivative with respect to :math:`\bar y` is the Jacobian applied to the weights (a
pullback is linear in its cotangent); with respect to :math:`x_i` it holds the second
derivatives of ``f``. Outputs with a free gauge (eigenvectors, singular vectors) need a
gauge-invariant cotangent, which a finite-difference step in an arbitrary direction would leave:
``vary_cotangent=False`` holds the cotangent fixed for them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rules.core.registry import rrule
from rules.testing.arguments import argument_label, random_tangent
from rules.testing.finite_differences import Differencer
from rules.testing.results import Failures
from rules.testing.spaces import Space, space_of
from tangents import AbstractZero, NotImplementedTangent, Tangent, unthunk

__all__ = ["check_pullback_derivative"]


def _real_inner(w: Any, b: Any) -> Any:
    """``Re <w, b>`` with ``w`` plain and ``b`` possibly traced: a traced real scalar.

    A structural cotangent of an array read as a sequence (``np.stack(x)`` for an ndarray
    ``x``) is stacked back into the array's shape first.
    """
    if isinstance(b, Tangent):
        b = np.reshape(np.stack([unthunk(part) for part in b.backing]), np.shape(w))
    return np.sum(np.real(np.conj(w) * b))


def _cotangent_parts(y_bar: Any) -> tuple[list[Any], Callable[[tuple[Any, ...]], Any]]:
    """The cotangent's components (one for a single output) and how to reassemble them.

    The driver differentiates with respect to arrays and containers of them; a structural
    ``Tangent`` (of a namedtuple output) becomes its components, held as a tuple.
    """
    y_bar = unthunk(y_bar)
    if isinstance(y_bar, Tangent | tuple):
        parts = list(
            y_bar.backing.values()
            if isinstance(y_bar, Tangent) and isinstance(y_bar.backing, dict)
            else (y_bar.backing if isinstance(y_bar, Tangent) else y_bar)
        )
        return parts, tuple
    return [y_bar], lambda values: values[0]


def _cotangent_label(k: int, count: int) -> str:
    return "the cotangent" if count == 1 else f"component {k} of the cotangent"


def check_pullback_derivative(
    failures: Failures,
    f: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    spaces: dict[int, Space],
    y_bar: Any,
    rng: np.random.Generator,
    fd_step: float,
    vary_cotangent: bool,
) -> None:
    """Record failures of the pullback's derivative (module docstring) in ``failures``."""
    from rules.autodiff import grad  # the checker may use the driver; the rule sets may not

    arrays = {
        i: space
        for i, space in spaces.items()
        if i >= 0 and space.dim and isinstance(args[i], np.ndarray | np.generic | float | complex)
    }
    if not arrays:
        failures.fail("order 2", "no array input with a tangent space: nothing to check")
        return
    weights = {i: np.asarray(random_tangent(space, args[i], rng)[0]) for i, space in arrays.items()}
    n = len(args)
    parts, rebuild = _cotangent_parts(y_bar)

    def weighted_pullback(*values: Any) -> Any:
        _, pullback = rrule(f, *values[:n], **kwargs)
        bars = pullback(rebuild(values[n:]))
        total: Any = 0.0
        for i, w in weights.items():
            bar = unthunk(bars[i + 1])
            if not isinstance(bar, AbstractZero | NotImplementedTangent):  # as at first order
                total = total + _real_inner(w, bar)
        return total

    inputs = dict(arrays)
    if vary_cotangent:
        for k, part in enumerate(parts):
            if isinstance(part, np.ndarray | np.generic | float | complex):
                inputs[n + k] = space_of(part)
    positions = tuple(inputs)
    values = (*args, *parts)
    # Twice: with the cotangent traced too, and held plain (as in ``hessian``, whose inner
    # cotangents do not depend on the input): a rule may take other paths in the two cases.
    runs = {"": positions}
    if len(positions) > len(arrays):
        runs[" (cotangent held fixed)"] = tuple(arrays)
    found: dict[str, tuple[Any, ...]] = {}
    for tag, argnums in runs.items():
        try:
            found[tag] = grad(weighted_pullback, argnums=argnums)(*values)
        except Exception as error:  # noqa: BLE001 (reported as the check's failure, not raised)
            failures.fail(
                "order 2",
                f"differentiating the pullback{tag} raised {type(error).__name__}: {error}",
            )
            return
    differ = Differencer(weighted_pullback, values, {}, inputs, space_of(0.0), fd_step)
    one = np.ones(1)
    wants = {i: differ.vjp(one, i) for i in positions}
    for tag, argnums in runs.items():
        for i, got in zip(argnums, found[tag], strict=True):
            label = argument_label(i, args) if i < n else _cotangent_label(i - n, len(parts))
            if isinstance(got, NotImplementedTangent):  # a partial the rule does not implement
                failures.report.not_implemented.append(f"order 2: {label}")
                continue
            failures.compare(
                f"order 2: derivative of the pullback with respect to {label}{tag} vs finite "
                "differences",
                inputs[i].coordinates(got),
                wants[i],
            )
