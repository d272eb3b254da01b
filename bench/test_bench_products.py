"""pytest-benchmark: the matrix-product rules (cases in ``bench/cases/products.py``)."""

from bench.cases import products
from bench.pytest_cases import benchmark_tests

test_products = benchmark_tests(products.CASES)
