"""``python -m bench``: time this project's matrix rules against plain numpy (and peers).

Run from the repository root after ``python -m pip install ".[bench]"``. The default quick set
takes about two and a half minutes on 2 cores, about eight the first time on a fresh machine,
where the kernels compile (the README's "Quick start" gives the measurement); ``--full`` runs every
size. See ``--help`` and the README's "Benchmarks" section.

Thread counts are fixed before numpy is imported, so this module imports nothing heavy at the
top: numpy, numba, the project and the peers load inside :func:`main`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

QUICK_BUDGET = 0.25
"""Seconds of timing per callable and row in the quick set (calibration not counted)."""

FULL_BUDGET = 1.0
"""Seconds of timing per callable and row with ``--full``."""

QUICK_TIMING_TARGET = 100.0
"""The quick set's budgets shrink so that all its timing stays near this many seconds."""

MIN_BUDGET = 0.05

_PROJECT = {"rules", "tangents", "kernels"}


def build_parser() -> argparse.ArgumentParser:
    """The command line; see ``python -m bench --help``."""
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Time this project's rrule/frule kernels against the plain numpy/scipy "
        "formulas (and JAX/PyTorch with --peers). Default: the quick set of sizes.",
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="every size (n = 4, 16, 256, 1024 "
        "and the stacks 10000x4, 1000x16); default: 4, 10000x4, 1000x16, 256",
    )
    parser.add_argument(
        "--ops",
        help="comma-separated operations or cases, e.g. "
        "'cholesky' or 'matmul.pullback' (default: all; --list shows them)",
    )
    parser.add_argument(
        "--sizes", help="comma-separated size labels, e.g. '4,10000x4' (overrides --full)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        metavar="N",
        help="BLAS, Numba and peer threads (default 1, as DESIGN.md section 6; with 1 the "
        "process is pinned to one CPU, so that no library's pool uses a second core)",
    )
    parser.add_argument(
        "--malloc",
        choices=("fixed", "glibc"),
        default="fixed",
        help="glibc's allocation thresholds: 'fixed' (default) keeps freed memory for reuse, so "
        "no row pays page faults that depend on the row before; 'glibc' keeps the adaptive "
        "defaults of a plain process. MALLOC_* variables set outside are left as they are",
    )
    parser.add_argument(
        "--peers",
        action="store_true",
        help="add JAX and PyTorch columns when installed (pip install '.[peers]')",
    )
    parser.add_argument(
        "--budget",
        type=float,
        metavar="SECONDS",
        help=f"timing seconds per callable and row (default {QUICK_BUDGET}, "
        f"{FULL_BUDGET} with --full)",
    )
    parser.add_argument(
        "--noise",
        action="store_true",
        help="time the numpy formula twice in every row (an A/A column): the spread a tie "
        "shows, and the rows whose speed-up is below it",
    )
    parser.add_argument("--json", metavar="PATH", help="write machine-readable results")
    parser.add_argument(
        "--plot",
        metavar="PATH",
        help="write a PNG chart of the speed-ups (needs matplotlib: pip install '.[plot]')",
    )
    parser.add_argument("--list", action="store_true", help="list operations and sizes, then exit")
    return parser


def _split(text: str | None) -> list[str] | None:
    return None if text is None else [part.strip() for part in text.split(",") if part.strip()]


def _budget(args: argparse.Namespace, timed_callables: int) -> float:
    """The per-callable budget: as given, or the default, scaled down to keep the quick set short."""
    if args.budget is not None:
        return float(args.budget)
    if args.full or args.sizes:
        return FULL_BUDGET if args.full else QUICK_BUDGET
    return max(MIN_BUDGET, min(QUICK_BUDGET, QUICK_TIMING_TARGET / max(timed_callables, 1)))


def _set_name(args: argparse.Namespace) -> str:
    if args.sizes:
        return f"sizes {args.sizes}"
    return "every size" if args.full else "quick set; --full for every size"


