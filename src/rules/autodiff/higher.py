"""Second and higher derivatives: ``hessian`` and ``hvp``, by nesting the first-order drivers.

Nothing here differentiates twice by itself. A pullback is ordinary code on the tangent algebra;
run on traced values (the cotangent, and primals captured from a traced forward pass) every
operation it does is recorded like any other call, so ``grad(grad(f))``, ``jacobian(grad(f))``,
``jvp(grad(f), ...)`` and a ``vjp`` of a ``jvp`` all work by composition. Rules keep traced values
off their kernels (:func:`rules.core.dispatch.kernel_eligible`) and take their algebra or
array-formula path, whose operations are rules again (:mod:`rules.core.nesting`).

* :func:`hessian` is ``jacobian(grad(f))``: one traced run of ``f`` and of its gradient, then one
  replay of the recorded gradient computation per input entry (reverse over reverse).
* :func:`hvp` is ``jvp(grad(f), primals, tangents)``: forward over reverse, one pass of the
  gradient with tangents attached, the cheapest way to a single Hessian-vector product (the
  JAX autodiff cookbook's recommendation; Pearlmutter 1994).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from rules.autodiff.api import grad, jacobian, jvp

__all__ = ["hessian", "hvp"]


def hessian(f: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The Hessian of ``f``, a function returning a real scalar, with respect to ``argnums``.

    Parameters
    ----------
    f : callable
        Plain numpy code returning a real scalar.
    argnums : int or tuple of int
        The array arguments to differentiate. For an int the result has shape
        ``x.shape + x.shape``; for a tuple it is a tuple of tuples, ``H[i][j]`` the block of
        ``argnums[i]`` and ``argnums[j]`` (shape ``x_i.shape + x_j.shape``), as ``jax.hessian``.

    Returns
    -------
    callable
        ``(*args) -> hessian``.

    Notes
    -----
    Reverse over reverse (``jacobian(grad(f))``): ``f`` and its gradient are traced once and the
    recorded gradient is played back once per entry of the input.
    """
    if isinstance(argnums, int):
        return jacobian(grad(f, argnums), argnums)
    numbers = tuple(argnums)

    @functools.wraps(f)
    def hessian_f(*args: Any, **kwargs: Any) -> Any:
        return tuple(
            tuple(jacobian(grad(f, i), j)(*args, **kwargs) for j in numbers) for i in numbers
        )

    return hessian_f


def hvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    """The Hessian of ``f`` at ``primals`` applied to ``tangents``: forward over reverse.

    Parameters
    ----------
    f : callable
        Plain numpy code returning a real scalar.
    primals, tangents : sequence
        One tangent per primal, each of its primal's form (as for :func:`rules.autodiff.jvp`).

    Returns
    -------
    tuple or value
        ``H v`` for one primal; for several, one block-row product per primal (the gradient with
        respect to every primal, differentiated along all the tangents).
    """
    primals, tangents = tuple(primals), tuple(tangents)
    argnums = 0 if len(primals) == 1 else tuple(range(len(primals)))
    return jvp(grad(f, argnums), primals, tangents)[1]
