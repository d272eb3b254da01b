"""Pushforwards of functions that are linear in their first argument: apply them to the tangent.

For ``y = f(x, *options)`` linear in ``x`` (reshape, transpose, indexing, ...), the derivative
is ``f`` itself: ``ẏ = f(ẋ, *options)``. :func:`register_linear_frule` registers that frule,
so the shape and indexing modules only write their pullbacks (the adjoints) by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rules.core.cotangents import as_array_cotangent, is_user_tangent
from rules.core.registry import frule
from tangents import ProjectTo, unthunk

__all__ = ["register_linear_frule"]


def register_linear_frule(
    f: Any, name: str, is_matrix_transpose: Callable[..., bool] | None = None
) -> None:
    """Register ``frule(f)``: ``ẏ = f(ẋ, *args, **kwargs)``, projected onto ``y``.

    The tangent must be an ndarray or number (:func:`rules.core.cotangents.as_array_cotangent`); the
    other positional arguments are options and their tangents are ignored. For the calls where
    ``is_matrix_transpose(x, *args, **kwargs)`` holds, ``f`` swaps the last two axes only and a
    user's tangent type gets ``ẋ.mT`` (the tangent algebra) instead of a ``TypeError``.
    """
    operation = f"np.{name}'s frule"

    def linear_frule(tangents: tuple[Any, ...], x: Any, *args: Any, **kwargs: Any) -> Any:
        y = f(x, *args, **kwargs)
        x_dot = unthunk(tangents[1])
        if (
            is_matrix_transpose is not None
            and is_user_tangent(x_dot)
            and is_matrix_transpose(x, *args, **kwargs)
        ):
            return y, ProjectTo(y)(x_dot.mT)
        x_dot = as_array_cotangent(x_dot, operation)
        return y, ProjectTo(y)(f(x_dot, *args, **kwargs))

    linear_frule.__qualname__ = f"{name}_frule"
    linear_frule.__doc__ = f"``ẏ = {name}(ẋ, ...)``: ``{name}`` is linear in its first argument."
    frule.register(f)(linear_frule)
