"""Symbolic zeros: ``ZeroTangent()`` (the additive identity) and ``NoTangent()`` (no tangent space).

Both are singletons, also across pickling, so ``x is ZeroTangent()`` is a valid test.
"""

from __future__ import annotations

from typing import Any

from tangents.base import TangentArithmetic


class AbstractZero(TangentArithmetic):
    """A tangent that is exactly zero, whatever the primal's shape or dtype.

    Every subclass is a singleton. Linear maps send a zero to a zero, so when every cotangent
    reaching a pullback is an ``AbstractZero`` the registry skips the pullback altogether.
    Transposes, conjugates and real/imaginary parts of a zero are the zero itself.
    """

    __slots__ = ()
    _instance: AbstractZero | None = None

    def __new__(cls) -> AbstractZero:
        """Return the one instance of the class."""
        instance = cls.__dict__.get("_instance")
        if instance is None:
            instance = super().__new__(cls)
            cls._instance = instance
        return instance

    def __reduce__(self) -> tuple[type, tuple[()]]:
        # Unpickling calls the class, which returns the singleton.
        return (type(self), ())

    def __copy__(self) -> AbstractZero:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> AbstractZero:
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    @property
    def T(self) -> AbstractZero:
        """The zero itself."""
        return self

    @property
    def mT(self) -> AbstractZero:
        """The zero itself."""
        return self

    @property
    def real(self) -> AbstractZero:
        """The zero itself."""
        return self

    @property
    def imag(self) -> AbstractZero:
        """The zero itself."""
        return self

    def __float__(self) -> float:
        return 0.0

    def __complex__(self) -> complex:
        return 0j

    def __int__(self) -> int:
        return 0

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        raise TypeError(
            f"{self!r} has no shape or dtype, so it cannot become an ndarray; use "
            "ProjectTo(x)(dx) or np.zeros_like(x) where the primal x is known"
        )


class ZeroTangent(AbstractZero):
    """The additive identity of every tangent space: a hard zero.

    ``ZeroTangent() + x is x``; ``ZeroTangent() * x is ZeroTangent()`` for every ``x``, including
    ``nan`` and ``inf`` (a strong zero: an unused output never turns a gradient into NaN).
    Use it when a primal input does not affect the output.
    """

    __slots__ = ()


class NoTangent(AbstractZero):
    """The tangent of something that has no tangent space (an index, a bool, a string, a plain function).

    It behaves like ``ZeroTangent()`` in arithmetic, except that it wins ``+`` against another
    zero (``NoTangent() + ZeroTangent() is NoTangent()``) while ``ZeroTangent()`` wins ``*``.
    """

    __slots__ = ()
