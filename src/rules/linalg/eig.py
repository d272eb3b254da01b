r"""Rules for the general eigendecomposition: ``np.linalg.eig`` and ``np.linalg.eigvals``.

For a diagonalizable ``A = V diag(w) V^{-1}`` with numpy's normalisation (unit 2-norm columns;
the phase of each complex eigenvector is LAPACK's choice, a free gauge), write
``C = V^{-1} \dot A V`` and ``F_ij = 1/(w_j - w_i)`` for ``i != j`` (masked, see below). Then
(M. B. Giles 2008, section 3.1; L. Boeddeker et al. 2017, appendix; ChainRules.jl's ``eigen``):

.. math::

    \dot w = \mathrm{diag}(C), \qquad \dot V = V (F \circ C) - V\,\mathrm{Re}\,\mathrm{diag}\big(V^H V (F \circ C)\big),

the second term keeping the columns at unit norm (and adding no phase). The pullback is its
adjoint: with ``\bar V' = \bar V - V \mathrm{Re}\,\mathrm{diag}(V^H \bar V)`` (the normalisation),

.. math::

    \bar A = V^{-H} \Big(\mathrm{diag}(\bar w) + \bar F \circ (V^H \bar V')\Big) V^H,

and its real part for real ``A`` (whose eigenvalues and eigenvectors come in conjugate pairs,
returned by numpy as complex arrays unless all are real). ``eigvals`` uses
``\bar A = V^{-H} \mathrm{diag}(\bar w) V^H``. No kernels: stacked numpy ``@`` and
``np.linalg.solve`` (one LU of ``V^H`` per matrix); the eigenvectors are computed in the forward
pass, also for ``eigvals`` (whose values come from the same LAPACK routine and agree with
``np.linalg.eigvals`` to rounding).

Gauge. A loss that changes with the phase of a complex eigenvector (``sum(V.real)``) is not a
function of ``A``: the pullback measures ``Im(v_i^H \bar v_i)`` for each complex eigenvector and
raises :class:`GaugeError` above ``sqrt(eps)`` times ``||V_bar||_F`` of that matrix. Eigenvectors
of real eigenvalues of a real ``A`` are real (their sign is numpy's choice, not a continuous
gauge); the imaginary part of their cotangent is ignored, as the derivative is real.

Repeated eigenvalues. Pairs with ``|w_j - w_i| <= rtol * max|w|``, ``rtol = 8 n eps``, get
``F_ij = 0``. For a diagonalizable ``A`` with a repeated eigenvalue the eigenvectors inside its
eigenspace are any basis of it; the pullback raises :class:`GaugeError` when the cotangent moves
that basis (an in-block entry of ``V^H \bar V'`` above the threshold), and is exact otherwise
(losses of the eigenvalues alone, or of the eigenspaces). At a defective ``A`` (a Jordan block)
the eigenvalues are not differentiable; ``V`` is singular to working precision, and the
pullback raises ``LinAlgError`` when the solve fails, or returns the very large values of the
nearly defective case.

Conventions: float32 stays float32 (complex64 arithmetic), complex128 and complex64 inputs; the
cotangent of a real ``A`` is real; structured inputs get structured cotangents through
``ProjectTo``. Cotangents need elementwise access, so they go through ``as_array_cotangent``.

References
----------
.. [1] M. B. Giles, "An extended collection of matrix derivative results for forward and reverse
   mode algorithmic differentiation", Oxford NA report 08/01, 2008.
.. [2] L. Boeddeker, P. Hanebrink, R. Haeb-Umbach, "On the computation of complex-valued
   gradients with application to statistically optimum beamforming", arXiv:1701.00392, 2017.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array, call, is_traced
from rules.core.options import refuse
from rules.core.registry import frule, rrule, split_cotangent
from rules.linalg._spectral import (
    GaugeError,
    default_rtol,
    frobenius,
    masked_inverse,
    optional_cotangent,
    raise_if_gauge_dependent,
    square_input,
)
from rules.linalg._stacks import adjoint, flat_batch
from tangents import NoTangent, ProjectTo, Tangent, unthunk

__all__ = ["GaugeError", "eig_pullback_array", "eig_pushforward_array"]

_PHASE = "the phase of complex eigenvectors"
_ROTATION = "the choice of eigenvectors inside the eigenspace of a repeated eigenvalue"


def _complex_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return np.result_type(dtype, np.complex64)


def _gaps(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(d, tol)``: ``d_ij = w_j - w_i`` and the degeneracy threshold per matrix."""
    rtol = default_rtol(w.shape[-1], np.finfo(w.dtype).dtype)
    tol = rtol * np.max(np.abs(w), axis=-1, initial=0.0)
    return w[..., None, :] - w[..., :, None], tol


