"""pytest-benchmark: the determinants' rules (cases in ``bench/cases/determinant.py``)."""

from bench.cases import determinant
from bench.pytest_cases import benchmark_tests

test_determinant = benchmark_tests(determinant.CASES)
