"""``python -m bench.dask_cluster``: a chunked cholesky rrule plus pullback on a local cluster.

Run from the repository root after ``python -m pip install ".[bench,dask]"``; the default is
the issue's row, ``--matrices 1e7`` 4x4 matrices (1.2 GiB) on 2 worker processes. It starts a
``dask.distributed.LocalCluster`` (``--workers`` processes of ``--threads`` threads), builds the
stack of random 4x4 SPD matrices *on the workers*, chunk by chunk (the stack never exists in
one process), and computes ``rrule(np.linalg.cholesky, A)`` and its pullback together, reduced
to two sums so that only scalars come back. Each of ``--repeat`` rounds runs, interleaved:

* ``in-memory``: on every worker thread at once, as a task, ``rrule`` plus pullback on an
  in-memory stack of ``--in-memory`` matrices made beforehand (not timed): the per-core
  baseline, under the same load as the cluster runs;
* ``generate``: the graph without the rule (making the matrices, summing them);
* ``cluster``: generation plus the rule's forward and pullback.

Reported, best of the rounds: the rule's throughput per worker core against the in-memory one
(the issue's target: at least 0.7), two ways. *Wall*: ``matrices / (cluster - generate)``, all
overheads included (scheduler, task dispatch, the sums); noisy when other processes load the
machine. *Task time*: ``matrices`` over the workers' summed compute time of every task of the
cluster run but the generation ones (dask's task stream), the rule's tasks with dask's
per-task cost inside the worker, without the scheduler's.

Peak memory per worker: before each cluster run every worker resets its kernel high-water mark
(``/proc/self/clear_refs``, Linux; elsewhere a thread samples the resident size) and reports
after it the peak above the resident size at the reset, in chunks. The warm-up (importing the
project, loading or compiling the kernels) is over by then, so its peak does not mask the run's.
The issue's bound: a few chunks, not the stack. On a 2-core machine the scheduler and this
process share the cores with the workers.

The workers' allocator: dask's nanny starts workers with ``MALLOC_TRIM_THRESHOLD_=65536``,
which also fixes glibc's mmap threshold, so every array above 128 KiB is a fresh mapping whose
pages fault in on first touch; for a rule that streams through a chunk once, that costs about
as much as the rule. ``--malloc glibc`` (the default) leaves the variable unset in the workers
(glibc's adaptive thresholds, as in a plain process); ``--malloc dask`` keeps dask's setting.
The in-memory baseline runs on the workers, so it has the same policy.
"""

from __future__ import annotations

import argparse
import importlib
import os
import threading
import time
from typing import Any

from bench.environment import limit_threads, set_thread_variables

_PEAK: dict[str, Any] = {}


def _spd_block(block_info=None, *, n: int, seed: int):
    """A block of SPD matrices ``(S + S^T) / 2 + n I`` with the entries of ``S`` in [-1/2, 1/2].

    SPD by Gershgorin's circle theorem: each off-diagonal row sum is at most ``(n - 1) / 2``,
    below the diagonal's ``n - 1/2``. Cheaper than ``X X^T`` (a stack of small products), so
    the generation tasks do not drown the rule's time.
    """
    import numpy as np

    location = block_info[None]["chunk-location"][0]
    count = block_info[None]["chunk-shape"][0]
    rng = np.random.default_rng((seed, location))
    S = rng.random((count, n, n))
    S -= 0.5
    A = S + S.transpose(0, 2, 1)
    A *= 0.5
    A += n * np.eye(n)
    return A


def _resident() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _high_water() -> int | None:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _start_peak() -> str:
    """Reset this process's peak resident size to the current one; say how it is measured."""
    _stop_sampler()
    _PEAK.clear()
    _PEAK["base"] = _resident()
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")  # reset the high-water mark to the current resident size
        if _high_water() is not None:
            _PEAK["how"] = "kernel high-water mark"
            return _PEAK["how"]
    except OSError:
        pass
    _PEAK["how"] = "resident size sampled every 2 ms"
    _PEAK["peak"] = _PEAK["base"]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.002):
            _PEAK["peak"] = max(_PEAK["peak"], _resident())

    _PEAK["stop"] = stop
    threading.Thread(target=sample, daemon=True).start()
    return _PEAK["how"]


def _stop_sampler() -> None:
    if "stop" in _PEAK:
        _PEAK["stop"].set()


def _read_peak() -> tuple[int, int]:
    """The resident size at :func:`_start_peak` and the peak since, in bytes."""
    _stop_sampler()
    peak = _PEAK.get("peak") if "stop" in _PEAK else _high_water()
    return _PEAK["base"], max(peak or 0, _resident())


