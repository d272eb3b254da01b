"""Shared test setup: one BLAS thread per pytest-xdist worker, and a seeded generator per test.

The suite runs on every core through pytest-xdist (``-n auto`` in ``pyproject.toml``), one worker
process per core. Each worker's numpy and scipy would otherwise start an OpenBLAS pool as wide as
the machine, and the pools of all workers would then fight over the cores (the oversubscription
the README's thread section measures). The variables are set here, before numpy is imported, and
only where the user has not set them; a serial run (``-n 0``) keeps the user's environment.
"""

import os

if os.environ.get("PYTEST_XDIST_WORKER"):
    for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_name, "1")

import numpy as np  # after the thread variables, which numpy reads on import
import pytest


@pytest.fixture
def rng():
    """A fresh, seeded generator, so every test is reproducible on its own."""
    return np.random.default_rng(20261129)
