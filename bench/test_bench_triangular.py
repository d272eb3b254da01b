"""pytest-benchmark: the triangular solve's rules (cases in ``bench/cases/triangular.py``)."""

from bench.cases import triangular
from bench.pytest_cases import benchmark_tests

test_triangular = benchmark_tests(triangular.CASES)
