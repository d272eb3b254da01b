"""The bench's one-thread environment: pinning to one CPU, and its line in the header."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import os, threading
from bench.environment import pin_one_cpu
before = sorted(os.sched_getaffinity(0))
cpu = pin_one_cpu()
seen = []
worker = threading.Thread(target=lambda: seen.append(sorted(os.sched_getaffinity(0))))
worker.start(); worker.join()
print(before[0], cpu, sorted(os.sched_getaffinity(0)), seen[0])
"""


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_pinning_leaves_one_cpu_for_the_process_and_the_threads_it_starts_later():
    # In a child process: pinning the test process would slow every later test.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, check=True
    ).stdout.split(maxsplit=2)
    lowest, cpu, rest = int(out[0]), int(out[1]), out[2]
    assert cpu == lowest
    assert rest.split() == [f"[{cpu}]", f"[{cpu}]"]


def test_the_header_names_the_pinned_cpu_and_says_nothing_when_not_pinned():
    from bench.environment import describe, format_environment

    threads = {"requested": 1, "blas": [], "blas_verified": False, "numba": 1, "numba_max": 2}
    pinned = format_environment(describe(threads, [], pinned_cpu=3))
    assert "runs on CPU 3 only" in pinned
    assert "CPU affinity" not in format_environment(describe(threads, []))
