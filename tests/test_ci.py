"""Under CI, the optional peers are installed: their tests must run there, never skip."""

import importlib.util
import os

import pytest

PEERS = ["torch", "jax", "autograd", "dask.array", "distributed"]


@pytest.mark.skipif(os.environ.get("CI") != "true", reason="only CI must have every peer")
@pytest.mark.parametrize("module", PEERS)
def test_ci_installs_every_peer(module):
    top = module.split(".")[0]
    assert importlib.util.find_spec(top) is not None, f"CI did not install {top}"
    importlib.import_module(module)
