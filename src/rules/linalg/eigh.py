r"""Rules for the Hermitian eigendecomposition, degenerate-safe.

Functions: ``np.linalg.eigh``, ``np.linalg.eigvalsh``, ``scipy.linalg.eigh`` (standard problem)
and ``scipy.linalg.eigvalsh``; real symmetric and complex Hermitian matrices, and stacks of them.

For ``A = V diag(w) V^H`` with ``w`` ascending and ``V`` unitary, write ``M = V^H \bar V`` and
``F_ij = 1/(w_j - w_i)`` for ``i != j``, masked to 0 on the diagonal and for near ties
(M. B. Giles 2008, section 3.1; M. Seeger et al. 2017, section 3.2):

.. math::

    \bar A = V \Big(\mathrm{diag}(\bar w) + F \circ \tfrac12 (M - M^H)\Big) V^H, \qquad
    \dot w = \mathrm{Re}\,\mathrm{diag}(C), \quad \dot V = V (F \circ C), \quad
    C = V^H \dot A V.

Only the skew-Hermitian part of ``M`` enters, because ``F`` is antisymmetric (see
``kernels.eigh``); the result is exactly Hermitian. Complex matrices follow the same formula
with the convention ``dL/dRe z + i dL/dIm z`` (L. Boeddeker, P. Hanebrink, R. Haeb-Umbach 2017).

Conventions. The input is read as a Hermitian matrix (LAPACK reads one triangle, chosen by
``UPLO``/``lower``), so its cotangent is the Hermitian ``(G + G^H)/2`` and a forward tangent is
read through its Hermitian part (DESIGN.md section 3); structured inputs (``Symmetric``,
``Hermitian``, ``Diagonal``) get cotangents of their structure through ``ProjectTo``. float32
stays float32; complex64 takes the numpy formula below, the other dtypes the kernels.

Degenerate eigenvalues. Pairs with ``|w_j - w_i| <= rtol * max|w|``, ``rtol = 8 n eps`` (the
kernels' default, :func:`kernels._spectral.default_rtol`), are masked: ``F_ij = 0``. The
cotangent is therefore always finite, and it is exact for every loss whose derivative the
decomposition determines at a tie: losses of the eigenvalues alone (``sum(w**3)``, ``w.max()``
when it is simple), ``trace(V diag(f(w)) V^H)``, and any loss whose eigenvector cotangent has no
component rotating inside a degenerate eigenspace; exact zero eigenvalues need no special care.
For smooth functions of the matrix that the decomposition does not determine at a tie, such as
``trace(M V diag(f(w)) V^H)`` with a general ``M`` (whose in-block Daleckii-Krein term
``f'(w) (V^H M V)_ij`` no cotangent of ``(w, V)`` carries), use the matrix-function rules
(``scipy.linalg.expm``, ``funm``, ... on ``Symmetric``/``Hermitian`` inputs,
``rules.linalg.matfun``), which are exact there. The pullback refuses such a loss where it
can see it: a ``V_bar`` whose ``V^H V_bar`` has a Hermitian off-diagonal part inside a tie
(above ``sqrt(eps) ||V_bar||``) raises :class:`TieError` (``tr(C A^2)`` at ``A = I``), since the
same cotangents come from losses with other derivatives (``tr(C V V^H)``); a loss whose
in-tie coupling leaves no trace in the cotangent (``tr(C (A - I))`` at ``A = I``) cannot be
flagged. A loss of one eigenvalue of a repeated pair
(``w[0]`` at ``A = I``) has no derivative; the pullback returns one one-sided value.

Gauge. The phase of each complex eigenvector and the basis inside a degenerate eigenspace are
arbitrary (LAPACK picks them). Before dropping those components of ``V_bar`` the pullback measures
them (``kernels.eigh.eigh_gauge_residual``) and raises :class:`GaugeError` when one exceeds
``sqrt(eps)`` times ``||V_bar||_F`` for that matrix: such a loss (``sum(V.real)`` for complex
``A``, ``V[:, 0]`` at a tie) is not a function of ``A``. The pushforward returns the tangent
without phase drift or in-block rotation (``V^H V_dot`` skew-Hermitian with zero diagonal and
zero in-block entries), the adjoint of the pullback.

Paths (DESIGN.md section 7):

* algebra path: none. The coupling ``F o M`` and the gauge and tie checks need elementwise
  access, so cotangents go through ``as_array_cotangent`` (arrays, structured and sparse
  matrices; other types raise ``TypeError`` naming the rule).
* array-formula path: :func:`eigh_pullback_formula` and :func:`eigh_pushforward_formula`, the
  formulas above in stacked numpy, for operands that fail :func:`rules.core.dispatch.kernel_eligible`
  (complex64, which has no kernels); also the kernels' reference in the tests.
* kernel path: ``kernels.eigh`` (``eigh_pullback``, ``eigh_pullback_batched``,
  ``eigvalsh_pullback_batched``, ``eigh_pushforward_batched``), one matrix or a stack in one
  call. The choice between the unrolled loop kernels and the tiled BLAS code is made inside
  those functions (``kernels._spectral.use_loops``), governed by the crossover entry
  ``kernels.crossovers.EIGH_LOOPS_MAX_N``: loops for ``n <= EIGH_LOOPS_MAX_N``, BLAS above. The
  forward pass of a stack of small matrices takes a batched kernel up to
  ``EIGH_FORWARD_STACK_MAX_N`` (by dtype kind), LAPACK otherwise: Jacobi (``kernels.eigh_forward``)
  up to ``EIGH_JACOBI_STACK_MAX_N`` (by dtype kind), tridiagonal QR (``kernels.eigh_tridiagonal``)
  above;
  eigvalsh of one matrix calls LAPACK ``syevd``/``heevd`` directly (``EIGH_VALUES_SINGLE_MAX_N``).

References
----------
.. [1] M. B. Giles, "An extended collection of matrix derivative results for forward and reverse
   mode algorithmic differentiation", Oxford NA report 08/01, 2008.
.. [2] M. Seeger, A. Hetzel, Z. Dai, E. Meissner, N. D. Lawrence, "Auto-differentiating linear
   algebra", arXiv:1710.08717, 2017.
.. [3] L. Boeddeker, P. Hanebrink, R. Haeb-Umbach, "On the computation of complex-valued
   gradients with application to statistically optimum beamforming", arXiv:1701.00392, 2017.
.. [4] M. F. Kasim, "Derivatives of partial eigendecomposition of a real symmetric matrix for
   degenerate cases", arXiv:2011.04366, 2020.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from kernels import eigh as keigh
from kernels.eigh_forward import eigh_batched
from kernels.eigh_tridiagonal import eigh_tridiagonal_batched
from kernels.hermitian_products import hermitian_part_times, takes_trmm
from kernels.spectral_checked import eigh_pushforward_one, eigvalsh_pullback_one
from rules.core.cotangents import as_array_cotangent
from rules.core.dispatch import as_stack, crossover, flat_batch, forward_stack, kernel_eligible
from rules.core.nesting import as_array, contiguous, innermost_value, is_traced
from rules.core.registry import frule, rrule, split_cotangent
from rules.linalg import traced_spectral
from rules.linalg._spectral import (
    GaugeError,
    default_rtol,
    frobenius,
    gauge_rtol,
    lapack_eigh,
    lapack_eigh_vectors,
    masked_inverse,
    optional_cotangent,
    plain_projector,
    raise_if_gauge_dependent,
    raise_if_tie_coupled,
    square_input,
)
from rules.linalg._stacks import adjoint, compiled_pullback, plain_pullback, plain_real_matrix
from rules.linalg.spectral_one import checked_lane, eigh_checked_pullback
from tangents import NoTangent, ProjectTo, Tangent, unthunk

__all__ = [
    "GaugeError",
    "eigh_pullback_array",
    "eigh_pullback_formula",
    "eigh_pushforward_array",
    "eigh_pushforward_formula",
]

_KERNEL_DTYPES = frozenset(map(np.dtype, (np.float32, np.float64, np.complex128)))

_PHASE = "the phase of complex eigenvectors"
_ROTATION = "the choice of eigenvectors inside a degenerate eigenspace"


# --- pullback and pushforward on arrays ----------------------------------------------------------


def eigh_pullback_array(
    name: str, w: np.ndarray, V: np.ndarray, w_bar: np.ndarray | None, V_bar: np.ndarray | None
) -> np.ndarray:
    """``A_bar`` (..., n, n) for ndarray cotangents of ``w`` and ``V`` (``None``: zero).

    The cotangents must have the dtypes of ``w`` and ``V`` and be C-contiguous. Raises
    :class:`GaugeError` for a gauge-dependent ``V_bar`` (module docstring); the kernels measure
    the gauge components in the same pass as the pullback. Then raises :class:`TieError` when
    ``V_bar`` couples eigenvectors inside a tie (module docstring, "Degenerate eigenvalues").
    """
    if any(map(is_traced, (w, V, w_bar, V_bar))):
        return _pullback_traced(name, w, V, w_bar, V_bar)
    A_bar = _pullback_array(name, w, V, w_bar, V_bar)
    if V_bar is not None:
        Vs, V_bars = as_stack(V), as_stack(V_bar)

        def herm_m(rows: np.ndarray) -> np.ndarray:
            M = adjoint(Vs[rows]) @ V_bars[rows]
            return 0.5 * (M + adjoint(M))

        raise_if_tie_coupled(
            name,
            flat_batch(w, 1),
            herm_m,
            lambda rows: frobenius(V_bars[rows]),
            w.dtype,
            default_rtol(V.shape[-1], w.dtype),
            "eigenvalue",
        )
    return A_bar


def _pullback_traced(name: str, w: Any, V: Any, w_bar: Any, V_bar: Any) -> Any:
    """The pullback for traced operands (:func:`rules.linalg.traced_spectral.eigh_pullback`).

    The gauge and tie checks run first, on the plain values, when eigenvectors have a cotangent.
    """
    w0 = innermost_value(w)
    if V_bar is not None:  # GaugeError, TieError; a w_bar alone has no gauge
        plain = (None if x is None else innermost_value(x) for x in (w_bar, V_bar))
        eigh_pullback_array(name, w0, innermost_value(V), *plain)
    tol = default_rtol(w0.shape[-1], w0.dtype) * np.max(np.abs(w0), axis=-1, initial=0.0)
    return traced_spectral.eigh_pullback(w, V, w_bar, V_bar, tol)


def _pullback_array(
    name: str, w: np.ndarray, V: np.ndarray, w_bar: np.ndarray | None, V_bar: np.ndarray | None
) -> np.ndarray:
    """:func:`eigh_pullback_array` before the tie check."""
    n = V.shape[-1]
    if n == 0:  # zero-size matrices (the kernels' loops need n > 0)
        return np.zeros_like(V)
    rtol = default_rtol(n, w.dtype)
    if not kernel_eligible(V):
        if V_bar is not None:
            _check_gauge(name, flat_batch(w, 1), as_stack(V), as_stack(V_bar), rtol)
        return eigh_pullback_formula(w, V, w_bar, V_bar, rtol)
    if V_bar is None:
        return np.zeros_like(V) if w_bar is None else _values_pullback_array(V, w_bar)
    if V.ndim == 2 and V.flags.c_contiguous:
        return _one_matrix_pullback(name, w, V, w_bar, V_bar, rtol)
    V_bars = as_stack(V_bar)
    w_bars = None if w_bar is None else flat_batch(w_bar, 1)
    A_bar, phase, rotation = keigh.eigh_pullback_and_residual_batched(
        flat_batch(w, 1), as_stack(V), w_bars, V_bars, rtol=rtol
    )
    raise_if_gauge_dependent(
        name,
        {_PHASE: phase, _ROTATION: rotation},
        lambda rows: frobenius(V_bars[rows]),
        w.dtype,
    )
    return A_bar.reshape(V.shape)


def _one_matrix_pullback(
    name: str,
    w: np.ndarray,
    V: np.ndarray,
    w_bar: np.ndarray | None,
    V_bar: np.ndarray,
    rtol: float,
) -> np.ndarray:
    """:func:`eigh_pullback_array` for one matrix: scalar residuals, no stacking.

    Cheaper than the stack path for one small matrix. The residuals are compared
    with the limit here; only a failing (or NaN) one goes through the stack check, which words
    the error and lets NaN through.
    """
    A_bar, phase, rotation = keigh.eigh_pullback_and_residual(w, V, w_bar, V_bar, rtol=rtol)
    limit = 0.0
    if phase or rotation:  # complex input, a tie, or NaN
        limit = gauge_rtol(w.dtype) * float(np.sqrt(np.vdot(V_bar, V_bar).real))
    if not (phase <= limit and rotation <= limit):
        raise_if_gauge_dependent(
            name,
            {_PHASE: np.array([phase]), _ROTATION: np.array([rotation])},
            lambda rows: frobenius(V_bar[None][rows]),
            w.dtype,
        )
    return A_bar


def _check_gauge(name: str, w: np.ndarray, V: np.ndarray, V_bar: np.ndarray, rtol: float) -> None:
    """Raise GaugeError when ``V_bar`` (b, n, n) moves a phase or rotates inside a tie.

    For the formula path (complex64): the residuals are measured in double precision.
    """
    V_bar = V_bar.astype(np.complex128)
    phase, rotation = keigh.eigh_gauge_residual_batched(
        w.astype(np.float64), V.astype(np.complex128), V_bar, rtol=rtol
    )
    raise_if_gauge_dependent(
        name,
        {_PHASE: phase, _ROTATION: rotation},
        lambda rows: frobenius(V_bar[rows]),
        w.dtype,
    )


def eigh_pullback_formula(
    w: np.ndarray, V: np.ndarray, w_bar: np.ndarray | None, V_bar: np.ndarray | None, rtol: float
) -> np.ndarray:
    """The module docstring's pullback in stacked numpy, with the kernels' masks (no gauge check).

    The reference for the kernels and the path for dtypes without kernels (complex64).
    """
    Vh = adjoint(V)
    K = np.zeros(V.shape, dtype=V.dtype)
    with np.errstate(all="ignore"):  # NaN in, NaN out, silently (as the kernels)
        if V_bar is not None:
            M = Vh @ V_bar
            d = w[..., None, :] - w[..., :, None]  # d_ij = w_j - w_i
            tol = rtol * np.max(np.abs(w), axis=-1, initial=0.0)
            K = (masked_inverse(d, tol) * (0.5 * (M - adjoint(M)))).astype(V.dtype)
        if w_bar is not None:
            n = w.shape[-1]
            K[..., np.arange(n), np.arange(n)] += w_bar
        A_bar = V @ K @ Vh
        return (0.5 * (A_bar + adjoint(A_bar))).astype(V.dtype)


def eigh_pushforward_array(
    w: np.ndarray, V: np.ndarray, A_dot: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(w_dot, V_dot)`` for an ndarray ``A_dot`` of ``V``'s dtype, read through its Hermitian part."""
    n = V.shape[-1]
    if n == 0:  # zero-size matrices (the kernels' loops need n > 0)
        return np.zeros_like(w), np.zeros_like(V)
    rtol = default_rtol(n, w.dtype)
    if not kernel_eligible(V):
        return eigh_pushforward_formula(w, V, A_dot, rtol)
    w_dot, V_dot = keigh.eigh_pushforward_batched(
        flat_batch(w, 1), as_stack(V), as_stack(A_dot), rtol=rtol
    )
    return w_dot.reshape(w.shape), V_dot.reshape(V.shape)


