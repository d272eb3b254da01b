"""Fixtures for the kernel tests: the three supported dtypes and random inputs of one dtype.

Every distinct dtype (and layout) is a separate Numba compilation, so the tests use exactly
float64, float32 and complex128, C-contiguous, and pass flags as Python bools and ints.
"""

import importlib.util
from pathlib import Path

import numba
import numpy as np
import pytest

HERE = Path(__file__).parent


def pytest_collection_modifyitems(config, items):
    """Skip ``jit_only`` kernel tests under ``NUMBA_DISABLE_JIT=1`` (Python semantics apply)."""
    if not numba.config.DISABLE_JIT:
        return
    skip = pytest.mark.skip(reason="relies on error_model='numpy' of compiled kernels")
    for item in items:
        if HERE in Path(item.path).parents and "jit_only" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(params=["float64", "float32", "complex128"])
def dtype(request):
    """Each supported kernel dtype in turn."""
    return np.dtype(request.param)


@pytest.fixture
def rand(rng, dtype):
    """``rand(*shape)``: standard normal entries of ``dtype`` (complex parts both random)."""

    def rand(*shape):
        x = rng.standard_normal(shape)
        if dtype.kind == "c":
            x = x + 1j * rng.standard_normal(shape)
        return x.astype(dtype)

    return rand


@pytest.fixture
def tol(dtype):
    """``assert_allclose`` tolerances for a kernel of ``dtype`` against a float64 oracle."""
    if dtype == np.float32:
        return {"rtol": 1e-4, "atol": 1e-5}
    return {"rtol": 1e-10, "atol": 1e-12}


@pytest.fixture
def inner():
    """The real inner product ``Re sum(conj(a) * b)`` of the dot-product (adjoint) tests."""

    def inner(a, b):
        return float(np.real(np.vdot(np.asarray(a, complex), np.asarray(b, complex))))

    return inner


@pytest.fixture
def families(rng, dtype):
    """``families(n, b, spd=False)``: dict of name -> stack (b, n, n) of ``dtype`` for accuracy tests.

    ``random`` (standard normal), ``graded`` (rows and columns scaled over ``1e-8``; ``1e-3`` in
    float32), ``ill`` (singular values from 1 to ``1e-12``; ``1e-6`` in float32) and ``rank``
    (rank ``n - 1``). ``spd=True`` gives the Hermitian positive (semi)definite counterparts:
    ``X X^H + n I``, ``D S D``, ``Q diag(s) Q^H`` and a Gram matrix of rank ``n - 1``.
    """
    eps_exp = 3 if dtype == np.float32 else 8
    cond_exp = 6 if dtype == np.float32 else 12

    def rand(*shape):
        x = rng.standard_normal(shape)
        if dtype.kind == "c":
            x = x + 1j * rng.standard_normal(shape)
        return x

    def orthonormal(b, n):
        return np.linalg.qr(rand(b, n, n))[0]

    def families(n, b, spd=False):
        X = rand(b, n, n)
        grade = np.logspace(0, -eps_exp, n)
        s = np.logspace(0, -cond_exp, n)
        Q, V = orthonormal(b, n), orthonormal(b, n)
        low = rand(b, n, max(n - 1, 1))[..., : n - 1]
        if spd:
            S = X @ X.conj().mT + n * np.eye(n)
            out = {
                "random": S,
                "graded": grade[:, None] * S * grade[None, :],
                "ill": (Q * s[None, None, :]) @ Q.conj().mT,
                "rank": low @ low.conj().mT,
            }
        else:
            out = {
                "random": X,
                "graded": grade[:, None] * X * grade[::-1][None, :],
                "ill": (Q * s[None, None, :]) @ V.conj().mT,
                "rank": low @ rand(b, max(n - 1, 1), n)[..., : n - 1, :],
            }
        return {k: np.ascontiguousarray(v, dtype=dtype) for k, v in out.items()}

    return families


@pytest.fixture(scope="session")
def acc():
    """The accuracy helpers of the forward-factorization tests (``_accuracy.py`` beside this file).

    Loaded by path: under ``--import-mode=importlib`` test directories are not on ``sys.path``.
    """
    spec = importlib.util.spec_from_file_location("_kernel_test_accuracy", HERE / "_accuracy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