def _best(repeat: int, run) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def _in_memory_time(count: int, n: int, repeat: int) -> float:
    """The best time of ``rrule(np.linalg.cholesky, A)`` plus its pullback on ``count`` matrices."""
    import numpy as np

    from rules import rrule

    A = _spd_block({None: {"chunk-location": (0,), "chunk-shape": (count,)}}, n=n, seed=1)

    def run() -> None:
        L, pullback = rrule(np.linalg.cholesky, A)
        pullback(np.ones_like(L))

    run()  # compile or load the kernels first
    return _best(repeat, run)


def _graph_overhead(count: int, chunk: int, n: int, repeat: int) -> tuple[float, float]:
    """Best times, in this process on one thread, of the rule on one stack: whole, and chunked.

    The same ``count`` matrices as a numpy array and as a dask array of ``chunk``-matrix chunks
    (views of it), each run reduced to the sums of ``L`` and the cotangent, the dask one on the
    synchronous scheduler, interleaved. Their ratio is the cost of the chunked graph itself
    (the per-block rule calls, the tasks), without a cluster's scheduling and transfers.
    """
    import dask
    import dask.array as da
    import numpy as np

    from rules import rrule

    A = _spd_block({None: {"chunk-location": (0,), "chunk-shape": (count,)}}, n=n, seed=1)
    A_lazy = da.from_array(A, chunks=(chunk, n, n))

    def whole() -> None:
        L, pullback = rrule(np.linalg.cholesky, A)
        _, A_bar = pullback(np.ones_like(L))
        L.sum(), A_bar.sum()

    def chunked() -> None:
        L, pullback = rrule(np.linalg.cholesky, A_lazy)
        _, A_bar = pullback(da.ones_like(L))
        dask.compute(L.sum(), A_bar.sum(), scheduler="synchronous")

    whole(), chunked()  # compile or load the kernels first
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        times[0].append(_best(1, whole))
        times[1].append(_best(1, chunked))
    return min(times[0]), min(times[1])