def eigh_pushforward_formula(
    w: np.ndarray, V: np.ndarray, A_dot: np.ndarray, rtol: float
) -> tuple[np.ndarray, np.ndarray]:
    """The module docstring's pushforward in stacked numpy (reference and complex64 path)."""
    with np.errstate(all="ignore"):
        Vh = adjoint(V)
        C = Vh @ (0.5 * (A_dot + adjoint(A_dot))) @ V
        w_dot = np.real(np.diagonal(C, axis1=-2, axis2=-1)).astype(w.dtype)
        d = w[..., None, :] - w[..., :, None]
        tol = rtol * np.max(np.abs(w), axis=-1, initial=0.0)
        V_dot = V @ (masked_inverse(d, tol) * C)
        return w_dot, V_dot.astype(V.dtype)


def _values_pullback_array(V: np.ndarray, w_bar: np.ndarray) -> np.ndarray:
    """``A_bar = V diag(w_bar) V^H``: the eigenvalues' pullback, no division anywhere.

    ``V`` may be (..., n, k) with ``k < n`` (``subset_by_index``).
    """
    if not kernel_eligible(V) or V.shape[-1] != V.shape[-2]:
        A_bar = (V * w_bar[..., None, :]) @ adjoint(V)
        return 0.5 * (A_bar + adjoint(A_bar))
    if V.ndim == 2 and V.flags.c_contiguous:  # one matrix: no stacking
        return keigh.eigvalsh_pullback(V, w_bar)
    return keigh.eigvalsh_pullback_batched(as_stack(V), flat_batch(w_bar, 1)).reshape(V.shape)


