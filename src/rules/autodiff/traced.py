"""The traced value: an array-like that records what is done to it.

``Traced(value, trace, payload, index)`` stands for ``value`` inside the differentiation ``trace``.
In reverse mode ``payload`` is the recorded call that made it (a :class:`~rules.autodiff.tape.Node`)
and ``index`` which of that call's outputs it is; in forward mode ``payload`` is its tangent.

Everything numpy does to it goes through :func:`rules.autodiff.dispatch.bind`, which looks the
function up in the rule registry:

* numpy functions through ``__array_function__`` and ufuncs through ``__array_ufunc__``, with the
  function object itself as the registry key;
* Python operators as numpy's ufuncs on plain arrays and numbers (``x @ y`` is
  ``np.matmul(x, y)``, ``x ** 2`` is ``np.power(x, 2)``), and through the ``operator``
  module's functions otherwise (a ``Diagonal`` keeps its own ``@``); comparisons through
  ``operator`` too, which have non-differentiable rules;
* indexing as ``operator.getitem(x, key)``;
* ndarray methods and attributes as the numpy functions of :mod:`rules.autodiff.methods`.

Conversions that would drop the trace (``np.asarray``, ``float()``, ``int()``, ``.item()``) and
in-place writes raise. ``bool()`` is allowed: control flow on a traced value is fine, a truth
value has no derivative. The traced value also implements the tangent protocol of
``docs/tangent-types.md`` (``+``, ``-``, scalar ``*``, ``@``, ``.mT``, ``.T``, ``.conj()``,
``.real``, ``.imag``, ``.shape``), each operation traced, so that a pullback handed traced
cotangents is itself differentiated (nesting).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from rules.autodiff import methods
from rules.autodiff.dispatch import bind, bind_ufunc
from rules.autodiff.errors import InPlaceError, TracedConversionError
from rules.core.nesting import register_traced
from tangents import AbstractTangent

__all__ = ["Traced"]


def _defer(other: Any) -> bool:
    """Whether a binary operator should let ``other`` (a symbolic tangent) answer instead."""
    return isinstance(other, AbstractTangent)


_NUMERIC = (np.ndarray, np.generic, int, float, complex)


def _is_numeric(x: Any) -> bool:
    """Whether ``x`` (or the value a traced value stands for, nested or not) is a plain array.

    Numbers count too. For those the ufunc and the operator are the same function.
    """
    while type(x) is Traced:
        x = x._value
    return isinstance(x, _NUMERIC)


def _binary(op: Any, name: str, ufunc: Any = None) -> tuple[Any, Any]:
    """The operator pair for ``op``.

    Traced as ``ufunc`` on plain arrays and numbers (one registry call: the operator's own rule
    would delegate to it), as ``op`` otherwise (structured matrices keep their own ``@``).
    """

    def forward(self: Traced, other: Any) -> Any:
        if _defer(other):
            return NotImplemented
        f = ufunc if ufunc is not None and _is_numeric(self) and _is_numeric(other) else op
        return bind(f, (self, other), {})

    def reflected(self: Traced, other: Any) -> Any:
        if _defer(other):
            return NotImplemented
        f = ufunc if ufunc is not None and _is_numeric(self) and _is_numeric(other) else op
        return bind(f, (other, self), {})

    forward.__name__, reflected.__name__ = f"__{name}__", f"__r{name}__"
    forward.__doc__ = f"``{op.__name__}(self, other)``, traced."
    reflected.__doc__ = f"``{op.__name__}(other, self)``, traced."
    return forward, reflected


def _comparison(op: Any) -> Any:
    def compare(self: Traced, other: Any) -> Any:
        return bind(op, (self, other), {})

    compare.__doc__ = f"``{op.__name__}(self, other)``, traced (not differentiable)."
    return compare


class Traced:
    """A value being differentiated; use it as you would an ndarray (see the module docstring)."""

    __slots__ = ("__weakref__", "_index", "_payload", "_trace", "_value")

    def __init__(self, value: Any, trace: Any, payload: Any, index: int = 0) -> None:
        self._value = value
        self._trace = trace
        self._payload = payload
        self._index = index

    # --- numpy's protocols ------------------------------------------------------------------------
    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        """Trace a numpy function: its rule runs on the values and is recorded."""
        return methods.array_function(func, args, kwargs)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """Trace a ufunc call: its rule runs on the values and is recorded."""
        return bind_ufunc(ufunc, method, inputs, kwargs)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """Refuse: an ndarray made from a traced value would be a constant."""
        raise TracedConversionError("np.asarray/np.array (__array__)")

    def __float__(self) -> float:
        raise TracedConversionError("float()")

    def __complex__(self) -> complex:
        raise TracedConversionError("complex()")

    def __int__(self) -> int:
        raise TracedConversionError("int()")

    def __index__(self) -> int:
        raise TracedConversionError("using it as an index (__index__)")

    def item(self, *args: Any) -> Any:
        """Refuse: a Python number made from a traced value would be a constant."""
        raise TracedConversionError(".item()")

    def tolist(self) -> Any:
        """Refuse: Python numbers made from a traced value would be constants."""
        raise TracedConversionError(".tolist()")

    def __bool__(self) -> bool:
        return bool(self._value)

    def __len__(self) -> int:
        return len(self._value)

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self._value)))

    def __getitem__(self, key: Any) -> Any:
        return bind(operator.getitem, (self, key), {})

    def __setitem__(self, key: Any, value: Any) -> None:
        raise InPlaceError("item assignment x[...] = value on a traced array")

    # --- attributes that are not traced (they have no derivative) -------------------------------
    shape = property(lambda self: np.shape(self._value), doc="The value's shape.")
    ndim = property(lambda self: np.ndim(self._value), doc="The value's number of axes.")
    size = property(lambda self: np.size(self._value), doc="The value's number of elements.")
    dtype = property(lambda self: np.result_type(self._value), doc="The value's dtype.")

    # --- operators ------------------------------------------------------------------------------
    __add__, __radd__ = _binary(operator.add, "add", np.add)
    __sub__, __rsub__ = _binary(operator.sub, "sub", np.subtract)
    __mul__, __rmul__ = _binary(operator.mul, "mul", np.multiply)
    __truediv__, __rtruediv__ = _binary(operator.truediv, "truediv", np.divide)
    __floordiv__, __rfloordiv__ = _binary(operator.floordiv, "floordiv")
    __mod__, __rmod__ = _binary(operator.mod, "mod")
    __pow__, __rpow__ = _binary(operator.pow, "pow", np.power)
    __matmul__, __rmatmul__ = _binary(operator.matmul, "matmul", np.matmul)
    __and__, __rand__ = _binary(operator.and_, "and")
    __or__, __ror__ = _binary(operator.or_, "or")
    __xor__, __rxor__ = _binary(operator.xor, "xor")
    __lt__ = _comparison(operator.lt)
    __le__ = _comparison(operator.le)
    __gt__ = _comparison(operator.gt)
    __ge__ = _comparison(operator.ge)
    __eq__ = _comparison(operator.eq)  # type: ignore[assignment]
    __ne__ = _comparison(operator.ne)  # type: ignore[assignment]
    __hash__ = object.__hash__  # identity, as for any object: traced values are not values

    def __neg__(self) -> Any:
        return bind(operator.neg, (self,), {})

    def __pos__(self) -> Any:
        return bind(operator.pos, (self,), {})

    def __abs__(self) -> Any:
        return bind(np.absolute, (self,), {})

    def __invert__(self) -> Any:
        return bind(operator.invert, (self,), {})

    # x += y on a traced x rebinds x to x + y (Python's fallback when __iadd__ is missing), which
    # is traced correctly; the methods below are therefore deliberately not defined.

    def __repr__(self) -> str:
        return f"Traced({self._value!r}, level {self._trace.level})"


methods.install(Traced)
register_traced(Traced, bind)
