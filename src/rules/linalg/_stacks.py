"""Shared plumbing for the kernel path of linear-algebra rules.

A rule's *generic path* uses only the tangent algebra; its *kernel path* runs when every operand
is a plain ndarray of a dtype the kernels are compiled for. These helpers decide that, and
normalise operands the way kernels expect them: one dtype, C-contiguous, stacks flattened to
``(b, m, n)``, so that each kernel compiles once per dtype (DESIGN.md section 2).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rules.core.cotangents import KERNEL_DTYPES, check_shape
from tangents import unthunk

__all__ = [
    "adjoint",
    "as_stack",
    "check_shape",
    "flat_batch",
    "kernel_dtype",
    "kernel_operands",
    "kernel_ready",
    "square_matrices",
    "unstack",
]

_FLOAT32, _FLOAT64, _COMPLEX128 = (
    np.dtype(np.float32),
    np.dtype(np.float64),
    np.dtype(np.complex128),
)


def kernel_dtype(*dtypes: Any) -> np.dtype[Any] | None:
    """The kernel dtype for operands of these dtypes, or ``None`` when no kernel applies.

    float32 only when every operand is float32 (so float32 stays float32); float64 for real
    operands otherwise; complex128 when one is complex. float16 and complex64 have no kernels.
    """
    result = _FLOAT32
    for d in dtypes:
        if d == _COMPLEX128:
            result = _COMPLEX128
        elif d == _FLOAT64:
            if result is _FLOAT32:
                result = _FLOAT64
        elif d != _FLOAT32:
            return None
    return result


def kernel_operands(*xs: Any, dtype: Any = None) -> tuple[np.ndarray, ...] | None:
    """The operands as C-contiguous arrays of one kernel dtype, or ``None`` for the generic path.

    Thunks are evaluated. Anything that is not a plain ndarray (a user's tangent type, a
    structured matrix, a zero) sends the rule down its generic path. ``dtype`` forces the
    kernel dtype (e.g. the primal's, so that a float64 cotangent of a float32 input is cast);
    a forced dtype that has no kernels (complex64, say) also gives ``None``. A complex operand
    cast to a real ``dtype`` keeps its real part (the cotangent of a real primal) instead of
    raising numpy's ComplexWarning. Read-only arrays (``np.broadcast_to`` views, say) are
    copied: Numba compiles a kernel separately for them.
    """
    values = tuple(x if type(x) is np.ndarray else unthunk(x) for x in xs)
    for v in values:
        if type(v) is not np.ndarray:
            return None
    target = kernel_dtype(*(v.dtype for v in values)) if dtype is None else np.dtype(dtype)
    if target is None or target not in (_FLOAT32, _FLOAT64, _COMPLEX128):
        return None
    return tuple(
        v
        if v.dtype == target and v.flags.c_contiguous and v.flags.writeable
        else np.array(v.real if target.kind != "c" else v, dtype=target, order="C")
        for v in values
    )


def as_stack(x: np.ndarray) -> np.ndarray:
    """``(..., m, n)`` as a C-contiguous ``(b, m, n)`` stack (a view when already contiguous)."""
    return flat_batch(np.ascontiguousarray(x), 2)


def flat_batch(x: np.ndarray, core: int) -> np.ndarray:
    """``x`` with its batch axes (all but the last ``core``) flattened into one: ``(b, *core)``.

    ``b`` is the product of the batch axes, not ``-1``: with a zero-size core (a ``(3, 0, 0)``
    stack) numpy cannot infer it.
    """
    shape = x.shape[x.ndim - core :]
    return x.reshape(math.prod(x.shape[: x.ndim - core]), *shape)


def square_matrices(name: str, a: Any) -> np.ndarray:
    """``a`` as an ndarray of square matrices ``(..., n, n)``, else ``LinAlgError`` naming ``name``.

    The one square check of the linear-algebra rules (one message for all of them). A plain
    ndarray is returned as it is, anything else (a structured matrix, a list) through
    ``np.asarray``.
    """
    A = a if type(a) is np.ndarray else np.asarray(a)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise np.linalg.LinAlgError(
            f"{name}: needs square matrices (..., n, n), got an input of shape {A.shape}"
        )
    return A


def unstack(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A ``(b, m, n)`` kernel result back in the batch shape ``shape[:-2]``."""
    return x.reshape(*shape[:-2], *x.shape[-2:])


def adjoint(X: Any) -> Any:
    """``X^H`` over the last two axes; no conjugation (no copy) for real ndarrays."""
    if type(X) is np.ndarray and X.dtype.kind != "c":
        return X.mT
    return X.conj().mT


def kernel_ready(*arrays: Any) -> bool:
    """Whether the arrays can go to a kernel as they are: writable ndarrays, one dtype, C order.

    The hot paths check this before anything else, so a small contiguous input pays no copies.
    """
    first = arrays[0]
    if type(first) is not np.ndarray or first.dtype not in KERNEL_DTYPES:
        return False
    dtype = first.dtype
    return all(
        type(a) is np.ndarray
        and a.dtype == dtype
        and a.flags.c_contiguous
        and a.flags.writeable  # Numba compiles read-only arrays as another type
        for a in arrays
    )


def scipy_outputs(*outputs: Any, stack: bool) -> tuple[Any, ...] | list[Any]:
    """Several outputs as scipy (1.17) returns them: a tuple for one matrix, a list for a stack.

    scipy's batched wrapper collects the per-matrix results of a stack in a list; rules that do
    not call the scipy function itself for their outputs return them the same way.
    """
    return list(outputs) if stack else outputs
