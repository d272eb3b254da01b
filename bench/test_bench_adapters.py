"""pytest-benchmark: the rules through rules.interop (cases in ``bench/cases/adapters.py``)."""

from bench.cases import adapters
from bench.pytest_cases import benchmark_tests

test_adapters = benchmark_tests(adapters.CASES)
