"""Thread control and the environment report: CPU, library versions, BLAS, threads, Numba cache.

Thread counts are fixed so that ratios are comparable between runs and machines (DESIGN.md
section 6 measures single-threaded). Two mechanisms, because BLAS libraries read their
environment variables once, when they are loaded:

* :func:`set_thread_variables` sets ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ... and
  ``NUMBA_NUM_THREADS``; it must run before numpy is imported (``python -m bench`` calls it
  first thing).
* :func:`pin_one_cpu` (one-thread runs) restricts the process to one CPU, before any thread
  pool starts: XLA sizes its intra-op pool from the CPUs the process may use, whatever
  ``XLA_FLAGS`` say, and JAX 0.10 splits a batched LAPACK call (``eigh`` of a 1000 x (16x16)
  stack) across that pool, so without it JAX's column was two cores' time.
* :func:`limit_threads` runs after the imports: threadpoolctl (when installed, in the ``bench``
  extra) sets and reads back the thread count of every loaded BLAS/OpenMP library, and Numba's
  count is set with ``numba.set_num_threads``.

``OPENBLAS_CORETYPE`` is reported when set, never changed; so are glibc's ``MALLOC_*`` variables,
which change timings of arrays above 128 KB (see the README's "Benchmarks" section).

Nothing here imports numpy at module level.
"""

from __future__ import annotations

import importlib
import os
import platform
import sys
from pathlib import Path
from typing import Any

__all__ = [
    "THREAD_VARIABLES",
    "describe",
    "format_environment",
    "limit_threads",
    "numba_cache_state",
    "pin_one_cpu",
    "set_thread_variables",
]

THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMBA_NUM_THREADS",
)
"""Environment variables read at load time by BLAS/OpenMP libraries and Numba."""

_VERSIONED = ("numpy", "scipy", "numba", "llvmlite", "threadpoolctl", "matplotlib")


def set_thread_variables(threads: int) -> list[str]:
    """Set every variable of :data:`THREAD_VARIABLES` to ``threads``.

    Returns the modules among numpy, scipy and numba that were already imported, for which
    the variables may come too late (then :func:`limit_threads` is the only control).
    """
    late = [name for name in ("numpy", "scipy", "numba") if name in sys.modules]
    for variable in THREAD_VARIABLES:
        os.environ[variable] = str(threads)
    return late


def pin_one_cpu() -> int | None:
    """Restrict this process to the lowest CPU it may use now; return that CPU's number.

    Threads started afterwards (BLAS pools, Numba's, XLA's and PyTorch's) inherit the mask, so
    a one-thread run measures one core for every column. Returns ``None`` where the platform
    has no ``os.sched_setaffinity`` (then nothing changes).
    """
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return cpu


def limit_threads(threads: int) -> dict[str, Any]:
    """Fix BLAS/OpenMP threads (threadpoolctl, if installed) and Numba's; report what holds.

    Returns ``{"requested", "blas", "blas_verified", "numba", "numba_max", "variables"}``;
    ``blas`` lists the libraries threadpoolctl found with their thread counts after the limit.
    """
    import numba
    import numpy  # noqa: F401  (load BLAS before threadpoolctl looks for it)
    import scipy.linalg  # noqa: F401  (scipy's own BLAS)

    report: dict[str, Any] = {
        "requested": threads,
        "variables": {v: os.environ.get(v) for v in THREAD_VARIABLES},
    }
    try:
        import threadpoolctl
    except ImportError:
        report["blas"] = []
        report["blas_verified"] = False
    else:
        threadpoolctl.threadpool_limits(limits=threads)
        report["blas"] = [
            {
                "library": info.get("internal_api"),
                "version": info.get("version"),
                "threads": info.get("num_threads"),
                "architecture": info.get("architecture"),
                "file": Path(info.get("filepath", "")).name,
            }
            for info in threadpoolctl.threadpool_info()
        ]
        report["blas_verified"] = True
    numba_max = numba.config.NUMBA_NUM_THREADS
    if not numba.config.DISABLE_JIT:
        numba.set_num_threads(min(threads, numba_max))
    report["numba"] = numba.get_num_threads() if not numba.config.DISABLE_JIT else None
    report["numba_max"] = numba_max
    return report


def numba_cache_state() -> dict[str, Any]:
    """Whether the kernels' Numba cache holds compiled code: ``{"state", "index_files", "dir"}``.

    ``state`` is ``"warm"`` (index files present: first calls load from disk), ``"cold"`` (first
    calls compile) or ``"disabled"`` (``NUMBA_DISABLE_JIT=1``).
    """
    import numba

    import kernels

    if numba.config.DISABLE_JIT:
        return {"state": "disabled", "index_files": 0, "dir": None}
    cache_root = os.environ.get("NUMBA_CACHE_DIR")
    directory = Path(kernels.__file__).parent / "__pycache__"
    if cache_root:
        directory = Path(cache_root)
    count = len(list(directory.rglob("*.nbi"))) if directory.exists() else 0
    return {"state": "warm" if count else "cold", "index_files": count, "dir": str(directory)}


