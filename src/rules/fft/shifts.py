r"""Rules of ``np.fft.fftshift``/``ifftshift`` and of the sample frequencies ``fftfreq``/``rfftfreq``.

``fftshift`` rolls each axis by ``n // 2`` and ``ifftshift`` by ``-(n // 2)``: permutations, each
the inverse (and so, being orthogonal, the adjoint) of the other. Hence
:math:`\bar x = \mathrm{ifftshift}(\bar y)` for ``fftshift`` and the reverse; the pushforwards
apply the function itself.

``fftfreq(n, d)`` is ``k / (d n)`` for integers ``k``: in the sample spacing ``d`` it is
:math:`y = y_1 / d` with :math:`y_1 = \mathrm{fftfreq}(n, 1)`, so
:math:`\bar d = -\sum_k \bar y_k y_k / d` and :math:`\dot y = -y \dot d / d`; ``n`` is an integer
(``NoTangent()``). The same for ``rfftfreq``.

References
----------
JAX ``jax/_src/numpy/fft.py`` (``fftshift`` as a ``roll``); ChainRules.jl
``src/rulesets/Base/array.jl`` (``circshift``, whose adjoint is the opposite shift).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.cotangents import as_array_cotangent
from rules.core.linear_frules import register_linear_frule
from rules.core.options import is_constant, rrule_with_options
from rules.core.registry import frule
from tangents import NoTangent, ProjectTo

__all__: list[str] = []


@rrule_with_options(np.fft.fftshift)
def fftshift_rrule(x: Any, axes: Any = None) -> Any:
    r"""``y = fftshift(x, axes)``: :math:`\bar x = \mathrm{ifftshift}(\bar y, axes)`."""
    y = np.fft.fftshift(x, axes)
    project_x = ProjectTo(x)

    def fftshift_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = as_array_cotangent(y_bar, "np.fft.fftshift's pullback")
        return NoTangent(), project_x(np.fft.ifftshift(g, axes))

    return y, fftshift_pullback


@rrule_with_options(np.fft.ifftshift)
def ifftshift_rrule(x: Any, axes: Any = None) -> Any:
    r"""``y = ifftshift(x, axes)``: :math:`\bar x = \mathrm{fftshift}(\bar y, axes)`."""
    y = np.fft.ifftshift(x, axes)
    project_x = ProjectTo(x)

    def ifftshift_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = as_array_cotangent(y_bar, "np.fft.ifftshift's pullback")
        return NoTangent(), project_x(np.fft.fftshift(g, axes))

    return y, ifftshift_pullback


register_linear_frule(np.fft.fftshift, "fft.fftshift")
register_linear_frule(np.fft.ifftshift, "fft.ifftshift")


def _register_frequencies(f: Any, name: str) -> None:
    full_name = f"np.fft.{name}"

    def frequencies_rrule(n: Any, d: Any = 1.0, device: Any = None) -> Any:
        y = f(n, d, device=device)
        project_d = None if is_constant(d) else ProjectTo(d)

        def frequencies_pullback(y_bar: Any) -> tuple[Any, ...]:
            g = as_array_cotangent(y_bar, f"{full_name}'s pullback")
            if project_d is None:
                return NoTangent(), NoTangent(), NoTangent()
            return NoTangent(), NoTangent(), project_d(-np.sum(np.real(g) * y) / d)

        frequencies_pullback.__qualname__ = f"{name}_pullback"
        return y, frequencies_pullback

    def frequencies_frule(
        tangents: tuple[Any, ...], n: Any, d: Any = 1.0, device: Any = None
    ) -> Any:
        y = f(n, d, device=device)
        d_dot = as_array_cotangent(tangents[2], f"{full_name}'s frule") if len(tangents) > 2 else 0
        return y, ProjectTo(y)(-y * (d_dot / d))

    frequencies_rrule.__qualname__ = f"{name}_rrule"
    frequencies_rrule.__doc__ = f"``y = {name}(n, d) = {name}(n, 1) / d``: ``d̄ = -sum(ȳ y) / d``."
    frequencies_frule.__qualname__ = f"{name}_frule"
    frequencies_frule.__doc__ = f"``ẏ = -{name}(n, d) ḋ / d``."
    rrule_with_options(f)(frequencies_rrule)
    frule.register(f)(frequencies_frule)


_register_frequencies(np.fft.fftfreq, "fftfreq")
_register_frequencies(np.fft.rfftfreq, "rfftfreq")
