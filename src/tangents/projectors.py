"""The projector classes behind :func:`tangents.ProjectTo`, one per kind of primal.

Each stores only what projecting needs (dtype, shape, structure, a sparsity pattern), never the
primal's values. :class:`Projector` handles the cases every projector shares (zeros,
NotImplementedTangent, thunks); subclasses implement :meth:`Projector.project`.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp

from tangents.not_implemented import NotImplementedTangent
from tangents.structural import Tangent, field_names, primal_components
from tangents.structured import (
    Diagonal,
    Hermitian,
    LowerTriangular,
    StructuredMatrix,
    Symmetric,
)
from tangents.thunk import AbstractThunk, Thunk, unthunk
from tangents.zero import AbstractZero, NoTangent, ZeroTangent

# --- shared cases ---------------------------------------------------------------------------


class Projector:
    """A projector built by :func:`ProjectTo`; call it on a cotangent to project it.

    Subclasses implement :meth:`project` for plain (non-symbolic, unthunked) cotangents; the
    shared cases (zeros, NotImplementedTangent, thunks) are handled here.
    """

    __slots__ = ()

    def __call__(self, dx: Any) -> Any:
        """Project ``dx``: zeros and NotImplementedTangent pass, thunks stay lazy."""
        if isinstance(dx, AbstractZero | NotImplementedTangent):
            return dx
        if isinstance(dx, AbstractThunk):
            return Thunk(lambda: self(unthunk(dx)))
        return self.project(dx)

    def project(self, dx: Any) -> Any:
        """Project a cotangent that is neither a zero nor a thunk."""
        raise NotImplementedError


class IdentityProjector(Projector):
    """Projector for primal types with no registration: returns the cotangent unchanged."""

    __slots__ = ()

    def project(self, dx: Any) -> Any:
        return dx

    def __repr__(self) -> str:
        return "ProjectTo(<identity>)"


class NoTangentProjector(Projector):
    """Projector for primals without a tangent space (bools, strings, indices): ``NoTangent()``."""

    __slots__ = ()

    def __call__(self, dx: Any) -> Any:
        return dx if isinstance(dx, AbstractZero) else NoTangent()

    def project(self, dx: Any) -> Any:
        return NoTangent()

    def __repr__(self) -> str:
        return "ProjectTo(<NoTangent>)"


def _shape_error(what: str, shape: tuple[int, ...], dx_shape: tuple[int, ...]) -> ValueError:
    return ValueError(
        f"a cotangent of shape {dx_shape} does not fit the primal {what} of shape {shape}"
    )


def _trailing_ones_stripped(shape: tuple[int, ...]) -> tuple[int, ...]:
    end = len(shape)
    while end and shape[end - 1] == 1:
        end -= 1
    return shape[:end]


def _fits(shape: tuple[int, ...], dx_shape: tuple[int, ...]) -> bool:
    """Equal shapes, or shapes that differ only by trailing size-1 axes."""
    return dx_shape == shape or _trailing_ones_stripped(dx_shape) == _trailing_ones_stripped(shape)


def _cast(dx: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """``dx`` as ``dtype``: real part for a real target, promoted for a complex one; no copy if it fits."""
    if dx.dtype == dtype:
        return dx
    if np.iscomplexobj(dx) and not np.issubdtype(dtype, np.complexfloating):
        dx = dx.real
    return dx.astype(dtype)


def _densify(dx: Any) -> Any:
    """A dense ndarray for structured and sparse cotangents, ``dx`` itself otherwise."""
    if isinstance(dx, StructuredMatrix):
        return dx.dense()
    if sp.issparse(dx):
        return dx.toarray()
    return dx


def _as_array(dx: Any, what: str, shape: tuple[int, ...]) -> np.ndarray | None:
    """``dx`` as an ndarray if it is numeric data we understand, else ``None`` (unknown type)."""
    dx = _densify(dx)
    if isinstance(dx, np.ndarray):
        if dx.dtype == object:
            raise TypeError(f"an object array is not a cotangent for the primal {what}")
        return dx
    if isinstance(dx, numbers.Number | np.generic):
        return np.asarray(dx)
    if isinstance(dx, list | tuple):
        raise TypeError(
            f"a {type(dx).__name__} is not a cotangent for the primal {what} of shape {shape}; "
            "pass an ndarray"
        )
    return None


def _check_foreign_shape(dx: Any, what: str, shape: tuple[int, ...]) -> Any:
    """Return a cotangent of an unknown type unchanged, after a shape check when it has one."""
    dx_shape = getattr(dx, "shape", None)
    if isinstance(dx, Tangent):
        raise TypeError(f"a structural Tangent is not a cotangent for the primal {what}")
    if dx_shape is not None and not _fits(shape, tuple(dx_shape)):
        raise _shape_error(what, shape, tuple(dx_shape))
    return dx


class ArrayProjector(Projector):
    """Projector for an ndarray primal: fixes dtype and shape of the cotangent."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype: np.dtype[Any], shape: tuple[int, ...]) -> None:
        self.dtype = dtype
        self.shape = shape

    def __call__(self, dx: Any) -> Any:
        # Fast path: an ndarray that already fits is returned as is.
        if type(dx) is np.ndarray and dx.dtype == self.dtype and dx.shape == self.shape:
            return dx
        return super().__call__(dx)

    def project(self, dx: Any) -> Any:
        array = _as_array(dx, "ndarray", self.shape)
        if array is None:
            return _check_foreign_shape(dx, "ndarray", self.shape)
        if array.shape != self.shape:
            if not _fits(self.shape, array.shape):
                raise _shape_error("ndarray", self.shape, array.shape)
            array = array.reshape(self.shape)
        return _cast(array, self.dtype)

    def __repr__(self) -> str:
        return f"ProjectTo(ndarray, dtype={self.dtype.name}, shape={self.shape})"


