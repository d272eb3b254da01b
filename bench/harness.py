"""One row of the benchmark: a case at one size, checked against its reference, then timed.

:func:`prepare` builds the inputs, makes the first call of this project's path (timed alone: on
a cold Numba cache this is where kernels compile), checks the result against the reference
formula, and returns the callables to time. :func:`run_case` adds the timing and turns any
failure into a row marked ``FAILED`` (disagreement) or ``ERROR`` (exception) instead of a time.
The pytest-benchmark files use :func:`prepare` and time the same callables.

The timed callables of a row:

* ``ours``: pullback cases, the pullback returned by ``rrule(f, *args)``, called on the
  cotangent (forward outputs given); pushforward cases, the whole ``frule`` call.
* ``total`` (pullback cases only): ``rrule(f, *args)`` and its pullback, the user's full call.
* ``numpy``: the case's reference formula. ``forward``: ``f(*args)`` alone.
* ``jax``, ``torch``: the peers' runners (:mod:`bench.peers`), when loaded and in agreement;
  ``jax_total``, ``torch_total`` (pullback cases): the peers' whole call, forward and backward,
  compared with ``total``.

Every result is materialised inside the timed call: thunks are evaluated, so a lazy pullback does
not look fast by doing nothing (:func:`materialise`). A call whose first result holds no thunk (a
tuple of arrays, :func:`settled`) returns the same kinds of values on every call with the same
inputs, and is timed as the user makes it, with nothing wrapped around it: its materialisation
would be a type check per component, which the reference formula's timing does not pay either.
Turning results into arrays for the comparison (:func:`flatten`) is done once, untimed, as the
reference's result is not converted either. A pushforward's symbolic zero tangent
(``ZeroTangent()``) is compared as zeros of its primal's shape, the arrays the reference and the
peers return.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.case import Case, Inputs, Size
from bench.peers import Peer
from bench.timing import Timing, first_call, measure
from rules import frule, rrule  # importing rules registers every rule set
from tangents import AbstractZero, NoTangent, Tangent, unthunk

__all__ = [
    "Disagreement",
    "PeerResult",
    "Prepared",
    "Row",
    "compare",
    "flatten",
    "flatten_tangent",
    "materialise",
    "prepare",
    "run_case",
    "settled",
]


class Disagreement(AssertionError):
    """This project's result differs from the reference formula beyond the case's tolerance."""

    def __init__(self, message: str, max_error: float) -> None:
        super().__init__(message)
        self.max_error = max_error


@dataclass
class PeerResult:
    """How a peer fared on a row: ``status`` is ``ok``, ``mismatch``, ``error`` or ``n/a``."""

    status: str
    message: str = ""
    max_error: float | None = None


@dataclass
class Prepared:
    """A row ready to time: its inputs, the callables, and what the first calls showed.

    ``first_calls`` holds each callable's first call in seconds; for ``ours`` that is the first
    ``rrule`` + pullback (or ``frule``) call of the process for this case and size.
    """

    case: Case
    size: Size
    inputs: Inputs
    callables: dict[str, Callable[[], Any]]
    first_calls: dict[str, float]
    max_error: float
    peers: dict[str, PeerResult] = field(default_factory=dict)


@dataclass
class Row:
    """The outcome of a case at one size: timings, or why there are none."""

    case: Case
    size: Size
    status: str
    message: str = ""
    timings: dict[str, Timing] = field(default_factory=dict)
    first_calls: dict[str, float] = field(default_factory=dict)
    max_error: float | None = None
    peers: dict[str, PeerResult] = field(default_factory=dict)

    def best(self, name: str) -> float | None:
        """The best per-call time of callable ``name``, or ``None`` if it was not timed."""
        timing = self.timings.get(name)
        return None if timing is None else timing.best

    @property
    def speedup(self) -> float | None:
        """``numpy / ours``: how many times faster this project is than the plain formula."""
        return _ratio(self.best("numpy"), self.best("ours"))

    @property
    def forward_ratio(self) -> float | None:
        """``ours / forward``: the pullback (or frule) in units of the forward operation."""
        return _ratio(self.best("ours"), self.best("forward"))

    @property
    def noise(self) -> float | None:
        """``numpy / numpy again`` (``--noise``): the formula against itself, in the same rounds.

        What a tie looks like in this row: two timings of one callable differ by this much.
        ``None`` when the formula was timed once.
        """
        return _ratio(self.best("numpy"), self.best("numpy_again"))

    @property
    def below_beyond_noise(self) -> bool | None:
        """Whether this project was slower than the formula by more than the formula's own noise.

        ``min_r ours_r / numpy_r > max_r again_r / numpy_r``: ours over the formula, in its best
        round, above the formula timed again over the formula in its worst. For a tie whose
        rounds are alike (ours and the second timing interchangeable, the rounds independent
        and equally noisy) that happens with probability ``1 / C(2R, R)`` in ``R`` rounds (1/20
        at 3, 1/252 at 5); rounds that differ in noise can raise it up to ``2^-R``.
        ``None`` without a noise timing.
        """
        timings = [self.timings.get(name) for name in ("ours", "numpy", "numpy_again")]
        if any(t is None or not t.samples for t in timings):
            return None
        ours, numpy, again = (t.samples for t in timings)
        slowest_tie = max(a / f for a, f in zip(again, numpy, strict=True))
        return min(o / f for o, f in zip(ours, numpy, strict=True)) > slowest_tie

    def first_call(self, name: str = "ours") -> float | None:
        """First call minus steady state (compilation or cache loading), at least 0."""
        steady = "total" if name == "ours" and "total" in self.timings else name
        if name not in self.first_calls or steady not in self.timings:
            return None
        return max(0.0, self.first_calls[name] - self.timings[steady].best)

    def peer_ratio(self, name: str) -> float | None:
        """``peer / ours``: how many times faster this project is than the peer."""
        return _ratio(self.best(name), self.best("ours"))

    def peer_total_ratio(self, name: str) -> float | None:
        """``peer whole call / ours``: ``rrule`` plus pullback against the peer's forward+backward."""
        return _ratio(self.best(f"{name}_total"), self.best("total"))

    def as_dict(self) -> dict[str, Any]:
        """The JSON form of the row."""
        return {
            "case": self.case.name,
            "operation": self.case.op,
            "kind": self.case.kind,
            "topic": self.case.topic,
            "size": self.size.label,
            "n": self.size.n,
            "batch": self.size.batch,
            "status": self.status,
            "message": self.message,
            "tolerance": {"rtol": self.case.rtol, "atol": "rtol * max|reference|"},
            "max_error": self.max_error,
            "times": {name: timing.as_dict() for name, timing in self.timings.items()},
            "speedup": self.speedup,
            "formula_over_formula": self.noise,
            "below_beyond_noise": self.below_beyond_noise,
            "ours_over_forward": self.forward_ratio,
            "first_call": self.first_call(),
            "peers": {
                name: {
                    "status": peer.status,
                    "message": peer.message,
                    "max_error": peer.max_error,
                    "first_call": self.first_call(name),
                    "peer_over_ours": self.peer_ratio(name),
                    "total_over_ours_total": self.peer_total_ratio(name),
                }
                for name, peer in self.peers.items()
            },
        }


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


