"""Outcomes of a rule check: the error raised, the report returned, tolerances, comparisons."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

import numpy as np
import scipy.sparse as sp

from tangents import StructuredMatrix
from tangents.structural import has_fields, primal_components

__all__ = ["CheckReport", "Failures", "RuleCheckError", "tolerances"]


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


def _has_dtype(x: Any) -> bool:
    # not merely a .dtype attribute: a dtype class passed as an argument has a descriptor there
    return isinstance(x, np.ndarray | np.generic | StructuredMatrix) or sp.issparse(x)


def _leaves(x: Any, seen: set[int] | None = None) -> Iterable[Any]:
    """Arrays (dense, structured, sparse) and other leaves inside containers and objects."""
    seen = set() if seen is None else seen
    if _has_dtype(x) or id(x) in seen:
        yield x
        return
    seen.add(id(x))
    if isinstance(x, tuple | list):
        for v in x:
            yield from _leaves(v, seen)
    elif isinstance(x, dict):
        for v in x.values():
            yield from _leaves(v, seen)
    elif has_fields(x):  # dataclasses, namedtuples, __slots__ and __dict__ objects
        components = primal_components(x)
        yield from _leaves(
            tuple(components.values()) if isinstance(components, dict) else components, seen
        )
    else:
        yield x


def _precision(x: Any) -> int:
    """Bytes per real number of the least precise float in ``x`` (8 when there is none)."""
    sizes = [8]
    for leaf in _leaves(x):
        if not _has_dtype(leaf):
            continue
        dtype = leaf.dtype
        if np.issubdtype(dtype, np.inexact):
            sizes.append(
                np.dtype(dtype).itemsize // (2 if np.issubdtype(dtype, np.complexfloating) else 1)
            )
    return min(sizes)


def tolerances(
    args: tuple[Any, ...], rtol: float | None, atol: float | None
) -> tuple[float, float]:
    """``(rtol, atol)``: the given ones, else the defaults for the least precise input."""
    default_rtol, default_atol = _TOLERANCES[min(_precision(args), 8)]
    return (default_rtol if rtol is None else rtol, default_atol if atol is None else atol)


class Failures:
    """Collects failed checks for one rule and the errors of passed ones."""

    def __init__(self, name: str, rtol: float, atol: float) -> None:
        self.report = CheckReport(name)
        self.first_lines: list[str] = []  # in-place modifications: they explain what follows
        self.lines: list[str] = []
        self.rtol = rtol
        self.atol = atol

    def fail(self, what: str, message: str, first: bool = False) -> None:
        """Record a failed check; ``first=True`` lists it before the others (a mutation)."""
        (self.first_lines if first else self.lines).append(f"{what}: {message}")

    def compare(self, what: str, got: Any, want: Any, shape: tuple[int, ...] | None = None) -> None:
        """Compare two arrays within the tolerances; record the error, and a failure if too large.

        A failure names the worst entry, with the value got and the value wanted; its index is
        in ``shape`` when given (the argument's shape, of which ``got`` is the flattening).
        """
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
        differences = np.abs(got - want)
        error = float(np.max(differences, initial=0.0))
        self.report.errors[what] = error / scale if scale else error
        if error > self.atol + self.rtol * scale:
            self.fail(
                what,
                f"worst error {error:.3g} at {_entry(differences, shape)}: got "
                f"{_value(got, differences)}, want {_value(want, differences)}; it exceeds atol "
                f"+ rtol * scale = {self.atol:.1g} + {self.rtol:.1g} * {scale:.3g}",
            )

    def raise_if_any(self) -> CheckReport:
        """Raise :class:`RuleCheckError` listing every failure, or return the report.

        In-place modifications come first: a mutated input or cotangent explains the wrong
        values reported after it.
        """
        failed = self.first_lines + self.lines
        if failed:
            lines = "\n".join(f"  - {line}" for line in failed)
            raise RuleCheckError(f"{self.report.function} failed {len(failed)} check(s):\n{lines}")
        return self.report


def _entry(differences: np.ndarray, shape: tuple[int, ...] | None) -> str:
    """Where the largest difference is: an index into ``shape``, else into the array compared."""
    k = int(np.argmax(differences))
    if shape is not None and int(np.prod(shape)) == differences.size and shape:
        return f"entry {tuple(int(i) for i in np.unravel_index(k, shape))}"
    if differences.ndim > 1:
        return f"entry {tuple(int(i) for i in np.unravel_index(k, differences.shape))}"
    return f"entry [{k}]" if differences.ndim else "the value"


def _value(values: np.ndarray, differences: np.ndarray) -> str:
    """The entry of ``values`` where ``differences`` is largest, printed briefly."""
    return (
        f"{values.reshape(-1)[int(np.argmax(differences))]:.6g}" if values.ndim else f"{values:.6g}"
    )
