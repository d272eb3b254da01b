"""Numba-compiled numeric kernels for pullbacks and pushforwards of matrix operations.

Kernels take plain C-contiguous ndarrays and return ndarrays: no tangent types, no Python
objects, no imports from ``tangents`` or ``rules``. Rules normalise dtype and layout before
calling them, so each kernel compiles once per supported dtype (float64, float32, complex128).
All Numba options are set in :mod:`kernels._jit`; the crossover table of every path is
:mod:`kernels.crossovers`.
"""

__tangent_algebra__ = True
"""Marks this package as tangent-algebra's ``kernels`` (Hugging Face's ``kernels`` has the name too)."""
