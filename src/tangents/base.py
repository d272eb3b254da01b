"""The root of the tangent algebra and the operator mixin shared by the library's tangent types.

A *tangent* (or cotangent) is anything that can be added to another tangent of the same primal
and scaled by a number. Plain numbers and ndarrays are their own tangents; the classes of this
package add the symbolic zeros, lazy values and structural tangents that AD needs.
"""

from __future__ import annotations

from typing import Any


class AbstractTangent:
    """Root of the tangent types; also the contract every tangent type follows.

    A tangent type represents a derivative (a perturbation) of a primal value. Rules are written
    only with the operations below, so any type that supports them can flow through every rule
    without being converted to an ndarray (DESIGN.md section 2, "generic path").

    Operations a tangent type supports
    -----------------------------------
    * ``a + b`` and ``a - b`` with another tangent of the same primal (linear combination);
      ``a + ZeroTangent()`` is ``a``.
    * ``s * a``, ``a * s`` and ``a / s`` for a scalar ``s`` (scaling); unary ``-a``.
    * for matrix-like tangents: ``a @ M`` and ``M @ a`` with ndarrays (and with each other),
      ``a.T`` / ``a.mT`` (transpose), ``a.conj()``, ``a.real``.

    Rules may assume nothing else: no indexing, no ``np.asarray``, no in-place writes. Rules that
    need elementwise access say so in their docstrings and raise ``TypeError`` for other types.

    Writing your own
    ----------------
    Binary operators should return ``NotImplemented`` for operands they do not know, so that the
    library's zeros and thunks get their turn (``LowRank + ZeroTangent()`` then reaches
    ``ZeroTangent.__radd__`` and returns the ``LowRank`` unchanged). Set
    ``__array_ufunc__ = None`` (inherited from this class) so that ``ndarray + t`` and
    ``ndarray @ t`` call ``t.__radd__`` / ``t.__rmatmul__`` instead of building an object array.
    To make ``ProjectTo`` understand a primal type, register a projector with
    ``ProjectTo.register``.
    """

    __slots__ = ()
    # Makes numpy defer to our reflected operators: without it `ndarray + t` is an object array.
    __array_ufunc__ = None


class TangentArithmetic(AbstractTangent):
    """Mixin routing every operator of the library's own tangent types to :mod:`tangents.arithmetic`.

    The whole precedence table lives in that one module; the methods here only forward to it.
    """

    __slots__ = ()

    def __add__(self, other: Any) -> Any:
        return arithmetic.add(self, other)

    def __radd__(self, other: Any) -> Any:
        return arithmetic.add(other, self)

    def __sub__(self, other: Any) -> Any:
        return arithmetic.subtract(self, other)

    def __rsub__(self, other: Any) -> Any:
        return arithmetic.subtract(other, self)

    def __mul__(self, other: Any) -> Any:
        return arithmetic.multiply(self, other)

    def __rmul__(self, other: Any) -> Any:
        return arithmetic.multiply(other, self)

    def __truediv__(self, other: Any) -> Any:
        return arithmetic.divide(self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return arithmetic.divide(other, self)

    def __matmul__(self, other: Any) -> Any:
        return arithmetic.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return arithmetic.matmul(other, self)

    def __neg__(self) -> Any:
        return arithmetic.negative(self)

    def __pos__(self) -> Any:
        return self

    def conj(self) -> Any:
        """Complex conjugate (see :func:`tangents.arithmetic.conj`)."""
        return arithmetic.conj(self)

    conjugate = conj


# Imported last: arithmetic needs the subclasses, and they need the classes above.
from tangents import arithmetic
