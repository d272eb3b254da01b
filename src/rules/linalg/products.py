"""Rules for matrix products: ``np.matmul`` and the ``@`` operator.

Conventions (DESIGN.md section 3): the cotangent of a complex ``z`` is ``dL/dRe z + i dL/dIm z``,
so ``C = A B`` gives ``A_bar = C_bar B^H`` and ``B_bar = A^H C_bar`` (Giles 2008, section 2.2.2).

Generic path: the two products above, written with the tangent algebra, so any cotangent type
with ``@`` flows through (a low-rank cotangent stays low rank). Kernel path: stacks of matrices
up to 4x4 with equal batch shapes go through ``kernels.products`` in one compiled call (measured
there: 3x faster than numpy's stacked matmul at 10000 x 4x4, slower beyond 4x4).

References
----------
.. [1] M. B. Giles, "An extended collection of matrix derivative results for forward and reverse
   mode algorithmic differentiation", Oxford NA report 08/01, 2008.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from kernels import products as kproducts
from rules.broadcasting import unbroadcast
from rules.cotangents import as_array_cotangent
from rules.linalg._stacks import adjoint, as_stack, check_shape, kernel_operands, unstack
from rules.registry import frule, rrule
from tangents import NoTangent, ProjectTo, unthunk

KERNEL_MAX_ORDER = 4
"""Largest matrix dimension for which the batched product kernels beat numpy (kernels.products)."""


def _matmul(A: Any, B: Any) -> Any:
    """``A @ B`` with an error naming the shapes (structured operands use their own ``@``)."""
    try:
        return A @ B
    except ValueError as error:
        raise ValueError(
            f"np.matmul: operands of shapes {np.shape(A)} and {np.shape(B)} do not match ({error})"
        ) from None


def _small_stack(*arrays: np.ndarray) -> bool:
    """Stacks of equal batch shape whose matrices are at most ``KERNEL_MAX_ORDER`` on a side."""
    first = arrays[0]
    return (
        first.ndim >= 3
        and all(a.ndim == first.ndim and a.shape[:-2] == first.shape[:-2] for a in arrays)
        and max(max(a.shape[-2:]) for a in arrays) <= KERNEL_MAX_ORDER
    )


def _as_matrices(A: Any, B: Any) -> tuple[Any, Any, bool, bool]:
    """Promote 1-D operands to matrices as ``np.matmul`` does: a row on the left, a column on the right."""
    a_vector, b_vector = np.ndim(A) == 1, np.ndim(B) == 1
    return (A[None, :] if a_vector else A), (B[:, None] if b_vector else B), a_vector, b_vector


@rrule.register(np.matmul)
@rrule.register(operator.matmul)
def matmul_rrule(A: Any, B: Any) -> tuple[Any, Any]:
    r"""Reverse rule for ``C = A @ B`` (``np.matmul``, and the ``@`` operator).

    .. math:: \bar A = \bar C B^H, \qquad \bar B = A^H \bar C,

    summed over broadcast batch axes; 1-D operands are treated as a row (left) or a column
    (right) vector, as numpy does. Structured operands (``Diagonal``, ``Symmetric``, triangular)
    are accepted and get cotangents of their structure through ``ProjectTo``.
    """
    C = _matmul(A, B)
    project_A, project_B = ProjectTo(A), ProjectTo(B)
    C_shape = np.shape(C)
    # Two plain matrices: the pullback is two BLAS products, with no dispatch in the way.
    matrices = type(A) is np.ndarray and type(B) is np.ndarray and A.ndim == B.ndim == 2
    stacks = type(A) is np.ndarray and type(B) is np.ndarray and A.ndim >= 3

    def matmul_pullback(C_bar: Any) -> tuple[Any, Any, Any]:
        C_bar = unthunk(C_bar)
        check_shape("np.matmul pullback", "the cotangent", C_bar, C_shape)
        if matrices:
            return (
                NoTangent(),
                project_A(_matmul(C_bar, adjoint(B))),
                project_B(_matmul(adjoint(A), C_bar)),
            )
        operands = kernel_operands(A, B, C_bar) if stacks else None
        if operands is not None and _small_stack(*operands):
            A_k, B_k, C_bar_k = operands
            A_bar, B_bar = kproducts.matmul_pullback_batched(
                as_stack(A_k), as_stack(B_k), as_stack(C_bar_k)
            )
            return (
                NoTangent(),
                project_A(unstack(A_bar, A_k.shape)),
                project_B(unstack(B_bar, B_k.shape)),
            )
        return NoTangent(), *_matmul_pullback_generic(A, B, C_bar, project_A, project_B)

    return C, matmul_pullback


def _matmul_pullback_generic(
    A: Any, B: Any, C_bar: Any, project_A: Any, project_B: Any
) -> tuple[Any, Any]:
    """The generic path: ``C_bar B^H`` and ``A^H C_bar`` with the tangent algebra."""
    if np.ndim(A) == np.ndim(B) == 2:  # no broadcasting or vectors: any tangent type with @ works
        return project_A(_matmul(C_bar, adjoint(B))), project_B(_matmul(adjoint(A), C_bar))
    C_bar = as_array_cotangent(C_bar, "np.matmul's pullback with broadcasting or vectors")
    A2, B2, a_vector, b_vector = _as_matrices(np.asarray(A), np.asarray(B))
    if a_vector and b_vector:
        C_bar = np.reshape(C_bar, (1, 1))
    elif a_vector:
        C_bar = C_bar[..., None, :]
    elif b_vector:
        C_bar = C_bar[..., :, None]
    A_bar = unbroadcast(C_bar @ adjoint(B2), A2.shape)
    B_bar = unbroadcast(adjoint(A2) @ C_bar, B2.shape)
    return project_A(A_bar[0] if a_vector else A_bar), project_B(B_bar[:, 0] if b_vector else B_bar)


@frule.register(np.matmul)
@frule.register(operator.matmul)
def matmul_frule(tangents: tuple[Any, Any, Any], A: Any, B: Any) -> tuple[Any, Any]:
    r"""Forward rule for ``C = A @ B``: :math:`\dot C = \dot A B + A \dot B`."""
    _, A_dot, B_dot = (unthunk(t) for t in tangents)
    C = _matmul(A, B)
    stacks = type(A) is np.ndarray and type(B) is np.ndarray and A.ndim >= 3
    operands = kernel_operands(A, B, A_dot, B_dot) if stacks else None
    if operands is not None and _small_stack(*operands):
        A_k, B_k, A_dot_k, B_dot_k = operands
        C_dot = kproducts.matmul_pushforward_batched(
            as_stack(A_k), as_stack(B_k), as_stack(A_dot_k), as_stack(B_dot_k)
        )
        return C, ProjectTo(C)(C_dot.reshape(C.shape))
    # A zero tangent stays symbolic: ZeroTangent() @ B is ZeroTangent(), the identity of +.
    return C, ProjectTo(C)(_matmul(A_dot, B) + _matmul(A, B_dot))
