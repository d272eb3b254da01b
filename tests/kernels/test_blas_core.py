"""``kernels._blas_core``: the OpenBLAS core numpy runs, read as threadpoolctl reads it."""

import numpy as np
import pytest

from kernels._blas_core import numpy_openblas_core


def test_the_core_is_the_one_threadpoolctl_reports_for_numpys_openblas():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    numpy_dir = np.__file__.rsplit("numpy", 1)[0]
    pools = [
        info
        for info in threadpoolctl.threadpool_info()
        if info["internal_api"] == "openblas" and info["filepath"].startswith(numpy_dir + "numpy")
    ]
    core = numpy_openblas_core()
    if len(pools) != 1:
        assert core is None
        return
    assert core == pools[0]["architecture"].lower()


def test_no_bundled_openblas_gives_none(monkeypatch):
    from kernels import _blas_core

    monkeypatch.setattr(_blas_core, "_bundled_openblas", list)
    _blas_core.numpy_openblas_core.cache_clear()
    try:
        assert _blas_core.numpy_openblas_core() is None
    finally:
        _blas_core.numpy_openblas_core.cache_clear()
