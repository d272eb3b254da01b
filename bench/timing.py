"""Timing: first calls, adaptive loop counts and interleaved rounds.

Shared machines are noisy, so the callables of one row (ours, the numpy formula, the forward,
the peers) are timed in *interleaved rounds*: each round times every callable once, so a burst
of load from another process slows all of them alike and their ratios stay meaningful. The
order changes from round to round: what ran just before changes the allocator's state (freed
large arrays are unmapped or kept) and the caches, so a callable that always followed the same
one would carry that one's trace in every round. Each round takes its own order, a uniformly
random shuffle from a fresh generator per :func:`measure` call, so that two callables doing the
same work (the formula and the formula timed again, ``--noise``) are interchangeable. A fixed
seed would hand every row the same orders, and with them the same bias. A rotation of one
order keeps each callable's predecessor in all but one position: in a run of ``--noise``, the
formula timed right after the whole call (inv at 256: an LAPACK inversion and two products)
ran 1-3% slower, in all five rounds, than the same formula timed right after it. Within a
round a callable runs ``loops`` times in a row (chosen as :meth:`timeit.Timer.autorange`
does), with the garbage collector off, as :mod:`timeit` does. The best (min) and median
per-call times over the rounds are kept; tables show the min.

Compilation never enters these timings: the harness makes the first call of each callable
itself, times it alone (:func:`first_call`), and only then calls :func:`measure`, whose
calibration runs are the warm-up.
"""

from __future__ import annotations

import gc
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Timing", "first_call", "measure"]

MIN_ROUNDS = 3
"""Every callable is timed in at least this many rounds, however long one call takes."""

MAX_ROUNDS = 30
"""Rounds stop here even if the budget is not spent (very fast callables)."""

ROUNDS_PER_BUDGET = 8
"""A round of one callable aims at ``budget / ROUNDS_PER_BUDGET`` seconds."""


@dataclass(frozen=True)
class Timing:
    """Per-call times of one callable over ``rounds`` rounds of ``loops`` calls each (seconds).

    ``samples`` holds the per-call time of each round, in round order: round ``r`` of every
    callable of one :func:`measure` call ran in the same interleaved round.
    """

    best: float
    median: float
    loops: int
    rounds: int
    samples: tuple[float, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "best": self.best,
            "median": self.median,
            "loops": self.loops,
            "rounds": self.rounds,
            "samples": list(self.samples),
        }


def first_call(func: Callable[[], Any]) -> tuple[float, Any]:
    """Call ``func`` once; return ``(seconds, result)``. Made before any other call of it."""
    start = time.perf_counter()
    result = func()
    return time.perf_counter() - start, result


def _batch(func: Callable[[], Any], loops: int) -> float:
    """Seconds for ``loops`` calls in a row, garbage collector off (as timeit does)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(loops):
            func()
        return time.perf_counter() - start
    finally:
        if enabled:
            gc.enable()


def _calibrate(func: Callable[[], Any], target: float) -> int:
    """The loop count 1, 2, 5, 10, 20, 50, ... whose batch first takes at least ``target`` s."""
    base = 1
    while True:
        for factor in (1, 2, 5):
            loops = base * factor
            if _batch(func, loops) >= target:
                return loops
        base *= 10


def measure(funcs: dict[str, Callable[[], Any]], budget: float) -> dict[str, Timing]:
    """Time every callable in ``funcs`` for about ``budget`` seconds each, rounds interleaved.

    The calibration (one batch per loop count tried) doubles as the warm-up. Then rounds run
    until each callable has had ``budget`` seconds and at least :data:`MIN_ROUNDS` rounds, or
    :data:`MAX_ROUNDS` rounds.
    """
    target = budget / ROUNDS_PER_BUDGET
    loops = {name: _calibrate(func, target) for name, func in funcs.items()}
    samples: dict[str, list[float]] = {name: [] for name in funcs}
    spent = 0.0
    rounds = 0
    names = list(funcs)
    order = random.Random()  # seeded from the system's randomness (module notes)
    while rounds < MIN_ROUNDS or (spent < budget * len(funcs) and rounds < MAX_ROUNDS):
        order.shuffle(names)  # so that no callable always follows the same one
        for name in names:
            seconds = _batch(funcs[name], loops[name])
            spent += seconds
            samples[name].append(seconds / loops[name])
        rounds += 1
    return {
        name: Timing(
            best=min(values),
            median=statistics.median(values),
            loops=loops[name],
            rounds=rounds,
            samples=tuple(values),
        )
        for name, values in samples.items()
    }
