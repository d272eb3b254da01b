"""The forward passes of ``eigvalsh`` and ``svdvals`` for one plain real matrix: LAPACK directly.

numpy's ``eigh`` and ``svd`` call LAPACK ``syevd`` and ``gesdd``; their Python wrappers (type
resolution, error state, result wrapping) cost more than the factorization of a 4x4 matrix
(6 and 8.5 us against 2.6 and 3.5 us for scipy's LAPACK wrappers, bench ``--sizes 4``). The
values-only rules keep the vectors to themselves, so they may take them from LAPACK directly;
``eigh`` and ``svd``, whose vectors the user sees, keep numpy's.

Each helper returns ``None`` when it does not apply (not :func:`_stacks.plain_real_matrix`,
empty, an unknown ``UPLO``) or when LAPACK reports a failure or NaN: the caller then takes the
general path, which raises numpy's errors by name.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rules.linalg._stacks import plain_real_matrix
from rules.linalg._systems import lapack_functions

__all__ = ["eigh_values_forward", "svd_values_forward"]


def _finite(values: np.ndarray) -> bool:
    return not any(map(math.isnan, values.tolist()))


def eigh_values_forward(a: Any, UPLO: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """``(w, V)`` of one plain real symmetric matrix by ``syevd``, ``V`` C-ordered; or ``None``."""
    if not plain_real_matrix(a) or not 0 < a.shape[0] == a.shape[1] or UPLO not in ("L", "U"):
        return None
    (syevd,) = lapack_functions(("syevd",), a.dtype)
    w, V, info = syevd(a, compute_v=1, lower=1 if UPLO == "L" else 0)
    if info != 0 or not _finite(w):
        return None
    return w, np.ascontiguousarray(V)


def svd_values_forward(a: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Thin ``(U, s, Vh)`` of one plain real matrix by ``gesdd``; or ``None``."""
    if not plain_real_matrix(a) or a.size == 0:
        return None
    (gesdd,) = lapack_functions(("gesdd",), a.dtype)
    U, s, Vh, info = gesdd(a, compute_uv=1, full_matrices=0)
    if info != 0 or not _finite(s):
        return None
    return U, s, Vh
