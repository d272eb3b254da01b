"""pytest-benchmark: the QR factorization's rules (cases in ``bench/cases/qr.py``)."""

from bench.cases import qr
from bench.pytest_cases import benchmark_tests

test_qr = benchmark_tests(qr.CASES)
