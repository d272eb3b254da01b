"""The suite's own parallel run: each pytest-xdist worker keeps one BLAS thread (tests/conftest.py)."""

import os

import numpy as np
import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")


def test_a_worker_runs_blas_on_one_thread_unless_told_otherwise():
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("a serial run (-n 0) keeps the user's thread settings")
    np.linalg.cholesky(np.eye(4))  # make sure numpy's BLAS is loaded
    wanted = int(os.environ.get("OPENBLAS_NUM_THREADS") or os.environ["OMP_NUM_THREADS"])
    pools = threadpoolctl.threadpool_info()
    blas = [p for p in pools if p["user_api"] == "blas"]
    assert blas, pools
    for pool in blas:
        assert pool["num_threads"] == wanted, pool
