r"""Rules of ``scipy.linalg.solve_banded((l, u), ab, b)``: ``A x = b`` for a banded ``A``.

``ab`` holds the diagonals of ``A`` in LAPACK's band storage, :math:`ab_{u + i - j, j} = A_{ij}`.
As for any solve, :math:`\bar b = A^{-H} \bar x` and :math:`\bar A = -\bar b\, x^H`, of which only
the band is kept (the entries of ``ab`` outside the matrix get 0); :math:`\dot x = A^{-1}(\dot b -
\dot A x)`. Everything stays banded: ``A^H`` is the band matrix with ``(u, l)`` diagonals
:math:`ab^H_{l + i - j, j} = \overline{ab_{u + j - i, i}}`, solved by ``solve_banded`` again, and
the band of :math:`\bar b x^H` and the product :math:`\dot A x` take O(n (l + u + 1) k) for ``k``
right-hand sides: no dense ``n x n`` matrix is formed.

References
----------
M. B. Giles, "An extended collection of matrix derivative results for forward and reverse mode
algorithmic differentiation" (2008), section 2.3.1 (``solve``); LAPACK Users' Guide, band storage.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array, call
from rules.core.options import refuse, rrule_with_options
from rules.core.registry import frule
from tangents import AbstractZero, NoTangent, ProjectTo, unthunk

__all__: list[str] = []

_NAME = "scipy.linalg.solve_banded"


def _diagonals(l: int, u: int, n: int) -> list[tuple[int, slice, slice]]:
    """Per row ``rho`` of ``ab``: its diagonal offset ``i - j`` and the valid columns ``j``."""
    out = []
    for rho in range(l + u + 1):
        offset = rho - u
        out.append((rho, slice(max(0, -offset), min(n, n - offset)), offset))
    return out  # type: ignore[return-value]


def _band_adjoint(l: int, u: int, ab: np.ndarray) -> np.ndarray:
    """The band storage (``u`` lower, ``l`` upper diagonals) of ``A^H``."""
    n = ab.shape[1]
    out = np.zeros_like(ab)
    for rho, columns, offset in _diagonals(l, u, n):
        # Row rho holds A[j + offset, j]; A^H has it at (j, j + offset), row l - offset of out.
        j = np.arange(n)[columns]
        out[l - offset, j + offset] = np.conj(ab[rho, j])
    return out


def _band_matmul(l: int, u: int, ab: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``A x`` from ``A``'s band storage (``x`` of shape (n,) or (n, k))."""
    y = np.zeros(x.shape, dtype=np.result_type(ab, x))
    n = ab.shape[1]
    for rho, columns, offset in _diagonals(l, u, n):
        j = np.arange(n)[columns]
        weights = ab[rho, j] if x.ndim == 1 else ab[rho, j][:, None]
        y[j + offset] += weights * x[j]
    return y


def _band_outer(l: int, u: int, p: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The band (storage) of ``p x^H`` (``p``, ``x`` of shape (n,) or (n, k))."""
    n = p.shape[0]
    out = np.zeros((l + u + 1, n), dtype=np.result_type(p, x))
    for rho, columns, offset in _diagonals(l, u, n):
        j = np.arange(n)[columns]
        products = p[j + offset] * np.conj(x[j])
        out[rho, j] = products if products.ndim == 1 else products.sum(axis=-1)
    return out


@rrule_with_options(sla.solve_banded)
def solve_banded_rrule(l_and_u: Any, ab: Any, b: Any, **kwargs: Any) -> Any:
    r"""``x = solve_banded((l, u), ab, b)``: :math:`\bar b = A^{-H} \bar x`, ``āb`` the band of :math:`-\bar b x^H`."""
    refuse(_NAME, overwrite_ab=kwargs.get("overwrite_ab"), overwrite_b=kwargs.get("overwrite_b"))
    x = call(sla.solve_banded, l_and_u, ab, b, **kwargs)
    l, u = l_and_u
    ab_arr = as_array(ab)
    project_ab, project_b = ProjectTo(ab), ProjectTo(b)

    def solve_banded_pullback(x_bar: Any) -> tuple[Any, Any, Any, Any]:
        g = as_array(as_array_cotangent(x_bar, f"{_NAME}'s pullback"))
        dtype = np.result_type(ab_arr, g, np.float64)
        abH = _band_adjoint(l, u, ab_arr.astype(dtype))
        b_bar = call(sla.solve_banded, (u, l), abH, g.astype(dtype))
        ab_bar = -_band_outer(l, u, b_bar, as_array(x))
        return NoTangent(), NoTangent(), project_ab(ab_bar), project_b(b_bar)

    return x, solve_banded_pullback


@frule.register(sla.solve_banded)
def solve_banded_frule(
    tangents: tuple[Any, ...], l_and_u: Any, ab: Any, b: Any, **kwargs: Any
) -> Any:
    r"""``ẋ = A^{-1} (ḃ - Ȧ x)``, all banded."""
    refuse(_NAME, overwrite_ab=kwargs.get("overwrite_ab"), overwrite_b=kwargs.get("overwrite_b"))
    x = call(sla.solve_banded, l_and_u, ab, b, **kwargs)
    l, u = l_and_u
    rhs: Any = np.zeros(np.shape(x), dtype=np.result_type(x))
    ab_dot, b_dot = unthunk(tangents[2]), unthunk(tangents[3])
    if not isinstance(b_dot, AbstractZero):
        rhs = rhs + as_array_cotangent(b_dot, f"{_NAME}'s frule")
    if not isinstance(ab_dot, AbstractZero):
        ab_dot = as_array(as_array_cotangent(ab_dot, f"{_NAME}'s frule"))
        rhs = rhs - _band_matmul(l, u, ab_dot, as_array(x))
    dtype = np.result_type(ab, rhs)
    return x, ProjectTo(x)(
        call(sla.solve_banded, l_and_u, as_array(ab, dtype=dtype), rhs.astype(dtype))
    )
