"""Lazy tangents: ``Thunk``, ``InplaceableThunk`` and ``unthunk``.

When to thunk
-------------
A rule with several inputs (or outputs) may wrap each cotangent *computation* in a ``Thunk`` so
that only the ones actually used are computed: ``Thunk(lambda: C_bar @ B.T)``. Do not thunk a
value that is already computed, a cheap scalar expression, or the only output of a rule: the
closure then costs more than it saves.

Semantics
---------
A ``Thunk`` is memoised: its function runs at most once, on first use, and the value is kept
(ChainRulesCore re-runs it on every use; caching is what makes a thunk safe to use many times).
Transposes and conjugates of a thunk stay lazy; every other operation evaluates it. Copies and
pickles keep the state: an unevaluated thunk carries its function (so a thunk of a lambda cannot
be pickled), an evaluated one its value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tangents.base import TangentArithmetic


class _Unset:
    """The value of a thunk whose function has not run: one object, kept by copies and pickles.

    A bare ``object()`` would be copied as a new object by ``copy.deepcopy`` and ``pickle``, and
    the copy's ``_value is _UNSET`` test would then fail: the copy would return the sentinel as
    its value. ``__reduce__`` names the module-level instance instead, so both give it back.
    """

    __slots__ = ()

    def __reduce__(self) -> str:
        return "_UNSET"

    def __repr__(self) -> str:
        return "<unset>"


_UNSET: Any = _Unset()


class AbstractThunk(TangentArithmetic):
    """A tangent whose value is computed on demand; read it with :func:`unthunk`."""

    __slots__ = ()

    def unthunk(self) -> Any:
        """The value, fully unwrapped (a thunk returning a thunk is unwrapped too)."""
        raise NotImplementedError

    @property
    def T(self) -> Thunk:
        """Lazy transpose: a new thunk of ``unthunk(self).T``."""
        return Thunk(lambda: unthunk(self).T)

    @property
    def mT(self) -> Thunk:
        """Lazy transpose of the last two axes: a new thunk of ``unthunk(self).mT``."""
        return Thunk(lambda: unthunk(self).mT)

    @property
    def real(self) -> Any:
        """The real part of the value (evaluates the thunk)."""
        return unthunk(self).real

    @property
    def imag(self) -> Any:
        """The imaginary part of the value (evaluates the thunk)."""
        return unthunk(self).imag

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.unthunk(), dtype=dtype)


class Thunk(AbstractThunk):
    """A lazily computed, memoised tangent.

    Parameters
    ----------
    fn : callable
        Called with no arguments, at most once, the first time the value is needed.

    Examples
    --------
    >>> import numpy as np
    >>> calls = []
    >>> t = Thunk(lambda: calls.append(1) or np.ones(2))
    >>> unthunk(t) is unthunk(t), len(calls)
    (True, 1)
    """

    __slots__ = ("_fn", "_value")

    def __init__(self, fn: Callable[[], Any]) -> None:
        if not callable(fn):
            raise TypeError(f"Thunk needs a function of no arguments, got {type(fn).__name__}")
        self._fn: Callable[[], Any] | None = fn
        self._value: Any = _UNSET

    def unthunk(self) -> Any:
        """Run the function on first use (only then), and return the fully unwrapped value."""
        if self._value is _UNSET:
            fn = self._fn
            assert fn is not None
            value = fn()
            while isinstance(value, AbstractThunk):
                value = value.unthunk()
            self._value = value
            self._fn = None  # release whatever the closure captured
        return self._value

    @property
    def evaluated(self) -> bool:
        """Whether the function has already run."""
        return self._value is not _UNSET

    def __reduce__(self) -> tuple[Any, ...]:
        # Copies and pickles keep the state as it is: the function if it has not run, else the
        # value (and _UNSET, which pickles by name, stays the one sentinel).
        return _rebuild_thunk, (self._fn, self._value)

    def __repr__(self) -> str:
        if self.evaluated:
            return f"Thunk(<evaluated: {self._value!r}>)"
        return f"Thunk({self._fn!r})"


def _rebuild_thunk(fn: Callable[[], Any] | None, value: Any) -> Thunk:
    """A ``Thunk`` in the given state (for ``Thunk.__reduce__``)."""
    thunk = Thunk.__new__(Thunk)
    thunk._fn, thunk._value = fn, value
    return thunk


class InplaceableThunk(AbstractThunk):
    """A thunk that can also add its value into an existing accumulator, in place.

    Parameters
    ----------
    add_fn : callable
        ``add_fn(acc)`` adds the value into the ndarray ``acc`` in place and returns ``acc``;
        it is what :func:`tangents.add_inplace` calls, and it can be much cheaper than
        materialising the value (e.g. a scatter-add for an indexing cotangent).
    thunk : Thunk or callable
        The value form, used by every other operation.
    """

    __slots__ = ("add_fn", "thunk")

    def __init__(self, add_fn: Callable[[Any], Any], thunk: Thunk | Callable[[], Any]) -> None:
        if not callable(add_fn):
            raise TypeError("InplaceableThunk needs add_fn(acc) -> acc as its first argument")
        self.add_fn = add_fn
        self.thunk = thunk if isinstance(thunk, Thunk) else Thunk(thunk)

    def unthunk(self) -> Any:
        """The value of the wrapped thunk."""
        return self.thunk.unthunk()

    def __repr__(self) -> str:
        return f"InplaceableThunk({self.add_fn!r}, {self.thunk!r})"


def unthunk(x: Any) -> Any:
    """Return the value of a thunk, fully unwrapped; return anything else unchanged."""
    if isinstance(x, AbstractThunk):
        return x.unthunk()
    return x
