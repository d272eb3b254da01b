"""Helpers shared by the linear-algebra rules: the square check, ``X^H``, scipy's output types.

Which path of a rule runs (algebra, array-formula or kernel path) is decided by
:mod:`rules.core.dispatch`; its stack helpers are re-exported here for the rules that import
them from this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.cotangents import check_shape
from rules.core.dispatch import (
    as_stack,
    flat_batch,
    kernel_dtype,
    kernel_operands,
    kernel_ready,
    unstack,
)
from rules.core.nesting import as_array

__all__ = [
    "adjoint",
    "as_stack",
    "check_shape",
    "flat_batch",
    "kernel_dtype",
    "kernel_operands",
    "kernel_ready",
    "scipy_outputs",
    "square_matrices",
    "unstack",
]


def square_matrices(name: str, a: Any) -> np.ndarray:
    """``a`` as an ndarray of square matrices ``(..., n, n)``, else ``LinAlgError`` naming ``name``.

    The one square check of the linear-algebra rules (one message for all of them). A plain
    ndarray is returned as it is, anything else (a structured matrix, a list) through
    ``np.asarray``.
    """
    A = a if type(a) is np.ndarray else as_array(a)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise np.linalg.LinAlgError(
            f"{name}: needs square matrices (..., n, n), got an input of shape {A.shape}"
        )
    return A


def adjoint(X: Any) -> Any:
    """``X^H`` over the last two axes; no conjugation (no copy) for real ndarrays."""
    if type(X) is np.ndarray and X.dtype.kind != "c":
        return X.mT
    return X.conj().mT


def scipy_outputs(*outputs: Any, stack: bool) -> tuple[Any, ...] | list[Any]:
    """Several outputs as scipy (1.17) returns them: a tuple for one matrix, a list for a stack.

    scipy's batched wrapper collects the per-matrix results of a stack in a list; rules that do
    not call the scipy function itself for their outputs return them the same way.
    """
    return list(outputs) if stack else outputs
