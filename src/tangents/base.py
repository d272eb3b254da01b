"""The root of the tangent algebra and the operator mixin shared by the library's tangent types.

A *tangent* (or cotangent) is anything that can be added to another tangent of the same primal
and scaled by a number. Plain numbers and ndarrays are their own tangents; the classes of this
package add the symbolic zeros, lazy values and structural tangents that AD needs.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np


class AbstractTangent:
    """Root of the tangent types; also the contract every tangent type follows.

    A tangent type represents a derivative (a perturbation) of a primal value. Rules are written
    only with the operations below, so any type that supports them flows through every rule with
    an algebra path without being converted to an ndarray (DESIGN.md section 2). The full
    protocol, with the table of which rules take a user's type on their algebra path and which need
    arrays, is ``docs/tangent-types.md``; ``tests/rules/test_tangent_protocol.py`` checks it.

    Operations a tangent type supports
    ----------------------------------
    With ``t``, ``u`` tangents of the same primal, ``s`` a number and ``M`` an ndarray:

    * ``t + u`` and ``t - u`` (linear combination); ``s * t``, ``t * s`` and ``t / s``
      (scaling); unary ``-t``.
    * for matrix-like tangents: ``t @ M`` and ``M @ t`` (``M`` a matrix, or a vector on the
      right), ``t.mT`` (transpose of the last two axes; ``t.T`` too), ``t.conj()``, ``t.real``
      (and ``t.imag``).
    * a ``shape`` attribute, which rules and projectors use for shape checks.

    What a rule may assume
    ----------------------
    Nothing else. A rule never calls ``np.asarray`` (or any numpy function or ufunc) on a
    tangent it was given, never indexes, iterates or truth-tests it, never reads ``.dtype`` or
    ``.ndim`` and never writes into it. Rules that need elementwise access take the tangent
    through ``rules.core.cotangents.as_array_cotangent``, which raises ``TypeError`` naming the rule
    for a type that is not an array; they never densify it silently.

    Writing your own
    ----------------
    Binary operators should return ``NotImplemented`` for operands they do not know, so that the
    library's zeros and thunks get their turn (``LowRank + ZeroTangent()`` then reaches
    ``ZeroTangent.__radd__`` and returns the ``LowRank`` unchanged). Set
    ``__array_ufunc__ = None`` (inherited from this class) so that ``ndarray + t`` and
    ``ndarray @ t`` call ``t.__radd__`` / ``t.__rmatmul__`` instead of converting ``t`` or
    building an object array. Subclassing this class is optional.

    ``ProjectTo``: the library's projectors check a user type's ``shape`` and return it
    unchanged (no dtype cast, no real part, no structure). For a primal type of your own,
    register a projector with ``ProjectTo.register``; it must accept dense ndarrays, your
    natural tangent type and the structural ``Tangent(YourType, ...)`` form.
    """

    __slots__ = ()
    # Makes numpy defer to our reflected operators: without it `ndarray + t` is an object array.
    __array_ufunc__ = None


def is_scalar(x: Any) -> bool:
    """Whether ``x`` is a scalar that may scale a tangent: a number or a 0-d array."""
    return isinstance(x, numbers.Number) or (isinstance(x, np.ndarray) and x.ndim == 0)


class _Operators:
    """The operator table the mixin below forwards to; :mod:`tangents.arithmetic` fills it.

    The dependency runs one way: ``arithmetic`` imports the tangent classes (and this module)
    and installs its functions here when it is imported (``tangents/__init__`` imports it), so
    this module imports nothing of the package.
    """

    __slots__ = ("add", "conj", "divide", "matmul", "multiply", "negative", "subtract")


OPERATORS = _Operators()


class TangentArithmetic(AbstractTangent):
    """Mixin routing every operator of the library's own tangent types to :mod:`tangents.arithmetic`.

    The whole precedence table lives in that one module (through :data:`OPERATORS`); the
    methods here only forward to it.
    """

    __slots__ = ()

    def __add__(self, other: Any) -> Any:
        return OPERATORS.add(self, other)

    def __radd__(self, other: Any) -> Any:
        return OPERATORS.add(other, self)

    def __sub__(self, other: Any) -> Any:
        return OPERATORS.subtract(self, other)

    def __rsub__(self, other: Any) -> Any:
        return OPERATORS.subtract(other, self)

    def __mul__(self, other: Any) -> Any:
        return OPERATORS.multiply(self, other)

    def __rmul__(self, other: Any) -> Any:
        return OPERATORS.multiply(other, self)

    def __truediv__(self, other: Any) -> Any:
        return OPERATORS.divide(self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return OPERATORS.divide(other, self)

    def __matmul__(self, other: Any) -> Any:
        return OPERATORS.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return OPERATORS.matmul(other, self)

    def __neg__(self) -> Any:
        return OPERATORS.negative(self)

    def __pos__(self) -> Any:
        return self

    def conj(self) -> Any:
        """Complex conjugate (see :func:`tangents.arithmetic.conj`)."""
        return OPERATORS.conj(self)

    conjugate = conj
