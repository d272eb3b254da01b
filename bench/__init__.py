"""The benchmark suite: ``python -m bench`` (the comparison table) and pytest-benchmark files.

Layout: :mod:`bench.case` (what a case is), :mod:`bench.cases` (the cases, one file per rule
topic), :mod:`bench.harness` (prepare, check and time one row), :mod:`bench.timing`,
:mod:`bench.environment` (threads, versions, CPU), :mod:`bench.peers` (JAX, PyTorch),
:mod:`bench.table`, :mod:`bench.plot`, and ``test_bench_<topic>.py`` for pytest-benchmark.

Importing this package imports nothing heavy: thread counts must be fixed before numpy loads.
"""
