"""``NotImplementedTangent``: a derivative that exists but has not been written."""

from __future__ import annotations

from typing import Any

from tangents.base import TangentArithmetic


class NotImplementedTangentError(NotImplementedError):
    """Raised when a :class:`NotImplementedTangent` is used where its value is needed."""


class NotImplementedTangent(TangentArithmetic):
    """Stands for a derivative that exists mathematically but has not been implemented.

    Use ``NoTangent()`` instead when the derivative does not exist. A ``NotImplementedTangent``
    propagates through ``+`` and ``*`` (it wins against everything but a zero factor, so it is
    harmless when multiplied by a zero cotangent), and raises :class:`NotImplementedTangentError`,
    quoting ``info``, when it is subtracted, divided, turned into an array or used as a number.

    Parameters
    ----------
    info : str
        What is missing, ideally with a link to an issue.
    """

    __slots__ = ("info",)

    def __init__(self, info: str) -> None:
        self.info = str(info)

    def __repr__(self) -> str:
        return f"NotImplementedTangent({self.info!r})"

    def error(self, operation: str) -> NotImplementedTangentError:
        """The exception raised when ``operation`` needs this tangent's value."""
        return NotImplementedTangentError(
            f"cannot {operation} a NotImplementedTangent: the derivative is not implemented. "
            f"Info: {self.info}"
        )

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        raise self.error("convert to an array")

    def __float__(self) -> float:
        raise self.error("use as a number")

    def __complex__(self) -> complex:
        raise self.error("use as a number")

    def __int__(self) -> int:
        raise self.error("use as a number")

    def __index__(self) -> int:
        raise self.error("use as a number")

    def __bool__(self) -> bool:
        raise self.error("use as a truth value")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NotImplementedTangent) and other.info == self.info

    def __hash__(self) -> int:
        return hash((NotImplementedTangent, self.info))

    def __reduce__(self) -> tuple[type, tuple[str]]:
        return (NotImplementedTangent, (self.info,))