def _version(module: str) -> str | None:
    try:
        return str(importlib.import_module(module).__version__)
    except Exception:  # noqa: BLE001 (a broken optional package is reported as absent)
        return None


def _project() -> str:
    """Where the imported project comes from: an installed version, or a source tree."""
    from importlib import metadata

    import rules

    where = Path(rules.__file__).resolve().parent.parent
    try:
        version = metadata.version("tangent-algebra")
    except metadata.PackageNotFoundError:
        return f"source tree {where}"
    if (where / "rules" / "__init__.py").exists() and where.name == "src":
        return f"source tree {where} (version {version} is also installed)"
    return version


def _cpu_name() -> str:
    """The CPU model, with its widest vector extensions (``avx512f``, ``avx2``, ...) on Linux."""
    name, flags = platform.processor() or platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
            elif line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    isa = [f for f in ("avx512f", "avx2", "fma", "neon", "asimd") if f in flags]
    return f"{name} [{' '.join(isa)}]" if isa else name


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def describe(
    threads: dict[str, Any], peers: list[dict[str, Any]], pinned_cpu: int | None = None
) -> dict[str, Any]:
    """The environment of a run, as a JSON-ready dict.

    ``threads`` is :func:`limit_threads`'s report, ``peers`` the peers' own reports (name,
    version, threads, status), ``pinned_cpu`` what :func:`pin_one_cpu` returned, if it ran.
    """
    return {
        "cpu": _cpu_name(),
        "cores": os.cpu_count(),
        "usable_cores": _usable_cores(),
        "pinned_cpu": pinned_cpu,
        "machine": platform.machine(),
        "system": platform.platform(),
        "python": platform.python_version(),
        "project": _project(),
        "versions": {name: _version(name) for name in _VERSIONED},
        "threads": threads,
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "malloc": {k: v for k, v in os.environ.items() if k.startswith("MALLOC_")},
        "numba_cache": numba_cache_state(),
        "peers": peers,
    }


def format_environment(env: dict[str, Any]) -> str:
    """The environment as a few human-readable lines (printed above the table)."""
    versions = ", ".join(f"{k} {v}" for k, v in env["versions"].items() if v is not None)
    threads = env["threads"]
    lines = [
        (
            f"CPU: {env['cpu']} ({env['usable_cores']} of {env['cores']} cores usable), "
            f"{env['machine']}, {env['system']}"
        ),
        f"Python {env['python']}; tangent-algebra {env['project']}; {versions}",
    ]
    if threads["blas_verified"]:
        blas = "; ".join(
            f"{b['library']} {b['version']} ({b['architecture']}, {b['file']}): "
            f"{b['threads']} thread{'s' if b['threads'] != 1 else ''}"
            for b in threads["blas"]
        )
        lines.append(f"BLAS threads (threadpoolctl): {blas or 'no BLAS library found'}")
    else:
        lines.append(
            f"BLAS threads: {threads['requested']} requested through environment variables "
            "set before numpy was imported (install threadpoolctl to verify)"
        )
    if env.get("pinned_cpu") is not None:
        lines.append(
            f"CPU affinity: the process runs on CPU {env['pinned_cpu']} only (one-thread run; "
            "XLA's intra-op pool ignores XLA_FLAGS and would use every usable core)"
        )
    numba_threads = "n/a (NUMBA_DISABLE_JIT=1)" if threads["numba"] is None else threads["numba"]
    lines.append(f"Numba threads: {numba_threads} (NUMBA_NUM_THREADS={threads['numba_max']})")
    for peer in env["peers"]:
        lines.append(f"{peer['name']}: {peer['status']}")
    if env["malloc"]:
        settings = " ".join(f"{k}={v}" for k, v in sorted(env["malloc"].items()))
        lines.append(f"glibc malloc: {settings} (set outside)")
    if env["openblas_coretype"]:
        lines.append(f"OPENBLAS_CORETYPE={env['openblas_coretype']} (set outside; left as is)")
    cache = env["numba_cache"]
    if cache["state"] == "cold":
        lines.append(
            "Numba cache: cold. Kernels compile on their first call (tens of seconds in all on "
            "a fresh machine); the 'first call' column shows it, the timings do not include it."
        )
    elif cache["state"] == "warm":
        lines.append(
            f"Numba cache: warm ({cache['index_files']} index files): first calls load "
            "compiled kernels from disk."
        )
    else:
        lines.append("Numba: JIT disabled (NUMBA_DISABLE_JIT=1): kernels run as Python.")
    return "\n".join(lines)