class ScalarProjector(Projector):
    """Projector for a scalar primal; ``kind`` is the Python or numpy scalar type to return."""

    __slots__ = ("dtype", "kind")

    def __init__(self, dtype: np.dtype[Any], kind: type) -> None:
        self.dtype = dtype
        self.kind = kind

    def __call__(self, dx: Any) -> Any:
        if isinstance(dx, self.kind):  # np.float64 is a float: kept as is
            return dx
        return super().__call__(dx)

    def project(self, dx: Any) -> Any:
        array = _as_array(dx, "scalar", ())
        if array is None:
            return _check_foreign_shape(dx, "scalar", ())
        if not _fits((), array.shape):
            raise _shape_error("scalar", (), array.shape)
        value = _cast(array.reshape(()), self.dtype)[()]
        return self.kind(value)

    def __repr__(self) -> str:
        return f"ProjectTo({self.kind.__name__})"


class StructuralProjector(Projector):
    """Projector for a composite primal: one projector per component, giving a ``Tangent``."""

    __slots__ = ("elements", "primal_type")

    def __init__(self, primal_type: type, elements: tuple[Any, ...] | dict[Any, Any]) -> None:
        self.primal_type = primal_type
        self.elements = elements

    def project(self, dx: Any) -> Any:
        parts = self._components_of(dx)
        if isinstance(self.elements, tuple):
            assert isinstance(parts, tuple)
            if len(parts) != len(self.elements):
                raise ValueError(
                    f"a {self.primal_type.__name__} of length {len(self.elements)} cannot take a "
                    f"cotangent with {len(parts)} components"
                )
            projected: tuple[Any, ...] | dict[Any, Any] = tuple(
                p(d) for p, d in zip(self.elements, parts, strict=True)
            )
            values = list(projected)
        else:
            assert isinstance(parts, dict)
            unknown = [k for k in parts if k not in self.elements]
            if unknown:
                raise ValueError(f"{self.primal_type.__name__} has no component(s) {unknown}")
            projected = {k: self.elements[k](d) for k, d in parts.items()}
            values = list(projected.values())
        if values and all(isinstance(v, NoTangent) for v in values):
            return NoTangent()
        if isinstance(dx, Tangent) and _unchanged(parts, projected):
            return dx  # every component already fits
        return Tangent.from_backing(self.primal_type, projected)

    def _components_of(self, dx: Any) -> tuple[Any, ...] | dict[Any, Any]:
        if isinstance(dx, Tangent):
            if dx.primal_type is not self.primal_type:
                raise TypeError(
                    f"a tangent of {dx.primal_type.__name__} is not a cotangent for a "
                    f"{self.primal_type.__name__}"
                )
            backing = dx.backing
        elif isinstance(dx, self.primal_type):
            backing = primal_components(dx)  # a natural tangent of the primal's own type
        elif isinstance(dx, list | tuple) and (
            isinstance(self.elements, tuple) or issubclass(self.primal_type, tuple)
        ):
            # a plain tuple for a tuple or a namedtuple primal: its components by position
            backing = tuple(dx)
            if isinstance(self.elements, dict) and len(backing) != len(self.elements):
                raise ValueError(
                    f"a {self.primal_type.__name__} with fields {list(self.elements)} cannot "
                    f"take a cotangent with {len(backing)} components"
                )
        else:
            raise TypeError(
                f"a {type(dx).__name__} is not a cotangent for a {self.primal_type.__name__}"
            )
        if isinstance(self.elements, tuple) and isinstance(backing, dict):
            names = field_names(self.primal_type) or ()
            return tuple(backing.get(name, ZeroTangent()) for name in names)
        if isinstance(self.elements, dict) and isinstance(backing, tuple):
            return dict(zip(self.elements, backing, strict=False))
        return backing

    def __repr__(self) -> str:
        if isinstance(self.elements, tuple):
            inner = ", ".join(map(repr, self.elements))
        else:
            inner = ", ".join(f"{k}={v!r}" for k, v in self.elements.items())
        return f"ProjectTo({self.primal_type.__qualname__}, {inner})"


