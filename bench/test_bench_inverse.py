"""pytest-benchmark: the matrix inverse's rules (cases in ``bench/cases/inverse.py``)."""

from bench.cases import inverse
from bench.pytest_cases import benchmark_tests

test_inverse = benchmark_tests(inverse.CASES)
