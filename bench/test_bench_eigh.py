"""pytest-benchmark: the Hermitian eigendecomposition rules (cases in ``bench/cases/eigh.py``)."""

from bench.cases import eigh
from bench.pytest_cases import benchmark_tests

test_eigh = benchmark_tests(eigh.CASES)
