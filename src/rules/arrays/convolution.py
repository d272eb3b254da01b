r"""Rules of one-dimensional ``np.convolve`` and ``np.correlate``.

Both are bilinear (``correlate`` conjugates its second argument). The full convolution
:math:`z_k = \sum_i a_i v_{k - i}` has the adjoints :math:`\bar a_i = \sum_k \bar z_k
\overline{v_{k-i}}` and :math:`\bar v_j = \sum_k \bar z_k \overline{a_{k-j}}`, which are numpy's
own ``correlate(z̄, v, "valid")`` and ``correlate(z̄, a, "valid")`` (``correlate`` conjugates its
second argument). ``correlate(a, v)`` is the convolution with :math:`w = \overline{v[::-1]}`, so
:math:`\bar v = \overline{\bar w[::-1]}`. The modes ``"same"`` and ``"valid"`` keep a window of
the full result (numpy's offsets: ``min(M, N) - 1`` for ``"valid"``; ``(min(M, N) - 1) // 2`` for
``"same"``, but ``M // 2`` for ``correlate`` with ``M < N``); the pullback embeds the cotangent
back into the full length with zeros.

References
----------
HIPS autograd ``autograd/numpy/numpy_vjps.py`` (``grad_convolve``); JAX
``jax/_src/numpy/lax_numpy.py`` (``_conv`` via ``lax.conv_general_dilated``, whose transpose is a
correlation).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array
from rules.core.options import rrule_with_options
from rules.core.registry import frule
from tangents import AbstractZero, NoTangent, ProjectTo, unthunk

__all__: list[str] = []


def _offset(f: Any, m: int, n: int, mode: str) -> int:
    """Where numpy's ``mode`` window starts in the full result (module docstring)."""
    if mode == "full":
        return 0
    if mode == "valid":
        return min(m, n) - 1
    if mode == "same":
        return m // 2 if (f is np.correlate and m < n) else (min(m, n) - 1) // 2
    raise ValueError(f"the rules of np.{f.__name__} support the modes full, same, valid: {mode!r}")


def _register(f: Any, name: str, default_mode: str) -> None:
    conjugates = f is np.correlate

    def convolution_rrule(a: Any, v: Any, mode: str = default_mode) -> Any:
        y = f(a, v, mode)
        a1, v1 = np.atleast_1d(a), np.atleast_1d(v)
        m, n = a1.size, v1.size
        start = _offset(f, m, n, mode)
        w = np.conj(v1[::-1]) if conjugates else v1
        project_a, project_v = ProjectTo(a), ProjectTo(v)

        def convolution_pullback(y_bar: Any) -> tuple[Any, Any, Any]:
            g = as_array(as_array_cotangent(y_bar, f"np.{name}'s pullback"))
            full = np.zeros(m + n - 1, dtype=g.dtype)
            full[start : start + g.size] = g
            a_bar = np.correlate(full, w, "valid")
            w_bar = np.correlate(full, a1, "valid")
            v_bar = np.conj(w_bar[::-1]) if conjugates else w_bar
            return (
                NoTangent(),
                project_a(np.reshape(a_bar, np.shape(a))),
                project_v(np.reshape(v_bar, np.shape(v))),
            )

        convolution_pullback.__qualname__ = f"{name}_pullback"
        return y, convolution_pullback

    def convolution_frule(
        tangents: tuple[Any, ...], a: Any, v: Any, mode: str = default_mode
    ) -> Any:
        y = f(a, v, mode)
        y_dot: Any = 0
        for position in (1, 2):
            t = unthunk(tangents[position])
            if isinstance(t, AbstractZero):
                continue
            t = as_array_cotangent(t, f"np.{name}'s frule")
            y_dot = y_dot + (f(t, v, mode) if position == 1 else f(a, t, mode))
        return y, ProjectTo(y)(y_dot)

    convolution_rrule.__qualname__ = f"{name}_rrule"
    convolution_rrule.__doc__ = f"Reverse rule of ``np.{name}(a, v, mode)`` (module docstring)."
    convolution_frule.__qualname__ = f"{name}_frule"
    convolution_frule.__doc__ = f"``ẏ = {name}(ȧ, v) + {name}(a, v̇)``: bilinear."
    rrule_with_options(f)(convolution_rrule)
    frule.register(f)(convolution_frule)


_register(np.convolve, "convolve", "full")
_register(np.correlate, "correlate", "valid")
