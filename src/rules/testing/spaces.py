"""Tangent spaces of primal values, as the rule checker sees them.

A :class:`Space` describes the tangent space of one primal value through an orthonormal basis
(orthonormal for the real inner product ``Re <a, b>``):

* ``dim`` real coordinates;
* ``tangent(c)`` builds the tangent ``sum_k c_k e_k`` in the type ``ProjectTo`` gives;
* ``perturb(x, c)`` is the primal ``x + tangent(c)``, computed in double precision;
* ``ambient(t)`` writes any tangent (ndarray, structured, sparse, ``Tangent``, thunk, zero) as a
  dense vector of all its entries, so that a cotangent with a component outside the space (an
  unsymmetrised one for a symmetric input, say) is visible to the checker.

Finite differences along the basis give the reference vector-Jacobian product, and
``ambient`` compares it with what a rule returns.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from typing import Any

import numpy as np
import scipy.sparse as sp

from tangents import (
    AbstractZero,
    Diagonal,
    Hermitian,
    LowerTriangular,
    NoTangent,
    NotImplementedTangent,
    Symmetric,
    Tangent,
    UpperTriangular,
    ZeroTangent,
    canonicalize,
    tangent_dtype,
    unthunk,
)
from tangents.structural import has_fields, primal_components, rebuild_primal

__all__ = ["Space", "space_of"]

_DOUBLE = {
    np.dtype(np.float16): np.dtype(np.float64),
    np.dtype(np.float32): np.dtype(np.float64),
    np.dtype(np.complex64): np.dtype(np.complex128),
}


def _double(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return _DOUBLE.get(np.dtype(dtype), np.dtype(dtype))


class Space:
    """The tangent space of one primal value (see the module docstring)."""

    dim: int = 0
    ambient_size: int = 0

    @property
    def has_tangents(self) -> bool:
        """Whether the primal has a tangent space at all (perhaps of dimension 0: an empty array)."""
        return True

    def tangent(self, c: np.ndarray) -> Any:
        """The tangent with coordinates ``c`` (real, length ``dim``)."""
        raise NotImplementedError

    def ambient(self, t: Any) -> np.ndarray:
        """The dense entries of the tangent ``t`` (raises ``ValueError`` if it cannot belong here)."""
        raise NotImplementedError

    def perturb(self, x: Any, c: np.ndarray) -> Any:
        """The primal ``x + tangent(c)``, in double precision."""
        raise NotImplementedError

    def upcast(self, x: Any) -> Any:
        """``x`` in double precision (float32 -> float64, complex64 -> complex128)."""
        return self.perturb(x, np.zeros(self.dim))

    def coordinates(self, t: Any) -> np.ndarray:
        """The coordinates ``c_k = Re <e_k, t>`` of the orthogonal projection of ``t`` onto the space."""
        a = self.ambient(t)
        unit = np.zeros(self.dim)
        out = np.zeros(self.dim)
        for k in range(self.dim):
            unit[k] = 1.0
            out[k] = inner(self.ambient(self.tangent(unit)), a)
            unit[k] = 0.0
        return out

    @property
    def is_complex(self) -> bool:
        """Whether ambient vectors are complex."""
        return False


def inner(a: np.ndarray, b: np.ndarray) -> float:
    """The real inner product ``Re sum conj(a) b`` of two ambient vectors."""
    return float(np.real(np.vdot(a, b)))


class EmptySpace(Space):
    """A value with no tangent space (bools, strings, Python ints, functions)."""

    @property
    def has_tangents(self) -> bool:
        return False

    def tangent(self, c: np.ndarray) -> Any:
        return NoTangent()

    def ambient(self, t: Any) -> np.ndarray:
        return np.zeros(0)

    def perturb(self, x: Any, c: np.ndarray) -> Any:
        return x


def _as_dense(t: Any, shape: tuple[int, ...], what: str) -> np.ndarray | None:
    """A dense ndarray of ``shape`` for tangent ``t``; ``None`` for a zero."""
    t = unthunk(t)
    if isinstance(t, AbstractZero):
        return None
    if isinstance(t, NotImplementedTangent):
        raise TypeError(f"{what} is a NotImplementedTangent ({t.info})")
    if sp.issparse(t):
        t = t.toarray()
    elif isinstance(t, Tangent):
        raise TypeError(f"{what} is a structural Tangent, not an array")
    array = np.asarray(t)
    if array.dtype == object:
        raise ValueError(f"{what} is an object array")
    if array.shape != shape:
        if array.size != math.prod(shape) or (_strip(array.shape) != _strip(shape)):
            raise ValueError(f"{what} has shape {array.shape}, the primal has shape {shape}")
        array = array.reshape(shape)
    return array


def _strip(shape: tuple[int, ...]) -> tuple[int, ...]:
    while shape and shape[-1] == 1:
        shape = shape[:-1]
    return shape


class ArraySpace(Space):
    """Entries of an ndarray or scalar; optionally restricted to symmetric/Hermitian matrices.

    ``kind`` is ``"full"`` (every entry), ``"symmetric"`` or ``"hermitian"`` (stacks of square
    matrices equal to their transpose / conjugate transpose; basis ``E_ii`` and
    ``(E_ij + E_ji)/sqrt 2``, plus ``i (E_ij - E_ji)/sqrt 2`` for Hermitian).
    """

    def __init__(
        self,
        shape: tuple[int, ...],
        dtype: np.dtype[Any],
        kind: str = "full",
        scalar_type: type | None = None,
    ) -> None:
        self.shape = shape
        self.dtype = dtype  # the tangent dtype
        self.kind = kind
        self.scalar_type = scalar_type
        self.ambient_size = math.prod(shape)
        complex_ = np.issubdtype(dtype, np.complexfloating)
        if kind == "full":
            self.dim = self.ambient_size * (2 if complex_ else 1)
        else:
            if len(shape) < 2 or shape[-1] != shape[-2]:
                raise ValueError(f"a {kind} argument must be a square matrix, got shape {shape}")
            n = shape[-1]
            batch = self.ambient_size // (n * n) if n else 0
            per_matrix = n * n if (complex_ and kind == "hermitian") else n * (n + 1) // 2
            if complex_ and kind == "symmetric":
                per_matrix *= 2
            self.dim = batch * per_matrix

    @property
    def is_complex(self) -> bool:
        return bool(np.issubdtype(self.dtype, np.complexfloating))

    def tangent(self, c: np.ndarray) -> Any:
        c = np.asarray(c, dtype=np.float64)
        if self.kind == "full":
            values = c[: self.ambient_size] + (
                1j * c[self.ambient_size :] if self.is_complex else 0
            )
            out = np.asarray(values, dtype=_double(self.dtype)).reshape(self.shape)
        else:
            out = self._structured_tangent(c)
        if self.scalar_type is not None:
            return self.scalar_type(out.reshape(()))
        return out

    def _structured_tangent(self, c: np.ndarray) -> np.ndarray:
        n = self.shape[-1]
        batch_shape = self.shape[:-2]
        out = np.zeros((math.prod(batch_shape), n, n), dtype=_double(self.dtype))
        rows, cols = np.triu_indices(n, 1)
        diag = np.arange(n)
        k = 0
        for b in range(out.shape[0]):
            out[b, diag, diag] = c[k : k + n]
            k += n
            m = len(rows)
            off = c[k : k + m] / math.sqrt(2)
            k += m
            out[b, rows, cols] = off
            out[b, cols, rows] = off
            if self.is_complex:
                if self.kind == "symmetric":
                    out[b, diag, diag] += 1j * c[k : k + n]
                    k += n
                extra = 1j * c[k : k + m] / math.sqrt(2)
                k += m
                out[b, rows, cols] += extra
                out[b, cols, rows] += extra if self.kind == "symmetric" else -extra
        return out.reshape(self.shape)

    def ambient(self, t: Any) -> np.ndarray:
        dense = _as_dense(t, self.shape, "the tangent")
        if dense is None:
            return np.zeros(self.ambient_size, dtype=_double(self.dtype))
        return dense.ravel()

    def coordinates(self, t: Any) -> np.ndarray:
        if self.kind != "full":
            return super().coordinates(t)
        a = self.ambient(t)
        return np.concatenate([a.real, a.imag]) if self.is_complex else np.real(a).astype(float)

    def perturb(self, x: Any, c: np.ndarray) -> Any:
        base = np.asarray(x)
        dtype = _double(self.dtype)
        moved = base.astype(dtype) + np.asarray(self.tangent(c))
        if self.scalar_type is not None:
            return self.scalar_type(moved.reshape(()))
        if isinstance(x, np.generic):
            return moved.reshape(())[()]
        return moved


class StructuredSpace(Space):
    """A ``Diagonal``, ``Symmetric``, ``Hermitian`` or triangular primal: tangents of that type."""

    def __init__(self, x: Any) -> None:
        self.cls = type(x)
        self.uplo = getattr(x, "uplo", None)
        self.shape = x.shape
        dtype = tangent_dtype(x.dtype)
        assert dtype is not None
        self.dtype = dtype
        self.ambient_size = math.prod(self.shape)
        if isinstance(x, Diagonal):
            self.inner_space: Space = ArraySpace(x.diag.shape, dtype)
        elif isinstance(x, Symmetric):
            kind = "hermitian" if isinstance(x, Hermitian) else "symmetric"
            self.inner_space = ArraySpace(self.shape, dtype, kind)
        else:
            self.inner_space = _TriangleSpace(
                self.shape, dtype, lower=isinstance(x, LowerTriangular)
            )
        self.dim = self.inner_space.dim

    @property
    def is_complex(self) -> bool:
        return bool(np.issubdtype(self.dtype, np.complexfloating))

    def _wrap(self, data: np.ndarray) -> Any:
        if self.uplo is not None:
            return self.cls(data, uplo=self.uplo)
        return self.cls(data)

    def tangent(self, c: np.ndarray) -> Any:
        return self._wrap(self.inner_space.tangent(c))

    def ambient(self, t: Any) -> np.ndarray:
        t = unthunk(t)
        if isinstance(t, AbstractZero):
            return np.zeros(self.ambient_size, dtype=_double(self.dtype))
        dense = _as_dense(t.dense() if hasattr(t, "dense") else t, self.shape, "the tangent")
        assert dense is not None
        return dense.ravel()

    def perturb(self, x: Any, c: np.ndarray) -> Any:
        dtype = _double(self.dtype)
        moved = x.data.astype(dtype)
        # A symmetric step added to the whole stored array changes the read triangle exactly by it.
        return self._wrap(moved + self.inner_space.tangent(c))


class _TriangleSpace(ArraySpace):
    """Entries of the upper (or lower) triangle of a stack of square matrices."""

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype[Any], lower: bool) -> None:
        super().__init__(shape, dtype)
        self.kind = "triangle"
        n = shape[-1]
        self.mask = np.tril(np.ones((n, n), bool)) if lower else np.triu(np.ones((n, n), bool))
        batch = self.ambient_size // (n * n) if n else 0
        per = int(self.mask.sum()) * (2 if self.is_complex else 1)
        self.dim = batch * per

    def tangent(self, c: np.ndarray) -> Any:
        n = self.shape[-1]
        out = np.zeros((self.ambient_size // (n * n), n, n), dtype=_double(self.dtype))
        m = int(self.mask.sum())
        k = 0
        for b in range(out.shape[0]):
            out[b][self.mask] = c[k : k + m]
            k += m
            if self.is_complex:
                out[b][self.mask] += 1j * c[k : k + m]
                k += m
        return out.reshape(self.shape)


class SparseSpace(Space):
    """The stored entries of a scipy.sparse CSR/CSC/COO primal (its pattern is kept)."""

    def __init__(self, x: Any) -> None:
        self.shape = tuple(x.shape)
        dtype = tangent_dtype(x.dtype)
        assert dtype is not None
        self.dtype = dtype
        self.template = x.astype(_double(dtype))  # a copy: the pattern, data overwritten below
        self.data_space = ArraySpace(x.data.shape, dtype)
        self.dim = self.data_space.dim
        self.ambient_size = math.prod(self.shape)

    @property
    def is_complex(self) -> bool:
        return bool(np.issubdtype(self.dtype, np.complexfloating))

    def _with_data(self, data: np.ndarray) -> Any:
        out = self.template.copy()
        out.data = data
        return out

    def tangent(self, c: np.ndarray) -> Any:
        return self._with_data(self.data_space.tangent(c))

    def ambient(self, t: Any) -> np.ndarray:
        dense = _as_dense(t, self.shape, "the tangent")
        if dense is None:
            return np.zeros(self.ambient_size, dtype=_double(self.dtype))
        return dense.ravel()

    def perturb(self, x: Any, c: np.ndarray) -> Any:
        return self._with_data(x.data.astype(_double(self.dtype)) + self.data_space.tangent(c))


class CompositeSpace(Space):
    """A tuple, namedtuple, dict, dataclass or object: the product of its components' spaces."""

    def __init__(self, x: Any, symmetric: bool = False) -> None:
        self.primal_type = type(x)
        # A list is a sequence of components like a tuple; its tangent is a Tangent(tuple, ...).
        self.is_list = isinstance(x, list)
        components = tuple(x) if self.is_list else primal_components(x)
        self.positional = isinstance(components, tuple)
        items = enumerate(components) if isinstance(components, tuple) else components.items()
        self.spaces = {k: space_of(v, symmetric) for k, v in items}
        self.dim = sum(s.dim for s in self.spaces.values())
        self.ambient_size = sum(s.ambient_size for s in self.spaces.values())

    @property
    def is_complex(self) -> bool:
        return any(s.is_complex for s in self.spaces.values())

    @property
    def has_tangents(self) -> bool:
        return any(s.has_tangents for s in self.spaces.values())

    def holding_fixed(self, key: Any) -> CompositeSpace:
        """A copy of this space in which component ``key`` has no tangent space (pivot indices, say)."""
        fixed = copy.copy(self)
        fixed.spaces = {k: EmptySpace() if k == key else s for k, s in self.spaces.items()}
        fixed.dim = sum(s.dim for s in fixed.spaces.values())
        fixed.ambient_size = sum(s.ambient_size for s in fixed.spaces.values())
        return fixed

    def _split(self, c: np.ndarray) -> dict[Any, np.ndarray]:
        out, k = {}, 0
        for key, s in self.spaces.items():
            out[key] = c[k : k + s.dim]
            k += s.dim
        return out

    def tangent(self, c: np.ndarray) -> Any:
        parts = {k: self.spaces[k].tangent(v) for k, v in self._split(c).items()}
        if self.positional:
            primal_type = tuple if self.is_list else self.primal_type
            return Tangent.from_backing(primal_type, tuple(parts.values()))
        return Tangent.from_backing(self.primal_type, parts)

    def components(self, t: Any) -> dict[Any, Any]:
        """The components of a tangent ``t`` keyed like the primal's components."""
        t = unthunk(t)
        zero = ZeroTangent()
        if isinstance(t, AbstractZero):
            return dict.fromkeys(self.spaces, zero)
        if isinstance(t, Tangent):
            expected = tuple if self.is_list else self.primal_type
            if t.primal_type is not expected and not issubclass(expected, t.primal_type):
                raise ValueError(
                    f"the tangent is for {t.primal_type.__name__}, the primal is a "
                    f"{self.primal_type.__name__}"
                )
            backing = t.backing
            if self.positional and isinstance(backing, dict):
                backing = tuple(canonicalize(t).backing.values())  # type: ignore[union-attr]
            elif not self.positional and isinstance(backing, tuple):
                backing = canonicalize(t).backing  # Tangent(NamedTuple, *elements): by position
                if isinstance(backing, tuple):  # Tangent(tuple, ...) for a namedtuple
                    if len(backing) != len(self.spaces):
                        raise ValueError(
                            f"the tangent has {len(backing)} components, the primal "
                            f"{len(self.spaces)}"
                        )
                    backing = dict(zip(self.spaces, backing, strict=True))
            if self.positional:
                assert isinstance(backing, tuple)
                if len(backing) != len(self.spaces):
                    raise ValueError(
                        f"the tangent has {len(backing)} components, the primal {len(self.spaces)}"
                    )
                return dict(enumerate(backing))
            assert isinstance(backing, dict)
            return {k: backing.get(k, zero) for k in self.spaces}
        if isinstance(t, self.primal_type) or (self.positional and isinstance(t, tuple | list)):
            parts = tuple(t) if self.positional else primal_components(t)
            if self.positional:
                return dict(enumerate(parts))
            assert isinstance(parts, dict)
            return {k: parts.get(k, zero) for k in self.spaces}
        if type(t) is tuple and issubclass(self.primal_type, tuple):  # plain tuple for a namedtuple
            if len(t) != len(self.spaces):
                raise ValueError(
                    f"the tangent has {len(t)} components, the primal {len(self.spaces)}"
                )
            return dict(zip(self.spaces, t, strict=True))
        raise ValueError(f"a {type(t).__name__} is not a tangent of a {self.primal_type.__name__}")

    def ambient(self, t: Any) -> np.ndarray:
        parts = self.components(t)
        pieces = [s.ambient(parts[k]) for k, s in self.spaces.items()]
        return np.concatenate(pieces) if pieces else np.zeros(0)

    def perturb(self, x: Any, c: np.ndarray) -> Any:
        components = tuple(x) if self.is_list else primal_components(x)
        split = self._split(c)
        if isinstance(components, tuple):
            moved: Any = tuple(
                self.spaces[i].perturb(v, split[i]) for i, v in enumerate(components)
            )
        else:
            moved = {k: self.spaces[k].perturb(v, split[k]) for k, v in components.items()}
        return list(moved) if self.is_list else rebuild_primal(x, moved)


