"""pytest-benchmark tests made from the cases: one test per case, size and timed callable.

A topic's test file is one line, ``test_<topic> = benchmark_tests(<topic>.CASES)``. Each
``(case, size)`` row is prepared once per session by :func:`bench.harness.prepare`, which makes
and checks the first call (a disagreement with the reference fails every test of the row);
``benchmark`` then times one callable of the row (``ours``, ``total``, ``numpy``, ``forward``,
``jax``, ``torch``). The first call's seconds and the agreement error go to ``extra_info``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from bench.case import Case
from bench.environment import limit_threads
from bench.harness import Prepared, prepare
from bench.peers import PEER_NAMES, load_peers

__all__ = ["TIMED", "benchmark_tests"]

TIMED = ("ours", "total", "numpy", "forward", "jax", "torch")

_prepared: dict[tuple[str, str], Prepared | BaseException] = {}
_peers: list[Any] = []


def _setup(config: pytest.Config) -> list[Any]:
    """Fix threads and load the peers once per session."""
    if not _peers:
        threads = config.getoption("--bench-threads")
        limit_threads(threads)
        peers = load_peers(threads)[0] if config.getoption("--bench-peers") else []
        _peers.append(peers)
    return _peers[0]


def _prepare(case: Case, size: Any, config: pytest.Config) -> Prepared:
    key = (case.name, size.label)
    if key not in _prepared:
        try:
            _prepared[key] = prepare(case, size, _setup(config))
        except Exception as exc:  # noqa: BLE001 (re-raised below, for every test of the row)
            _prepared[key] = exc
    result = _prepared[key]
    if isinstance(result, BaseException):
        raise result
    return result


def benchmark_tests(cases: Sequence[Case]) -> Callable[..., None]:
    """A parametrised pytest-benchmark test over ``cases``, their sizes and :data:`TIMED`."""
    rows = [
        pytest.param(case, size, id=f"{case.name}-{size.label}")
        for case in cases
        for size in case.sizes
    ]

    @pytest.mark.parametrize("timed", TIMED)
    @pytest.mark.parametrize(("case", "size"), rows)
    def test_benchmark(benchmark: Any, request: pytest.FixtureRequest, case, size, timed) -> None:
        prepared = _prepare(case, size, request.config)
        func = prepared.callables.get(timed)
        if func is None:
            peer = prepared.peers.get(timed)
            if peer is not None:
                reason = f"{peer.status} {peer.message}"
            elif timed in PEER_NAMES:
                reason = "not loaded (--bench-peers; pip install '.[peers]')"
            else:
                reason = "not timed for this kind of case"
            pytest.skip(f"{timed}: {reason}")
        benchmark.group = f"{case.name} {size.label}"
        benchmark.extra_info["first_call_seconds"] = prepared.first_calls.get(timed)
        benchmark.extra_info["max_error"] = prepared.max_error
        benchmark(func)

    return test_benchmark
