"""pytest-benchmark: the linear solve's rules (cases in ``bench/cases/solve.py``)."""

from bench.cases import solve
from bench.pytest_cases import benchmark_tests

test_solve = benchmark_tests(solve.CASES)
