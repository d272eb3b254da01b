r"""Rules of more shape functions and conversions: ``atleast_1d/2d/3d``, ``fliplr``, ``flipud``, ``rot90``, ...

Also ``rollaxis``, ``copy``, ``asarray`` and ``astype``. Each is linear in its array argument
(the tangent goes through the function itself) with these adjoints:

* ``atleast_nd``: reshape the cotangent back (with several arrays, one cotangent per array,
  the output being a tuple; ``ȳ`` may then be a tuple, a list or a ``Tangent``);
* ``fliplr``/``flipud``: themselves; ``rot90(m, k, axes)``: ``rot90(ȳ, -k, axes)``;
* ``rollaxis``: the inverse axis permutation;
* ``copy``, ``asarray``: the identity; ``astype(x, dtype)``: the identity cast back to ``x``'s
  precision by ``ProjectTo`` (a float32 ``x`` cast to float64 gets a float32 cotangent; a cast to
  an integer or boolean type has no derivative, so its cotangent is zero).

References
----------
ChainRules.jl ``src/rulesets/Base/array.jl`` (``reshape``, ``reverse``, ``permutedims``,
``copy``); JAX ``jax/_src/numpy/lax_numpy.py`` (``rot90`` as flips and a transpose).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.cotangents import as_array_cotangent
from rules.core.linear_frules import register_linear_frule
from rules.core.nesting import as_array, is_traced
from rules.core.options import rrule_with_options, zero_tangent_array
from rules.core.registry import frule, split_cotangent
from tangents import AbstractZero, NoTangent, ProjectTo, Tangent, ZeroTangent, unthunk

__all__: list[str] = []


def _array(t: Any, name: str, what: str = "pullback") -> np.ndarray:
    return as_array(as_array_cotangent(t, f"np.{name}'s {what}"))


# --- atleast_1d, atleast_2d, atleast_3d ---------------------------------------------------------


def _register_atleast(f: Any, name: str) -> None:
    def atleast_rrule(*arys: Any) -> Any:
        y = f(*arys)
        shapes = [np.shape(x) for x in arys]
        projectors = [ProjectTo(x) for x in arys]

        def atleast_pullback(y_bar: Any) -> tuple[Any, ...]:
            parts = (y_bar,) if len(arys) == 1 else split_cotangent(y_bar, len(arys))
            cotangents: list[Any] = [NoTangent()]
            for part, shape, project in zip(parts, shapes, projectors, strict=True):
                part = unthunk(part)
                if isinstance(part, AbstractZero):
                    cotangents.append(ZeroTangent())
                    continue
                cotangents.append(project(np.reshape(_array(part, name), shape)))
            return tuple(cotangents)

        atleast_pullback.__qualname__ = f"{name}_pullback"
        return y, atleast_pullback

    def atleast_frule(tangents: tuple[Any, ...], *arys: Any) -> Any:
        y = f(*arys)
        dots = [
            zero_tangent_array(x) if isinstance(t, AbstractZero) else _array(t, name, "frule")
            for x, t in zip(arys, (unthunk(t) for t in tangents[1:]), strict=True)
        ]
        if len(arys) == 1:
            return y, ProjectTo(y)(np.reshape(dots[0], np.shape(y)))
        return y, Tangent(
            tuple, *(ProjectTo(v)(np.reshape(d, np.shape(v))) for v, d in zip(y, dots, strict=True))
        )

    atleast_rrule.__qualname__ = f"{name}_rrule"
    atleast_rrule.__doc__ = f"``y = {name}(*arys)``: each ``x̄`` is its ``ȳ`` reshaped back."
    atleast_frule.__qualname__ = f"{name}_frule"
    atleast_frule.__doc__ = f"``ẏ = {name}(ẋ)`` for each array."
    rrule_with_options(f)(atleast_rrule)
    frule.register(f)(atleast_frule)


_register_atleast(np.atleast_1d, "atleast_1d")
_register_atleast(np.atleast_2d, "atleast_2d")
_register_atleast(np.atleast_3d, "atleast_3d")


# --- flips and rotations -------------------------------------------------------------------------


@rrule_with_options(np.fliplr)
def fliplr_rrule(m: Any) -> Any:
    """``y = fliplr(m)``: ``m̄ = fliplr(ȳ)``."""
    y = np.fliplr(m)
    project_m = ProjectTo(m)

    def fliplr_pullback(y_bar: Any) -> tuple[Any, Any]:
        return NoTangent(), project_m(np.fliplr(_array(y_bar, "fliplr")))

    return y, fliplr_pullback


@rrule_with_options(np.flipud)
def flipud_rrule(m: Any) -> Any:
    """``y = flipud(m)``: ``m̄ = flipud(ȳ)``."""
    y = np.flipud(m)
    project_m = ProjectTo(m)

    def flipud_pullback(y_bar: Any) -> tuple[Any, Any]:
        return NoTangent(), project_m(np.flipud(_array(y_bar, "flipud")))

    return y, flipud_pullback


@rrule_with_options(np.rot90)
def rot90_rrule(m: Any, k: int = 1, axes: Any = (0, 1)) -> Any:
    """``y = rot90(m, k, axes)``: ``m̄ = rot90(ȳ, -k, axes)``."""
    y = np.rot90(m, k, axes)
    project_m = ProjectTo(m)

    def rot90_pullback(y_bar: Any) -> tuple[Any, Any]:
        return NoTangent(), project_m(np.rot90(_array(y_bar, "rot90"), -k, axes))

    return y, rot90_pullback


def _rollaxis_permutation(ndim: int, axis: int, start: int) -> tuple[int, ...]:
    """The axis order of ``rollaxis``: ``rollaxis`` of a zero-size array of shape ``(1, 2, ...)``."""
    probe = np.lib.stride_tricks.as_strided(
        np.zeros(1), shape=tuple(range(1, ndim + 1)), strides=(0,) * ndim
    )
    return tuple(n - 1 for n in np.rollaxis(probe, axis, start).shape)


@rrule_with_options(np.rollaxis)
def rollaxis_rrule(a: Any, axis: int, start: int = 0) -> Any:
    """``y = rollaxis(a, axis, start)``: ``ā = transpose(ȳ, argsort(perm))``."""
    y = np.rollaxis(a, axis, start)
    inverse = np.argsort(_rollaxis_permutation(np.ndim(a), axis, start))
    project_a = ProjectTo(a)

    def rollaxis_pullback(y_bar: Any) -> tuple[Any, Any]:
        return NoTangent(), project_a(np.transpose(_array(y_bar, "rollaxis"), inverse))

    return y, rollaxis_pullback


# --- copies and conversions ----------------------------------------------------------------------


def _traced_identity(f: Any, a: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``f(a, ...)`` for a traced ``a`` (a nested differentiation): ``a``, cast if asked.

    A copy or conversion of a value that is never written to is the value itself.
    """
    dtype = args[0] if args else kwargs.get("dtype")
    return a if dtype is None else as_array(a, dtype)


