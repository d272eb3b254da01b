"""``python -m bench.dask_cluster``: a chunked cholesky rrule plus pullback on a local cluster.

Run from the repository root after ``python -m pip install ".[bench,dask]"``. It starts a
``dask.distributed.LocalCluster`` (worker processes with one thread each), builds a stack of
``--matrices`` random 4x4 SPD matrices *on the workers* (the stack never exists in one process),
and computes ``rrule(np.linalg.cholesky, A)`` and its pullback together, reduced to two sums so
that only scalars come back. Three timings, each the best of ``--repeat``:

* ``generate``: the same graph without the rule (making the matrices, summing them);
* ``cluster``: generation plus the rule's forward and pullback;
* ``in-memory``: ``rrule`` plus pullback on one in-memory stack of ``--in-memory`` matrices in
  this process, one thread, the matrices made beforehand (not timed).

Reported: the rule's throughput on the cluster, ``matrices / (cluster - generate)``, per worker
core against the in-memory throughput (the issue's target: at least 0.7), and the peak resident
memory of each worker (``ru_maxrss``) against the chunk size: it must be a few chunks, not the
stack. On a 2-core machine the scheduler and this process share the cores with the workers.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

from bench.environment import limit_threads, set_thread_variables


def _spd_block(block_info=None, *, n: int, seed: int):
    import numpy as np

    location = block_info[None]["chunk-location"][0]
    count = block_info[None]["chunk-shape"][0]
    rng = np.random.default_rng((seed, location))
    X = rng.standard_normal((count, n, n))
    return X @ X.transpose(0, 2, 1) + n * np.eye(n)


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


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


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print its report."""
    parser = argparse.ArgumentParser(prog="python -m bench.dask_cluster", description=__doc__)
    parser.add_argument("--matrices", type=float, default=1e7, help="stack size (default 1e7)")
    parser.add_argument("--chunk", type=int, default=250_000, help="matrices per chunk")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (1 thread)")
    parser.add_argument("--in-memory", type=int, default=1_000_000, help="in-memory stack size")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    set_thread_variables(1)

    import dask
    import dask.array as da
    import distributed
    import numpy as np

    import rules
    from rules import rrule

    limit_threads(1)
    n, total, chunk = 4, int(args.matrices), args.chunk
    t_mem = _in_memory_time(args.in_memory, n, args.repeat)
    rate_mem = args.in_memory / t_mem

    chunks = ((chunk,) * (total // chunk) + ((total % chunk,) if total % chunk else ()), (n,), (n,))
    cluster = distributed.LocalCluster(
        n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with cluster, distributed.Client(cluster) as client:
        client.run(set_thread_variables, 1)

        def graph(with_rule: bool):
            A = da.map_blocks(_spd_block, n=n, seed=2, chunks=chunks, dtype=np.float64)
            if not with_rule:
                return (A.sum(),)
            L, pullback = rrule(np.linalg.cholesky, A)
            _, A_bar = pullback(da.ones_like(L))
            return L.sum(), A_bar.sum()

        # Warm up on a small stack: workers import the project and compile or load the kernels;
        # their peak memory after it is the baseline the big run's peak is measured against.
        small = da.map_blocks(_spd_block, n=n, seed=3, chunks=((1000,), (n,), (n,)), dtype=float)
        L_small, pullback_small = rrule(np.linalg.cholesky, small)
        dask.compute(L_small.sum(), pullback_small(da.ones_like(L_small))[1].sum())
        baseline = client.run(_peak_rss_mib)
        t_gen = _best(args.repeat, lambda: dask.compute(*graph(False)))
        t_all = _best(args.repeat, lambda: dask.compute(*graph(True)))
        peaks = client.run(_peak_rss_mib)
    rate = total / max(t_all - t_gen, 1e-9)
    chunk_mib = chunk * n * n * 8 / 2**20
    print(f"rules {rules.__file__}, dask {dask.__version__}, pid {os.getpid()}")
    print(f"stack: {total} x ({n}x{n}) float64, chunks of {chunk} ({chunk_mib:.1f} MiB each)")
    print(
        f"in-memory rrule + pullback, {args.in_memory} matrices: {t_mem * 1e3:.1f} ms, "
        f"{rate_mem:.3g} matrices/s (1 core)"
    )
    print(
        f"cluster ({args.workers} workers x 1 thread): generate {t_gen:.2f} s, "
        f"generate + rule {t_all:.2f} s"
    )
    print(
        f"rule throughput on the cluster: {rate:.3g} matrices/s = "
        f"{rate / args.workers / rate_mem:.2f}x in-memory per core"
    )
    stack_mib = total * n * n * 8 / 2**20
    for address, peak in sorted(peaks.items()):
        used = peak - baseline[address]
        print(
            f"worker {address}: peak {peak:.0f} MiB, {used:.0f} MiB above its warmed-up "
            f"baseline = {used / chunk_mib:.1f} chunks (the stack is {stack_mib:.0f} MiB)"
        )


if __name__ == "__main__":
    main()
