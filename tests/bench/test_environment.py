"""The bench's one-thread environment: pinning to one CPU, and its line in the header."""

import os
import platform
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


_ALLOCATION_PROBE = """
import resource, sys
from bench.environment import fix_allocator
mode = fix_allocator(sys.argv[1])["mode"]
import numpy as np
def call():  # a whole call's worth of 1000 x (16x16) arrays: three of 2 MB, written, then freed
    arrays = [np.ones((1000, 16, 16)) for _ in range(3)]
    return sum(float(a[-1, -1, -1]) for a in arrays)
call()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    call()
print(mode, (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20)
"""


def _probe_allocation(mode, **variables):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.pop("GLIBC_TUNABLES", None)
    env.update(variables, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]))
    out = subprocess.run(
        [sys.executable, "-c", _ALLOCATION_PROBE, mode],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout.split()
    return out[0], float(out[1])


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's allocator only")
def test_fixed_thresholds_reuse_freed_memory_where_glibc_faults_it_in_again():
    # In child processes: the setting is for the whole process. Under glibc's adaptive
    # thresholds each call faults its three arrays in afresh (about 1500 pages); fixed, none.
    mode, faults = _probe_allocation("fixed")
    assert mode == "fixed"
    assert faults < 50
    mode, faults = _probe_allocation("glibc")
    assert mode == "glibc"
    assert faults > 500


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's allocator only")
def test_settings_made_outside_are_left_as_they_are():
    mode, faults = _probe_allocation("fixed", MALLOC_TRIM_THRESHOLD_="65536")
    assert mode == "outside"
    assert faults > 500  # dask's setting: freed memory goes back to the system at once


def test_the_header_says_which_allocator_the_run_had():
    from bench.environment import FIXED_MMAP_THRESHOLD, allocator_line

    fixed = {"mode": "fixed", "variables": {}, "mmap_threshold": FIXED_MMAP_THRESHOLD}
    fixed["trim_threshold"] = 2**30
    assert "mmap threshold 32 MiB, trim threshold 1024 MiB, set by the bench" in allocator_line(
        fixed
    )
    outside = {"mode": "outside", "variables": {"MALLOC_TRIM_THRESHOLD_": "65536"}}
    assert "MALLOC_TRIM_THRESHOLD_=65536 (set outside; left as is)" in allocator_line(outside)
    assert "adaptive" in allocator_line({"mode": "glibc", "variables": {}})
    assert "not glibc" in allocator_line({"mode": "unavailable", "variables": {}})


def test_an_unknown_allocator_mode_is_refused_by_name():
    from bench.environment import fix_allocator

    with pytest.raises(ValueError, match="fix_allocator: mode must be"):
        fix_allocator("jemalloc")
