"""When a rule's forward pass takes a batched compiled factorization instead of numpy's loop.

numpy and scipy factor a stack ``(..., m, n)`` with one LAPACK call per matrix; for small
matrices that loop is most of the user's call. The spectral and QR rules then compute their
primal outputs with ``kernels.eigh_forward``, ``kernels.svd_forward`` or ``kernels.qr_forward``
(one compiled call for the whole stack, numpy's output conventions; see those modules for the
eigenvector and singular-vector gauge they fix). Plain ``np.linalg`` calls outside a rule are
untouched. Each kernel module holds its measured crossover, by dtype kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rules.core.cotangents import KERNEL_DTYPES
from rules.linalg._stacks import as_stack

__all__ = ["small_stack"]


def small_stack(a: Any, crossover: Mapping[str, int]) -> np.ndarray | None:
    """``a`` as a C-contiguous ``(b, m, n)`` stack when a batched forward kernel applies, else ``None``.

    It applies to plain ndarrays with at least one batch axis, a kernel dtype (float32,
    float64, complex128), no empty axis, and ``max(m, n) <= crossover[dtype.kind]``.
    """
    if type(a) is not np.ndarray or a.ndim < 3 or a.dtype not in KERNEL_DTYPES or a.size == 0:
        return None
    if max(a.shape[-2:]) > crossover[a.dtype.kind]:
        return None
    return as_stack(a)
