r"""Rules of numpy's discrete Fourier transforms: ``fft``, ``ifft``, ``rfft``, ``irfft``, ``hfft``, ...

All of ``np.fft.fft, ifft, fft2, ifft2, fftn, ifftn, rfft, irfft, rfft2, irfft2, rfftn, irfftn,
hfft, ihfft``. Each is (real-)linear in its input, so its pushforward is the transform applied to
the tangent, with the same ``n``/``s``, ``axis``/``axes`` and ``norm``; the pullbacks are the
adjoints under the real inner product ``Re <u, v>`` of DESIGN.md (``x̄ = dL/dRe x + i dL/dIm x``):

* complex transforms: ``F_norm^H = F^{-1}_{norm'}`` with the dual norm
  (``backward <-> forward``, ``ortho`` self-dual), since the DFT matrix satisfies
  :math:`F^H = n F^{-1}`. So :math:`\bar a = \mathrm{ifftn}(\bar y, \mathrm{norm}')` for ``fftn``
  and :math:`\bar a = \mathrm{fftn}(\bar y, \mathrm{norm}')` for ``ifftn``;
* ``rfft`` (real input, the first ``n//2 + 1`` frequencies): :math:`\bar a = \mathrm{Re}\,
  \mathrm{ifft}(\mathrm{pad}(\bar y, n), \mathrm{norm}')`, the adjoint of "DFT, then keep the
  first half" composed with the inclusion of the reals in the complex numbers;
* ``irfft`` (Hermitian half-spectrum in, real signal out): output entry ``t`` is
  :math:`\frac1n \sum_k c_k \mathrm{Re}(X_k e^{2\pi i k t/n})` with ``c_0 = c_{n/2} = 1`` and
  ``c_k = 2`` otherwise (the imaginary parts of ``X_0`` and ``X_{n/2}`` are ignored), whence
  :math:`\bar X = c \odot \mathrm{rfft}(\bar x, \mathrm{norm}')`;
* the n-dimensional real transforms compose these with complex transforms over the other axes;
  ``hfft(a) = irfft(conj(a))`` and ``ihfft(a) = conj(rfft(a))`` with swapped norms (numpy's own
  definitions), and ``conj`` is its own adjoint for the real inner product;
* ``n``/``s`` zero-pad or truncate the input first; the pullback fits the cotangent back
  (:func:`rules.fft._plans.fit`: padding and truncation are adjoint).

A real primal gets a real cotangent (``ProjectTo``); float32/complex64 stay in single precision.
``out=`` is refused. The cotangent must be an ndarray (the adjoints are FFTs).

References
----------
JAX ``jax/_src/lax/fft.py`` (``_fft_transpose_rule``, ``_rfft_transpose``, ``_irfft_transpose``);
HIPS autograd ``autograd/numpy/fft.py`` (``rfft_grad``, ``irfft_grad``, the ``c_k`` weights);
C. Van Loan, "Computational Frameworks for the Fast Fourier Transform", SIAM 1992, section 1.1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array
from rules.core.options import refuse, rrule_with_options
from rules.core.registry import frule
from rules.fft._plans import DUAL_NORM, fit, hermitian_weights, plan
from tangents import NoTangent, ProjectTo

__all__: list[str] = []

Adjoint = Callable[[np.ndarray, tuple[int, ...], tuple[int, ...], Any], np.ndarray]


# --- the adjoints, on the transformed (already fitted) lengths ---------------------------------


def _complex_adjoint(inverse: Callable[..., Any]) -> Adjoint:
    """The adjoint of a complex transform: the opposite transform with the dual norm."""

    def adjoint(g: np.ndarray, lengths: tuple[int, ...], axes: tuple[int, ...], norm: Any) -> Any:
        return inverse(g, axes=axes, norm=DUAL_NORM[norm])

    return adjoint


def _rfft_adjoint(g: np.ndarray, lengths: tuple[int, ...], axes: tuple[int, ...], norm: Any) -> Any:
    """``Re F_last^H pad(F_rest^H g)``: the adjoint of ``rfftn`` (complex over the other axes)."""
    if len(axes) > 1:
        g = np.fft.ifftn(g, axes=axes[:-1], norm=DUAL_NORM[norm])
    g = fit(g, {axes[-1]: lengths[-1]})
    return np.fft.ifft(g, axis=axes[-1], norm=DUAL_NORM[norm]).real


def _irfft_adjoint(
    g: np.ndarray, lengths: tuple[int, ...], axes: tuple[int, ...], norm: Any
) -> Any:
    """``F_rest^H (c * rfft(g))``: the adjoint of ``irfftn``."""
    g = np.fft.rfft(g, axis=axes[-1], norm=DUAL_NORM[norm])
    g = g * hermitian_weights(lengths[-1], axes[-1], g.ndim, g.real.dtype)
    if len(axes) > 1:
        g = np.fft.fftn(g, axes=axes[:-1], norm=DUAL_NORM[norm])
    return g


def _hfft_adjoint(g: np.ndarray, lengths: tuple[int, ...], axes: tuple[int, ...], norm: Any) -> Any:
    """``hfft = irfft(conj(.), norm')``: ``conj`` of irfft's adjoint."""
    return np.conj(_irfft_adjoint(g, lengths, axes, DUAL_NORM[norm]))


def _ihfft_adjoint(
    g: np.ndarray, lengths: tuple[int, ...], axes: tuple[int, ...], norm: Any
) -> Any:
    """``ihfft = conj(rfft(., norm'))``: rfft's adjoint of ``conj(g)``."""
    return _rfft_adjoint(np.conj(g), lengths, axes, DUAL_NORM[norm])


# --- registration: one rrule and one frule per function ------------------------------------------


def _register(
    f: Any,
    name: str,
    adjoint: Adjoint,
    to_plan: Callable[..., tuple[Any, Any]],
    inverse_real: bool = False,
) -> None:
    """Register ``f``'s rules; ``to_plan(*options)`` gives its ``(s, axes)`` in ``fftn`` form."""
    full_name = f"np.fft.{name}"

    def fft_rrule(a: Any, *args: Any, **kwargs: Any) -> Any:
        options = _bind(full_name, to_plan, args, kwargs)
        refuse(full_name, out=options.pop("out"))
        norm = options.pop("norm")
        lengths, axes = plan(full_name, a, *to_plan(**options), inverse_real=inverse_real)
        y = f(a, *args, **kwargs)
        shape = np.shape(a)
        back = {axis: shape[axis] for axis in axes}
        project_a = ProjectTo(a)

        def fft_pullback(y_bar: Any) -> tuple[Any, Any]:
            g = as_array(as_array_cotangent(y_bar, f"{full_name}'s pullback"))
            return NoTangent(), project_a(fit(adjoint(g, lengths, axes, norm), back))

        fft_pullback.__qualname__ = f"{name}_pullback"
        return y, fft_pullback

    def fft_frule(tangents: tuple[Any, ...], a: Any, *args: Any, **kwargs: Any) -> Any:
        refuse(full_name, out=_bind(full_name, to_plan, args, kwargs)["out"])
        y = f(a, *args, **kwargs)
        a_dot = as_array_cotangent(tangents[1], f"{full_name}'s frule")
        return y, ProjectTo(y)(f(a_dot, *args, **kwargs))

    fft_rrule.__qualname__ = f"{name}_rrule"
    fft_rrule.__doc__ = f"Reverse rule of ``{full_name}``: its adjoint (module docstring)."
    fft_frule.__qualname__ = f"{name}_frule"
    fft_frule.__doc__ = f"``ẏ = {name}(ȧ, ...)``: ``{name}`` is linear."
    rrule_with_options(f)(fft_rrule)
    frule.register(f)(fft_frule)


def _bind(name: str, to_plan: Callable[..., Any], args: Any, kwargs: Any) -> dict[str, Any]:
    """The options of a call (``n``/``s``, ``axis``/``axes``, ``norm``, ``out``) by name."""
    names = (*to_plan.__code__.co_varnames[: to_plan.__code__.co_argcount], "norm", "out")
    if len(args) > len(names):
        raise TypeError(f"{name} takes at most {len(names) + 1} positional arguments")
    options = dict(zip(names, args, strict=False))
    for key, value in kwargs.items():
        if key not in names or key in options:
            raise TypeError(f"{name} got an unexpected or repeated argument {key!r}")
        options[key] = value
    options.setdefault("norm", None)
    options.setdefault("out", None)
    return options


def _one_axis(n: Any = None, axis: int = -1) -> tuple[Any, Any]:
    return (None if n is None else (n,)), (axis,)


def _two_axes(s: Any = None, axes: Any = (-2, -1)) -> tuple[Any, Any]:
    return s, axes


def _any_axes(s: Any = None, axes: Any = None) -> tuple[Any, Any]:
    return s, axes  # s without axes, deprecated by numpy 2, is refused by plan()


_FORWARD = _complex_adjoint(np.fft.ifftn)
_BACKWARD = _complex_adjoint(np.fft.fftn)

for _f, _name, _adjoint, _to_plan, _inverse_real in (
    (np.fft.fft, "fft", _FORWARD, _one_axis, False),
    (np.fft.ifft, "ifft", _BACKWARD, _one_axis, False),
    (np.fft.fft2, "fft2", _FORWARD, _two_axes, False),
    (np.fft.ifft2, "ifft2", _BACKWARD, _two_axes, False),
    (np.fft.fftn, "fftn", _FORWARD, _any_axes, False),
    (np.fft.ifftn, "ifftn", _BACKWARD, _any_axes, False),
    (np.fft.rfft, "rfft", _rfft_adjoint, _one_axis, False),
    (np.fft.irfft, "irfft", _irfft_adjoint, _one_axis, True),
    (np.fft.rfft2, "rfft2", _rfft_adjoint, _two_axes, False),
    (np.fft.irfft2, "irfft2", _irfft_adjoint, _two_axes, True),
    (np.fft.rfftn, "rfftn", _rfft_adjoint, _any_axes, False),
    (np.fft.irfftn, "irfftn", _irfft_adjoint, _any_axes, True),
    (np.fft.hfft, "hfft", _hfft_adjoint, _one_axis, True),
    (np.fft.ihfft, "ihfft", _ihfft_adjoint, _one_axis, False),
):
    _register(_f, _name, _adjoint, _to_plan, _inverse_real)
