"""The tangent algebra: symbolic zeros, thunks, structural tangents, projection, structured matrices.

Import everything from here; the submodules hold one concept each.
"""

from tangents.base import AbstractTangent
from tangents.zero import AbstractZero, NoTangent, ZeroTangent
from tangents.not_implemented import NotImplementedTangent, NotImplementedTangentError
from tangents.thunk import AbstractThunk, InplaceableThunk, Thunk, unthunk
from tangents.structural import Tangent, canonicalize
from tangents.accumulation import add_inplace

__all__ = [
    "AbstractTangent",
    "AbstractThunk",
    "AbstractZero",
    "InplaceableThunk",
    "NoTangent",
    "NotImplementedTangent",
    "NotImplementedTangentError",
    "Tangent",
    "Thunk",
    "ZeroTangent",
    "add_inplace",
    "canonicalize",
    "unthunk",
]
