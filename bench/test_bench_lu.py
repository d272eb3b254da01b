"""pytest-benchmark: the LU factorization's rules (cases in ``bench/cases/lu.py``)."""

from bench.cases import lu
from bench.pytest_cases import benchmark_tests

test_lu = benchmark_tests(lu.CASES)
