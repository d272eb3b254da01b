r"""Rules for the products of two arrays that contract nothing: ``np.outer`` and ``np.kron``.

Bilinear, as the products of :mod:`rules.linalg.products` (whose conventions and helpers they
share): the pullback of ``y = P(a, b)`` is the adjoint of each partial map with the other
operand conjugated, the pushforward ``P(a_dot, b) + P(a, b_dot)``. ``outer``'s pullback is
written with the tangent algebra (a cotangent type with ``@`` and ``.mT`` flows through);
``kron``'s needs elementwise access (the array-formula path).
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from rules.core.cotangents import as_array_cotangent, conj
from rules.core.nesting import as_array
from rules.core.options import refuse
from rules.core.registry import frule, rrule
from rules.linalg._stacks import check_shape
from rules.linalg.products import _call, _matmul, _product_tangent
from tangents import NoTangent, ProjectTo, unthunk

# --- np.outer ------------------------------------------------------------------------------------


def _as_shape(x: Any, shape: tuple[int, ...], name: str) -> Any:
    """The flat cotangent ``x`` in an operand's ``shape`` (not a vector: needs an array)."""
    return np.reshape(as_array_cotangent(x, f"{name}'s pullback (a non-vector operand)"), shape)


@rrule.register(np.outer)
def outer_rrule(a: Any, b: Any, out: Any = None) -> tuple[Any, Any]:
    r"""Reverse rule for ``y = np.outer(a, b)``, ``y_{ij} = a_i b_j`` over the flattened operands.

    .. math:: \bar a = \bar y\, \overline{b}, \qquad \bar b = \bar y^T \overline{a},

    written with the tangent algebra (a cotangent type with ``@`` and ``.mT`` flows through), and
    reshaped to each operand's shape (which needs an array for operands that are not vectors).
    ``out=`` is refused.
    """
    refuse("np.outer", out=out)
    y = _call("np.outer", np.outer, a, b)
    project_a, project_b = ProjectTo(a), ProjectTo(b)
    a_shape, b_shape, y_shape = np.shape(a), np.shape(b), np.shape(y)
    a_conj, b_conj = conj(np.ravel(a)), conj(np.ravel(b))  # vectors: cheap to keep
    a_vector, b_vector = a_shape == a_conj.shape, b_shape == b_conj.shape

    def outer_pullback(y_bar: Any) -> tuple[Any, Any, Any]:
        y_bar = unthunk(y_bar)
        check_shape("np.outer pullback", "the cotangent", y_bar, y_shape)
        a_bar = _matmul(y_bar, b_conj, "np.outer")
        b_bar = _matmul(y_bar.mT, a_conj, "np.outer")
        if not a_vector:
            a_bar = _as_shape(a_bar, a_shape, "np.outer")
        if not b_vector:
            b_bar = _as_shape(b_bar, b_shape, "np.outer")
        return NoTangent(), project_a(a_bar), project_b(b_bar)

    return y, outer_pullback


@frule.register(np.outer)
def outer_frule(tangents: tuple[Any, Any, Any], a: Any, b: Any, out: Any = None) -> tuple[Any, Any]:
    r"""Forward rule for ``np.outer``: :math:`\dot y = \dot a b^T + a \dot b^T` (flattened)."""
    refuse("np.outer", out=out)
    y = _call("np.outer", np.outer, a, b)
    return y, ProjectTo(y)(_product_tangent(np.outer, a, b, tangents, "np.outer"))


# --- np.kron -------------------------------------------------------------------------------------


@rrule.register(np.kron)
def kron_rrule(a: Any, b: Any) -> tuple[Any, Any]:
    r"""Reverse rule for ``y = np.kron(a, b)``.

    With both operands padded to the same number of axes ``d`` (leading 1s, as numpy does),
    ``y[i_0 s_0 + j_0, ..., i_d s_d + j_d] = a[i] b[j]`` (``s = b.shape``), so the cotangent seen
    as the interleaved array ``Y[i_0, j_0, ..., i_d, j_d]`` contracts with the other operand:

    .. math:: \bar a_i = \sum_j \bar Y_{ij}\, \overline{b_j}, \qquad
              \bar b_j = \sum_i \bar Y_{ij}\, \overline{a_i}

    (``einsum`` on a view of the cotangent, O(size of y), no copy). The cotangent needs
    elementwise access (an ndarray); structured operands get structured cotangents.
    """
    y = _call("np.kron", np.kron, a, b)
    project_a, project_b = ProjectTo(a), ProjectTo(b)
    A, B = as_array(a), as_array(b)
    d = max(A.ndim, B.ndim)
    A_d = A.reshape((1,) * (d - A.ndim) + A.shape)
    B_d = B.reshape((1,) * (d - B.ndim) + B.shape)
    interleaved = tuple(n for pair in zip(A_d.shape, B_d.shape, strict=True) for n in pair)
    i, j = string.ascii_lowercase[:d], string.ascii_uppercase[:d]
    y_labels = "".join(p + q for p, q in zip(i, j, strict=True))

    def kron_pullback(y_bar: Any) -> tuple[Any, Any, Any]:
        g = as_array(as_array_cotangent(y_bar, "np.kron's pullback"))
        check_shape("np.kron pullback", "the cotangent", g, y.shape)
        Y = g.reshape(interleaved)  # a view: einsum contracts in place (tensordot would copy)
        a_bar = np.einsum(f"{y_labels},{j}->{i}", Y, conj(B_d))
        b_bar = np.einsum(f"{y_labels},{i}->{j}", Y, conj(A_d))
        return NoTangent(), project_a(a_bar.reshape(A.shape)), project_b(b_bar.reshape(B.shape))

    return y, kron_pullback


@frule.register(np.kron)
def kron_frule(tangents: tuple[Any, Any, Any], a: Any, b: Any) -> tuple[Any, Any]:
    r"""Forward rule for ``np.kron``: :math:`\dot y = \dot a \otimes b + a \otimes \dot b`."""
    y = _call("np.kron", np.kron, a, b)
    return y, ProjectTo(y)(_product_tangent(np.kron, a, b, tangents, "np.kron"))
