r"""Rules for the singular value decomposition, degenerate-safe.

Functions: ``np.linalg.svd`` (``full_matrices``, ``compute_uv``, ``hermitian``),
``np.linalg.svdvals``, ``scipy.linalg.svd`` (``full_matrices``, ``compute_uv``,
``lapack_driver``) and ``scipy.linalg.svdvals``; tall, wide and square, real and complex
matrices, and stacks of them.

For the thin SVD ``A = U diag(s) V^H`` (``U`` (m, k), ``k = min(m, n)``, ``s`` descending), with
``J = U^H \bar U``, ``K = V^H \bar V``, ``J_a = J - J^H``, ``K_a = K - K^H`` and the masked
``F^-_ij = 1/(s_j - s_i)``, ``F^+_ij = 1/(s_i + s_j)``, ``S^+ = diag(1/s_i)`` (see below):

.. math::

    X = \mathrm{diag}(\bar s) + F^- \circ \tfrac12 (J_a + K_a) + F^+ \circ \tfrac12 (J_a - K_a),

    \bar A = U X V^H + (I - U U^H) \bar U S^+ V^H + U S^+ \bar V^H (I - V V^H),

and the pushforward with ``P = U^H \dot A V``, ``P_h, P_a`` its Hermitian and skew parts:
``s_dot = Re diag(P)``, ``U_dot = U (F^- o P_h + F^+ o P_a) + (I - U U^H) A_dot V S^+``,
``V_dot = V (F^- o P_h - F^+ o P_a) + (I - V V^H) A_dot^H U S^+``. This is J. Townsend's formula
(2016) with the split ``(J_a s_j + s_i K_a)/(s_j^2 - s_i^2) = F^- (J_a + K_a)/2 + F^+ (J_a -
K_a)/2`` (``kernels.svd``), for complex input as in Wan and Zhang (2019). ``svdvals`` uses
``A_bar = U diag(s_bar) V^H``: no division, exact at any tie or zero.

``full_matrices=True`` (non-square ``A``): the extra columns ``U_p`` of ``U`` (rows of ``Vh``) span
the orthogonal complement of the range, which ``A`` determines up to a rotation inside it. Their
cotangent ``X`` is not ignored: through ``U_k^H U_p = 0`` it moves ``U_k``, so
``U_bar_k += -U_p X^H U_k`` (``Vh_bar_k += -Vh_k Y^H Vh_p`` for the extra rows ``Y`` of
``Vh_bar``), which is exact for losses such as ``trace(G U_p U_p^H)``. The part of ``X``
that rotates ``U_p`` inside the complement (the skew-Hermitian part of ``U_p^H X``) is gauge and
is checked like the other gauge components (below). The pushforward returns
``U_p_dot = -U_k U_k_dot^H U_p`` (no rotation inside the complement).

Degenerate and zero singular values. ``F^-`` is 0 where ``|s_j - s_i| <= tol``, ``F^+`` and
``S^+`` where the singular values are ``<= tol``, with ``tol = rtol * max(s)`` and ``rtol = 8
max(m, n) eps`` (the kernels' default, :func:`kernels._spectral.default_rtol`). The cotangent is
always finite, and exact for every loss the decomposition determines at a tie or a zero: losses
of ``s`` alone (``sum(s**2)``, ``sum(s**3)``; ``sum(s)``, not differentiable at a zero, gets the
subgradient ``U V^H``), and losses whose vector cotangents have no component along the gauge
and no in-block coupling (below), such as ``Re <G, U f(S) V^H>`` with ``f(0) = f'(0) = 0`` at
zeros. ``F^+`` stays finite at ties, so the skew-Hermitian in-block part of ``U^H G V`` of such a
loss is kept in full. As for eigh, the in-block coupling ``f'(s)`` times the Hermitian part of
``U^H G V`` inside a tie is carried by no cotangent of ``(U, s, V^H)`` (at ``A = I``, ``Re <G, A>``
and ``Re <G, U V^H>`` give the same cotangents), so it is returned as 0; for functions of a
symmetric/Hermitian matrix use the matrix-function rules (``rules.linalg.matfun``), which are
exact there. Vector cotangents whose Hermitian parts of ``U^H U_bar`` and ``V^H V_bar`` differ
off the diagonal inside a tie (``tr(C A A^H)``, a function of ``U`` alone) raise
:class:`TieError`: that part is no gauge, and no cotangent of the SVD resolves it.

Gauge. The common phase of each complex pair ``(u_i, v_i)``, rotations inside a repeated singular
value, the singular vectors of zero singular values and the rotation of the ``full_matrices``
complement are arbitrary. The pullback measures each component it drops
(``kernels.svd.svd_gauge_residual``) and raises :class:`GaugeError` when one exceeds ``sqrt(eps)``
times the Frobenius norm of the vector cotangents of that matrix. The pushforward returns the
tangent without gauge motion (the adjoint of the pullback).

Conventions: float32 stays float32, complex64 takes the numpy formula, the other dtypes the
kernels. ``hermitian=True`` reads ``A`` as Hermitian (its lower triangle), so the cotangent is
the Hermitian ``(G + G^H)/2`` and forward tangents are read through their Hermitian part.
``svdvals`` and ``compute_uv=False`` compute the vectors in the forward pass; the values agree with
LAPACK's values-only driver to rounding.

Paths (DESIGN.md section 7):

* algebra path: none. ``F^- o``, ``F^+ o`` and the gauge and tie checks need elementwise access,
  so cotangents go through ``as_array_cotangent`` (other tangent types raise ``TypeError``).
* array-formula path: :func:`svd_pullback_formula` and :func:`svd_pushforward_formula`, the
  formulas above in stacked numpy, for operands that fail :func:`rules.core.dispatch.kernel_eligible`
  (complex64, which has no kernels); also the kernels' reference in the tests.
* kernel path: ``kernels.svd`` (``svd_pullback``, ``svd_pullback_batched``,
  ``svdvals_pullback_batched``, ``svd_pushforward_batched``), one matrix or a stack in one call.
  The choice between the unrolled loop kernels and the tiled BLAS code is made inside those
  functions (``kernels._spectral.use_loops``), governed by the crossover entry
  ``kernels.crossovers.SVD_LOOPS_MAX_N`` on ``max(m, n)``: loops up to it, BLAS above. The
  forward pass of a stack of small matrices takes a batched kernel up to
  ``SVD_FORWARD_STACK_MAX_N`` (by dtype kind), LAPACK otherwise: bidiagonal QR
  (``kernels.svd_bidiagonal``) for stacks whose smaller side is above ``SVD_JACOBI_STACK_MAX_N``
  (by dtype kind), one-sided Jacobi (``kernels.svd_forward``) for the others; ``np.linalg.svdvals`` (and
  ``compute_uv=False``) of one matrix calls ``gesdd`` directly (``SVD_VALUES_SINGLE_MAX_N``).

References
----------
.. [1] J. Townsend, "Differentiating the singular value decomposition", technical note, 2016.
.. [2] M. Seeger, A. Hetzel, Z. Dai, E. Meissner, N. D. Lawrence, "Auto-differentiating linear
   algebra", arXiv:1710.08717, 2017.
.. [3] Z.-Q. Wan, S.-X. Zhang, "Automatic differentiation for complex valued SVD",
   arXiv:1909.02659, 2019.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kernels import crossovers
from kernels import svd as ksvd
from kernels import tiled_products as ktiled
from kernels.spectral_checked import svdvals_pullback_one
from kernels.svd_bidiagonal import svd_bidiagonal_batched
from kernels.svd_forward import svd_batched
from rules.core.cotangents import as_array_cotangent
from rules.core.dispatch import as_stack, crossover, flat_batch, forward_stack, kernel_eligible
from rules.core.nesting import as_array, contiguous, innermost_value, is_traced
from rules.core.registry import frule, rrule, split_cotangent
from rules.linalg import svd_complement, traced_spectral
from rules.linalg._spectral import (
    GaugeError,
    default_rtol,
    frobenius,
    gauge_rtol,
    lapack_svd,
    lapack_svd_vectors,
    masked_inverse,
    near_ties,
    optional_cotangent,
    plain_projector,
    raise_if_gauge_dependent,
    raise_if_tie_coupled,
)
from rules.linalg._stacks import (
    PLAIN_REAL,
    adjoint,
    compiled_pullback,
    plain_pullback,
    plain_real_matrix,
    square_matrices,
)
from rules.linalg.spectral_one import checked_lane, svd_checked_pullback
from tangents import NoTangent, Tangent, unthunk

__all__ = [
    "GaugeError",
    "svd_pullback_array",
    "svd_pullback_formula",
    "svd_pushforward_array",
    "svd_pushforward_formula",
]

_PHASE = "the common phase of complex singular vector pairs (u_i, v_i)"
_ROTATION = "the choice of singular vectors inside a repeated singular value"
_NULL = "the singular vectors of zero singular values"


# --- pullback and pushforward on arrays (thin factors) -------------------------------------------


def svd_pullback_array(
    name: str,
    U: np.ndarray,
    s: np.ndarray,
    Vh: np.ndarray,
    U_bar: np.ndarray | None,
    s_bar: np.ndarray | None,
    Vh_bar: np.ndarray | None,
) -> np.ndarray:
    """``A_bar`` (..., m, n) from thin factors and ndarray cotangents of their dtypes (``None``: zero).

    All C-contiguous (the rules' ``_thin`` factors and ``optional_cotangent`` cotangents are).
    Raises :class:`GaugeError` for gauge-dependent vector cotangents, then :class:`TieError`
    when they couple singular vectors inside a tie in a way no cotangent resolves (module
    docstring, "Degenerate and zero singular values").
    """
    if any(map(is_traced, (U, s, Vh, U_bar, s_bar, Vh_bar))):
        return _pullback_traced(name, U, s, Vh, U_bar, s_bar, Vh_bar)
    A_bar = _pullback_array(name, U, s, Vh, U_bar, s_bar, Vh_bar)
    if U_bar is not None or Vh_bar is not None:
        Us, Vhs = as_stack(U), as_stack(Vh)
        U_bars = None if U_bar is None else as_stack(U_bar)
        Vh_bars = None if Vh_bar is None else as_stack(Vh_bar)

        def herm_difference(rows: np.ndarray) -> np.ndarray:
            D = 0.0
            if U_bars is not None:
                D = adjoint(Us[rows]) @ U_bars[rows]  # J = U^H U_bar
            if Vh_bars is not None:
                D = D - Vhs[rows] @ adjoint(Vh_bars[rows])  # J - K, K = V^H V_bar
            return 0.5 * (D + adjoint(D))

        def norms(rows: np.ndarray) -> np.ndarray:
            parts = [frobenius(X[rows]) for X in (U_bars, Vh_bars) if X is not None]
            return np.hypot(*parts) if len(parts) == 2 else parts[0]

        m, n = U.shape[-2], Vh.shape[-1]
        rtol = default_rtol(max(m, n, 1), s.dtype)
        raise_if_tie_coupled(
            name, flat_batch(s, 1), herm_difference, norms, s.dtype, rtol, "singular value", True
        )
    return A_bar


def _pullback_traced(
    name: str, U: Any, s: Any, Vh: Any, U_bar: Any, s_bar: Any, Vh_bar: Any
) -> Any:
    """The pullback for traced operands (:func:`rules.linalg.traced_spectral.svd_pullback`).

    The gauge and tie checks run first, on the plain values, when singular vectors have a
    cotangent.
    """
    s0 = innermost_value(s)
    if U_bar is not None or Vh_bar is not None:  # GaugeError, TieError; s_bar alone has none
        plain = [
            None if x is None else innermost_value(x) for x in (U, s, Vh, U_bar, s_bar, Vh_bar)
        ]
        svd_pullback_array(name, *plain)
    m, n = U.shape[-2], Vh.shape[-1]
    tol = default_rtol(max(m, n, 1), s0.dtype) * np.max(s0, axis=-1, initial=0.0)
    return traced_spectral.svd_pullback(U, s, Vh, U_bar, s_bar, Vh_bar, tol)


def _pullback_array(
    name: str,
    U: np.ndarray,
    s: np.ndarray,
    Vh: np.ndarray,
    U_bar: np.ndarray | None,
    s_bar: np.ndarray | None,
    Vh_bar: np.ndarray | None,
) -> np.ndarray:
    """:func:`svd_pullback_array` before the tie check."""
    m, k, n = U.shape[-2], s.shape[-1], Vh.shape[-1]
    if k == 0:  # zero-size matrices (the kernels' loops need k > 0)
        return np.zeros((*U.shape[:-1], n), U.dtype)
    rtol = default_rtol(max(m, n, 1), s.dtype)
    if U.ndim == 2 and kernel_eligible(U) and U.flags.c_contiguous and Vh.flags.c_contiguous:
        if U_bar is not None or Vh_bar is not None:
            U_bars = None if U_bar is None else U_bar[None]
            Vh_bars = None if Vh_bar is None else Vh_bar[None]
            _check_gauge(name, U[None], s[None], Vh[None], U_bars, Vh_bars, rtol)
        elif s_bar is not None:  # svdvals
            return ksvd.svdvals_pullback(U, Vh, s_bar)
        return ksvd.svd_pullback(U, s, Vh, U_bar, s_bar, Vh_bar, rtol=rtol)
    Us, ss, Vhs = as_stack(U), flat_batch(s, 1), as_stack(Vh)
    U_bars = None if U_bar is None else as_stack(U_bar)
    Vh_bars = None if Vh_bar is None else as_stack(Vh_bar)
    if U_bars is not None or Vh_bars is not None:
        _check_gauge(name, Us, ss, Vhs, U_bars, Vh_bars, rtol)
    shape = (*U.shape[:-1], n)
    if not kernel_eligible(U):
        return svd_pullback_formula(U, s, Vh, U_bar, s_bar, Vh_bar, rtol)
    s_bars = None if s_bar is None else flat_batch(s_bar, 1)
    return ksvd.svd_pullback_batched(Us, ss, Vhs, U_bars, s_bars, Vh_bars, rtol=rtol).reshape(shape)


def _check_gauge(
    name: str,
    U: np.ndarray,
    s: np.ndarray,
    Vh: np.ndarray,
    U_bar: np.ndarray | None,
    Vh_bar: np.ndarray | None,
    rtol: float,
) -> None:
    """Raise GaugeError when the vector cotangents (stacks) move a gauge component."""
    precision = s.dtype
    index = None if U.dtype.kind == "c" else near_ties(s, rtol, zeros=True)
    if index is not None:  # real: no phase; only ties and zeros have a continuous gauge
        if index.size == 0:
            return
        U, s, Vh = U[index], s[index], Vh[index]
        U_bar = None if U_bar is None else U_bar[index]
        Vh_bar = None if Vh_bar is None else Vh_bar[index]
    U_bar = np.zeros_like(U) if U_bar is None else U_bar
    Vh_bar = np.zeros_like(Vh) if Vh_bar is None else Vh_bar
    if not kernel_eligible(U):  # complex64: measure in double precision
        U, Vh, U_bar, Vh_bar = (x.astype(np.complex128) for x in (U, Vh, U_bar, Vh_bar))
        s = s.astype(np.float64)
    phase, rotation, null = ksvd.svd_gauge_residual_batched(U, s, Vh, U_bar, Vh_bar, rtol=rtol)
    if phase.size == 1:  # one matrix: compare scalars (complex input always has rounding-level
        # residuals; the stack check below costs more); NaN or a failure goes on to word the error
        norm2 = np.vdot(U_bar, U_bar).real + np.vdot(Vh_bar, Vh_bar).real
        limit = gauge_rtol(precision) * float(np.sqrt(norm2))
        if phase[0] <= limit and rotation[0] <= limit and null[0] <= limit:
            return
    raise_if_gauge_dependent(
        name,
        {_PHASE: phase, _ROTATION: rotation, _NULL: null},
        lambda rows: np.hypot(frobenius(U_bar[rows]), frobenius(Vh_bar[rows])),
        precision,
        index,
    )


def svd_pullback_formula(
    U: np.ndarray,
    s: np.ndarray,
    Vh: np.ndarray,
    U_bar: np.ndarray | None,
    s_bar: np.ndarray | None,
    Vh_bar: np.ndarray | None,
    rtol: float,
) -> np.ndarray:
    """The module docstring's pullback in stacked numpy, with the kernels' masks (no gauge check).

    The reference for the kernels and the path for dtypes without kernels (complex64).
    """
    m, k, n = U.shape[-2], s.shape[-1], Vh.shape[-1]
    with np.errstate(all="ignore"):  # NaN in, NaN out, silently (as the kernels)
        Fm, Fp, s_inv = _masks(s, rtol)
        zero = np.zeros((*s.shape, k), dtype=U.dtype)
        J = zero if U_bar is None else adjoint(U) @ U_bar  # U^H U_bar
        K = zero if Vh_bar is None else Vh @ adjoint(Vh_bar)  # V^H V_bar
        Ja, Ka = J - adjoint(J), K - adjoint(K)
        X = (0.5 * (Fm * (Ja + Ka) + Fp * (Ja - Ka))).astype(U.dtype)
        if s_bar is not None:
            X[..., np.arange(k), np.arange(k)] += s_bar
        A_bar = U @ X @ Vh
        if m > k and U_bar is not None:
            A_bar += ((U_bar - U @ J) * s_inv[..., None, :]) @ Vh
        if n > k and Vh_bar is not None:
            A_bar += U @ (s_inv[..., :, None] * (Vh_bar - adjoint(K) @ Vh))
        return A_bar.astype(U.dtype)


def _masks(s: np.ndarray, rtol: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(F^-, F^+, 1/s)`` with the module docstring's masks."""
    tol = rtol * np.max(s, axis=-1, initial=0.0)
    Fm = masked_inverse(s[..., None, :] - s[..., :, None], tol)
    small = s <= tol[..., None]
    both_small = small[..., None, :] & small[..., :, None]
    Fp = np.where(both_small, 0.0, 1.0 / (s[..., None, :] + s[..., :, None]))
    s_inv = np.where(small, 0.0, 1.0 / s)
    return Fm, Fp, s_inv


def svd_pushforward_array(
    U: np.ndarray, s: np.ndarray, Vh: np.ndarray, A_dot: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(U_dot, s_dot, Vh_dot)`` of the thin factors for an ndarray ``A_dot`` of ``U``'s dtype."""
    m, k, n = U.shape[-2], s.shape[-1], Vh.shape[-1]
    if k == 0:  # zero-size matrices (the kernels' loops need k > 0)
        return np.zeros_like(U), np.zeros_like(s), np.zeros_like(Vh)
    rtol = default_rtol(max(m, n, 1), s.dtype)
    if not kernel_eligible(U):
        return svd_pushforward_formula(U, s, Vh, A_dot, rtol)
    U_dot, s_dot, Vh_dot = ksvd.svd_pushforward_batched(
        as_stack(U), flat_batch(s, 1), as_stack(Vh), as_stack(A_dot), rtol=rtol
    )
    return U_dot.reshape(U.shape), s_dot.reshape(s.shape), Vh_dot.reshape(Vh.shape)


def svd_pushforward_formula(
    U: np.ndarray, s: np.ndarray, Vh: np.ndarray, A_dot: np.ndarray, rtol: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The module docstring's pushforward in stacked numpy (reference and complex64 path)."""
    m, k, n = U.shape[-2], s.shape[-1], Vh.shape[-1]
    with np.errstate(all="ignore"):
        Fm, Fp, s_inv = _masks(s, rtol)
        V = adjoint(Vh)
        P = adjoint(U) @ A_dot @ V
        Ph, Pa = 0.5 * (P + adjoint(P)), 0.5 * (P - adjoint(P))
        s_dot = np.real(np.diagonal(P, axis1=-2, axis2=-1))
        U_dot = U @ (Fm * Ph + Fp * Pa)
        V_dot = V @ (Fm * Ph - Fp * Pa)
        if m > k:
            U_dot += (A_dot @ V - U @ P) * s_inv[..., None, :]
        if n > k:
            V_dot += (adjoint(A_dot) @ U - V @ adjoint(P)) * s_inv[..., None, :]
        return U_dot.astype(U.dtype), s_dot.astype(s.dtype), adjoint(V_dot).astype(U.dtype)


# --- the rules, shared by numpy and scipy ----------------------------------------------------------


def _decompose(name: str, a: Any, full_matrices: bool, hermitian: bool, decompose: Any) -> Any:
    """The primal ``svd`` output, with errors naming ``name`` and the shape."""
    dense = as_array(a)
    if dense.ndim < 2:
        raise np.linalg.LinAlgError(f"{name}: needs matrices (ndim >= 2), got shape {dense.shape}")
    if hermitian:
        square_matrices(f"{name} with hermitian=True", dense)
    try:
        return dense, decompose(dense, full_matrices)
    except np.linalg.LinAlgError as error:
        raise np.linalg.LinAlgError(f"{name}: {error} (input of shape {dense.shape})") from None


def _thin(U: np.ndarray, s: np.ndarray, Vh: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    k = s.shape[-1]
    return contiguous(U[..., :k]), contiguous(Vh[..., :k, :])


def _hermitize(G: np.ndarray, hermitian: bool) -> np.ndarray:
    return 0.5 * (G + adjoint(G)) if hermitian else G


def _vectors_rule(name: str, a: Any, result: Any, hermitian: bool) -> tuple[Any, Any]:
    """``(result, pullback)`` for a function returning ``(U, s, Vh)``."""
    U, s, Vh = result
    k = s.shape[-1]
    U_k, Vh_k = _thin(U, s, Vh)
    project_A = plain_projector(a, U.dtype)

    def svd_pullback(y_bar: Any) -> tuple[Any, Any]:
        U_bar, s_bar, Vh_bar = split_cotangent(y_bar, 3)
        U_bar = optional_cotangent(U_bar, name, "U", U.shape, U.dtype)
        s_bar = optional_cotangent(s_bar, name, "s", s.shape, s.dtype)
        Vh_bar = optional_cotangent(Vh_bar, name, "Vh", Vh.shape, Vh.dtype)
        U_bar, Vh_bar = svd_complement.fold(name, U, Vh, U_bar, Vh_bar, k)
        A_bar = svd_pullback_array(name, U_k, s, Vh_k, U_bar, s_bar, Vh_bar)
        return NoTangent(), project_A(_hermitize(A_bar, hermitian))

    return result, svd_pullback


def _values_rule(name: str, a: Any, U: Any, s: Any, Vh: Any, hermitian: bool) -> tuple[Any, Any]:
    """``(s, pullback)`` for a function returning the singular values only."""
    U_k, Vh_k = _thin(U, s, Vh)
    project_A = plain_projector(a, U.dtype)

    def svdvals_pullback(s_bar: Any) -> tuple[Any, Any]:
        s_bar = optional_cotangent(s_bar, name, "s", s.shape, s.dtype)
        A_bar = svd_pullback_array(name, U_k, s, Vh_k, None, s_bar, None)
        return NoTangent(), project_A(_hermitize(A_bar, hermitian))

    if not hermitian and plain_real_matrix(a) and U_k.dtype is a.dtype:
        # one plain real matrix, a plain cotangent: U diag(s_bar) V^T straight away, compiled
        # up to the loop kernels' crossover (one call), by BLAS above
        m, n = a.shape
        if max(m, n) <= crossovers.SVD_LOOPS_MAX_N:
            kernel = svdvals_pullback_one(m, n)
            return s, compiled_pullback(
                svdvals_pullback, s.shape, s.dtype, kernel, (m, n), U_k.dtype, U_k, Vh_k
            )
        return s, plain_pullback(svdvals_pullback, s.shape, s.dtype, _scaled_product, U_k, Vh_k)
    if (
        not hermitian
        and type(a) is np.ndarray
        and a.ndim == 3
        and a.dtype in PLAIN_REAL
        and U_k.dtype is a.dtype
        and max(a.shape[1:]) > crossovers.SVD_LOOPS_MAX_N
    ):  # a plain real stack above the loop kernels: the stacked product, as the BLAS path
        return s, plain_pullback(svdvals_pullback, s.shape, s.dtype, _scaled_products, U_k, Vh_k)
    return s, svdvals_pullback


def _scaled_product(U: np.ndarray, Vh: np.ndarray, s_bar: np.ndarray) -> np.ndarray:
    """``U diag(s_bar) Vh`` of one matrix.

    ``ndarray.dot`` up to ``kernels.crossovers.PLAIN_DOT_MAX_N``, ``matmul`` above: each the
    faster there.
    """
    if max(U.shape[0], Vh.shape[1]) <= crossovers.PLAIN_DOT_MAX_N:
        return (U * s_bar).dot(Vh)
    return np.matmul(U * s_bar, Vh)


def _scaled_products(U: np.ndarray, Vh: np.ndarray, s_bar: np.ndarray) -> np.ndarray:
    """``U diag(s_bar) Vh`` of each matrix of a stack (``kernels.svd``'s BLAS path, unchecked)."""
    return ktiled.scaled_products(U, s_bar, Vh)


def _frule(
    name: str, tangent: Any, dense: np.ndarray, factors: Any, compute_uv: bool, hermitian: bool
) -> Any:
    """The output tangent: ``s_dot``, or ``(U_dot, s_dot, Vh_dot)`` of the type of ``factors``."""
    U, s, Vh = factors
    if (
        not compute_uv
        and type(tangent) is np.ndarray
        and tangent.dtype is U.dtype
        and tangent.shape == dense.shape
        and plain_real_matrix(dense)
        and not hermitian
    ):  # one plain real matrix: s_dot_j = sum_i U_ij (A_dot V)_ij
        k = s.shape[-1]
        if U.shape[1] != k or Vh.shape[0] != k:  # full factors: the thin ones
            U, Vh = U[:, :k], Vh[:k]
        return (U * tangent.dot(Vh.T)).sum(0)
    A_dot = as_array(as_array_cotangent(unthunk(tangent), f"{name}'s pushforward"))
    if A_dot.shape != dense.shape:
        raise ValueError(
            f"{name} pushforward: the tangent has shape {A_dot.shape}, expected {dense.shape}"
        )
    if A_dot.dtype.kind == "c" and U.dtype.kind != "c":
        A_dot = A_dot.real
    A_dot = contiguous(_hermitize(A_dot, hermitian), dtype=U.dtype)
    U_k, Vh_k = _thin(U, s, Vh)
    if not compute_uv:
        V_k = adjoint(Vh_k)
        return np.real(np.sum(U_k.conj() * (A_dot @ V_k), axis=-2)).astype(s.dtype)
    U_dot, s_dot, Vh_dot = svd_pushforward_array(U_k, s, Vh_k, A_dot)
    U_dot, Vh_dot = svd_complement.unfold(U, Vh, U_dot, Vh_dot, s.shape[-1])
    # scipy returns a list for stacks; a list's tangent is a Tangent(tuple, ...)
    return Tangent(tuple if isinstance(factors, list) else type(factors), U_dot, s_dot, Vh_dot)


# --- np.linalg.svd / svdvals -----------------------------------------------------------------------


_SVDResult = type(np.linalg.svd(np.eye(1)))


def _stack_svd(dense: np.ndarray, full: bool) -> tuple[np.ndarray, ...] | None:
    """``(U, s, Vh)`` from a batched kernel for a stack of small matrices, else ``None``.

    Bidiagonal QR for stacks whose smaller side is above ``SVD_JACOBI_STACK_MAX_N`` (by dtype
    kind), one-sided Jacobi otherwise. The factors are thin, so ``full=True`` takes a kernel for square
    matrices alone.
    The singular vectors carry the kernels' gauge (each ``u_j``'s largest entry real positive),
    not LAPACK's arbitrary one.
    """
    m, n = dense.shape[-2:]
    stack = forward_stack(dense, "SVD_FORWARD_STACK_MAX_N") if not full or m == n else None
    if stack is None:
        return None
    if min(m, n) > crossover("SVD_JACOBI_STACK_MAX_N")[stack.dtype.kind]:
        U, s, Vh = svd_bidiagonal_batched(stack)
    else:
        U, s, Vh = svd_batched(stack)
    k = min(m, n)
    batch = dense.shape[:-2]
    return U.reshape(*batch, m, k), s.reshape(*batch, k), Vh.reshape(*batch, k, n)


def _numpy_svd(
    name: str, a: Any, full_matrices: bool, hermitian: bool, values_only: bool = False
) -> Any:
    """``np.linalg.svd``'s output and the input; ``values_only``: the vectors stay internal."""
    if values_only and not hermitian:
        factors = lapack_svd(a)  # one small matrix: LAPACK gesdd directly
        if factors is not None:
            return a, _SVDResult(*factors)
    elif not hermitian:
        factors = lapack_svd_vectors(a, full_matrices)  # one small matrix: numpy's gesdd directly
        if factors is not None:
            return a, _SVDResult(*factors)

    def decompose(dense: np.ndarray, full: bool) -> Any:
        factors = None if hermitian or dense.ndim == 2 else _stack_svd(dense, full)  # stacks
        if factors is not None:
            return _SVDResult(*factors)
        return np.linalg.svd(dense, full_matrices=full, hermitian=hermitian)

    return _decompose(name, a, full_matrices, hermitian, decompose)


@rrule.register(np.linalg.svd)
def svd_rrule(
    a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False
) -> tuple[Any, Any]:
    """Reverse rule for ``np.linalg.svd``; returns numpy's ``SVDResult`` (or ``S``).

    See the module docstring for the formula, ``full_matrices``, and the degenerate and gauge
    policy.
    """
    name = "np.linalg.svd"
    if compute_uv and not hermitian:
        factors = lapack_svd_vectors(a, full_matrices)  # one small matrix: numpy's gesdd directly
        if factors is not None:
            result = tuple.__new__(_SVDResult, factors)  # the namedtuple, without a call
            U, s, Vh = factors
            n = s.shape[0]
            lane = checked_lane("svd", n, s.dtype) if U.shape == Vh.shape == (n, n) else None
            if lane is not None:  # the pullback in one compiled call (rules.linalg.spectral_one)
                general = lambda: _vectors_rule(name, a, result, False)[1]
                return result, svd_checked_pullback(U, s, Vh, lane, general)
            return _vectors_rule(name, a, result, False)
    _, result = _numpy_svd(name, a, full_matrices and compute_uv, hermitian, not compute_uv)
    if not compute_uv:
        return _values_rule(name, a, *result, hermitian)
    return _vectors_rule(name, a, result, hermitian)


@frule.register(np.linalg.svd)
def svd_frule(
    tangents: tuple[Any, ...],
    a: Any,
    full_matrices: bool = True,
    compute_uv: bool = True,
    hermitian: bool = False,
) -> tuple[Any, Any]:
    """Forward rule for ``np.linalg.svd`` (module docstring)."""
    name = "np.linalg.svd"
    dense, result = _numpy_svd(name, a, full_matrices and compute_uv, hermitian, not compute_uv)
    y_dot = _frule(name, tangents[1], dense, result, compute_uv, hermitian)
    return (result if compute_uv else result.S), y_dot


@rrule.register(np.linalg.svdvals)
def svdvals_rrule(x: Any, /) -> tuple[np.ndarray, Any]:
    r"""Reverse rule for ``np.linalg.svdvals``: :math:`\bar A = U \mathrm{diag}(\bar s) V^H`."""
    _, result = _numpy_svd("np.linalg.svdvals", x, False, False, values_only=True)
    return _values_rule("np.linalg.svdvals", x, *result, False)


@frule.register(np.linalg.svdvals)
def svdvals_frule(tangents: tuple[Any, Any], x: Any, /) -> tuple[Any, Any]:
    r"""Forward rule for ``np.linalg.svdvals``: :math:`\dot s = \mathrm{Re\,diag}(U^H \dot A V)`."""
    name = "np.linalg.svdvals"
    dense, result = _numpy_svd(name, x, False, False, values_only=True)
    return result.S, _frule(name, tangents[1], dense, result, False, False)
