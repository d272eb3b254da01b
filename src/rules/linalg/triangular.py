r"""Rules for ``scipy.linalg.solve_triangular``.

``X = op(T)^{-1} B`` with ``op(T)`` = ``T``, ``T^T``, ``T^H`` for ``trans`` = 0 (``'N'``), 1
(``'T'``), 2 (``'C'``); only the ``lower`` (or upper) triangle of ``T`` is read, without its
diagonal when ``unit_diagonal``. With ``tri(.)`` the projection onto the entries read and the
complex convention ``x_bar = dL/dRe x + i dL/dIm x`` (Giles 2008, the result for
``X = A^{-1} B``; ``op`` only moves the transpose):

.. math::

    \bar B = \mathrm{op}(T)^{-H} \bar X, \qquad
    \bar T = \mathrm{tri}(\mathrm{op}^*(-\bar B X^H)), \qquad
    \dot X = \mathrm{op}(T)^{-1}\big(\dot B - \mathrm{op}(\mathrm{tri}(\dot T)) X\big),

where ``op^*`` undoes ``op`` on the cotangent (identity, transpose, conjugate transpose). The
cotangent of ``T`` lives on the triangle that is read, as JAX and PyTorch project it; a
``LowerTriangular``/``UpperTriangular`` input gets a cotangent of that type through ``ProjectTo``.

A triangular matrix is its own factorization: the forward pass keeps nothing but ``T`` and
``X``. Kernel path (float32/float64/complex128): per matrix, systems with ``n * n * k < 32**3``
run as one compiled loop over the stack (``kernels.triangular``, also the forward solve, which
scipy otherwise loops over in Python), larger ones one BLAS ``trsm`` and one ``gemm`` each.
The masking needs elementwise access, so cotangents are converted with ``as_array_cotangent``
(no algebra path for user tangent types). Batch axes broadcast as in scipy (``b`` of shape
``(n,)`` is a vector, ``(..., n, k)`` a stack); one ``T`` with a stacked ``b`` is one system.

A zero on the diagonal (without ``unit_diagonal``) raises ``LinAlgError`` naming the function
and the shape, as scipy does; NaN in gives NaN out (with ``check_finite=False``).

References
----------
.. [1] M. B. Giles, "An extended collection of matrix derivative results for forward and reverse
   mode algorithmic differentiation", Oxford NA report 08/01, 2008.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from kernels import crossovers
from kernels import triangular as ktri
from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array, call, innermost_value, is_traced
from rules.core.registry import frule, rrule
from rules.linalg import traced_systems
from rules.linalg._stacks import check_shape, square_matrices
from rules.linalg._systems import (
    Layout,
    cast,
    check_scipy_options,
    linalg_dtypes,
    singular_error,
)
from tangents import AbstractZero, NoTangent, ProjectTo, unthunk

NAME = "scipy.linalg.solve_triangular"

_TRANS = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}


class _Triangular:
    """The forward pass: ``T`` and ``X`` as kernel stacks, and the flags as kernel arguments."""

    __slots__ = ("T", "X", "blas", "layout", "lower", "trans", "unit", "x")

    def __init__(self, a: Any, b: Any, trans: Any, lower: Any, unit_diagonal: Any) -> None:
        try:
            self.trans = _TRANS[trans]
        except (KeyError, TypeError):
            raise ValueError(
                f"{NAME}: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}"
            ) from None
        self.lower, self.unit = bool(lower), bool(unit_diagonal)  # Python bools: one compile
        A0 = a if type(a) is np.ndarray else as_array(a)
        b0 = b if type(b) is np.ndarray else as_array(b)
        work, result = linalg_dtypes(NAME, A0.dtype, b0.dtype)
        square_matrices(NAME, A0)
        self.layout = layout = Layout(NAME, A0.shape, b0.shape)
        self.T = layout.matrices(cast(A0, work))
        if not self.unit and not np.diagonal(self.T, axis1=1, axis2=2).all():
            raise singular_error(NAME, A0.shape, "singular (a zero on the diagonal)")
        B = layout.rhs(cast(b0, work))
        n, k = B.shape[1:]
        self.blas = n * n * k > crossovers.SOLVE_TRIANGULAR_KERNEL_MAX_SIZE
        if self.blas:
            self.X = _per_matrix(
                lambda T, B: call(
                    sla.solve_triangular,
                    T,
                    B,
                    self.trans,
                    self.lower,
                    self.unit,
                    check_finite=False,
                ),
                self.T,
                B,
            )
        else:
            self.X = ktri.solve_triangular_batched(self.T, B, self.lower, self.trans, self.unit)
        self.x = layout.solution(self.X).astype(result, copy=False)

    def pullback(self, x_bar: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(T_bar, B_bar)`` summed back to the shapes of ``a`` and ``b``."""
        x_bar = as_array(as_array_cotangent(x_bar, f"{NAME}'s pullback (triangular masking)"))
        check_shape(f"{NAME} pullback", "the cotangent", x_bar, self.x.shape)
        X_bar = self.layout.rhs(cast(x_bar, self.T.dtype))
        flags = (self.lower, self.trans, self.unit)
        if self.blas:
            T_bar, B_bar = _per_matrix(
                lambda T, X, X_bar: ktri.solve_triangular_pullback_blas(T, X, X_bar, *flags),
                self.T,
                self.X,
                X_bar,
            )
        else:
            T_bar, B_bar = ktri.solve_triangular_pullback_batched(self.T, self.X, X_bar, *flags)
        return self.layout.a_cotangent(T_bar), self.layout.b_cotangent(B_bar)

    def pushforward(self, a_dot: Any, b_dot: Any) -> np.ndarray:
        """``X_dot = op(T)^-1 (B_dot - op(tri(T_dot)) X)`` in the shape of ``x``."""
        T_dot, B_dot = (
            np.zeros_like(like)
            if isinstance(t, AbstractZero)
            else convert(cast(as_array(as_array_cotangent(t, f"{NAME}'s pushforward")), like.dtype))
            for t, like, convert in (
                (a_dot, self.T, self.layout.matrices),
                (b_dot, self.X, self.layout.rhs),
            )
        )
        flags = (self.lower, self.trans, self.unit)
        if self.blas:
            X_dot = _per_matrix(
                lambda *args: ktri.solve_triangular_pushforward_blas(*args, *flags),
                self.T,
                self.X,
                T_dot,
                B_dot,
            )
        else:
            X_dot = ktri.solve_triangular_pushforward_batched(self.T, self.X, T_dot, B_dot, *flags)
        return self.layout.solution(X_dot)


