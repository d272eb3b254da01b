r"""Rules of tensor and vector products: ``tensordot``, ``cross``, ``vecdot``, ``outer``, ``matrix_transpose``.

numpy's and numpy.linalg's variants side by side (``np.tensordot``/``np.linalg.tensordot``,
``np.cross``/``np.linalg.cross``, ``np.vecdot``/``np.linalg.vecdot``,
``np.matrix_transpose``/``np.linalg.matrix_transpose``, ``np.linalg.outer`` next to ``np.outer``
in :mod:`rules.linalg.outer_products`).

* ``tensordot(a, b, axes)`` contracts ``a``'s axes ``A`` with ``b``'s axes ``B``: it is bilinear,
  :math:`\bar a = \bar y \cdot \bar b` contracted over ``b``'s free axes and
  :math:`\bar b = \bar a \cdot \bar y` over ``a``'s (with :math:`\bar{\ }` of the other operand
  its conjugate), each permuted back to its operand's axis order.
* ``cross(a, b)`` (3-vectors; 2-vectors are deprecated by numpy 2 and refused):
  :math:`\langle \bar y, a \times b\rangle = \langle a, b \times \bar y\rangle`, so for the
  complex convention :math:`\bar a = \bar b \times \bar y` and :math:`\bar b = \bar y \times \bar a`
  with conjugated operands, :math:`\bar a = \overline{b} \times \bar y`,
  :math:`\bar b = \bar y \times \overline{a}`; summed back over broadcasting.
* ``vecdot(x1, x2) = sum(conj(x1) x2, axis)`` is antilinear in ``x1``:
  :math:`\bar x_1 = x_2 \overline{\bar y}`, :math:`\bar x_2 = x_1 \bar y`.
* ``matrix_transpose(x) = x.mT``: the pullback and pushforward are ``.mT``, an operation of the
  tangent algebra, so any tangent type flows through unconverted.

References
----------
ChainRules.jl ``src/rulesets/LinearAlgebra/dense.jl`` (``dot``, ``cross``: ``ā = b × ȳ``);
HIPS autograd ``autograd/numpy/numpy_vjps.py`` (``grad_tensordot``, ``grad_cross``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.broadcasting import unbroadcast
from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array
from rules.core.options import normalize_axes, rrule_with_options
from rules.core.registry import frule
from rules.linalg.outer_products import outer_frule, outer_rrule
from tangents import AbstractZero, NoTangent, ProjectTo, unthunk

__all__: list[str] = []


def _array(t: Any, name: str, what: str = "pullback") -> np.ndarray:
    return as_array(as_array_cotangent(t, f"{name}'s {what}"))


def _tangents(tangents: tuple[Any, ...], name: str) -> list[Any]:
    """The two operands' tangents as arrays, ``None`` for zeros."""
    out = []
    for t in tangents[1:3]:
        t = unthunk(t)
        out.append(None if isinstance(t, AbstractZero) else _array(t, name, "frule"))
    return out


# --- tensordot ----------------------------------------------------------------------------------


