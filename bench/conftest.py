"""pytest-benchmark plumbing: the options, and thread counts fixed before numpy loads.

``python -m pytest bench --benchmark-only -n 0 [--bench-threads N] [--bench-peers]``; ``-n 0``
because pytest-benchmark times nothing under the pytest-xdist workers of the project's
``addopts``. The thread variables are set in ``pytest_configure``, before the test modules (and numpy) are imported;
:func:`bench.environment.limit_threads` enforces them again once numpy is loaded. glibc's
allocation thresholds are fixed there too (:func:`bench.environment.fix_allocator`).
"""

from bench.environment import fix_allocator, pin_one_cpu, set_thread_variables


def pytest_addoption(parser):
    group = parser.getgroup("bench", "tangent-algebra benchmarks")
    group.addoption(
        "--bench-threads", type=int, default=1, help="BLAS, Numba and peer threads (default 1)"
    )
    group.addoption(
        "--bench-malloc",
        choices=("fixed", "glibc"),
        default="fixed",
        help="glibc's allocation thresholds (default fixed; see python -m bench --help)",
    )
    group.addoption(
        "--bench-peers", action="store_true", help="also time JAX and PyTorch when installed"
    )


def pytest_configure(config):
    threads = config.getoption("--bench-threads")
    set_thread_variables(threads)
    if threads == 1 and config.getoption("--bench-peers"):
        pin_one_cpu()  # XLA's pool would use every usable core (bench.peers)
    fix_allocator(config.getoption("--bench-malloc"))