def _write_json(
    path: str,
    command: list[str],
    settings: dict[str, Any],
    environment: dict[str, Any],
    rows: list[Any],
    wall: float,
) -> None:
    """Write the run as JSON: settings, environment, legend, one object per row, wall time."""
    from bench.table import LEGEND

    document = {
        "schema": "tangent-algebra-bench/1",
        "command": ["python", "-m", "bench", *command],
        "settings": settings,
        "environment": environment,
        "legend": LEGEND,
        "rows": [row.as_dict() for row in rows],
        "wall_time_seconds": wall,
    }
    Path(path).write_text(json.dumps(document, indent=2, default=str) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the environment and the table. Exit 1 if a row failed."""
    started = time.perf_counter()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    if args.budget is not None and args.budget <= 0:
        parser.error("--budget must be positive")

    from bench.environment import fix_allocator, pin_one_cpu, set_thread_variables

    set_thread_variables(args.threads)  # before numpy (and BLAS) load
    pinned_cpu = pin_one_cpu() if args.threads == 1 else None  # before any thread pool starts
    allocator = fix_allocator(args.malloc)  # before the first large array

    if args.plot:
        from bench.plot import check_matplotlib

        problem = check_matplotlib()
        if problem:
            parser.error(problem)
    try:
        from bench import harness
    except ModuleNotFoundError as error:
        if error.name in _PROJECT:
            print(
                f"python -m bench: cannot import '{error.name}'. Install the project first "
                "(python -m pip install '.[bench]') or, in a checkout, set PYTHONPATH=src.",
                file=sys.stderr,
            )
            return 2
        raise

    from bench.case import SIZES
    from bench.cases import operation_names, select

    if args.list:
        print("operations:", ", ".join(operation_names()))
        print("sizes:", ", ".join(size.label for size in SIZES))
        return 0
    try:
        rows_to_run = select(_split(args.ops), _split(args.sizes), full=args.full)
    except ValueError as error:
        parser.error(str(error))
    if not rows_to_run:
        parser.error("no case runs at the chosen sizes")

    from bench.environment import describe, format_environment, limit_threads
    from bench.peers import load_peers
    from bench.table import LEGEND, format_table

    threads = limit_threads(args.threads)
    peers, peer_reports = load_peers(args.threads) if args.peers else ([], [])
    environment = describe(threads, peer_reports, pinned_cpu, allocator)
    peer_names = [peer.name for peer in peers]
    timed = sum(
        (4 if case.kind == "pullback" else 3) + int(args.noise) + len(peers)
        for case, _ in rows_to_run
    )
    budget = _budget(args, timed)

    print(format_environment(environment))
    if args.peers and not peers:
        print("No peer is installed: the table has no JAX or PyTorch columns.")
    print(
        f"Running {len(rows_to_run)} rows ({_set_name(args)}), "
        f"float64, {args.threads} thread{'s' if args.threads > 1 else ''}, "
        f"{budget:.2g} s of timing per callable and row.\n",
        flush=True,
    )

    from bench.progress import Progress

    progress = Progress(len(rows_to_run))
    rows = []
    for case, size in rows_to_run:
        progress.step(f"{case.name} {size.label}")
        rows.append(harness.run_case(case, size, budget=budget, peers=peers, noise=args.noise))
    progress.close()

    wall = time.perf_counter() - started
    print(format_table(rows, peer_names))
    print()
    print(LEGEND)
    print(f"\nWall time: {wall:.0f} s.")

    if args.json:
        settings = {
            "full": args.full,
            "ops": _split(args.ops),
            "sizes": sorted({size.label for _, size in rows_to_run}),
            "threads": args.threads,
            "malloc": args.malloc,
            "budget_seconds": budget,
            "dtype": "float64",
            "peers": peer_names,
            "noise": args.noise,
        }
        command = sys.argv[1:] if argv is None else argv
        _write_json(args.json, command, settings, environment, rows, wall)
        print(f"Results written to {args.json}.")
    if args.plot:
        from bench.plot import plot_speedups

        plot_speedups(rows, args.plot, peer_names)
        print(f"Chart written to {args.plot}.")
    return 1 if any(row.status != "ok" for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