def _task_seconds(task_stream: list[dict[str, Any]], skip: str | None = None) -> float:
    """The summed compute time of the tasks whose key does not start with ``skip``."""
    total = 0.0
    for record in task_stream:
        key = record["key"]
        if skip and str(key[0] if isinstance(key, tuple) else key).startswith(skip):
            continue
        total += sum(
            s["stop"] - s["start"] for s in record["startstops"] if s["action"] == "compute"
        )
    return total


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.dask_cluster", description=__doc__)
    parser.add_argument("--matrices", type=float, default=1e7, help="stack size (default 1e7)")
    parser.add_argument("--chunk", type=int, default=250_000, help="matrices per chunk")
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--threads", type=int, default=1, help="threads per worker")
    parser.add_argument("--in-memory", type=int, default=1_000_000, help="in-memory stack size")
    parser.add_argument(
        "--malloc",
        choices=("glibc", "dask"),
        default="glibc",
        help="the workers' allocator policy: glibc's adaptive thresholds (default), or dask's "
        "MALLOC_TRIM_THRESHOLD_=65536, which returns freed memory to the system at once",
    )
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print its report."""
    args = _parse(argv)
    set_thread_variables(1)

    import dask
    import dask.array as da
    import distributed
    import numpy as np

    import rules
    from rules import rrule

    # The functions the workers run, by reference: run as ``__main__``, cloudpickle would send
    # them by value, each call with its own copy of the module's globals (the peak's state).
    here = importlib.import_module("bench.dask_cluster")
    limit_threads(1)
    n, total, chunk = 4, int(args.matrices), args.chunk
    t_whole, t_chunked = _graph_overhead(args.in_memory, chunk, n, args.repeat)
    chunks = ((chunk,) * (total // chunk) + ((total % chunk,) if total % chunk else ()), (n,), (n,))
    if args.malloc == "glibc":
        # dask's nanny sets MALLOC_TRIM_THRESHOLD_ in each worker; None leaves it unset.
        dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None})
    cluster = distributed.LocalCluster(
        n_workers=args.workers,
        threads_per_worker=args.threads,
        processes=True,
        dashboard_address=":0",
    )
    with cluster, distributed.Client(cluster) as client:
        client.run(set_thread_variables, 1)
        client.run(limit_threads, 1)
        workers = sorted(client.scheduler_info()["workers"])
        trim = set(client.run(os.environ.get, "MALLOC_TRIM_THRESHOLD_").values())

        def graph(with_rule: bool):
            A = da.map_blocks(here._spd_block, n=n, seed=2, chunks=chunks, dtype=np.float64)
            if not with_rule:
                return (A.sum(),)
            L, pullback = rrule(np.linalg.cholesky, A)
            _, A_bar = pullback(da.ones_like(L))
            return L.sum(), A_bar.sum()

        # Warm up on a small stack: workers import the project and compile or load the kernels.
        small = da.map_blocks(
            here._spd_block, n=n, seed=3, chunks=((1000,), (n,), (n,)), dtype=float
        )
        L_small, pullback_small = rrule(np.linalg.cholesky, small)
        dask.compute(L_small.sum(), pullback_small(da.ones_like(L_small))[1].sum())
        t_mem, t_mem_chunk, t_gen, t_all, t_task, t_build, busy = [], [], [], [], [], [], []
        peaks: dict[str, tuple[int, int]] = {}
        for _ in range(args.repeat):
            for size, times in ((args.in_memory, t_mem), (chunk, t_mem_chunk)):
                futures = [  # one per worker thread, all at once: every core busy
                    client.submit(here._in_memory_time, size, n, 1, workers=[w], pure=False)
                    for w in workers
                    for _ in range(args.threads)
                ]
                times.append(sum(client.gather(futures)) / len(futures))
            t_gen.append(_best(1, lambda: dask.compute(*graph(False))))
            start = time.perf_counter()
            outputs = graph(True)
            t_build.append(time.perf_counter() - start)
            how = set(client.run(here._start_peak).values())
            with distributed.get_task_stream() as stream:
                start = time.perf_counter()
                dask.compute(*outputs)
                t_all.append(time.perf_counter() - start)
            for address, (base, peak) in client.run(here._read_peak).items():
                old = peaks.get(address)
                if old is None or peak - base > old[1] - old[0]:
                    peaks[address] = (base, peak)
            t_task.append(_task_seconds(stream.data, "_spd_block"))
            busy.append(_task_seconds(stream.data) / (t_all[-1] * args.workers * args.threads))
    best = {
        "mem": min(t_mem),
        "mem_chunk": min(t_mem_chunk),
        "gen": min(t_gen),
        "all": min(t_all),
        "task": min(t_task),
        "build": min(t_build),
        "busy": max(busy),
        "whole": t_whole,
        "chunked": t_chunked,
    }
    print(f"rules {rules.__file__}, dask {dask.__version__}, pid {os.getpid()}")
    print(f"workers' MALLOC_TRIM_THRESHOLD_: {', '.join(map(str, sorted(trim, key=str)))}")
    _report(args, chunk, best, peaks, sorted(how))


def _report(
    args: argparse.Namespace,
    chunk: int,
    best: dict[str, float],
    peaks: dict[str, tuple[int, int]],
    how: list[str],
) -> None:
    """Print the throughputs against the in-memory ones, and each worker's peak memory."""
    n, total, cores = 4, int(args.matrices), args.workers * args.threads
    rate_mem = args.in_memory / best["mem"]
    rate_mem_chunk = chunk / best["mem_chunk"]
    rate_wall = total / max(best["all"] - best["gen"], 1e-9) / cores
    rate_task = total / max(best["task"], 1e-9)
    chunk_mib = chunk * n * n * 8 / 2**20
    stack_mib = total * n * n * 8 / 2**20
    print(
        f"stack: {total} x ({n}x{n}) float64 = {stack_mib:.0f} MiB, chunks of {chunk} "
        f"({chunk_mib:.1f} MiB each); best of {args.repeat} interleaved rounds"
    )
    print(
        f"in-memory rrule + pullback, on each worker: {args.in_memory} matrices "
        f"{rate_mem:.3g} matrices/s per core; one chunk's {chunk} {rate_mem_chunk:.3g}/s"
    )
    print(
        f"in this process, one thread, {args.in_memory} matrices: in memory "
        f"{args.in_memory / best['whole']:.3g}/s, chunked on dask's synchronous scheduler "
        f"{args.in_memory / best['chunked']:.3g}/s = {best['whole'] / best['chunked']:.2f}x"
    )
    print(
        f"cluster ({args.workers} workers x {args.threads} threads): graph built in "
        f"{best['build'] * 1e3:.0f} ms; generate {best['gen']:.2f} s, "
        f"generate + rule {best['all']:.2f} s, the worker threads busy {best['busy']:.0%} of it"
    )
    for label, rate in (("wall", rate_wall), (f"task time, {best['task']:.2f} core-s", rate_task)):
        print(
            f"rule throughput per core ({label}): {rate:.3g} matrices/s = "
            f"{rate / rate_mem:.2f}x in-memory ({rate / rate_mem_chunk:.2f}x at one chunk's size)"
        )
    for address, (base, peak) in sorted(peaks.items()):
        used = (peak - base) / 2**20
        print(
            f"worker {address}: peak {peak / 2**20:.0f} MiB, {used:.0f} MiB above its "
            f"warmed-up resident size = {used / chunk_mib:.1f} chunks ({', '.join(how)})"
        )


if __name__ == "__main__":
    main()