def _solve_adjoint(name: str, V: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``V^{-H} B`` (stacked), with a LinAlgError naming ``name`` for a singular ``V``."""
    try:
        return np.linalg.solve(adjoint(V), B)
    except np.linalg.LinAlgError:
        raise np.linalg.LinAlgError(
            f"{name} pullback: the eigenvector matrix of shape {V.shape} is singular, so A is "
            "defective (a repeated eigenvalue with too few eigenvectors) and its eigenvalues are "
            "not differentiable there"
        ) from None


def eig_pullback_array(
    name: str,
    real_input: bool,
    w: np.ndarray,
    V: np.ndarray,
    w_bar: np.ndarray | None,
    V_bar: np.ndarray | None,
) -> np.ndarray:
    """``A_bar`` (complex; take its real part for real input) from ndarray cotangents (``None``: 0).

    Raises :class:`GaugeError` for gauge-dependent ``V_bar`` (module docstring).
    """
    dtype = _complex_dtype(V.dtype)
    Vc, wc = V.astype(dtype, copy=False), w.astype(dtype, copy=False)
    n = w.shape[-1]
    K = np.zeros(V.shape, dtype=dtype)
    with np.errstate(all="ignore"):  # NaN in, NaN out, silently
        if V_bar is not None:
            Vh = adjoint(Vc)
            G = Vh @ V_bar  # V^H V_bar
            # V^H V_bar' with V_bar' = V_bar - V Re diag(V^H V_bar): the unit-norm constraint
            M = G - (Vh @ Vc) * np.real(np.diagonal(G, axis1=-2, axis2=-1))[..., None, :]
            d, tol = _gaps(wc)
            _check_gauge(name, real_input, wc, G, M, d, tol, V_bar)
            K = np.conj(masked_inverse(d, tol)) * M
        if (w_bar is not None and is_traced(K)) or is_traced(w_bar):
            K = K + w_bar[..., None, :] * np.eye(n)  # a nested differentiation: no in-place write
        elif w_bar is not None:
            K[..., np.arange(n), np.arange(n)] += w_bar
        return _solve_adjoint(name, Vc, K @ adjoint(Vc))


def _check_gauge(
    name: str,
    real_input: bool,
    w: np.ndarray,
    G: np.ndarray,
    M: np.ndarray,
    d: np.ndarray,
    tol: np.ndarray,
    V_bar: np.ndarray,
) -> None:
    """GaugeError for a cotangent that moves an eigenvector's phase or an eigenspace's basis."""
    n = w.shape[-1]
    w, G, M = flat_batch(w, 1), flat_batch(G, 2), flat_batch(M, 2)
    ties = np.abs(flat_batch(d, 2)) <= tol.reshape(len(w), 1, 1)
    ties[:, np.arange(n), np.arange(n)] = False
    phase = np.abs(np.diagonal(G, axis1=1, axis2=2).imag)
    in_block = np.abs(M)
    if real_input:  # real eigenvalues of a real A: real eigenvectors, a real derivative
        real = w.imag == 0
        phase = np.where(real, 0.0, phase)
        both = real[:, :, None] & real[:, None, :]
        in_block = np.where(both, np.abs(M.real), in_block)
    stack = flat_batch(V_bar, 2)
    raise_if_gauge_dependent(
        name,
        {
            _PHASE: np.max(phase, axis=1, initial=0.0),
            _ROTATION: np.max(np.where(ties, in_block, 0.0), axis=(1, 2), initial=0.0),
        },
        lambda rows: frobenius(stack[rows]),
        np.finfo(w.dtype).dtype,
    )


def eig_pushforward_array(
    w: np.ndarray, V: np.ndarray, A_dot: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(w_dot, V_dot)`` in the dtypes of ``w`` and ``V`` (module docstring)."""
    dtype = _complex_dtype(V.dtype)
    Vc = V.astype(dtype, copy=False)
    with np.errstate(all="ignore"):
        C = np.linalg.solve(Vc, A_dot @ Vc)  # V^{-1} A_dot V
        w_dot = np.diagonal(C, axis1=-2, axis2=-1)
        d, tol = _gaps(w.astype(dtype, copy=False))
        V_dot = Vc @ (masked_inverse(d, tol) * C)
        V_dot -= Vc * np.real(np.sum(Vc.conj() * V_dot, axis=-2))[..., None, :]
    return _cast(w_dot, w.dtype), _cast(V_dot, V.dtype)


def _cast(x: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    return (x.real if dtype.kind != "c" else x).astype(dtype, copy=False)


def _eig(name: str, a: Any) -> tuple[np.ndarray, Any]:
    dense = square_input(name, a)
    try:
        return dense, np.linalg.eig(dense)
    except np.linalg.LinAlgError as error:
        raise np.linalg.LinAlgError(f"{name}: {error} (input of shape {dense.shape})") from None


def _tangent_of_input(name: str, A_dot: Any, dense: np.ndarray) -> np.ndarray:
    A_dot = as_array(as_array_cotangent(unthunk(A_dot), f"{name}'s pushforward"))
    if A_dot.shape != dense.shape:
        raise ValueError(
            f"{name} pushforward: the tangent has shape {A_dot.shape}, expected {dense.shape}"
        )
    if A_dot.dtype.kind == "c" and dense.dtype.kind != "c":
        A_dot = A_dot.real
    return A_dot


@rrule.register(np.linalg.eig)
def eig_rrule(a: Any) -> tuple[Any, Any]:
    """Reverse rule for ``np.linalg.eig``; returns numpy's ``EigResult`` (module docstring)."""
    name = "np.linalg.eig"
    dense, result = _eig(name, a)
    w, V = result
    real_input = dense.dtype.kind != "c"
    project_A = ProjectTo(a)

    def eig_pullback(y_bar: Any) -> tuple[Any, Any]:
        w_bar, V_bar = split_cotangent(y_bar, 2)
        w_bar = optional_cotangent(w_bar, name, "the eigenvalues", w.shape, _complex_dtype(w.dtype))
        V_bar = optional_cotangent(
            V_bar, name, "the eigenvectors", V.shape, _complex_dtype(V.dtype)
        )
        A_bar = eig_pullback_array(name, real_input, w, V, w_bar, V_bar)
        return NoTangent(), project_A(A_bar.real if real_input else A_bar)

    return result, eig_pullback


@frule.register(np.linalg.eig)
def eig_frule(tangents: tuple[Any, Any], a: Any) -> tuple[Any, Any]:
    r"""Forward rule for ``np.linalg.eig``: :math:`\dot w = \mathrm{diag}(C)`, :math:`\dot V` normalised."""
    name = "np.linalg.eig"
    dense, result = _eig(name, a)
    w, V = result
    A_dot = _tangent_of_input(name, tangents[1], dense)
    return result, Tangent(type(result), *eig_pushforward_array(w, V, A_dot))


@rrule.register(np.linalg.eigvals)
def eigvals_rrule(a: Any) -> tuple[np.ndarray, Any]:
    r"""Reverse rule for ``np.linalg.eigvals``: :math:`\bar A = V^{-H} \mathrm{diag}(\bar w) V^H`."""
    name = "np.linalg.eigvals"
    dense, (w, V) = _eig(name, a)
    real_input = dense.dtype.kind != "c"
    project_A = ProjectTo(a)

    def eigvals_pullback(w_bar: Any) -> tuple[Any, Any]:
        w_bar = optional_cotangent(w_bar, name, "the eigenvalues", w.shape, _complex_dtype(w.dtype))
        A_bar = eig_pullback_array(name, real_input, w, V, w_bar, None)
        return NoTangent(), project_A(A_bar.real if real_input else A_bar)

    return w, eigvals_pullback


@frule.register(np.linalg.eigvals)
def eigvals_frule(tangents: tuple[Any, Any], a: Any) -> tuple[Any, Any]:
    r"""Forward rule for ``np.linalg.eigvals``: :math:`\dot w = \mathrm{diag}(V^{-1} \dot A V)`."""
    name = "np.linalg.eigvals"
    dense, (w, V) = _eig(name, a)
    A_dot = _tangent_of_input(name, tangents[1], dense)
    Vc = V.astype(_complex_dtype(V.dtype), copy=False)
    with np.errstate(all="ignore"):
        w_dot = np.sum(np.linalg.inv(Vc).mT * (A_dot @ Vc), axis=-2)  # diag(V^-1 A_dot V)
    return w, _cast(w_dot, w.dtype)


# --- scipy.linalg.eig, eigvals: scipy's values, numpy's rules -------------------------------------


def _scipy_eig_options(name: str, b: Any, kwargs: dict[str, Any]) -> None:
    refuse(
        name,
        b=None if b is None else "a generalized problem",
        left=kwargs.get("left", False),
        overwrite_a=kwargs.get("overwrite_a", False),
        overwrite_b=kwargs.get("overwrite_b", False),
        homogeneous_eigvals=kwargs.get("homogeneous_eigvals", False),
    )


@rrule.register(sla.eig)
def scipy_eig_rrule(a: Any, b: Any = None, **kwargs: Any) -> tuple[Any, Any]:
    """Reverse rule for ``w, v = scipy.linalg.eig(a)``: ``np.linalg.eig``'s pullback.

    scipy calls the same LAPACK ``geev`` (unit eigenvectors, largest entry real); its
    eigenvalues are always complex. ``right=False`` gives the eigenvalues only (``eigvals``).
    """
    _scipy_eig_options("scipy.linalg.eig", b, kwargs)
    y = call(sla.eig, a, **kwargs)
    if not kwargs.get("right", True):
        return y, eigvals_rrule(a)[1]
    return y, eig_rrule(a)[1]


@frule.register(sla.eig)
def scipy_eig_frule(tangents: tuple[Any, ...], a: Any, b: Any = None, **kwargs: Any) -> Any:
    """Forward rule for ``scipy.linalg.eig``: ``np.linalg.eig``'s, as a ``Tangent(tuple, ...)``."""
    _scipy_eig_options("scipy.linalg.eig", b, kwargs)
    y = call(sla.eig, a, **kwargs)
    if not kwargs.get("right", True):
        return y, ProjectTo(y)(eigvals_frule(tangents[:2], a)[1])
    w_dot, V_dot = split_cotangent(eig_frule(tangents[:2], a)[1], 2)
    return y, Tangent(tuple, ProjectTo(y[0])(w_dot), ProjectTo(y[1])(V_dot))


@rrule.register(sla.eigvals)
def scipy_eigvals_rrule(a: Any, b: Any = None, **kwargs: Any) -> tuple[Any, Any]:
    """Reverse rule for ``scipy.linalg.eigvals``: ``np.linalg.eigvals``'s pullback."""
    _scipy_eig_options("scipy.linalg.eigvals", b, kwargs)
    return call(sla.eigvals, a, **kwargs), eigvals_rrule(a)[1]


@frule.register(sla.eigvals)
def scipy_eigvals_frule(tangents: tuple[Any, ...], a: Any, b: Any = None, **kwargs: Any) -> Any:
    """Forward rule for ``scipy.linalg.eigvals``: ``np.linalg.eigvals``'s pushforward."""
    _scipy_eig_options("scipy.linalg.eigvals", b, kwargs)
    w = call(sla.eigvals, a, **kwargs)
    return w, ProjectTo(w)(eigvals_frule(tangents[:2], a)[1])