def _unchanged(parts: Any, projected: Any) -> bool:
    if isinstance(parts, dict):
        return all(projected[k] is v for k, v in parts.items())
    return all(p is v for p, v in zip(projected, parts, strict=True))


class DiagonalProjector(Projector):
    """Projector for a ``Diagonal`` primal: keeps only the diagonal of the cotangent."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype: np.dtype[Any], shape: tuple[int, ...]) -> None:
        self.dtype = dtype
        self.shape = shape  # of the dense matrix

    def project(self, dx: Any) -> Any:
        if isinstance(dx, Diagonal):
            if dx.shape != self.shape:
                raise _shape_error("Diagonal", self.shape, dx.shape)
            cast = _cast(dx.diag, self.dtype)
            return dx if cast is dx.diag else Diagonal(cast)
        array = _as_array(dx, "Diagonal", self.shape)
        if array is None:
            return _check_foreign_shape(dx, "Diagonal", self.shape)
        if array.shape != self.shape:
            raise _shape_error("Diagonal", self.shape, array.shape)
        return Diagonal(_cast(np.diagonal(array, axis1=-2, axis2=-1).copy(), self.dtype))

    def __repr__(self) -> str:
        return f"ProjectTo(Diagonal, dtype={self.dtype.name}, shape={self.shape})"


class SymmetricProjector(Projector):
    """Projector for ``Symmetric``/``Hermitian`` primals: the (conjugate-)symmetric part, same type."""

    __slots__ = ("dtype", "kind", "shape", "uplo")

    def __init__(
        self, kind: type[Symmetric], dtype: np.dtype[Any], shape: tuple[int, ...], uplo: str
    ):
        self.kind = kind
        self.dtype = dtype
        self.shape = shape
        self.uplo = uplo

    def project(self, dx: Any) -> Any:
        if type(dx) is self.kind and dx.uplo == self.uplo and dx.dtype == self.dtype:
            if dx.shape != self.shape:
                raise _shape_error(self.kind.__name__, self.shape, dx.shape)
            return dx
        array = _as_array(dx, self.kind.__name__, self.shape)
        if array is None:
            return _check_foreign_shape(dx, self.kind.__name__, self.shape)
        if array.shape != self.shape:
            raise _shape_error(self.kind.__name__, self.shape, array.shape)
        array = _cast(array, self.dtype)
        transposed = np.swapaxes(array, -1, -2)
        if self.kind is Hermitian:
            transposed = transposed.conj()
        return self.kind((array + transposed) / 2, self.uplo)

    def __repr__(self) -> str:
        return (
            f"ProjectTo({self.kind.__name__}, dtype={self.dtype.name}, shape={self.shape}, "
            f"uplo={self.uplo!r})"
        )


class TriangularProjector(Projector):
    """Projector for triangular primals: the cotangent's triangle, same type."""

    __slots__ = ("dtype", "kind", "shape")

    def __init__(self, kind: type[StructuredMatrix], dtype: np.dtype[Any], shape: tuple[int, ...]):
        self.kind = kind
        self.dtype = dtype
        self.shape = shape

    def project(self, dx: Any) -> Any:
        if type(dx) is self.kind and dx.dtype == self.dtype:
            if dx.shape != self.shape:
                raise _shape_error(self.kind.__name__, self.shape, dx.shape)
            return dx
        array = _as_array(dx, self.kind.__name__, self.shape)
        if array is None:
            return _check_foreign_shape(dx, self.kind.__name__, self.shape)
        if array.shape != self.shape:
            raise _shape_error(self.kind.__name__, self.shape, array.shape)
        triangle = np.tril(array) if self.kind is LowerTriangular else np.triu(array)
        return self.kind(_cast(triangle, self.dtype))

    def __repr__(self) -> str:
        return f"ProjectTo({self.kind.__name__}, dtype={self.dtype.name}, shape={self.shape})"


