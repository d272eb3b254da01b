"""Structured matrices: ``Diagonal``, ``Symmetric``, ``Hermitian``, ``UpperTriangular``, ``LowerTriangular``.

Each is both a primal that rules accept (where numpy would accept its dense form) and a tangent
type: ``.shape``, ``.dtype``, ``.T``/``.mT``, ``.conj()``, ``.real``, ``np.asarray(M)`` (a dense
copy), ``+``/``-`` (with the same structure the result keeps it, otherwise it is dense), scalar
``*`` and ``/``, unary ``-``, and ``@`` with ndarrays and with each other, computed from the
structure: ``Diagonal(d) @ X`` scales rows in O(n^2) and never forms the dense diagonal matrix;
triangular products use BLAS ``trmm`` for single matrices.

All of them accept stacks: ``Diagonal`` of a ``(..., n)`` array and the others of a
``(..., n, n)`` array mean a stack of matrices, with numpy's broadcasting in ``@``.
Binary operators return ``NotImplemented`` for operands they do not know, so that the library's
zeros and thunks handle them (``Diagonal(d) + ZeroTangent()`` is the ``Diagonal``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg import blas

from tangents.base import TangentArithmetic, is_scalar

__all__ = [
    "Diagonal",
    "Hermitian",
    "LowerTriangular",
    "StructuredMatrix",
    "Symmetric",
    "UpperTriangular",
]


def _square_stack(A: Any, name: str) -> np.ndarray:
    A = np.asarray(A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"{name} needs a square matrix (or a stack of them), got shape {A.shape}")
    return A


class StructuredMatrix(TangentArithmetic):
    """Base of the structured matrices: the dense form, the array protocol, the structured products.

    The operators (``+``, ``-``, ``*``, ``/``, ``@``, unary ``-``, ``conj``) go through the one
    arithmetic table, :mod:`tangents.arithmetic`, like every tangent type of the library; its
    structured-matrix row calls the methods below (``_binary``, ``_scale``, ``_divide``,
    ``_product``, ``_map``).
    """

    __slots__ = ()

    # --- what each subclass provides --------------------------------------------------------------

    def dense(self) -> np.ndarray:
        """A new dense ndarray holding the matrix (or stack)."""
        raise NotImplementedError

    def _map(self, f: Any) -> StructuredMatrix:
        """The same structure around ``f(data)``, for maps that preserve it (scaling, conj, real)."""
        raise NotImplementedError

    def _same(self, other: StructuredMatrix, op: Any) -> StructuredMatrix | None:
        """``op(self, other)`` keeping the structure, when ``other`` has the same structure."""
        return None

    @property
    def data(self) -> np.ndarray:
        """The stored array (the diagonal, or the full square array of which one part is read)."""
        raise NotImplementedError

    # --- array protocol ---------------------------------------------------------------------------

    @property
    def dtype(self) -> np.dtype[Any]:
        """The element type."""
        return self.data.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the dense matrix (or stack)."""
        return self.data.shape

    @property
    def ndim(self) -> int:
        """Number of dimensions of the dense form."""
        return len(self.shape)

    @property
    def mT(self) -> StructuredMatrix:
        """Transpose of the last two axes."""
        return self.T

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        dense = self.dense()
        return dense if dtype is None else dense.astype(dtype, copy=False)

    @property
    def real(self) -> StructuredMatrix:
        """Real part, same structure."""
        return self._map(np.real)

    # --- arithmetic -------------------------------------------------------------------------------

    def _binary(self, other: Any, op: Any, reflected: bool) -> Any:
        if isinstance(other, StructuredMatrix):
            if type(other) is type(self):
                kept = other._same(self, op) if reflected else self._same(other, op)
                if kept is not None:
                    return kept
            other = other.dense()
        elif not isinstance(other, np.ndarray) or other.dtype == object:
            return NotImplemented
        return op(other, self.dense()) if reflected else op(self.dense(), other)

    def _scale(self, s: Any, reflected: bool) -> Any:
        """``self * s`` (``s * self`` when ``reflected``) for a scalar ``s``, same structure."""
        if not is_scalar(s):
            return NotImplemented
        return self._map((lambda data: s * data) if reflected else (lambda data: data * s))

    def _divide(self, s: Any) -> Any:
        """``self / s`` for a scalar ``s``, same structure."""
        if not is_scalar(s):
            return NotImplemented
        return self._map(lambda data: data / s)

    def _matmul(self, other: np.ndarray) -> np.ndarray:
        """``self @ other`` for a dense ``other``; subclasses override with structured products."""
        return self.dense() @ other

    def _rmatmul(self, other: np.ndarray) -> np.ndarray:
        """``other @ self`` for a dense ``other``."""
        return other @ self.dense()

    def _product(self, other: Any, reflected: bool) -> Any:
        """``self @ other`` (``other @ self`` when ``reflected``) from the structure."""
        if isinstance(other, StructuredMatrix) and not reflected:
            return other._rmatmul_structured(self)
        if not isinstance(other, np.ndarray) or other.dtype == object:
            return NotImplemented
        return self._rmatmul(other) if reflected else self._matmul(other)

    def _rmatmul_structured(self, left: StructuredMatrix) -> Any:
        """``left @ self``: a diagonal on either side scales, otherwise the left one goes dense."""
        if isinstance(left, Diagonal):
            return left._matmul_structured(self)
        return self._rmatmul(left.dense())

    def _matmul_structured(self, right: StructuredMatrix) -> Any:
        return self._matmul(right.dense())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.data!r})"


