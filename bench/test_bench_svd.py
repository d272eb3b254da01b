"""pytest-benchmark: the singular value decomposition rules (cases in ``bench/cases/svd.py``)."""

from bench.cases import svd
from bench.pytest_cases import benchmark_tests

test_svd = benchmark_tests(svd.CASES)
