r"""The reverse rules of ``det``, ``slogdet``, ``solve`` and ``solve_triangular`` on traced operands.

The rules of these functions keep the forward pass's LU factors and hand them to kernels and
to LAPACK: that is their speed, and none of it can run on a value being differentiated. A
nested differentiation (``hessian``, ``grad(grad(f))``; :mod:`rules.core.nesting`) gets these
rules instead, written with operations that are rules themselves, so that the pullback is
differentiated in turn:

* ``det``: :math:`\bar A = \bar d\,\overline{\det A}\,A^{-H}` (Giles 2008, section 2.2.1), with
  ``inv`` traced: exact away from singular matrices, where ``inv`` raises;
* ``slogdet``: :math:`\bar A = \bar\ell\,A^{-H}` for the log-magnitude; for a complex input the
  sign :math:`s = e^{i\theta}` adds :math:`\mathrm{Re}(\bar s^* i s)\, i A^{-H}`
  (:math:`d\theta = \mathrm{Im}\,\mathrm{tr}(A^{-1} dA)`);
* ``solve``: :math:`\bar b = A^{-H}\bar x`, :math:`\bar A = -\bar b x^H`;
* ``solve_triangular``: :math:`\bar B = \mathrm{op}(T)^{-H}\bar X`, the cotangent of
  :math:`\mathrm{op}(T)` is :math:`-\bar B X^H`, undone by ``op`` and masked to the triangle.

The rule files call these when an operand is traced; plain arrays never get here.

References
----------
M. B. Giles, "An extended collection of matrix derivative results for forward and reverse mode
algorithmic differentiation", 2008.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from rules.core.broadcasting import unbroadcast
from rules.core.nesting import call, innermost_value
from rules.core.registry import function_name, split_cotangent
from rules.linalg._stacks import adjoint
from rules.linalg._systems import STRUCTURES, fold_cotangent
from tangents import AbstractZero, NoTangent, ProjectTo, ZeroTangent, unthunk

__all__ = ["det_rrule", "slogdet_rrule", "solve_rrule", "solve_triangular_rrule"]


def _inverse_adjoint(a: Any) -> Any:
    """``A^{-H}``, traced."""
    return adjoint(np.linalg.inv(a))


def det_rrule(f: Any, a: Any) -> tuple[Any, Any]:
    """``det`` (numpy's or scipy's, ``f``) of a traced ``a``."""
    d = call(f, a)
    project_a = ProjectTo(a)

    def det_pullback(d_bar: Any) -> tuple[Any, Any]:
        d_bar = unthunk(d_bar)
        weight = d_bar * np.conj(d)
        return NoTangent(), project_a(np.expand_dims(weight, (-2, -1)) * _inverse_adjoint(a))

    return d, det_pullback


def slogdet_rrule(a: Any) -> tuple[Any, Any]:
    """``np.linalg.slogdet`` of a traced ``a``."""
    result = call(np.linalg.slogdet, a)
    sign = result[0]
    complex_input = np.iscomplexobj(innermost_value(a))
    project_a = ProjectTo(a)

    def slogdet_pullback(y_bar: Any) -> tuple[Any, Any]:
        sign_bar, logabsdet_bar = (unthunk(t) for t in split_cotangent(y_bar, 2))
        terms = []
        if not isinstance(logabsdet_bar, AbstractZero):
            terms.append(np.real(logabsdet_bar))
        if complex_input and not isinstance(sign_bar, AbstractZero):
            terms.append(1j * np.real(np.conj(sign_bar) * 1j * sign))
        if not terms:
            return NoTangent(), ZeroTangent()  # the sign of a real determinant is locally constant
        weight = terms[0] if len(terms) == 1 else terms[0] + terms[1]
        return NoTangent(), project_a(np.expand_dims(weight, (-2, -1)) * _inverse_adjoint(a))

    return result, slogdet_pullback


def solve_rrule(f: Any, a: Any, b: Any, **kwargs: Any) -> tuple[Any, Any]:
    """``np.linalg.solve`` or ``scipy.linalg.solve`` (``f``, with ``kwargs``) of traced operands."""
    structure = STRUCTURES.get(kwargs.get("assume_a"), "general")
    if structure not in ("general", "sym", "her", "pos"):
        raise NotImplementedError(
            f"{function_name(f)} with assume_a={kwargs['assume_a']!r} is not twice differentiable:"
            " its nested rule covers general, symmetric, Hermitian and positive-definite a"
        )
    if structure == "her" and not np.iscomplexobj(innermost_value(a)):
        structure = "sym"
    x = call(f, a, b, **kwargs)
    a_shape, b_shape = np.shape(a), np.shape(b)
    vector = len(b_shape) == 1
    transposed = bool(kwargs.get("transposed", False))
    project_a, project_b = ProjectTo(a), ProjectTo(b)

    def solve_pullback(x_bar: Any) -> tuple[Any, Any, Any]:
        x_bar = unthunk(x_bar)
        op_a = np.swapaxes(a, -1, -2) if transposed else a
        b_bar = call(np.linalg.solve, adjoint(op_a), x_bar[..., None] if vector else x_bar)
        op_bar = -(b_bar @ adjoint(x[..., None] if vector else x))
        a_bar = np.swapaxes(op_bar, -1, -2) if transposed else op_bar
        b_bar = b_bar[..., 0] if vector else b_bar
        return (
            NoTangent(),
            project_a(fold_cotangent(unbroadcast(a_bar, a_shape), structure, "solve")),
            project_b(unbroadcast(b_bar, b_shape)),
        )

    return x, solve_pullback


def solve_triangular_rrule(
    a: Any, b: Any, trans: int, lower: bool, unit_diagonal: bool, check_finite: bool
) -> tuple[Any, Any]:
    """``scipy.linalg.solve_triangular`` of traced operands; ``trans`` is 0, 1 or 2."""
    flags = {"lower": lower, "unit_diagonal": unit_diagonal}
    x = call(sla.solve_triangular, a, b, trans=trans, check_finite=check_finite, **flags)
    vector = np.ndim(b) == 1
    project_a, project_b = ProjectTo(a), ProjectTo(b)
    complex_input = np.iscomplexobj(innermost_value(a))

    def solve_triangular_pullback(x_bar: Any) -> tuple[Any, ...]:
        x_bar = unthunk(x_bar)
        # op(T)^{-H} x_bar: T^{-H} for op = T; T^{-1} for op = T^H (or T^T, real);
        # conj(T)^{-1} = conj(T^{-1} conj(.)) for op = T^T, complex
        if trans == 1 and complex_input:
            b_bar = np.conj(call(sla.solve_triangular, a, np.conj(x_bar), trans=0, **flags))
        else:
            b_bar = call(sla.solve_triangular, a, x_bar, trans=2 if trans == 0 else 0, **flags)
        columns_b, columns_x = (b_bar[..., None], x[..., None]) if vector else (b_bar, x)
        op_bar = -(columns_b @ adjoint(columns_x))  # the cotangent of op(T)
        if trans == 1:
            op_bar = np.swapaxes(op_bar, -1, -2)
        elif trans == 2:
            op_bar = adjoint(op_bar)
        diagonal = 1 if unit_diagonal else 0
        a_bar = np.tril(op_bar, -diagonal) if lower else np.triu(op_bar, diagonal)
        return NoTangent(), project_a(a_bar), project_b(b_bar), *(NoTangent(),) * 5

    return x, solve_triangular_pullback