class Diagonal(StructuredMatrix):
    """A diagonal matrix ``diag(d)``; ``d`` of shape ``(..., n)`` gives a stack of ``n x n`` matrices.

    ``Diagonal(d) @ X`` is ``d[..., :, None] * X``: O(n^2), the dense matrix is never formed.
    """

    __slots__ = ("diag",)

    def __init__(self, d: Any) -> None:
        d = np.asarray(d)
        if d.ndim < 1:
            raise ValueError(f"Diagonal needs a vector of diagonal entries, got shape {d.shape}")
        self.diag = d

    @property
    def data(self) -> np.ndarray:
        """The diagonal entries."""
        return self.diag

    @property
    def shape(self) -> tuple[int, ...]:
        """``(..., n, n)``."""
        return (*self.diag.shape, self.diag.shape[-1])

    def dense(self) -> np.ndarray:
        """The dense ``(..., n, n)`` matrix."""
        n = self.diag.shape[-1]
        out = np.zeros(self.shape, dtype=self.diag.dtype)
        out[..., np.arange(n), np.arange(n)] = self.diag
        return out

    @property
    def T(self) -> Diagonal:
        """A diagonal matrix is its own transpose."""
        return self

    def _map(self, f: Any) -> Diagonal:
        return Diagonal(f(self.diag))

    def _same(self, other: StructuredMatrix, op: Any) -> Diagonal:
        assert isinstance(other, Diagonal)
        return Diagonal(op(self.diag, other.diag))

    def _matmul(self, other: np.ndarray) -> np.ndarray:
        if other.ndim == 1:
            return self.diag * other
        return self.diag[..., :, None] * other

    def _rmatmul(self, other: np.ndarray) -> np.ndarray:
        if other.ndim == 1:
            return other * self.diag
        return other * self.diag[..., None, :]

    def _matmul_structured(self, right: StructuredMatrix) -> Any:
        if isinstance(right, Diagonal):
            return Diagonal(self.diag * right.diag)
        if isinstance(right, _Triangular):
            return type(right)(self.diag[..., :, None] * right.data)
        return self._matmul(right.dense())

    def _rmatmul_structured(self, left: StructuredMatrix) -> Any:
        if isinstance(left, Diagonal):
            return left._matmul_structured(self)
        if isinstance(left, _Triangular):
            return type(left)(left.data * self.diag[..., None, :])
        return self._rmatmul(left.dense())


class _SquareStructured(StructuredMatrix):
    """Shared storage for the structures that read part of a full square array ``A``."""

    __slots__ = ("A",)

    def __init__(self, A: Any) -> None:
        self.A = _square_stack(A, type(self).__name__)

    @property
    def data(self) -> np.ndarray:
        """The stored square array (only the part the structure reads is meaningful)."""
        return self.A


