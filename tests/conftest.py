"""Shared fixtures: a seeded random generator per test."""

import numpy as np
import pytest


@pytest.fixture
def rng():
    """A fresh, seeded generator, so every test is reproducible on its own."""
    return np.random.default_rng(20261129)