def _values_pushforward(V: np.ndarray, A_dot: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """``w_dot = Re diag(V^H A_dot V)``; ``A_dot V`` by a triangular product from mid sizes on.

    ``kernels.hermitian_products.hermitian_part_times`` gives a ``W`` with the real diagonal of
    ``V^H A_dot V`` in about half the multiplications of ``A_dot @ V``.
    """
    if V.ndim >= 2 and A_dot.dtype == V.dtype:
        AV = hermitian_part_times(as_stack(A_dot), as_stack(V)).reshape(V.shape)
    else:
        AV = A_dot @ V
    if V.dtype.kind != "c" and AV.dtype.kind != "c":  # real: no conjugate, no real part to take
        AV *= V
        return AV.sum(axis=-2).astype(dtype, copy=False)
    return np.real(np.sum(V.conj() * AV, axis=-2)).astype(dtype, copy=False)


def _tangent_of_input(name: str, A_dot: Any, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """The input tangent as an ndarray of the decomposition's dtype (real part for real input)."""
    if (
        type(A_dot) is np.ndarray  # the hot case: nothing to convert
        and A_dot.shape == shape
        and A_dot.dtype == dtype
        and A_dot.flags.c_contiguous
    ):
        return A_dot
    A_dot = as_array(as_array_cotangent(unthunk(A_dot), f"{name}'s pushforward"))
    if A_dot.shape != shape:
        raise ValueError(
            f"{name} pushforward: the tangent has shape {A_dot.shape}, expected {shape}"
        )
    if A_dot.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        A_dot = A_dot.real
    return contiguous(A_dot, dtype=dtype)


# --- the rules, shared by numpy and scipy ----------------------------------------------------------


def _vectors_rule(name: str, A: Any, result: Any) -> tuple[Any, Any]:
    """``(result, pullback)`` for a function returning ``(w, V)``."""
    w, V = result
    project_A = plain_projector(A, V.dtype)

    def eigh_pullback(y_bar: Any) -> tuple[Any, Any]:
        w_bar, V_bar = split_cotangent(y_bar, 2)
        w_bar = optional_cotangent(w_bar, name, "the eigenvalues", w.shape, w.dtype)
        V_bar = optional_cotangent(V_bar, name, "the eigenvectors", V.shape, V.dtype)
        return NoTangent(), project_A(eigh_pullback_array(name, w, V, w_bar, V_bar))

    return result, eigh_pullback


def _values_rule(name: str, A: Any, w: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, Any]:
    """``(w, pullback)`` for a function returning the eigenvalues only."""
    project_A = ProjectTo(A)

    def eigvalsh_pullback(w_bar: Any) -> tuple[Any, Any]:
        # the registry evaluates a whole-cotangent thunk and answers zeros itself: w_bar is a value
        w_bar = optional_cotangent(w_bar, name, "the eigenvalues", w.shape, w.dtype)
        return NoTangent(), project_A(_values_pullback_array(V, w_bar))

    if plain_real_matrix(A) and V.dtype is A.dtype and V.shape == A.shape and V.flags.carray:
        # one plain real matrix, a plain cotangent: the kernel straight away, in one compiled
        # call up to the loop kernel's crossover
        if keigh.eigvalsh_uses_loops(V.shape[0], V.dtype):
            kernel = eigvalsh_pullback_one(V.shape[0])
            return w, compiled_pullback(
                eigvalsh_pullback, w.shape, w.dtype, kernel, V.shape, V.dtype, V
            )
        return w, plain_pullback(eigvalsh_pullback, w.shape, w.dtype, keigh.eigvalsh_pullback, V)
    return w, eigvalsh_pullback


# --- np.linalg.eigh / eigvalsh ---------------------------------------------------------------------


_EighResult = type(np.linalg.eigh(np.eye(1)))


def _stack_eigh(dense: np.ndarray, lower: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """``(w, V)`` from a batched kernel for a stack of small matrices, else ``None``.

    Jacobi up to ``EIGH_JACOBI_STACK_MAX_N`` (by dtype kind), tridiagonal QR above. The
    eigenvectors carry the kernels' gauge (each column's largest entry real
    positive), not LAPACK's arbitrary one; eigenvalues agree with LAPACK's to rounding.
    """
    stack = forward_stack(dense, "EIGH_FORWARD_STACK_MAX_N")
    if stack is None:
        return None
    if stack.shape[-1] > crossover("EIGH_JACOBI_STACK_MAX_N")[stack.dtype.kind]:
        w, V = eigh_tridiagonal_batched(stack, lower=lower)
    else:
        w, V = eigh_batched(stack, lower=lower)
    return w.reshape(dense.shape[:-1]), V.reshape(dense.shape)


def _numpy_eigh(name: str, a: Any, UPLO: str) -> tuple[np.ndarray, Any]:
    pair = lapack_eigh_vectors(a, UPLO)  # one small matrix: numpy's syevd/heevd, called directly
    if pair is not None:
        return a, _EighResult(*pair)
    dense = square_input(name, a)
    if dense.ndim > 2 and isinstance(UPLO, str) and UPLO.upper() in ("L", "U"):  # stacks
        pair = _stack_eigh(dense, UPLO.upper() == "L")
        if pair is not None:
            return dense, _EighResult(*pair)
    return dense, np.linalg.eigh(dense, UPLO)


@rrule.register(np.linalg.eigh)
def eigh_rrule(a: Any, UPLO: str = "L") -> tuple[Any, Any]:
    """Reverse rule for ``np.linalg.eigh(a, UPLO)``; returns numpy's ``EighResult``.

    See the module docstring for the formula and the degenerate and gauge policy.
    """
    pair = lapack_eigh_vectors(a, UPLO)  # one small plain matrix: numpy's LAPACK call directly
    if pair is not None:
        result = tuple.__new__(_EighResult, pair)  # the namedtuple without its __new__'s call
        w, V = pair
        lane = checked_lane("eigh", V.shape[0], V.dtype)
        if lane is not None:  # the pullback in one compiled call (rules.linalg.spectral_one)
            general = lambda: _vectors_rule("np.linalg.eigh", a, result)[1]
            return result, eigh_checked_pullback(w, V, lane, general)
        return _vectors_rule("np.linalg.eigh", a, result)
    _, result = _numpy_eigh("np.linalg.eigh", a, UPLO)
    return _vectors_rule("np.linalg.eigh", a, result)


@frule.register(np.linalg.eigh)
def eigh_frule(tangents: tuple[Any, Any], a: Any, UPLO: str = "L") -> tuple[Any, Any]:
    r"""Forward rule for ``np.linalg.eigh``: :math:`\dot w = \mathrm{Re\,diag}(C)`, :math:`\dot V = V (F \circ C)`."""
    dense, result = _numpy_eigh("np.linalg.eigh", a, UPLO)
    w, V = result
    A_dot = tangents[1]
    if (
        type(A_dot) is np.ndarray
        and type(V) is np.ndarray
        and V.ndim == 2
        and V.size > 0
        and V.dtype in _KERNEL_DTYPES
        and A_dot.dtype is V.dtype
        and A_dot.shape == V.shape == dense.shape
        and A_dot.flags.carray
        and V.flags.carray
    ):  # one small plain matrix (LAPACK's forward above): the loop kernel, no stack
        lane = checked_lane("eigh", V.shape[0], V.dtype)
        if lane is not None:
            w_dot, V_dot = np.empty(w.shape, w.dtype), np.empty(V.shape, V.dtype)
            eigh_pushforward_one(V.shape[0])(w, V, A_dot, lane[1], w_dot, V_dot)
            return result, Tangent(type(result), w_dot, V_dot)
    A_dot = _tangent_of_input("np.linalg.eigh", A_dot, dense.shape, V.dtype)
    return result, Tangent(type(result), *eigh_pushforward_array(w, V, A_dot))


def _plain_vector(w: Any) -> bool:
    return type(w) is np.ndarray and w.ndim == 1


def _numpy_eigvalsh(a: Any, UPLO: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    name = "np.linalg.eigvalsh"
    pair = lapack_eigh(a, UPLO)  # one small matrix: LAPACK directly (V stays internal)
    dense, (w, V) = (a, pair) if pair is not None else _numpy_eigh(name, a, UPLO)
    # numpy's eigvalsh does not converge on NaN; eigh returns NaN (a Python loop for one
    # matrix: np.isnan(w).any() costs a fifth of a 4x4 eigh)
    if any(map(math.isnan, w.tolist())) if _plain_vector(w) else np.isnan(w).any():
        raise np.linalg.LinAlgError(
            f"{name}: Eigenvalues did not converge (input of shape {dense.shape} holds NaN)"
        )
    return dense, w, V


@rrule.register(np.linalg.eigvalsh)
def eigvalsh_rrule(a: Any, UPLO: str = "L") -> tuple[np.ndarray, Any]:
    r"""Reverse rule for ``np.linalg.eigvalsh``: :math:`\bar A = V \mathrm{diag}(\bar w) V^H`.

    The eigenvectors are computed in the forward pass (``np.linalg.eigh``), so the values agree
    with ``np.linalg.eigvalsh`` to rounding. No division: exact at repeated eigenvalues for
    symmetric functions of the spectrum.
    """
    _, w, V = _numpy_eigvalsh(a, UPLO)
    return _values_rule("np.linalg.eigvalsh", a, w, V)


@frule.register(np.linalg.eigvalsh)
def eigvalsh_frule(tangents: tuple[Any, Any], a: Any, UPLO: str = "L") -> tuple[Any, Any]:
    r"""Forward rule for ``np.linalg.eigvalsh``: :math:`\dot w = \mathrm{Re\,diag}(V^H \dot A V)`."""
    dense, w, V = _numpy_eigvalsh(a, UPLO)
    A_dot = tangents[1]
    plain = type(A_dot) is np.ndarray and A_dot.dtype is V.dtype and A_dot.shape == V.shape
    if plain and plain_real_matrix(a):  # one plain real matrix: sum_i V_ij (A_dot V)_ij
        if takes_trmm(V.shape[0], V.dtype):
            return w, (V * hermitian_part_times(A_dot[None], V[None])[0]).sum(0)
        return w, (V * A_dot.dot(V)).sum(0)
    A_dot = _tangent_of_input("np.linalg.eigvalsh", A_dot, dense.shape, V.dtype)
    return w, _values_pushforward(V, A_dot, w.dtype)