class _Triangular(_SquareStructured):
    """Shared code of the two triangular structures; ``_lower`` says which triangle is kept."""

    __slots__ = ()
    _lower: bool

    def dense(self) -> np.ndarray:
        """The dense matrix, zeros in the other triangle."""
        return np.tril(self.A) if self._lower else np.triu(self.A)

    @property
    def T(self) -> StructuredMatrix:
        """The transpose, a triangular matrix of the other kind."""
        other = UpperTriangular if self._lower else LowerTriangular
        return other(np.swapaxes(self.A, -1, -2))

    def _map(self, f: Any) -> StructuredMatrix:
        return type(self)(f(self.A))

    def _same(self, other: StructuredMatrix, op: Any) -> StructuredMatrix:
        return type(self)(op(self.dense(), other.dense()))

    def _trmm(self, other: np.ndarray, side: int) -> np.ndarray | None:
        """BLAS triangular multiply for one matrix of a BLAS dtype, else ``None``."""
        if self.A.ndim != 2 or other.ndim != 2:
            return None
        dtype = np.result_type(self.A, other)
        if dtype not in (np.float32, np.float64, np.complex64, np.complex128):
            return None
        trmm = blas.get_blas_funcs("trmm", dtype=dtype)
        # Fortran-ordered A.T is A in C order; so the lower/upper flag flips for BLAS.
        a = np.asarray(self.A, dtype=dtype)
        b = np.array(other, dtype=dtype, order="F")
        lower_in_fortran = not self._lower
        return trmm(1.0, a.T, b, side=side, lower=lower_in_fortran, trans_a=1, overwrite_b=True)

    def _matmul(self, other: np.ndarray) -> np.ndarray:
        if other.ndim == 1:
            return self.dense() @ other
        result = self._trmm(other, side=0)
        return self.dense() @ other if result is None else result

    def _rmatmul(self, other: np.ndarray) -> np.ndarray:
        if other.ndim == 1:
            return other @ self.dense()
        result = self._trmm(other, side=1)
        return other @ self.dense() if result is None else result

    def _rmatmul_structured(self, left: StructuredMatrix) -> Any:
        if type(left) is type(self):  # a product of two upper (lower) triangles is upper (lower)
            return type(self)(self._rmatmul(left.dense()))
        return super()._rmatmul_structured(left)


class UpperTriangular(_Triangular):
    """The upper triangle of ``A`` (``(..., n, n)``); entries below the diagonal are zero."""

    __slots__ = ()
    _lower = False


class LowerTriangular(_Triangular):
    """The lower triangle of ``A`` (``(..., n, n)``); entries above the diagonal are zero."""

    __slots__ = ()
    _lower = True


class Symmetric(_SquareStructured):
    """A symmetric matrix stored in one triangle of ``A``: ``uplo="U"`` (default) or ``"L"``.

    The other triangle of ``A`` is never read.
    """

    __slots__ = ("uplo",)

    def __init__(self, A: Any, uplo: str = "U") -> None:
        super().__init__(A)
        if uplo not in ("U", "L"):
            raise ValueError(f"uplo must be 'U' or 'L', got {uplo!r}")
        self.uplo = uplo

    def _triangle(self) -> np.ndarray:
        return np.triu(self.A) if self.uplo == "U" else np.tril(self.A)

    def _mirror(self, M: np.ndarray) -> np.ndarray:
        return np.swapaxes(M, -1, -2)

    def dense(self) -> np.ndarray:
        """The dense matrix, the stored triangle mirrored across the diagonal."""
        triangle = self._triangle()
        strict = np.triu(self.A, 1) if self.uplo == "U" else np.tril(self.A, -1)
        return triangle + self._mirror(strict)

    @property
    def T(self) -> Symmetric:
        """A symmetric matrix is its own transpose."""
        return self

    def _map(self, f: Any) -> Symmetric:
        return type(self)(f(self.A), self.uplo)

    def _same(self, other: StructuredMatrix, op: Any) -> Symmetric:
        assert isinstance(other, Symmetric)
        if other.uplo == self.uplo:
            return type(self)(op(self.A, other.A), self.uplo)
        return type(self)(op(self.A, other.dense()), self.uplo)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.A!r}, uplo={self.uplo!r})"


class Hermitian(Symmetric):
    """A Hermitian matrix stored in one triangle of ``A`` (``uplo="U"`` or ``"L"``).

    The other triangle is the conjugate transpose of the stored one, and the diagonal is read as
    real (its imaginary part is ignored, as LAPACK does).
    """

    __slots__ = ()

    def _mirror(self, M: np.ndarray) -> np.ndarray:
        return np.conj(np.swapaxes(M, -1, -2))

    def dense(self) -> np.ndarray:
        """The dense matrix with a real diagonal."""
        out = super().dense()
        if np.iscomplexobj(out):
            n = out.shape[-1]
            diagonal = out[..., np.arange(n), np.arange(n)]
            out[..., np.arange(n), np.arange(n)] = diagonal.real
        return out

    @property
    def T(self) -> Hermitian:
        """The transpose of a Hermitian matrix is its conjugate, also Hermitian."""
        return self.conj()

    def _scale(self, s: Any, reflected: bool) -> Any:
        if is_scalar(s) and np.iscomplexobj(s):  # a complex multiple is no longer Hermitian
            return s * self.dense() if reflected else self.dense() * s
        return super()._scale(s, reflected)

    def _divide(self, s: Any) -> Any:
        if is_scalar(s) and np.iscomplexobj(s):
            return self.dense() / s
        return super()._divide(s)