_VALUES = frozenset((np.ndarray, np.float64, np.float32, np.complex128, np.complex64, float))
"""Types of results that hold no thunk (plain arrays and numbers)."""


def settled(value: Any) -> bool:
    """Whether ``value`` holds nothing to evaluate: a plain value, or a tuple of plain values.

    :func:`materialise` of a settled value returns it unchanged, so a call whose first result is
    settled is timed without it (a rule returns the same kinds of values for the same inputs).
    """
    kind = type(value)
    if kind in _VALUES:
        return True
    return kind is tuple and all(type(v) in _VALUES for v in value)


def materialise(value: Any) -> Any:
    """``value`` with every thunk in it evaluated (components of tuples and ``Tangent``s too).

    What a timed call does to its result: a lazy result does not look fast by doing nothing.
    Converting it to arrays (:func:`flatten`) is left to the untimed check; the reference
    formula's result is not converted either.
    """
    if type(value) is np.ndarray:
        return value
    if type(value) in _VALUES:
        return value
    if type(value) is tuple:
        for v in value:
            if type(v) not in _VALUES:
                return tuple(materialise(v) for v in value)
        return value
    value = unthunk(value)
    if isinstance(value, Tangent):
        backing = value.backing
        parts = backing.values() if isinstance(backing, dict) else backing
    elif isinstance(value, tuple | list):  # namedtuples (EighResult) too
        parts = value
    else:
        return value
    for v in parts:
        if type(v) not in _VALUES:
            materialise(v)
    return value


def flatten(value: Any) -> tuple[np.ndarray, ...]:
    """Arrays of a result: thunks evaluated, tuples and structural ``Tangent``s flattened.

    A plain array, or a tuple of plain arrays, is returned without the general walk: it is what
    most timed calls return, and the walk's cost (about a microsecond) would otherwise be timed
    as part of a 4x4 rule that the reference formula, returning the same arrays, does not pay.
    """
    if type(value) is tuple:
        for v in value:
            if type(v) is not np.ndarray:
                break
        else:
            return value
    elif type(value) is np.ndarray:
        return (value,)
    value = unthunk(value)
    if isinstance(value, Tangent):
        backing = value.backing
        value = tuple(backing.values() if isinstance(backing, dict) else backing)
    if isinstance(value, tuple | list):
        return tuple(a for v in value for a in flatten(v))
    return (np.asarray(value),)


