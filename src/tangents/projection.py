"""``ProjectTo``: map any cotangent onto the tangent space of a primal.

``ProjectTo(x)`` looks at the primal ``x`` once and returns a projector that stores only what it
needs (dtype, shape, structure, a sparsity pattern), never ``x``'s values; ``project(dx)`` then
returns a cotangent of the right dtype, shape and structure. Rules build the projector in the
forward pass and apply it in the pullback, so every rule returns the right type without special
cases.

The table, one registration per primal kind (``ProjectTo.register`` adds your own):

=============================================  ================================================
primal                                         projected cotangent
=============================================  ================================================
Python ``float``/``int``/``complex``            Python ``float`` (``int`` too) / ``complex``
numpy scalar                                   numpy scalar of the primal's float/complex type
ndarray of float16/32/64, complex64/128        ndarray of that dtype and shape
ndarray or scalar of integers                  float64
``bool``, bool arrays, ``str``, zeros          ``NoTangent()``
tuple, namedtuple, dict, dataclass, object     structural ``Tangent``, one projector per field
``Diagonal``                                   ``Diagonal`` (the diagonal of ``dx``)
``Symmetric`` / ``Hermitian``                  same type holding ``(dx + dx^T)/2`` / ``(dx + dx^H)/2``
``UpperTriangular`` / ``LowerTriangular``      same type holding the triangle of ``dx``
scipy.sparse CSR/CSC/COO (array or matrix)     same format and class, exactly the primal's pattern
anything else                                  ``dx`` unchanged (identity)
=============================================  ================================================

For every projector: ``ZeroTangent()``, ``NoTangent()`` and ``NotImplementedTangent`` pass
through unchanged; a ``Thunk`` stays lazy with the projection fused in; a complex cotangent for a
real primal becomes its real part and a real one for a complex primal becomes complex; shapes
must match except that trailing size-1 axes may be added or dropped and a 0-d array and a scalar
are interchangeable (any other mismatch is a ``ValueError`` naming both shapes); when the dtype
and shape already fit, ``project(dx) is dx``. A structured or sparse cotangent for a dense
primal is made dense. A cotangent of a type the projector does not know (a user's own tangent
type) is returned unchanged after a shape check, never converted to an ndarray.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp

from tangents.projectors import (
    ArrayProjector,
    DiagonalProjector,
    IdentityProjector,
    NoTangentProjector,
    Projector,
    ScalarProjector,
    SparseProjector,
    StructuralProjector,
    SymmetricProjector,
    TriangularProjector,
)
from tangents.structural import has_fields, primal_components
from tangents.structured import (
    Diagonal,
    LowerTriangular,
    StructuredMatrix,
    Symmetric,
    UpperTriangular,
)
from tangents.zero import AbstractZero

__all__ = ["ProjectTo", "Projector", "tangent_dtype"]


def tangent_dtype(dtype: Any) -> np.dtype[Any] | None:
    """The dtype of a cotangent for a primal of ``dtype``; ``None`` when there is no tangent space.

    Floating and complex dtypes are their own tangent dtype; integers get float64 (an integer
    array is treated as a real number, as in ChainRulesCore); bools, strings and objects get none.
    """
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.inexact):
        return dtype
    if np.issubdtype(dtype, np.integer):
        return np.dtype(np.float64)
    return None


def _structural(primal_type: type, components: tuple[Any, ...] | dict[Any, Any]) -> Projector:
    if isinstance(components, tuple):
        elements: tuple[Any, ...] | dict[Any, Any] = tuple(ProjectTo(c) for c in components)
        parts = list(elements)
    else:
        elements = {k: ProjectTo(c) for k, c in components.items()}
        parts = list(elements.values())
    if parts and all(isinstance(p, NoTangentProjector) for p in parts):
        return NoTangentProjector()
    return StructuralProjector(primal_type, elements)


# --- the dispatch table --------------------------------------------------------------------------


_INEXACT = {np.dtype(t): np.dtype(t) for t in "efdgFDG"}


def ProjectTo(x: Any) -> Callable[[Any], Any]:
    """Return a projector onto the tangent space of the primal ``x``; call it on a cotangent.

    See the module docstring for the table of primal kinds. ``ProjectTo.register(T)`` adds a
    projector for a type of your own: decorate a function that takes the primal and returns a
    callable (ideally a :class:`Projector` subclass, which handles zeros and thunks for you).
    It works like ``functools.singledispatch``: the most specific registered class wins.

    Examples
    --------
    >>> import numpy as np
    >>> project = ProjectTo(np.zeros(3, dtype=np.float32))
    >>> project(np.ones(3) + 1j).dtype
    dtype('float32')
    """
    if type(x) is np.ndarray:  # the hot case: the table's own ndarray entry, no MRO dispatch
        return _TABLE[np.ndarray](x)
    return _projector_for(x)


@functools.singledispatch
def _projector_for(x: Any) -> Callable[[Any], Any]:
    """The registered projector factory for ``type(x)``; the fallback for unregistered types."""
    if isinstance(x, types.FunctionType | types.BuiltinFunctionType | types.MethodType | type):
        return IdentityProjector()
    if isinstance(x, types.ModuleType) or (callable(x) and not has_fields(x)):
        return IdentityProjector()
    if dataclasses.is_dataclass(x) or has_fields(x):
        return _structural(type(x), primal_components(x))
    return IdentityProjector()


# --- numbers ---


@_projector_for.register(bool)
@_projector_for.register(np.generic)  # non-numeric numpy scalars: str_, bytes_, datetime64, void
@_projector_for.register(np.bool_)
@_projector_for.register(str)
@_projector_for.register(bytes)
@_projector_for.register(type(None))
@_projector_for.register(AbstractZero)
def _project_nothing(x: Any) -> Projector:
    return NoTangentProjector()


@_projector_for.register(int)
@_projector_for.register(float)
def _project_python_real(x: Any) -> Projector:
    return ScalarProjector(np.dtype(np.float64), float)


@_projector_for.register(complex)
def _project_python_complex(x: complex) -> Projector:
    return ScalarProjector(np.dtype(np.complex128), complex)


@_projector_for.register(np.number)
def _project_numpy_scalar(x: np.number[Any]) -> Projector:
    dtype = tangent_dtype(x.dtype)
    assert dtype is not None
    return ScalarProjector(dtype, dtype.type)


# --- ndarray ---


@_projector_for.register(np.ndarray)
def _project_ndarray(x: np.ndarray) -> Projector:
    dtype = _INEXACT.get(x.dtype)
    if dtype is None:
        dtype = tangent_dtype(x.dtype)
    if dtype is None:
        return NoTangentProjector()
    return ArrayProjector(dtype, x.shape)


ProjectTo.register = _projector_for.register  # type: ignore[attr-defined]
_TABLE = _projector_for.registry
"""The live table of projector factories, by exact type (a read-only view that registering updates)."""


# --- composites ---


@_projector_for.register(tuple)
def _project_tuple(x: tuple[Any, ...]) -> Projector:
    return _structural(type(x), primal_components(x))


@_projector_for.register(Mapping)
def _project_mapping(x: Mapping[Any, Any]) -> Projector:
    return _structural(type(x), dict(x))


# --- structured matrices ---


def _structured_dtype(x: StructuredMatrix) -> np.dtype[Any] | None:
    return tangent_dtype(x.dtype)


@_projector_for.register(Diagonal)
def _project_diagonal(x: Diagonal) -> Projector:
    dtype = _structured_dtype(x)
    return NoTangentProjector() if dtype is None else DiagonalProjector(dtype, x.shape)


@_projector_for.register(Symmetric)
def _project_symmetric(x: Symmetric) -> Projector:
    dtype = _structured_dtype(x)
    if dtype is None:
        return NoTangentProjector()
    return SymmetricProjector(type(x), dtype, x.shape, x.uplo)


@_projector_for.register(UpperTriangular)
@_projector_for.register(LowerTriangular)
def _project_triangular(x: UpperTriangular | LowerTriangular) -> Projector:
    dtype = _structured_dtype(x)
    return NoTangentProjector() if dtype is None else TriangularProjector(type(x), dtype, x.shape)


# --- scipy.sparse ---

for _sparse_type in (
    sp.csr_array,
    sp.csr_matrix,
    sp.csc_array,
    sp.csc_matrix,
    sp.coo_array,
    sp.coo_matrix,
):

    @_projector_for.register(_sparse_type)
    def _project_sparse(x: Any) -> Projector:
        dtype = tangent_dtype(x.dtype)
        return NoTangentProjector() if dtype is None else SparseProjector(x, dtype)
