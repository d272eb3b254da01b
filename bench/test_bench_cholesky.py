"""pytest-benchmark: the Cholesky rules (cases in ``bench/cases/cholesky.py``)."""

from bench.cases import cholesky
from bench.pytest_cases import benchmark_tests

test_cholesky = benchmark_tests(cholesky.CASES)
