"""``python -m bench.default_threads``: the rules in a user's default thread environment.

``python -m bench`` fixes every thread count (one thread unless ``--threads N``). A user who sets
nothing gets numpy's and scipy's defaults instead: each of their two OpenBLAS copies (numpy
links ``scipy_openblas64_``, scipy its own ``scipy_openblas``) starts one thread per core, and
each pool's threads busy-wait for a while after every call. On a 2-core machine that other
processes keep busy, a multi-threaded BLAS call then waits for a scheduler time slice at each of
its synchronisation points, and a computation that alternates between the two libraries (a
blocked pullback: numpy's ``@`` and scipy's ``trsm``) has both pools competing for the cores.

This check runs the same steps in two child processes, one with the thread variables of
:data:`bench.environment.THREAD_VARIABLES` removed (the default environment) and one with all
of them set to 1, and prints both times and their ratio, in the same run:

* a GP-style step at n = 256: ``rrule(np.linalg.cholesky, K)`` and its pullback (the blocked
  level-3 BLAS path), then a plain ``np.linalg.cholesky(K)`` after it;
* the same step on a stack 10000 x (4x4), which runs only compiled kernels (no BLAS, no threads:
  Numba's threading layer is never started, since no kernel is ``parallel``).

A ratio well above 1 means the default environment costs that factor here; the README's
"Threads" section says what to set. Times are the best of interleaved repeats, in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

from bench.environment import THREAD_VARIABLES

__all__ = ["child_environment", "main", "measure_steps"]

SLOW_RATIO = 2.0
"""A default/one-thread ratio above this is reported as a slowdown."""


def child_environment(one_thread: bool) -> dict[str, str]:
    """This process's environment without the thread variables, or with all of them set to 1."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    if one_thread:
        env.update(dict.fromkeys(THREAD_VARIABLES, "1"))
    return env


def measure_steps(repeats: int) -> dict[str, float]:
    """Best times (ms) of the steps of the module docstring, in the current process."""
    import numpy as np

    from rules import rrule

    rng = np.random.default_rng(0)
    X = rng.standard_normal((256, 256))
    K = X @ X.T + 256 * np.eye(256)
    G = rng.standard_normal((256, 256))
    Y = rng.standard_normal((10000, 4, 4))
    S = Y @ Y.transpose(0, 2, 1) + 4 * np.eye(4)
    H = rng.standard_normal((10000, 4, 4))

    def gp_step() -> None:
        _, pullback = rrule(np.linalg.cholesky, K)
        pullback(G)

    def stack_step() -> None:
        _, pullback = rrule(np.linalg.cholesky, S)
        pullback(H)

    steps = {
        "cholesky rrule+pb, 256": gp_step,
        "np.linalg.cholesky after it, 256": lambda: np.linalg.cholesky(K),
        "cholesky rrule+pb, 10000x(4x4)": stack_step,
    }
    for step in steps.values():  # compile or load the kernels outside the timing
        step()
    best = dict.fromkeys(steps, float("inf"))
    for _ in range(repeats):
        for name, step in steps.items():
            start = time.perf_counter()
            step()
            best[name] = min(best[name], time.perf_counter() - start)
    return {name: seconds * 1e3 for name, seconds in best.items()}


def _run_child(one_thread: bool, repeats: int) -> dict[str, float]:
    command = [sys.executable, "-m", "bench.default_threads", "--child", "--repeats", str(repeats)]
    out = subprocess.run(
        command, env=child_environment(one_thread), capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """Run both children and print the comparison (``--child`` measures in this process)."""
    parser = argparse.ArgumentParser(prog="python -m bench.default_threads", description=__doc__)
    parser.add_argument("--repeats", type=int, default=15, help="interleaved repeats per step")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure_steps(args.repeats)))
        return 0
    set_here = {v: os.environ[v] for v in THREAD_VARIABLES if v in os.environ}
    print(f"cores usable: {len(os.sched_getaffinity(0))}; load average: {os.getloadavg()[0]:.1f}")
    print(f"thread variables in this shell (removed for the default child): {set_here or 'none'}")
    default = _run_child(False, args.repeats)
    single = _run_child(True, args.repeats)
    rows: list[tuple[str, Any, Any, Any]] = [("step", "default", "1 thread", "default/1")]
    slow = []
    for name in default:
        ratio = default[name] / single[name]
        rows.append((name, f"{default[name]:.3g} ms", f"{single[name]:.3g} ms", f"{ratio:.2f}x"))
        if ratio > SLOW_RATIO:
            slow.append(name)
    widths = [max(len(str(r[i])) for r in rows) for i in range(4)]
    for r in rows:
        print(
            "  ".join(
                str(c).ljust(w) if i == 0 else str(c).rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )
    if slow:
        print(
            f"\nslower by more than {SLOW_RATIO:g}x in the default environment: {', '.join(slow)}."
            "\nSet OMP_NUM_THREADS=1 (or OPENBLAS_NUM_THREADS=1) before starting Python on a "
            "shared or busy machine; see the README's 'Threads' section."
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
