"""ndarray methods and attributes on a traced value, as the numpy functions that have rules.

Methods are not registry keys: ``x.sum(axis=0)`` is traced as ``np.sum(x, axis=0)``, so the
rule of ``np.sum`` is the rule of the method and a rule registered for a function covers its
method too. The table, one row per method (``x`` the traced value):

==================================  ===========================================================
method or attribute                 traced as
==================================  ===========================================================
``x.T``                             ``np.transpose(x)``
``x.mT``                            ``np.swapaxes(x, -1, -2)``
``x.real``, ``x.imag``              ``np.real(x)``, ``np.imag(x)``
``x.conj()``, ``x.conjugate()``     ``np.conjugate(x)``
``x.sum``, ``mean``, ``prod``,      ``np.sum``, ``np.mean``, ``np.prod``, ``np.max``,
``max``, ``min``, ``std``, ``var``  ``np.min``, ``np.std``, ``np.var`` (same arguments)
``x.cumsum``, ``x.cumprod``         ``np.cumsum``, ``np.cumprod``
``x.reshape(*shape)``               ``np.reshape(x, shape)`` (``x.reshape(2, 3)`` too)
``x.transpose(*axes)``              ``np.transpose(x, axes)`` (``x.transpose(1, 0)`` too)
``x.swapaxes``, ``squeeze``,        ``np.swapaxes``, ``np.squeeze``, ``np.ravel``,
``ravel``, ``flatten``              ``np.ravel``
``x.dot(y)``                        ``np.dot(x, y)``
``x.trace``, ``diagonal``, ``clip``  ``np.trace``, ``np.diagonal``, ``np.clip``
``x.round``, ``repeat``, ``take``   ``np.round``, ``np.repeat``, ``np.take``
``x.argmax``, ``argmin``,           ``np.argmax``, ``np.argmin``, ``np.argsort``,
``argsort``, ``nonzero``            ``np.nonzero`` (not differentiable; plain results)
``x.copy()``                        ``np.positive(x)`` (a new value, same derivative)
``x.astype(dtype)``                 :func:`rules.autodiff.casting.astype`
``x.all()``, ``x.any()``            on the value (a truth value has no derivative)
``x.shape``, ``ndim``, ``size``,    the value's (no derivative); ``len(x)`` and iteration
``dtype``                           (``x[0]``, ``x[1]``, ...) too
==================================  ===========================================================

In-place methods (``sort``, ``fill``, ``put``, ``resize``, ``setflags``) raise
:class:`~rules.autodiff.errors.InPlaceError`; ``item`` and ``tolist`` raise
:class:`~rules.autodiff.errors.TracedConversionError`.

A few numpy functions only inspect their argument (``np.iscomplexobj``, ``np.result_type``,
``np.isscalar``...); they have no derivative and are answered on the value without a rule.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.autodiff.casting import astype
from rules.autodiff.dispatch import bind
from rules.autodiff.errors import InPlaceError

__all__ = ["METHODS", "array_function", "install"]

# name -> the function the method is traced as; the method's arguments follow ``self``.
METHODS: dict[str, Any] = {
    "sum": np.sum,
    "mean": np.mean,
    "prod": np.prod,
    "max": np.max,
    "min": np.min,
    "std": np.std,
    "var": np.var,
    "cumsum": np.cumsum,
    "cumprod": np.cumprod,
    "swapaxes": np.swapaxes,
    "squeeze": np.squeeze,
    "ravel": np.ravel,
    "flatten": np.ravel,
    "dot": np.dot,
    "conj": np.conjugate,
    "conjugate": np.conjugate,
    "trace": np.trace,
    "diagonal": np.diagonal,
    "clip": np.clip,
    "round": np.round,
    "repeat": np.repeat,
    "take": np.take,
    "argmax": np.argmax,
    "argmin": np.argmin,
    "argsort": np.argsort,
    "nonzero": np.nonzero,
    "copy": np.positive,
    "astype": astype,
}

# Functions that only inspect their argument's type or shape: evaluated on the values.
INSPECTION = frozenset(
    {
        np.iscomplexobj,
        np.isrealobj,
        np.result_type,
        np.may_share_memory,
        np.shares_memory,
        np.min_scalar_type,
        np.can_cast,
    }
)

IN_PLACE = ("sort", "fill", "put", "resize", "setflags", "itemset", "partition")


def _values(x: Any) -> Any:
    from rules.autodiff.traced import Traced

    while isinstance(x, Traced):
        x = x._value
    if type(x) in (list, tuple):
        return type(x)(_values(v) for v in x)
    return x


def array_function(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``func(*args, **kwargs)`` reached through ``__array_function__``."""
    if func in INSPECTION:
        return func(*_values(args), **kwargs)
    return bind(func, args, kwargs)


def _method(name: str, function: Any) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return bind(function, (self, *args), kwargs)

    method.__name__ = name
    method.__doc__ = f"``{getattr(function, '__name__', name)}(x, ...)``, traced."
    return method


def _reshape(self: Any, *shape: Any, **kwargs: Any) -> Any:
    """``np.reshape(x, shape)``, traced; ``x.reshape(2, 3)`` and ``x.reshape((2, 3))`` alike."""
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return bind(np.reshape, (self, shape), kwargs)


def _transpose(self: Any, *axes: Any) -> Any:
    """``np.transpose(x, axes)``, traced; ``x.transpose(1, 0)`` and ``x.transpose((1, 0))``."""
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = axes[0]
    if not axes or axes == (None,):
        return bind(np.transpose, (self,), {})
    return bind(np.transpose, (self, tuple(axes)), {})


def _in_place(name: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> None:
        raise InPlaceError(f"x.{name}() writes into a traced array")

    method.__name__ = name
    method.__doc__ = f"Refuse: ``x.{name}()`` writes in place."
    return method


def _all(self: Any, *args: Any, **kwargs: Any) -> Any:
    """``np.all`` of the value (a truth value has no derivative)."""
    return np.all(_values(self), *args, **kwargs)


def _any(self: Any, *args: Any, **kwargs: Any) -> Any:
    """``np.any`` of the value (a truth value has no derivative)."""
    return np.any(_values(self), *args, **kwargs)


def install(cls: type) -> None:
    """Give the traced-value class ``cls`` the methods and attributes of the table."""
    for name, function in METHODS.items():
        setattr(cls, name, _method(name, function))
    for name in IN_PLACE:
        setattr(cls, name, _in_place(name))
    cls.reshape = _reshape  # type: ignore[attr-defined]
    cls.transpose = _transpose  # type: ignore[attr-defined]
    cls.all = _all  # type: ignore[attr-defined]
    cls.any = _any  # type: ignore[attr-defined]
    cls.T = property(lambda self: bind(np.transpose, (self,), {}), doc="``np.transpose(x)``.")
    cls.mT = property(
        lambda self: bind(np.swapaxes, (self, -1, -2), {}), doc="``np.swapaxes(x, -1, -2)``."
    )
    cls.real = property(lambda self: bind(np.real, (self,), {}), doc="``np.real(x)``.")
    cls.imag = property(lambda self: bind(np.imag, (self,), {}), doc="``np.imag(x)``.")
