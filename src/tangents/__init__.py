"""The tangent algebra: symbolic zeros, thunks, structural tangents, projection, structured matrices.

Import everything from here; the submodules hold one concept each.
"""

from tangents import arithmetic  # noqa: F401  (installs the operators of every tangent type)
from tangents.accumulation import add_inplace
from tangents.base import AbstractTangent
from tangents.not_implemented import NotImplementedTangent, NotImplementedTangentError
from tangents.projection import Projector, ProjectTo, tangent_dtype
from tangents.structural import Tangent, canonicalize, construct
from tangents.structured import (
    Diagonal,
    Hermitian,
    LowerTriangular,
    StructuredMatrix,
    Symmetric,
    UpperTriangular,
)
from tangents.thunk import AbstractThunk, InplaceableThunk, Thunk, unthunk
from tangents.zero import AbstractZero, NoTangent, ZeroTangent

__tangent_algebra__ = True
"""Marks this package as tangent-algebra's ``tangents`` (checked by ``rules`` when it imports it)."""

__all__ = [
    "AbstractTangent",
    "AbstractThunk",
    "AbstractZero",
    "Diagonal",
    "Hermitian",
    "InplaceableThunk",
    "LowerTriangular",
    "NoTangent",
    "NotImplementedTangent",
    "NotImplementedTangentError",
    "ProjectTo",
    "Projector",
    "StructuredMatrix",
    "Symmetric",
    "Tangent",
    "Thunk",
    "UpperTriangular",
    "ZeroTangent",
    "add_inplace",
    "canonicalize",
    "construct",
    "tangent_dtype",
    "unthunk",
]