def space_of(x: Any, symmetric: bool = False, constant: bool = False) -> Space:
    """The tangent space of the primal ``x`` as the checker differences it.

    ``symmetric=True`` restricts a dense square (stack of) matrix to symmetric directions
    (Hermitian for complex dtypes), for functions that read only a symmetric matrix;
    ``constant=True`` gives it no tangent space at all (an index array, say).
    """
    if constant:
        return EmptySpace()
    if isinstance(x, bool | np.bool_ | str | bytes) or x is None or isinstance(x, int):
        return EmptySpace()
    if isinstance(x, float | complex):
        dtype = np.dtype(np.complex128 if isinstance(x, complex) else np.float64)
        return ArraySpace((), dtype, scalar_type=type(x))
    if isinstance(x, np.generic | np.ndarray):
        dtype = tangent_dtype(x.dtype)
        if dtype is None:
            return EmptySpace()
        if symmetric:
            kind = "hermitian" if np.issubdtype(dtype, np.complexfloating) else "symmetric"
            return ArraySpace(np.shape(x), dtype, kind)
        return ArraySpace(np.shape(x), dtype)
    if isinstance(x, Diagonal | Symmetric | UpperTriangular | LowerTriangular):
        if tangent_dtype(x.dtype) is None:
            return EmptySpace()
        return StructuredSpace(x)
    if sp.issparse(x):
        return SparseSpace(x) if tangent_dtype(x.dtype) is not None else EmptySpace()
    if isinstance(x, tuple | list | dict) or dataclasses.is_dataclass(x) or has_fields(x):
        return CompositeSpace(x, symmetric)
    return EmptySpace()
