r"""Rules for the Bessel functions of scipy.special, with respect to the argument ``x``.

Made with :func:`rules.scalar_rule`, from the recurrences for the derivatives:

* :math:`J_v' = (J_{v-1} - J_{v+1})/2`, :math:`Y_v' = (Y_{v-1} - Y_{v+1})/2` (so
  :math:`J_0' = -J_1`, :math:`Y_0' = -Y_1`);
* :math:`I_v' = (I_{v-1} + I_{v+1})/2`, :math:`K_v' = -(K_{v-1} + K_{v+1})/2` (so
  :math:`I_0' = I_1`, :math:`K_0' = -K_1`);
* the exponentially scaled :math:`\mathrm{ive}_v(x) = I_v(x) e^{-|x|}`:
  :math:`(\mathrm{ive}_{v-1} + \mathrm{ive}_{v+1})/2 - \operatorname{sign}(x)\,\mathrm{ive}_v`
  (scaled throughout, so it does not overflow where :math:`I_v` does).

``jv``, ``yv``, ``iv`` and ``kv`` take complex ``x`` (they are holomorphic in it); ``ive``
scales by :math:`e^{-|\operatorname{Re} x|}`, which is not holomorphic, so its rules and those of
``i0e``/``i1e`` are real only, as are the fixed-order functions (scipy has no complex loops for
them). The derivative with respect to the order ``v`` has no closed form: its cotangent is
``NotImplementedTangent`` (a Python int order is a constant and gets ``NoTangent()``).

References
----------
DLMF 10.6.1 and 10.6.2 (J, Y), 10.29.1 and 10.29.2 (I, K), 10.25.2 (scaled I).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special as sc

from rules.core.definition import scalar_rule
from rules.core.nesting import as_array
from tangents import NotImplementedTangent

__all__: list[str] = []


def _order(function: str) -> NotImplementedTangent:
    return NotImplementedTangent(
        f"the derivative of scipy.special.{function} with respect to the order v has no "
        "closed form and is not implemented; pass v as a Python int to hold it fixed"
    )


def _real_only(function: str, x: Any) -> None:
    if np.iscomplexobj(x):
        raise TypeError(f"the rules of {function} support real input only")


def _real(function: str, partial: Any) -> Any:
    """``partial(x)`` for a real-only function, refusing complex ``x`` by name."""

    def checked(x: Any, y: Any) -> Any:
        _real_only(function, x)
        return partial(x)

    return checked


def _scaled_i(v: Any, x: Any) -> Any:
    """The derivative of ``ive(v, x)`` in ``x``."""
    v = as_array(v)
    return (sc.ive(v - 1, x) + sc.ive(v + 1, x)) / 2 - np.sign(x) * sc.ive(v, x)


def _ive_partials(v: Any, x: Any, y: Any) -> tuple[Any, Any]:
    _real_only("ive", x)
    return _order("ive"), _scaled_i(v, x)


def _with_order(function: str, derivative: Any) -> Any:
    def partials(v: Any, x: Any, y: Any) -> tuple[Any, Any]:
        return _order(function), derivative(as_array(v), x)

    return partials


scalar_rule(sc.j0, _real("j0", lambda x: -sc.j1(x)))
scalar_rule(sc.j1, _real("j1", lambda x: (sc.j0(x) - sc.jv(2, x)) / 2))
scalar_rule(sc.jv, _with_order("jv", lambda v, x: (sc.jv(v - 1, x) - sc.jv(v + 1, x)) / 2))
scalar_rule(sc.y0, _real("y0", lambda x: -sc.y1(x)))
scalar_rule(sc.y1, _real("y1", lambda x: (sc.y0(x) - sc.yv(2, x)) / 2))
scalar_rule(sc.yv, _with_order("yv", lambda v, x: (sc.yv(v - 1, x) - sc.yv(v + 1, x)) / 2))
scalar_rule(sc.i0, _real("i0", lambda x: sc.i1(x)))
scalar_rule(sc.i1, _real("i1", lambda x: (sc.i0(x) + sc.iv(2, x)) / 2))
scalar_rule(sc.iv, _with_order("iv", lambda v, x: (sc.iv(v - 1, x) + sc.iv(v + 1, x)) / 2))
scalar_rule(sc.i0e, _real("i0e", lambda x: sc.i1e(x) - np.sign(x) * sc.i0e(x)))
scalar_rule(sc.i1e, _real("i1e", lambda x: _scaled_i(1, x)))
scalar_rule(sc.ive, _ive_partials)
scalar_rule(sc.k0, _real("k0", lambda x: -sc.k1(x)))
scalar_rule(sc.k1, _real("k1", lambda x: -(sc.k0(x) + sc.kv(2, x)) / 2))
scalar_rule(sc.kv, _with_order("kv", lambda v, x: -(sc.kv(v - 1, x) + sc.kv(v + 1, x)) / 2))
