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
from tangents import NoTangent

__all__ = [
    "PLAIN_REAL",
    "adjoint",
    "as_stack",
    "check_shape",
    "compiled_pullback",
    "flat_batch",
    "kernel_dtype",
    "kernel_operands",
    "kernel_ready",
    "plain_pullback",
    "plain_real_matrix",
    "scipy_outputs",
    "square_matrices",
    "unstack",
]


PLAIN_REAL = frozenset((np.dtype(np.float64), np.dtype(np.float32)))
"""The dtypes of the rules' fast paths for one plain real matrix (:func:`plain_real_matrix`)."""


def plain_real_matrix(a: Any) -> bool:
    """Whether ``a`` is one plain 2-D ndarray of float64 or float32.

    The gate of the rules' fast paths for one small matrix, where the general paths' dtype,
    stack and cotangent plumbing costs more than the LAPACK or BLAS work: traced values,
    subclasses, structured matrices, stacks and other dtypes take the general paths.
    """
    return type(a) is np.ndarray and a.ndim == 2 and a.dtype in PLAIN_REAL


def plain_real_square(a: Any) -> bool:
    """Whether ``a`` is one plain non-empty square matrix (:func:`plain_real_matrix`)."""
    return plain_real_matrix(a) and a.shape[0] == a.shape[1] and a.shape[0] > 0


def plain_pullback(
    general: Any, shape: tuple[int, ...], dtype: np.dtype[Any], fast: Any, *operands: Any
) -> Any:
    """A pullback taking ``fast(*operands, y_bar)`` for a plain cotangent, else ``general``.

    Plain: a C-ordered ndarray of ``shape`` and ``dtype`` (nothing to convert, cast or check).
    ``general`` is the rule's own pullback, whose name the result carries.
    """
    no_tangent = NoTangent()

    def pullback(y_bar: Any) -> tuple[Any, Any]:
        if (
            type(y_bar) is np.ndarray
            and y_bar.dtype is dtype
            and y_bar.shape == shape
            and y_bar.flags.carray
        ):
            return no_tangent, fast(*operands, y_bar)
        return general(y_bar)

    pullback.__qualname__ = general.__qualname__
    return pullback


def compiled_pullback(
    general: Any,
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    kernel: Any,
    out_shape: tuple[int, ...],
    out_dtype: np.dtype[Any],
    *operands: Any,
) -> Any:
    """:func:`plain_pullback` for a compiled ``kernel(*operands, y_bar, out)`` writing into ``out``.

    For a plain cotangent the pullback allocates ``out`` (``out_shape``, ``out_dtype``) and
    makes one compiled call: no Python wrapper between the closure and the kernel, which is most
    of a single small matrix's pullback time. Kernels that write into an output the caller
    allocates are also the ones Numba's disk cache keeps safely (``kernels.spectral_checked``).
    """
    no_tangent = NoTangent()

    def pullback(y_bar: Any) -> tuple[Any, Any]:
        if (
            type(y_bar) is np.ndarray
            and y_bar.dtype is dtype
            and y_bar.shape == shape
            and y_bar.flags.carray
        ):
            out = np.empty(out_shape, out_dtype)
            kernel(*operands, y_bar, out)
            return no_tangent, out
        return general(y_bar)

    pullback.__qualname__ = general.__qualname__
    return pullback


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
