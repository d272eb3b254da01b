"""``RecordingTangent``: check that a rule's algebra path uses only the tangent protocol.

A user-defined tangent type flows through a rule only if the rule never converts it to an
ndarray (docs/tangent-types.md). ``RecordingTangent`` wraps an ndarray, offers exactly the
operations of the protocol, logs each one applied to it, and raises
:class:`TangentConversionError` on anything else: a conversion to an ndarray (``__array__``, the
array interfaces), iteration, indexing, ``len``, ``bool``, ``float``, in-place writes, and reading
``.dtype`` or ``.ndim``. Pass one to your rule's pullback::

    from rules.testing import RecordingTangent

    y, pullback = rrule(my_function, A)
    log = []
    x_bar = pullback(RecordingTangent(np.ones(y.shape), log))
    assert isinstance(x_bar, RecordingTangent)  # the algebra path ran, nothing was converted
    print(set(log))                             # e.g. {"t @ M", "M @ t"}

The log names the operations as the docs do: ``"t + u"``, ``"t - u"``, ``"-t"``, ``"s * t"``,
``"t / s"``, ``"t @ M"``, ``"M @ t"``, ``"t.T"``, ``"t.mT"``, ``"t.conj()"``, ``"t.real"``,
``"t.imag"``. ``numpy`` ufuncs refuse it with their own ``TypeError`` (``__array_ufunc__ = None``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tangents.arithmetic import is_scalar

__all__ = ["RecordingTangent", "TangentConversionError"]


class TangentConversionError(AssertionError):
    """A rule converted a tangent type to an ndarray, or used what the protocol does not offer."""


class RecordingTangent:
    """A tangent type with only the protocol's operations, logging each; never an ndarray.

    Parameters
    ----------
    data : array_like
        The matrix (or array) the tangent stands for; results of operations wrap the results of
        the same operations on ``data``, so they can be compared with the plain-array path.
    log : list, optional
        Where the names of the applied operations are appended; shared by every tangent derived
        from this one (a new list by default).
    """

    __array_ufunc__ = None
    __slots__ = ("data", "log")

    def __init__(self, data: Any, log: list[str] | None = None) -> None:
        self.data = np.asarray(data)
        self.log = [] if log is None else log

    def _new(self, operation: str, data: Any) -> RecordingTangent:
        self.log.append(operation)
        return RecordingTangent(data, self.log)

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of ``data``: rules and projectors check it."""
        return self.data.shape

    def __add__(self, other: Any) -> Any:
        if isinstance(other, RecordingTangent):
            return self._new("t + u", self.data + other.data)
        return NotImplemented

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        if isinstance(other, RecordingTangent):
            return self._new("t - u", self.data - other.data)
        return NotImplemented

    def __rsub__(self, other: Any) -> Any:
        if isinstance(other, RecordingTangent):
            return self._new("t - u", other.data - self.data)
        return NotImplemented

    def __neg__(self) -> RecordingTangent:
        return self._new("-t", -self.data)

    def __mul__(self, s: Any) -> Any:
        return self._new("s * t", self.data * s) if is_scalar(s) else NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, s: Any) -> Any:
        return self._new("t / s", self.data / s) if is_scalar(s) else NotImplemented

    def __matmul__(self, M: Any) -> Any:
        if isinstance(M, np.ndarray) and M.ndim >= 1:
            return self._new("t @ M", self.data @ M)
        return NotImplemented

    def __rmatmul__(self, M: Any) -> Any:
        if isinstance(M, np.ndarray) and M.ndim >= 1:
            return self._new("M @ t", M @ self.data)
        return NotImplemented

    @property
    def T(self) -> RecordingTangent:
        """Numpy's transpose (all axes reversed)."""
        return self._new("t.T", self.data.T)

    @property
    def mT(self) -> RecordingTangent:
        """The transpose of the last two axes."""
        return self._new("t.mT", self.data.mT)

    def conj(self) -> RecordingTangent:
        """The complex conjugate."""
        return self._new("t.conj()", self.data.conj())

    @property
    def real(self) -> RecordingTangent:
        """The real part."""
        return self._new("t.real", self.data.real)

    @property
    def imag(self) -> RecordingTangent:
        """The imaginary part."""
        return self._new("t.imag", self.data.imag)

    def __repr__(self) -> str:
        return f"RecordingTangent(shape={self.shape})"


def _refused(what: str, attribute: bool = False) -> Any:
    """A method (or property) that raises: the protocol does not offer ``what``."""

    def refuse(self: RecordingTangent, *args: Any, **kwargs: Any) -> Any:
        raise TangentConversionError(f"a rule used {what} on a RecordingTangent")

    return property(refuse) if attribute else refuse


for _name, _what in {
    "__array__": "__array__ (a conversion to an ndarray)",
    "__iter__": "iteration",
    "__getitem__": "indexing",
    "__setitem__": "item assignment",
    "__iadd__": "in-place +=",
    "__len__": "len()",
    "__bool__": "bool()",
    "__float__": "float()",
    "__complex__": "complex()",
    "__index__": "__index__",
}.items():
    setattr(RecordingTangent, _name, _refused(_what))
for _name in ("__array_interface__", "__array_struct__", "dtype", "ndim"):
    setattr(RecordingTangent, _name, _refused(_name, attribute=True))
