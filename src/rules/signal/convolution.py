r"""Rules for scipy.signal's convolutions: convolve, correlate, fftconvolve, convolve2d, correlate2d.

Every mode's output is a slice of the ``'full'`` one, so the pullback embeds the cotangent into a
zero ``'full'``-sized array :math:`G` at that slice and applies the adjoints of the full
products. With :math:`y = a * b` (convolution) and :math:`y = a \star b`, :math:`y_n = \sum_k
a_{n+k}\,\overline{b_k}` (scipy's correlation, which conjugates its second argument):

.. math::

    a * b:\quad \bar a = G \star b,\quad \bar b = G \star a; \qquad
    a \star b:\quad \bar a = G * b,\quad \bar b = \overline{\operatorname{rev}(G \star a)},

each taken in ``'valid'`` mode, which has exactly the input's shape; ``rev`` reverses every axis.
The pushforwards are the products of the tangents, :math:`\dot y = \dot a * b + a * \dot b`
(:math:`\dot a \star b + a \star \dot b`: the correlation is real-linear in :math:`b`), computed
with the function itself; the pullbacks use ``scipy.signal.convolve``/``correlate`` (FFT-based
ones for ``fftconvolve``), O(size of the full output times the kernel) as the forward pass.
Options changing the boundary (``boundary='wrap'``/``'symm'``, a non-zero ``fillvalue``) or the
axes (``fftconvolve``'s ``axes``) are refused by name.

References
----------
The adjoint of a convolution is a correlation with the same kernel: e.g. Dumoulin and Visin,
"A guide to convolution arithmetic for deep learning" (2016), section 4 (transposed
convolution); JAX ``jax/_src/scipy/signal.py`` and ``jax/_src/lax/convolution.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.signal as ss

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array
from rules.core.nesting import call as traced_call
from rules.core.options import refuse
from rules.core.registry import frule, rrule
from tangents import AbstractZero, NoTangent, ProjectTo, unthunk

__all__: list[str] = []


def _offset(name: str, mode: str, s2: tuple[int, ...], full: tuple[int, ...], out: tuple[int, ...]):
    """Where the output of ``mode`` sits in the ``'full'`` output (scipy's slicing rules)."""
    if mode == "full":
        return (0,) * len(full)
    if name == "correlate2d" and mode == "same":
        return tuple(n // 2 for n in s2)
    return tuple((f - o) // 2 for f, o in zip(full, out, strict=True))


def _reverse(x: np.ndarray) -> np.ndarray:
    return x[tuple(slice(None, None, -1) for _ in range(x.ndim))]


def _register(
    f: Any,
    name: str,
    correlation: bool,
    call: Callable[..., Any],
    check: Callable[..., None],
) -> None:
    """Rules for ``f(in1, in2, mode, *options)``; ``call(g, h, mode)`` applies ``f`` itself."""
    full_name = f"scipy.signal.{name}"

    def convolution_rrule(in1: Any, in2: Any, mode: str = "full", *options: Any, **kw: Any):
        check(in1, in2, mode, *options, **kw)
        y = traced_call(f, in1, in2, mode, *options, **kw)
        project1, project2 = ProjectTo(in1), ProjectTo(in2)
        a, b = as_array(in1), as_array(in2)
        full_shape = tuple(n + m - 1 for n, m in zip(a.shape, b.shape, strict=True))
        start = _offset(name, mode, b.shape, full_shape, np.shape(y))

        def convolution_pullback(y_bar: Any) -> tuple[Any, Any, Any]:
            g_out = as_array(as_array_cotangent(y_bar, f"{full_name}'s pullback"))
            G = np.zeros(full_shape, dtype=np.result_type(g_out.dtype, y.dtype))
            G[tuple(slice(s, s + n) for s, n in zip(start, g_out.shape, strict=True))] = g_out
            correlate = ss.correlate if name != "fftconvolve" else _fft_correlate
            convolve = ss.convolve if name != "fftconvolve" else ss.fftconvolve
            if correlation:
                a_bar = convolve(G, b, "valid")
                b_bar = np.conj(_reverse(correlate(G, a, "valid")))
            else:
                a_bar = correlate(G, b, "valid")
                b_bar = correlate(G, a, "valid")
            return NoTangent(), project1(a_bar), project2(b_bar)

        convolution_pullback.__qualname__ = f"{name}_pullback"
        return y, convolution_pullback

    def convolution_frule(
        tangents: tuple[Any, ...], in1: Any, in2: Any, mode: str = "full", *options: Any, **kw: Any
    ):
        check(in1, in2, mode, *options, **kw)
        y = traced_call(f, in1, in2, mode, *options, **kw)
        operation = f"{full_name}'s frule"
        dot1, dot2 = (unthunk(t) for t in tangents[1:3])
        y_dot: Any = np.zeros(np.shape(y), dtype=np.result_type(y, np.float32))
        if not isinstance(dot1, AbstractZero):
            y_dot = y_dot + call(as_array_cotangent(dot1, operation), in2, mode, *options, **kw)
        if not isinstance(dot2, AbstractZero):
            y_dot = y_dot + call(in1, as_array_cotangent(dot2, operation), mode, *options, **kw)
        return y, ProjectTo(y)(y_dot)

    convolution_rrule.__qualname__ = f"{name}_rrule"
    convolution_frule.__qualname__ = f"{name}_frule"
    rrule.register(f)(convolution_rrule)
    frule.register(f)(convolution_frule)


def _fft_correlate(g: np.ndarray, h: np.ndarray, mode: str) -> np.ndarray:
    """The correlation of scipy (conjugating ``h``), computed by ``fftconvolve``."""
    return traced_call(ss.fftconvolve, g, np.conj(_reverse(as_array(h))), mode)


def _same_ndim(name: str, in1: Any, in2: Any) -> None:
    if np.ndim(in1) != np.ndim(in2):
        raise ValueError(f"the rules of scipy.signal.{name} need inputs of the same ndim")


def _check_nd(name: str) -> Callable[..., None]:
    def check(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> None:
        _same_ndim(name, in1, in2)

    return check


def _check_fft(in1: Any, in2: Any, mode: str = "full", axes: Any = None) -> None:
    _same_ndim("fftconvolve", in1, in2)
    refuse("scipy.signal.fftconvolve", axes=axes)


def _check_2d(name: str) -> Callable[..., None]:
    def check(
        in1: Any, in2: Any, mode: str = "full", boundary: str = "fill", fillvalue: Any = 0
    ) -> None:
        if boundary != "fill" or fillvalue != 0:
            raise ValueError(
                f"the rules of scipy.signal.{name} support boundary='fill' with fillvalue=0 only"
            )
        larger = all(n >= m for n, m in zip(np.shape(in1), np.shape(in2), strict=True))
        if name == "correlate2d" and mode == "valid" and not larger:
            raise ValueError(
                "the rules of scipy.signal.correlate2d support mode='valid' only when in1 is "
                "at least as large as in2 (scipy swaps the inputs otherwise)"
            )

    return check


_register(ss.convolve, "convolve", False, ss.convolve, _check_nd("convolve"))
_register(ss.correlate, "correlate", True, ss.correlate, _check_nd("correlate"))
_register(ss.fftconvolve, "fftconvolve", False, ss.fftconvolve, _check_fft)
_register(ss.convolve2d, "convolve2d", False, ss.convolve2d, _check_2d("convolve2d"))
_register(ss.correlate2d, "correlate2d", True, ss.correlate2d, _check_2d("correlate2d"))