def _per_matrix(f: Any, *stacks: np.ndarray) -> Any:
    """``f`` on each matrix of the stacks, results stacked (one matrix: no copies)."""
    if len(stacks[0]) == 1:
        out = f(*(s[0] for s in stacks))
        return tuple(o[None] for o in out) if isinstance(out, tuple) else out[None]
    results = [f(*(s[t] for s in stacks)) for t in range(len(stacks[0]))]
    if isinstance(results[0], tuple):
        return tuple(np.stack(parts) for parts in zip(*results, strict=True))
    return np.stack(results)


@rrule.register(sla.solve_triangular)
def solve_triangular_rrule(
    a: Any,
    b: Any,
    trans: Any = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> tuple[np.ndarray, Any]:
    r"""Reverse rule for ``scipy.linalg.solve_triangular``; see the module docstring.

    :math:`\bar B = \mathrm{op}(T)^{-H}\bar X`, :math:`\bar T = \mathrm{tri}(\mathrm{op}^*(-\bar
    B X^H))`. ``overwrite_b=True`` is refused; ``check_finite`` is honoured.
    """
    if is_traced(a) or is_traced(b):  # a nested differentiation
        refuse_overwrite = {"overwrite_b": overwrite_b, "check_finite": check_finite}
        check_scipy_options(NAME, (innermost_value(a), innermost_value(b)), refuse_overwrite)
        return traced_systems.solve_triangular_rrule(
            a, b, trans, lower, unit_diagonal, check_finite
        )
    check_scipy_options(NAME, (a, b), {"overwrite_b": overwrite_b, "check_finite": check_finite})
    forward = _Triangular(a, b, trans, lower, unit_diagonal)
    project_a, project_b = ProjectTo(a), ProjectTo(b)

    def solve_triangular_pullback(x_bar: Any) -> tuple[Any, Any, Any]:
        a_bar, b_bar = forward.pullback(unthunk(x_bar))
        return NoTangent(), project_a(a_bar), project_b(b_bar)

    return forward.x, solve_triangular_pullback


@frule.register(sla.solve_triangular)
def solve_triangular_frule(
    tangents: tuple[Any, ...],
    a: Any,
    b: Any,
    trans: Any = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> tuple[np.ndarray, Any]:
    r"""Forward rule: :math:`\dot X = \mathrm{op}(T)^{-1}(\dot B - \mathrm{op}(\mathrm{tri}(\dot T)) X)`."""
    check_scipy_options(NAME, (a, b), {"overwrite_b": overwrite_b, "check_finite": check_finite})
    forward = _Triangular(a, b, trans, lower, unit_diagonal)
    a_dot, b_dot = unthunk(tangents[1]), unthunk(tangents[2])
    return forward.x, ProjectTo(forward.x)(forward.pushforward(a_dot, b_dot))
