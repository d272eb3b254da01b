"""Rules for ``scipy.linalg.svd`` and ``scipy.linalg.svdvals``.

The derivatives are those of ``np.linalg.svd`` (:mod:`rules.linalg.svd`, whose docstring gives
the formulas, the gauge and tie policy and the paths); this module maps scipy's options
(``full_matrices``, ``compute_uv``, ``lapack_driver``, ``check_finite``) onto them.
"""

from __future__ import annotations

import cmath
from typing import Any

import numpy as np
import scipy.linalg as sla

from rules.core.nesting import call
from rules.core.registry import frule, rrule
from rules.linalg._spectral import lapack_svd
from rules.linalg.svd import (
    _decompose,
    _frule,
    _stack_svd,
    _values_rule,
    _vectors_rule,
)

# --- scipy.linalg.svd / svdvals --------------------------------------------------------------------


def _scipy_svd(
    name: str,
    a: Any,
    full_matrices: bool,
    overwrite_a: bool,
    check_finite: bool,
    lapack_driver: str = "gesdd",
) -> Any:
    if overwrite_a:
        raise ValueError(f"{name}: overwrite_a=True is not differentiable (it mutates the input)")

    def decompose(dense: np.ndarray, full: bool) -> Any:
        if not check_finite or np.isfinite(dense).all():  # else scipy raises its error
            factors = _stack_svd(dense, full)
            if factors is not None:
                return list(factors)  # scipy returns a list for stacks
        return call(
            sla.svd,
            dense,
            full_matrices=full,
            check_finite=check_finite,
            lapack_driver=lapack_driver,
        )

    return _decompose(name, a, full_matrices, False, decompose)


@rrule.register(sla.svd)
def scipy_svd_rrule(
    a: Any,
    full_matrices: bool = True,
    compute_uv: bool = True,
    overwrite_a: bool = False,
    check_finite: bool = True,
    lapack_driver: str = "gesdd",
) -> tuple[Any, Any]:
    """Reverse rule for ``scipy.linalg.svd``: ``(U, s, Vh)`` or ``s`` (module docstring)."""
    name = "scipy.linalg.svd"
    _, result = _scipy_svd(
        name, a, full_matrices and compute_uv, overwrite_a, check_finite, lapack_driver
    )
    if not compute_uv:
        return _values_rule(name, a, *result, False)
    return _vectors_rule(name, a, result, False)


@frule.register(sla.svd)
def scipy_svd_frule(
    tangents: tuple[Any, ...],
    a: Any,
    full_matrices: bool = True,
    compute_uv: bool = True,
    overwrite_a: bool = False,
    check_finite: bool = True,
    lapack_driver: str = "gesdd",
) -> tuple[Any, Any]:
    """Forward rule for ``scipy.linalg.svd``."""
    name = "scipy.linalg.svd"
    dense, result = _scipy_svd(
        name, a, full_matrices and compute_uv, overwrite_a, check_finite, lapack_driver
    )
    y_dot = _frule(name, tangents[1], dense, result, compute_uv, False)
    return (result if compute_uv else result[1]), y_dot


@rrule.register(sla.svdvals)
def scipy_svdvals_rrule(
    a: Any, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[np.ndarray, Any]:
    """Reverse rule for ``scipy.linalg.svdvals``: ``A_bar = U diag(s_bar) V^H``."""
    name = "scipy.linalg.svdvals"
    result = _single_values(a, overwrite_a, check_finite)
    if result is None:
        _, result = _scipy_svd(name, a, False, overwrite_a, check_finite)
    return _values_rule(name, a, *result, False)


def _single_values(a: Any, overwrite_a: bool, check_finite: bool) -> Any:
    """``(U, s, Vh)`` of one small plain matrix by LAPACK ``gesdd`` directly, else ``None``.

    scipy's own wrapper costs several times the decomposition of a small matrix. ``None`` (then
    scipy's path, which raises its errors) for ``overwrite_a``, for non-finite input under
    ``check_finite`` and for whatever :func:`rules.linalg._spectral.lapack_svd` does not take.
    """
    if overwrite_a or type(a) is not np.ndarray or a.ndim != 2:
        return None
    if check_finite:  # a sum is NaN or inf when an entry is (a finite overflow: scipy's path)
        finite = cmath.isfinite(sum(a.ravel().tolist())) if a.size <= 64 else np.isfinite(a).all()
        if not finite:
            return None
    return lapack_svd(a)


@frule.register(sla.svdvals)
def scipy_svdvals_frule(
    tangents: tuple[Any, ...], a: Any, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Any, Any]:
    """Forward rule for ``scipy.linalg.svdvals``."""
    name = "scipy.linalg.svdvals"
    dense, result = a, _single_values(a, overwrite_a, check_finite)
    if result is None:
        dense, result = _scipy_svd(name, a, False, overwrite_a, check_finite)
    return result[1], _frule(name, tangents[1], dense, result, False, False)
