r"""Rules for the entropy functions of scipy.special, made with :func:`rules.scalar_rule`.

* ``entr(x)`` :math:`= -x\log x`: :math:`-(\log x + 1)`.
* ``rel_entr(x, y)`` :math:`= x\log(x/y)`: :math:`(\log(x/y) + 1,\ -x/y)`.
* ``kl_div(x, y)`` :math:`= x\log(x/y) - x + y`: :math:`(\log(x/y),\ 1 - x/y)`.

All real (scipy has no complex loops). At ``x = 0`` the functions are 0 whatever ``y`` and
the ``y`` partial of ``rel_entr`` is 0 (``kl_div``'s is 1); the ``x`` partial is then
:math:`\mp\infty`, the true slope.

References
----------
Cover and Thomas, *Elements of Information Theory* (2006), 2.3 (relative entropy); the
scipy.special docs of ``entr``, ``rel_entr`` and ``kl_div``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special as sc

from rules.core.definition import scalar_rule
from rules.core.nesting import as_array

__all__: list[str] = []


def _log_ratio(x: Any, y: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x) - np.log(y)


def _ratio(x: Any, y: Any) -> Any:
    """``x / y``, 0 where ``x == 0``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(as_array(x) == 0, 0, np.divide(x, y))


def _entr_partial(x: Any, y: Any) -> Any:
    with np.errstate(divide="ignore"):
        return -(np.log(x) + 1)


scalar_rule(sc.entr, _entr_partial)
scalar_rule(sc.rel_entr, lambda x, y, out: (_log_ratio(x, y) + 1, -_ratio(x, y)))
scalar_rule(sc.kl_div, lambda x, y, out: (_log_ratio(x, y), 1 - _ratio(x, y)))
