"""One small plain matrix: the pullbacks of ``eigh`` and the square ``svd`` in one compiled call.

The forwards of :mod:`rules.linalg.eigh` and :mod:`rules.linalg.svd` call numpy's LAPACK
drivers directly for one small plain matrix (:func:`rules.linalg._spectral.lapack_eigh_vectors`,
:func:`~rules.linalg._spectral.lapack_svd_vectors`). Their pullbacks, up to the loop kernels'
crossovers (``kernels.crossovers.EIGH_LOOPS_MAX_N``, ``SVD_LOOPS_MAX_N``), take a plain tuple
of C-ordered cotangents of the outputs' dtypes and shapes straight to ``kernels.spectral_checked``,
which computes ``A_bar`` and whether the general pullback would return it unchanged (no tie, no
zero singular value, no NaN, the phase within the gauge limit). ``ProjectTo`` of a plain ndarray
of ``A_bar``'s dtype is the identity, so it is skipped. Everything else (other cotangent types,
dtypes, layouts, a tie, a gauge-dependent loss) goes to the rule's general pullback, built then
by ``general()``, whose results and errors are the reference.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kernels import crossovers, spectral_checked
from rules.linalg._spectral import default_rtol, gauge_rtol
from tangents import NoTangent

__all__ = ["checked_lane", "eigh_checked_pullback", "svd_checked_pullback"]

_TOLERANCES: dict[tuple[int, np.dtype[Any]], tuple[float, float]] = {}


def checked_lane(kernel: str, n: int, dtype: np.dtype[Any]) -> tuple[Any, float, float] | None:
    """``(kernel, rtol, grtol)`` for order ``n`` and ``dtype``, or ``None`` above the crossover.

    ``kernel``: ``"eigh"`` or ``"svd"``; the crossover is read at each call (tests lower it).
    """
    if kernel == "eigh":
        if n > crossovers.EIGH_LOOPS_MAX_N:
            return None
        factory = spectral_checked.eigh_pullback_checked
    else:
        if n > crossovers.SVD_LOOPS_MAX_N:
            return None
        factory = spectral_checked.svd_pullback_checked
    tolerances = _TOLERANCES.get((n, dtype))
    if tolerances is None:
        tolerances = _TOLERANCES[n, dtype] = (default_rtol(n, dtype), gauge_rtol(dtype))
    return (factory(n), *tolerances)


def eigh_checked_pullback(w: np.ndarray, V: np.ndarray, lane: Any, general: Any) -> Any:
    """The pullback for ``(w, V)`` of one small matrix; ``general()`` builds the general one."""
    kernel, rtol, grtol = lane
    w_type, V_type, w_shape, V_shape = w.dtype, V.dtype, w.shape, V.shape
    no_tangent = NoTangent()

    def eigh_pullback(y_bar: Any) -> tuple[Any, Any]:
        if type(y_bar) is tuple and len(y_bar) == 2:
            w_bar, V_bar = y_bar
            if (
                type(w_bar) is np.ndarray
                and type(V_bar) is np.ndarray
                and w_bar.dtype is w_type
                and V_bar.dtype is V_type
                and w_bar.shape == w_shape
                and V_bar.shape == V_shape
                and w_bar.flags.carray
                and V_bar.flags.carray
            ):
                A_bar = np.empty(V_shape, V_type)
                if kernel(w, V, w_bar, V_bar, rtol, grtol, A_bar):
                    return no_tangent, A_bar
        return general()(y_bar)

    eigh_pullback.__qualname__ = "_vectors_rule.<locals>.eigh_pullback"  # the general one's
    return eigh_pullback


def svd_checked_pullback(
    U: np.ndarray, s: np.ndarray, Vh: np.ndarray, lane: Any, general: Any
) -> Any:
    """The pullback for ``(U, s, Vh)`` of one small square matrix; ``general()`` as above."""
    kernel, rtol, grtol = lane
    s_type, U_type, s_shape, U_shape = s.dtype, U.dtype, s.shape, U.shape
    no_tangent = NoTangent()

    def svd_pullback(y_bar: Any) -> tuple[Any, Any]:
        if type(y_bar) is tuple and len(y_bar) == 3:
            U_bar, s_bar, Vh_bar = y_bar
            if (
                type(U_bar) is np.ndarray
                and type(s_bar) is np.ndarray
                and type(Vh_bar) is np.ndarray
                and U_bar.dtype is U_type
                and s_bar.dtype is s_type
                and Vh_bar.dtype is U_type
                and U_bar.shape == U_shape
                and s_bar.shape == s_shape
                and Vh_bar.shape == U_shape
                and U_bar.flags.carray
                and s_bar.flags.carray
                and Vh_bar.flags.carray
            ):
                A_bar = np.empty(U_shape, U_type)
                if kernel(U, s, Vh, U_bar, s_bar, Vh_bar, rtol, grtol, A_bar):
                    return no_tangent, A_bar
        return general()(y_bar)

    svd_pullback.__qualname__ = "_vectors_rule.<locals>.svd_pullback"  # the general one's
    return svd_pullback
