"""Which OpenBLAS kernel set ("core") numpy's BLAS runs, where it can be read.

OpenBLAS built with ``DYNAMIC_ARCH`` (numpy's and scipy's wheels) picks its kernels at load
time, from the CPU or from ``OPENBLAS_CORETYPE``. Some choices of the kernels depend on the
core: on ``SkylakeX`` (the AVX-512 cores) small products go through OpenBLAS's small-matrix
``gemm``, which is fast for plain and left-transposed operands and slow for a transposed right
operand; the ``Haswell`` and ``Zen`` kernels have no such gap (see
:func:`kernels.products.adjoint_operand`).

The core is read from the OpenBLAS library bundled with numpy's wheel (``numpy.libs`` on Linux
and Windows, ``numpy/.dylibs`` on macOS), through its ``*get_corename*`` function, as
threadpoolctl reads it. numpy linked to another BLAS (MKL, Accelerate, a system OpenBLAS) gives
``None``: the callers then keep numpy's plain calls.
"""

import ctypes
import functools
from pathlib import Path

import numpy as np

__all__ = ["SMALL_GEMM_CORES", "numpy_openblas_core", "small_gemm_core"]

_CORENAME_SYMBOLS = (
    "scipy_openblas_get_corename64_",
    "scipy_openblas_get_corename",
    "openblas_get_corename64_",
    "openblas_get_corename",
)


def _bundled_openblas() -> list[Path]:
    """The OpenBLAS libraries shipped inside numpy's wheel."""
    package = Path(np.__file__).parent
    found: list[Path] = []
    for folder in (package.parent / "numpy.libs", package / ".dylibs"):
        if folder.is_dir():
            found.extend(sorted(p for p in folder.iterdir() if "openblas" in p.name.lower()))
    return found


@functools.cache
def numpy_openblas_core() -> str | None:
    """The lower-case OpenBLAS core numpy's BLAS runs (``"haswell"``, ``"skylakex"``, ...), or ``None``.

    ``None`` when numpy's wheel bundles no single OpenBLAS, or its core cannot be read. Read
    once per process (the core is fixed when OpenBLAS loads).
    """
    libraries = _bundled_openblas()
    if len(libraries) != 1:
        return None
    try:
        # numpy has loaded this file already: dlopen returns the loaded library, whose core
        # is the one numpy's matmul runs on.
        library = ctypes.CDLL(str(libraries[0]))
    except OSError:
        return None
    for symbol in _CORENAME_SYMBOLS:
        function = getattr(library, symbol, None)
        if function is None:
            continue
        function.restype = ctypes.c_char_p
        function.argtypes = []
        name = function()
        return name.decode("ascii", "replace").strip().lower() if name else None
    return None


SMALL_GEMM_CORES = frozenset({"skylakex", "cooperlake", "sapphirerapids"})
"""OpenBLAS cores with OpenBLAS's small-matrix ``gemm`` kernels (``SMALL_MATRIX_OPT``).

The AVX-512 cores; the wheels' build maps Cooper Lake and Sapphire Rapids to ``SkylakeX``.
Their small products are fast with plain and left-transposed operands and slow with a
transposed right operand (:func:`kernels.products.adjoint_operand`), and fast enough that the
register tiles of :mod:`kernels.tiled_products` pay on fewer sizes
(``kernels.crossovers.MATMUL_TILED_SMALL_GEMM_MAX_N``).
"""


@functools.cache
def small_gemm_core() -> bool:
    """Whether numpy's OpenBLAS runs one of :data:`SMALL_GEMM_CORES` (read once per process)."""
    return numpy_openblas_core() in SMALL_GEMM_CORES