class SparseProjector(Projector):
    """Projector for a scipy.sparse primal: the cotangent at exactly the primal's stored entries."""

    __slots__ = ("cls", "cols", "dtype", "pattern", "rows", "shape")

    def __init__(self, x: Any, dtype: np.dtype[Any]) -> None:
        self.cls = type(x)
        self.dtype = dtype
        self.shape = tuple(x.shape)
        if x.format == "coo":
            self.pattern: tuple[np.ndarray, ...] = (x.coords[0].copy(), x.coords[1].copy())
            self.rows, self.cols = self.pattern
        else:
            indices, indptr = x.indices.copy(), x.indptr.copy()
            self.pattern = (indices, indptr)
            outer = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
            self.rows, self.cols = (outer, indices) if x.format == "csr" else (indices, outer)

    def _rebuild(self, data: np.ndarray) -> Any:
        if self._is_coo():
            return self.cls((data, (self.rows, self.cols)), shape=self.shape)
        indices, indptr = self.pattern
        return self.cls((data, indices, indptr), shape=self.shape)

    def _is_coo(self) -> bool:
        return issubclass(self.cls, sp.coo_array | sp.coo_matrix)

    def project(self, dx: Any) -> Any:
        if sp.issparse(dx):
            if tuple(dx.shape) != self.shape:
                raise _shape_error(self.cls.__name__, self.shape, tuple(dx.shape))
            if type(dx) is self.cls and self._same_pattern(dx):
                data = _cast(dx.data, self.dtype)
                return dx if data is dx.data else self._rebuild(data)
            dx = dx.tocsr()
            values = np.asarray(dx[self.rows, self.cols]).ravel()
            return self._rebuild(_cast(values, self.dtype))
        array = _as_array(dx, self.cls.__name__, self.shape)
        if array is None:
            return _check_foreign_shape(dx, self.cls.__name__, self.shape)
        if array.shape != self.shape:
            if not _fits(self.shape, array.shape):
                raise _shape_error(self.cls.__name__, self.shape, array.shape)
            array = array.reshape(self.shape)
        return self._rebuild(_cast(array[self.rows, self.cols], self.dtype))

    def _same_pattern(self, dx: Any) -> bool:
        if self._is_coo():
            return np.array_equal(dx.coords[0], self.rows) and np.array_equal(
                dx.coords[1], self.cols
            )
        return np.array_equal(dx.indices, self.pattern[0]) and np.array_equal(
            dx.indptr, self.pattern[1]
        )

    def __repr__(self) -> str:
        return (
            f"ProjectTo({self.cls.__name__}, dtype={self.dtype.name}, shape={self.shape}, "
            f"nnz={len(self.rows)})"
        )
