r"""Elementwise functions with several outputs, made with ``scalar_rule(..., outputs=2)``.

* ``np.modf(x) = (x - trunc(x), trunc(x))``: the fractional part moves with slope 1, the
  integral part is locally constant (slope 0 almost everywhere).
* ``np.frexp(x) = (m, e)`` with :math:`x = m\,2^e`: :math:`\partial m/\partial x = 2^{-e}`,
  the integer exponent is locally constant.

References
----------
ChainRulesCore.jl, ``@scalar_rule`` with several outputs (``sincos``); the numpy docs of
``modf`` and ``frexp``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.definition import scalar_rule
from tangents import ZeroTangent

__all__: list[str] = []


def _ones_like(y: Any) -> Any:
    """Ones of the output's shape and dtype (a float32 input keeps float32 partials)."""
    return np.ones_like(y)


scalar_rule(np.modf, lambda x, y: (_ones_like(y[0]), ZeroTangent()), outputs=2)
scalar_rule(
    np.frexp,
    lambda x, y: (np.ldexp(_ones_like(y[0]), -y[1]), ZeroTangent()),
    outputs=2,
)