def _register_identity(f: Any, name: str) -> None:
    def identity_rrule(a: Any, *args: Any, **kwargs: Any) -> Any:
        y = _traced_identity(f, a, args, kwargs) if is_traced(a) else f(a, *args, **kwargs)
        project_a = ProjectTo(a)
        differentiable = np.issubdtype(np.result_type(y), np.inexact)

        def identity_pullback(y_bar: Any) -> tuple[Any, Any]:
            g = _array(y_bar, name)
            if not differentiable:
                return NoTangent(), ZeroTangent()
            return NoTangent(), project_a(np.reshape(g, np.shape(a)))

        identity_pullback.__qualname__ = f"{name}_pullback"
        return y, identity_pullback

    def identity_frule(tangents: tuple[Any, ...], a: Any, *args: Any, **kwargs: Any) -> Any:
        y = f(a, *args, **kwargs)
        a_dot = _array(tangents[1], name, "frule")
        if not np.issubdtype(np.result_type(y), np.inexact):
            return y, ZeroTangent()
        return y, ProjectTo(y)(np.reshape(a_dot, np.shape(y)))

    identity_rrule.__qualname__ = f"{name}_rrule"
    identity_rrule.__doc__ = f"``y = {name}(a, ...)``: ``ā = ȳ`` in ``a``'s tangent space."
    identity_frule.__qualname__ = f"{name}_frule"
    identity_frule.__doc__ = "``ẏ = ȧ`` in ``y``'s tangent space."
    rrule_with_options(f)(identity_rrule)
    frule.register(f)(identity_frule)


_register_identity(np.copy, "copy")
_register_identity(np.asarray, "asarray")
_register_identity(np.astype, "astype")

for _f, _name in (
    (np.fliplr, "fliplr"),
    (np.flipud, "flipud"),
    (np.rot90, "rot90"),
    (np.rollaxis, "rollaxis"),
):
    register_linear_frule(_f, _name)