def _contracted(a: Any, b: Any, axes: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Numpy's ``axes`` argument as two tuples of non-negative axes."""
    if isinstance(axes, int | np.integer):
        k = int(axes)
        return tuple(range(np.ndim(a) - k, np.ndim(a))), tuple(range(k))
    a_axes, b_axes = axes
    a_axes = (a_axes,) if isinstance(a_axes, int | np.integer) else tuple(a_axes)
    b_axes = (b_axes,) if isinstance(b_axes, int | np.integer) else tuple(b_axes)
    return normalize_axes(a_axes, np.ndim(a)), normalize_axes(b_axes, np.ndim(b))


def _register_tensordot(f: Any, name: str) -> None:
    def tensordot_rrule(a: Any, b: Any, axes: Any = 2) -> Any:
        y = f(a, b, axes=axes)
        a_axes, b_axes = _contracted(a, b, axes)
        a_free = [i for i in range(np.ndim(a)) if i not in a_axes]
        b_free = [i for i in range(np.ndim(b)) if i not in b_axes]
        k = len(a_free)
        # The contracted axes left in each product come in their operand's own order; map each
        # to the axis of the other operand it was paired with.
        a_from_b = [a_axes[b_axes.index(j)] for j in sorted(b_axes)]
        b_from_a = [b_axes[a_axes.index(i)] for i in sorted(a_axes)]
        a_order = np.argsort([*a_free, *a_from_b])
        b_order = np.argsort([*b_from_a, *b_free])
        project_a, project_b = ProjectTo(a), ProjectTo(b)

        def tensordot_pullback(y_bar: Any) -> tuple[Any, Any, Any]:
            g = _array(y_bar, name)
            # ā: ȳ contracted with conj(b) over b's free axes; b̄: conj(a) with ȳ over a's.
            a_bar = np.tensordot(g, np.conj(b), (list(range(k, g.ndim)), b_free))
            b_bar = np.tensordot(np.conj(a), g, (a_free, list(range(k))))
            return (
                NoTangent(),
                project_a(np.transpose(a_bar, a_order)),
                project_b(np.transpose(b_bar, b_order)),
            )

        tensordot_pullback.__qualname__ = f"{name.split('.')[-1]}_pullback"
        return y, tensordot_pullback

    def tensordot_frule(tangents: tuple[Any, ...], a: Any, b: Any, axes: Any = 2) -> Any:
        y = f(a, b, axes=axes)
        a_dot, b_dot = _tangents(tangents, name)
        y_dot: Any = 0
        if a_dot is not None:
            y_dot = y_dot + f(a_dot, b, axes=axes)
        if b_dot is not None:
            y_dot = y_dot + f(a, b_dot, axes=axes)
        return y, ProjectTo(y)(y_dot)

    tensordot_rrule.__qualname__ = "tensordot_rrule"
    tensordot_rrule.__doc__ = f"Reverse rule of ``{name}(a, b, axes)`` (module docstring)."
    tensordot_frule.__qualname__ = "tensordot_frule"
    tensordot_frule.__doc__ = f"``ẏ = {name}(ȧ, b) + {name}(a, ḃ)``."
    rrule_with_options(f)(tensordot_rrule)
    frule.register(f)(tensordot_frule)


_register_tensordot(np.tensordot, "np.tensordot")
_register_tensordot(np.linalg.tensordot, "np.linalg.tensordot")


# --- cross --------------------------------------------------------------------------------------


def _cross_axes(kwargs: dict[str, Any]) -> tuple[int, int, int]:
    axis = kwargs.get("axis")
    if axis is not None:
        return axis, axis, axis
    return kwargs.get("axisa", -1), kwargs.get("axisb", -1), kwargs.get("axisc", -1)


def _register_cross(f: Any, name: str, positional: tuple[str, ...]) -> None:
    def options(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        return {**dict(zip(positional, args, strict=False)), **kwargs}

    def cross_rrule(a: Any, b: Any, *args: Any, **kwargs: Any) -> Any:
        axisa, axisb, axisc = _cross_axes(options(args, kwargs))
        a_last, b_last = np.moveaxis(a, axisa, -1), np.moveaxis(b, axisb, -1)
        if a_last.shape[-1] != 3 or b_last.shape[-1] != 3:
            raise ValueError(f"the rules of {name} support 3-vectors only")
        y = f(a, b, *args, **kwargs)
        project_a, project_b = ProjectTo(a), ProjectTo(b)

        def cross_pullback(y_bar: Any) -> tuple[Any, Any, Any]:
            g = np.moveaxis(_array(y_bar, name), axisc if np.ndim(y) > 1 else -1, -1)
            a_bar = unbroadcast(np.cross(np.conj(b_last), g), a_last.shape)
            b_bar = unbroadcast(np.cross(g, np.conj(a_last)), b_last.shape)
            return (
                NoTangent(),
                project_a(np.moveaxis(a_bar, -1, axisa)),
                project_b(np.moveaxis(b_bar, -1, axisb)),
            )

        cross_pullback.__qualname__ = "cross_pullback"
        return y, cross_pullback

    def cross_frule(tangents: tuple[Any, ...], a: Any, b: Any, *args: Any, **kwargs: Any) -> Any:
        y = f(a, b, *args, **kwargs)
        a_dot, b_dot = _tangents(tangents, name)
        y_dot: Any = 0
        if a_dot is not None:
            y_dot = y_dot + f(a_dot, b, *args, **kwargs)
        if b_dot is not None:
            y_dot = y_dot + f(a, b_dot, *args, **kwargs)
        return y, ProjectTo(y)(y_dot)

    cross_rrule.__qualname__ = "cross_rrule"
    cross_rrule.__doc__ = (
        f"Reverse rule of ``{name}(a, b)``: ``ā = conj(b) × ȳ``, ``b̄ = ȳ × conj(a)``."
    )
    cross_frule.__qualname__ = "cross_frule"
    cross_frule.__doc__ = f"``ẏ = {name}(ȧ, b) + {name}(a, ḃ)``."
    rrule_with_options(f)(cross_rrule)
    frule.register(f)(cross_frule)


_register_cross(np.cross, "np.cross", ("axisa", "axisb", "axisc", "axis"))
_register_cross(np.linalg.cross, "np.linalg.cross", ())


# --- vecdot -------------------------------------------------------------------------------------


def _register_vecdot(f: Any, name: str) -> None:
    def vecdot_rrule(x1: Any, x2: Any, /, **kwargs: Any) -> Any:
        axis = kwargs.get("axis", -1)
        y = f(x1, x2, **kwargs)
        project_1, project_2 = ProjectTo(x1), ProjectTo(x2)
        shape = np.broadcast_shapes(np.shape(x1), np.shape(x2))
        along = normalize_axes(axis, len(shape))[0]

        def vecdot_pullback(y_bar: Any) -> tuple[Any, Any, Any]:
            g = np.expand_dims(_array(y_bar, name), along)
            return (
                NoTangent(),
                project_1(unbroadcast(x2 * np.conj(g), np.shape(x1))),
                project_2(unbroadcast(x1 * g, np.shape(x2))),
            )

        vecdot_pullback.__qualname__ = "vecdot_pullback"
        return y, vecdot_pullback

    def vecdot_frule(tangents: tuple[Any, ...], x1: Any, x2: Any, /, **kwargs: Any) -> Any:
        y = f(x1, x2, **kwargs)
        dot1, dot2 = _tangents(tangents, name)
        y_dot: Any = 0
        if dot1 is not None:
            y_dot = y_dot + f(dot1, x2, **kwargs)
        if dot2 is not None:
            y_dot = y_dot + f(x1, dot2, **kwargs)
        return y, ProjectTo(y)(y_dot)

    vecdot_rrule.__qualname__ = "vecdot_rrule"
    vecdot_rrule.__doc__ = f"Reverse rule of ``{name}``: ``x̄1 = x2 conj(ȳ)``, ``x̄2 = x1 ȳ``."
    vecdot_frule.__qualname__ = "vecdot_frule"
    vecdot_frule.__doc__ = f"``ẏ = {name}(ẋ1, x2) + {name}(x1, ẋ2)``."
    rrule_with_options(f)(vecdot_rrule)
    frule.register(f)(vecdot_frule)


_register_vecdot(np.vecdot, "np.vecdot")
_register_vecdot(np.linalg.vecdot, "np.linalg.vecdot")


# --- matrix_transpose and np.linalg.outer ---------------------------------------------------------


def _register_matrix_transpose(f: Any) -> None:
    def matrix_transpose_rrule(x: Any, /) -> Any:
        y = f(x)
        project_x = ProjectTo(x)

        def matrix_transpose_pullback(y_bar: Any) -> tuple[Any, Any]:
            return NoTangent(), project_x(unthunk(y_bar).mT)

        return y, matrix_transpose_pullback

    def matrix_transpose_frule(tangents: tuple[Any, ...], x: Any, /) -> Any:
        y = f(x)
        return y, ProjectTo(y)(unthunk(tangents[1]).mT)

    matrix_transpose_rrule.__doc__ = "``y = x.mT``: ``x̄ = ȳ.mT`` (the tangent algebra's ``.mT``)."
    matrix_transpose_frule.__doc__ = "``ẏ = ẋ.mT``."
    rrule_with_options(f)(matrix_transpose_rrule)
    frule.register(f)(matrix_transpose_frule)


_register_matrix_transpose(np.matrix_transpose)
_register_matrix_transpose(np.linalg.matrix_transpose)


def _vectors(x1: Any, x2: Any) -> None:
    if np.ndim(x1) != 1 or np.ndim(x2) != 1:
        raise ValueError("np.linalg.outer takes two vectors (1-D arrays)")


@rrule_with_options(np.linalg.outer)
def linalg_outer_rrule(x1: Any, x2: Any, /) -> Any:
    """``np.linalg.outer(x1, x2)`` of vectors: ``np.outer``'s rule (generic: ``t @ M``, ``t.mT``)."""
    _vectors(x1, x2)
    return outer_rrule(x1, x2)


@frule.register(np.linalg.outer)
def linalg_outer_frule(tangents: tuple[Any, ...], x1: Any, x2: Any, /) -> Any:
    """``np.outer``'s frule for two vectors."""
    _vectors(x1, x2)
    return outer_frule(tangents, x1, x2)
