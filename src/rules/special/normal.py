r"""Rules for the normal distribution and error-function inverses of scipy.special.

Made with :func:`rules.scalar_rule`; :math:`\varphi(x) = e^{-x^2/2}/\sqrt{2\pi}`:

* ``ndtr`` :math:`= \Phi`: :math:`\varphi(x)`; ``log_ndtr`` :math:`= \log\Phi`:
  :math:`\varphi(x)/\Phi(x) = e^{-x^2/2 - \log\Phi(x)}/\sqrt{2\pi}` (computed in logs, so it stays
  finite far in the left tail). Both holomorphic: complex too.
* ``ndtri`` :math:`= \Phi^{-1}`: :math:`1/\varphi(y) = \sqrt{2\pi}\,e^{y^2/2}`.
* ``erfinv``: :math:`\tfrac{\sqrt\pi}{2} e^{y^2}`; ``erfcinv``: :math:`-\tfrac{\sqrt\pi}{2} e^{y^2}`
  (the inverse function theorem, with ``y`` the output).

References
----------
DLMF 7.2.1 and 7.18 (erf), 7.17 (inverse error functions); JAX
``jax/_src/scipy/special.py`` (``log_ndtr``'s derivative in logs).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special as sc

from rules.core.definition import scalar_rule

__all__: list[str] = []

_SQRT_2PI = np.sqrt(2 * np.pi)
_HALF_SQRT_PI = np.sqrt(np.pi) / 2


def _real_only(function: str, x: Any) -> None:
    if np.iscomplexobj(x):
        raise TypeError(f"the rules of {function} support real input only")


def _ndtri_partial(p: Any, y: Any) -> Any:
    _real_only("ndtri", p)
    return _SQRT_2PI * np.exp(np.square(y) / 2)


def _erfinv_partial(x: Any, y: Any) -> Any:
    _real_only("erfinv", x)
    return _HALF_SQRT_PI * np.exp(np.square(y))


def _erfcinv_partial(x: Any, y: Any) -> Any:
    _real_only("erfcinv", x)
    return -_HALF_SQRT_PI * np.exp(np.square(y))


scalar_rule(sc.ndtr, lambda x, y: np.exp(-x * x / 2) / _SQRT_2PI)
scalar_rule(sc.log_ndtr, lambda x, y: np.exp(-x * x / 2 - y) / _SQRT_2PI)
scalar_rule(sc.ndtri, _ndtri_partial)
scalar_rule(sc.erfinv, _erfinv_partial)
scalar_rule(sc.erfcinv, _erfcinv_partial)
