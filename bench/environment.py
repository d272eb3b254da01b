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

The allocator is fixed too, where it is glibc's (:func:`fix_allocator`): glibc's adaptive
thresholds return freed memory above 128 KB to the system and fault it in again on the next
call, so a row's time depended on what ran before it (a 1000 x (16x16) matmul pullback took
1.5 ms or 0.65 ms in the same process, this project and the numpy formula alike).

``OPENBLAS_CORETYPE`` is reported when set, never changed; so are glibc's ``MALLOC_*`` variables
and ``GLIBC_TUNABLES``, which then take the allocator's place.

Nothing here imports numpy at module level.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import platform
import sys
from pathlib import Path
from typing import Any

__all__ = [
    "FIXED_MMAP_THRESHOLD",
    "FIXED_TRIM_THRESHOLD",
    "THREAD_VARIABLES",
    "allocator_line",
    "describe",
    "fix_allocator",
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


FIXED_MMAP_THRESHOLD = 32 * 2**20
"""Bytes from which glibc serves an allocation by ``mmap``: the largest ``mallopt`` accepts."""

FIXED_TRIM_THRESHOLD = 2**30
"""Free bytes at the top of glibc's heap above which ``free`` gives memory back to the system."""

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's <malloc.h>


def _allocator_set_outside() -> dict[str, str]:
    """The glibc allocator settings of the environment: ``MALLOC_*``, and malloc tunables."""
    found = {k: v for k, v in os.environ.items() if k.startswith("MALLOC_")}
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    if "glibc.malloc." in tunables:
        found["GLIBC_TUNABLES"] = tunables
    return found


def _allocator_as_found() -> dict[str, Any]:
    """The allocator before :func:`fix_allocator`: glibc's defaults, set outside, or not glibc."""
    variables = _allocator_set_outside()
    if platform.libc_ver()[0] != "glibc":  # musl's mallopt does nothing, macOS has none
        return {"mode": "unavailable", "variables": variables}
    return {"mode": "outside" if variables else "glibc", "variables": variables}


def fix_allocator(mode: str = "fixed") -> dict[str, Any]:
    """Fix glibc's allocation thresholds for this process (``mode="fixed"``); report the allocator.

    With glibc's defaults an array above 128 KB comes from ``mmap`` until a free raises the
    threshold, and ``free`` returns memory at the top of the heap once more than twice that is
    free. Either way the next call's arrays are faulted in afresh, page by page, at a cost that
    depends on the sizes freed before (the row, or the one before it). Fixed thresholds
    (:data:`FIXED_MMAP_THRESHOLD`, :data:`FIXED_TRIM_THRESHOLD`) keep freed memory for reuse,
    the same for every column. ``mode="glibc"`` leaves glibc's adaptive thresholds, as in a
    plain process. Settings made outside (:func:`_allocator_set_outside`) are never overridden.

    Returns ``{"mode", "variables"}`` plus the thresholds when fixed; ``mode`` is what holds:
    ``"fixed"``, ``"glibc"``, ``"outside"`` or ``"unavailable"`` (not glibc, or ``mallopt``
    refused).
    """
    if mode not in ("fixed", "glibc"):
        raise ValueError(f"fix_allocator: mode must be 'fixed' or 'glibc', got {mode!r}")
    report = _allocator_as_found()
    if report["mode"] != "glibc" or mode == "glibc":
        return report
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        report["mode"] = "unavailable"
        return report
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    if mallopt(_M_MMAP_THRESHOLD, FIXED_MMAP_THRESHOLD) != 1:
        report["mode"] = "unavailable"
        return report
    if mallopt(_M_TRIM_THRESHOLD, FIXED_TRIM_THRESHOLD) != 1:
        report["mode"] = "unavailable"
        return report
    report.update(mode="fixed", mmap_threshold=FIXED_MMAP_THRESHOLD)
    report["trim_threshold"] = FIXED_TRIM_THRESHOLD
    return report


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


def allocator_line(allocator: dict[str, Any]) -> str:
    """The header's line on the allocator (:func:`fix_allocator`'s report)."""
    mode = allocator["mode"]
    if mode == "fixed":
        return (
            f"Allocator: glibc, mmap threshold {allocator['mmap_threshold'] >> 20} MiB, trim "
            f"threshold {allocator['trim_threshold'] >> 20} MiB, set by the bench: freed memory "
            "is reused, not faulted in again at a cost that depends on the row before "
            "(--malloc glibc keeps glibc's adaptive thresholds)"
        )
    if mode == "outside":
        settings = " ".join(f"{k}={v}" for k, v in sorted(allocator["variables"].items()))
        return f"Allocator: glibc with {settings} (set outside; left as is)"
    if mode == "glibc":
        return (
            "Allocator: glibc's adaptive thresholds (--malloc glibc): rows with arrays above "
            "128 KB may pay page faults that depend on the row before"
        )
    return "Allocator: the platform's, as it is (not glibc, or mallopt refused the thresholds)"


def describe(
    threads: dict[str, Any],
    peers: list[dict[str, Any]],
    pinned_cpu: int | None = None,
    allocator: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The environment of a run, as a JSON-ready dict.

    ``threads`` is :func:`limit_threads`'s report, ``peers`` the peers' own reports (name,
    version, threads, status), ``pinned_cpu`` what :func:`pin_one_cpu` returned, if it ran, and
    ``allocator`` :func:`fix_allocator`'s report (when ``None``: the settings made outside).
    """
    if allocator is None:
        allocator = _allocator_as_found()
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
        "malloc": allocator,
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
    lines.append(allocator_line(env["malloc"]))
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