def flatten_tangent(tangent: Any, primal: Any) -> tuple[np.ndarray, ...]:
    """Arrays of a tangent of ``primal``, in the order of ``flatten(primal)``.

    A symbolic zero (``ZeroTangent()``, alone or as a component of a structural ``Tangent``,
    stored or not) becomes zeros shaped like its part of the primal, as the reference and the
    peers return it (the sign of a real ``slogdet``); otherwise as :func:`flatten`.
    """
    if type(tangent) is np.ndarray:
        return (tangent,)
    tangent = unthunk(tangent)
    if isinstance(tangent, AbstractZero):
        return tuple(np.zeros_like(p) for p in flatten(primal))
    if isinstance(tangent, Tangent):
        backing = tangent.backing
        if isinstance(backing, dict):
            names = getattr(primal, "_fields", None) or tuple(backing)
            pairs = [(tangent[name], getattr(primal, name)) for name in names]
        else:
            pairs = list(zip(backing, primal, strict=True))
        return tuple(a for t, p in pairs for a in flatten_tangent(t, p))
    if isinstance(tangent, tuple | list) and isinstance(primal, tuple | list):
        pairs = list(zip(tangent, primal, strict=True))
        return tuple(a for t, p in pairs for a in flatten_tangent(t, p))
    return flatten(tangent)


def compare(
    ours: Sequence[np.ndarray], reference: Sequence[np.ndarray], rtol: float
) -> tuple[bool, float]:
    """Whether ``ours`` matches ``reference``, and the largest error relative to ``max|ref|``.

    Each pair must have equal shapes and pass ``allclose(o, r, rtol, atol=rtol * max|r|)``; NaN
    never agrees.
    """
    if len(ours) != len(reference):
        return False, float("inf")
    worst, ok = 0.0, True
    for o, r in zip(ours, reference, strict=True):
        if np.shape(o) != np.shape(r):
            return False, float("inf")
        scale = float(np.max(np.abs(r), initial=0.0)) or 1.0
        error = float(np.max(np.abs(np.asarray(o) - r), initial=0.0)) / scale
        worst = max(worst, error if np.isfinite(error) else float("inf"))
        ok = ok and bool(np.allclose(o, r, rtol=rtol, atol=rtol * scale))
    return ok, worst


def _seed(case: Case, size: Size) -> int:
    """A fixed seed per row, so every run and every process times the same matrices."""
    return zlib.crc32(f"{case.name} {size.label}".encode())


def _ours(case: Case, inputs: Inputs) -> tuple[dict[str, Callable[[], Any]], float, Any, Any]:
    """This project's callables, the first call's seconds, its result (flattened) and its primal.

    The primal is the output of ``rrule``'s forward pass (``None`` for pushforward cases); it
    can differ from ``f(*args)`` in a gauge (the sign of an eigenvector) when the rule's forward
    is a compiled kernel with its own documented normalisation.
    """
    # a dict, not the case's read-only mapping: ``**`` of a mappingproxy costs a third of a
    # microsecond per call, timed as part of ours
    f, args, kwargs = case.function, inputs.args, dict(case.kwargs)
    name = getattr(f, "__name__", repr(f))
    if case.kind == "pullback":
        cotangent = inputs.cotangent

        def rrule_and_pullback() -> tuple[Any, Any, Any]:
            rule = rrule(f, *args, **kwargs)
            if rule is None:
                raise LookupError(f"no rrule is registered for {name}")
            raw = rule[1](cotangent)[1:]
            return rule[0], rule[1], (settled(raw), materialise(raw))

        # The pullback that is timed is the one whose result is checked against the reference.
        seconds, (primal, pullback, (plain, result)) = first_call(rrule_and_pullback)
        if plain:  # the first call returned arrays: so does every call (see the module notes)

            def ours() -> Any:
                return pullback(cotangent)[1:]

            def total() -> Any:
                return rrule(f, *args, **kwargs)[1](cotangent)[1:]

        else:

            def ours() -> Any:
                return materialise(pullback(cotangent)[1:])

            def total() -> Any:
                return materialise(rrule(f, *args, **kwargs)[1](cotangent)[1:])

        return {"ours": ours, "total": total}, seconds, flatten(result), primal

    tangents = (NoTangent(), *inputs.tangents)

    if kwargs:

        def pushforward() -> Any:
            return frule(tangents, f, *args, **kwargs)

    else:  # as the user writes it: no ``**{}`` in the timed call

        def pushforward() -> Any:
            return frule(tangents, f, *args)

    def first() -> tuple[bool, Any]:
        raw = pushforward()
        if raw is None:
            raise LookupError(f"no frule is registered for {name}")
        return settled(raw), materialise(raw)

    seconds, (plain, (y, y_dot)) = first_call(first)
    timed = pushforward if plain else lambda: materialise(pushforward())
    return {"ours": timed}, seconds, flatten(y) + flatten_tangent(y_dot, y), None


