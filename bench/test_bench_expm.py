"""pytest-benchmark: the matrix exponential's rules (cases in ``bench/cases/expm.py``)."""

from bench.cases import expm
from bench.pytest_cases import benchmark_tests

test_expm = benchmark_tests(expm.CASES)
