"""Helpers for pullbacks that need their cotangent as a plain ndarray.

The algebra path of a rule uses only the tangent algebra, so any tangent type flows through it.
Rules that need elementwise access (indexing, elementwise products, reductions over axes) call
:func:`as_array_cotangent`: ndarrays, numbers, the library's structured matrices and sparse
arrays become ndarrays; any other type raises ``TypeError`` naming the operation, instead of
being densified silently.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp

from rules.core.dispatch import KERNEL_DTYPES  # re-exported: the dtypes of the kernel path
from rules.core.nesting import is_traced
from tangents import (
    AbstractThunk,
    AbstractZero,
    NotImplementedTangent,
    StructuredMatrix,
    Tangent,
    unthunk,
)

__all__ = [
    "KERNEL_DTYPES",
    "as_array_cotangent",
    "check_shape",
    "conj",
    "is_user_tangent",
    "missing_operation",
]


_LIBRARY_TANGENTS = (
    np.ndarray,
    numbers.Number,
    np.generic,
    StructuredMatrix,
    AbstractZero,
    AbstractThunk,
    NotImplementedTangent,
    Tangent,
)


def as_array_cotangent(dx: Any, operation: str) -> Any:
    """``dx`` (unthunked) as an ndarray or number, for a rule that needs elementwise access.

    Parameters
    ----------
    dx : any
        The cotangent (or tangent) the rule received; not an ``AbstractZero`` (the registry
        handles those before a rule runs).
    operation : str
        What the rule needs, for the error message, e.g. ``"np.sum's pullback (elementwise
        access)"``.

    Raises
    ------
    TypeError
        For tangent types that are not arrays, naming ``operation`` and the type.
    """
    dx = unthunk(dx)
    if isinstance(dx, np.ndarray):
        if dx.dtype == object:
            raise TypeError(f"{operation} got an object array; cotangents must be numeric")
        return dx
    if isinstance(dx, numbers.Number | np.generic) or is_traced(dx):
        return dx  # a traced value acts as an ndarray (rules.core.nesting)
    if isinstance(dx, StructuredMatrix):
        return dx.dense()
    if sp.issparse(dx):
        return dx.toarray()
    raise TypeError(
        f"{operation} needs an ndarray cotangent, got a {type(dx).__name__}; a tangent type "
        "must be an ndarray (or convert itself) to flow through this rule"
    )


def check_shape(function: str, what: str, value: Any, shape: tuple[int, ...]) -> None:
    """Raise ``ValueError`` naming ``function`` when a (co)tangent's shape differs from ``shape``.

    Values without a ``shape`` (numbers, zeros) are not checked here.
    """
    got = getattr(value, "shape", None)
    if got is not None and tuple(got) != tuple(shape):
        raise ValueError(f"{function}: {what} has shape {tuple(got)}, expected {tuple(shape)}")


def is_user_tangent(dx: Any) -> bool:
    """Whether ``dx`` is a user's own tangent type, one :func:`as_array_cotangent` would refuse.

    That is anything but an ndarray, a number, a structured or sparse matrix, or one of the
    library's symbolic tangents (zeros, thunks, ``NotImplementedTangent``, ``Tangent``); subclasses
    of ``AbstractTangent`` defined outside the library count as user types. Rules whose ndarray path
    uses numpy functions but whose math is also a tangent operation (``np.transpose`` of the last
    two axes is ``.mT``) take such a type down the algebra path instead of refusing it.
    """
    return not isinstance(dx, _LIBRARY_TANGENTS) and not sp.issparse(dx)


def conj(x: Any) -> Any:
    """``conj(x)``, with no copy for real ndarrays; Python numbers stay Python numbers.

    A Python ``int``/``float`` is returned as it is (numpy's weak scalar types, so a float32
    operand stays float32 in the product it meets), a ``complex`` as a ``complex``. Other
    tangent types need a ``conj`` method.
    """
    if type(x) is np.ndarray:
        return x.conj() if x.dtype.kind == "c" else x
    if isinstance(x, int | float):
        return x
    if isinstance(x, complex):
        return x.conjugate()
    return x.conj() if hasattr(x, "conj") else np.conj(x)


_PROTOCOL_ATTRIBUTES = {
    "mT": "t.mT",
    "T": "t.T",
    "conj": "t.conj()",
    "real": "t.real",
    "imag": "t.imag",
    "shape": "t.shape",
}


def missing_operation(error: AttributeError, rule: str) -> TypeError | None:
    """A ``TypeError`` naming ``rule`` and the protocol operation a user's tangent type lacks.

    ``error`` is the ``AttributeError`` a rule met; when it is a user's tangent type (see
    :func:`is_user_tangent`) missing one of the attributes of the tangent protocol
    (docs/tangent-types.md: ``mT``, ``T``, ``conj``, ``real``, ``imag``, ``shape``), the message
    says which rule needed which operation. Any other ``AttributeError`` gives ``None`` (it is a
    bug to be reported as it is).
    """
    obj = getattr(error, "obj", None)
    name = getattr(error, "name", None)
    if name not in _PROTOCOL_ATTRIBUTES or obj is None or not is_user_tangent(obj):
        return None
    return TypeError(
        f"{rule} applies the tangent operation `{_PROTOCOL_ATTRIBUTES[name]}` to a "
        f"{type(obj).__name__}, which does not define `{name}`; a tangent type needs the "
        "operations listed in docs/tangent-types.md to flow through this rule"
    )