def prepare(case: Case, size: Size, peers: Iterable[Peer] = (), *, noise: bool = False) -> Prepared:
    """Build a row's inputs and callables; make and check the first calls.

    Raises :class:`Disagreement` when this project's result differs from the reference. A peer
    that disagrees or fails is recorded in ``Prepared.peers`` and left out of the callables.
    With ``noise`` the formula is timed a second time, as ``numpy_again`` (:attr:`Row.noise`).
    """
    inputs = case.inputs(size, np.random.default_rng(_seed(case, size)))
    inputs.output = case.forward(inputs)
    callables, seconds, result, primal = _ours(case, inputs)
    reference = flatten(case.reference(inputs))
    # a pullback is checked given the forward outputs it was handed: the rule's own, which may
    # fix the gauge of eigenvectors or singular vectors differently from LAPACK
    ours_reference = reference
    if primal is not None:
        ours_reference = flatten(case.reference(dataclasses.replace(inputs, output=primal)))
    if case.align is not None:
        result = case.align(result, ours_reference)
    ok, error = compare(result, ours_reference, case.rtol)
    if not ok:
        raise Disagreement(
            f"{case.name} at {size.label}: max |ours - reference| / max |reference| = "
            f"{error:.3g} exceeds rtol {case.rtol:g}",
            error,
        )
    callables["numpy"] = lambda: case.reference(inputs)
    if noise:  # a closure of its own, timed in its own batches: a tie with the one above
        callables["numpy_again"] = lambda: case.reference(inputs)
    callables["forward"] = lambda: case.forward(inputs)
    first_calls = {"ours": seconds}
    peer_reference = ours_reference if case.peers_use_rule else reference
    peer_results: dict[str, PeerResult] = {}
    for peer in peers:
        if not peer.supports(case):
            peer_results[peer.name] = PeerResult("n/a", f"the case names no {peer.name} version")
            continue
        try:
            run, fetch = peer.runner(case, inputs)
            peer_seconds, out = first_call(run)
            fetched = fetch(out)
            if case.align is not None:
                fetched = case.align(tuple(np.asarray(a) for a in fetched), peer_reference)
            peer_ok, peer_error = compare(fetched, peer_reference, case.rtol)
        except Exception as exc:  # noqa: BLE001 (a failing peer is reported, the row goes on)
            peer_results[peer.name] = PeerResult("error", f"{type(exc).__name__}: {exc}")
            continue
        if not peer_ok:
            peer_results[peer.name] = PeerResult(
                "mismatch", f"max relative error {peer_error:.3g}", peer_error
            )
            continue
        peer_results[peer.name] = PeerResult("ok", max_error=peer_error)
        callables[peer.name] = run
        first_calls[peer.name] = peer_seconds
        skipped = (peer.name, size.label) in case.peer_totals_skipped
        total = None if skipped else peer.total_runner(case, inputs)
        if total is not None:  # checked like the pullback; a failure only drops the column
            try:
                total_ok, _ = compare(total[1](total[0]()), peer_reference, case.rtol)
            except Exception:  # noqa: BLE001
                total_ok = False
            if total_ok:
                callables[f"{peer.name}_total"] = total[0]
    return Prepared(case, size, inputs, callables, first_calls, error, peer_results)


def run_case(
    case: Case, size: Size, *, budget: float, peers: Iterable[Peer] = (), noise: bool = False
) -> Row:
    """Prepare, check and time one row; failures become ``FAILED``/``ERROR`` rows, never raise.

    ``budget`` is the timing budget in seconds per timed callable (see :func:`measure`);
    ``noise`` times the formula twice (:attr:`Row.noise`).
    """
    try:
        prepared = prepare(case, size, peers, noise=noise)
    except Disagreement as exc:
        return Row(case, size, "FAILED", str(exc), max_error=exc.max_error)
    except Exception as exc:  # noqa: BLE001 (any failure becomes an ERROR row, the run goes on)
        return Row(case, size, "ERROR", f"{type(exc).__name__}: {exc}")
    try:
        timings = measure(prepared.callables, budget)
    except Exception as exc:  # noqa: BLE001 (as above)
        return Row(case, size, "ERROR", f"while timing: {type(exc).__name__}: {exc}")
    return Row(
        case,
        size,
        "ok",
        timings=timings,
        first_calls=prepared.first_calls,
        max_error=prepared.max_error,
        peers=prepared.peers,
    )
