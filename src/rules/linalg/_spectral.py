r"""Shared pieces of the spectral rules (eigh, svd, eig): degeneracy masks and the gauge check.

Eigenvectors and singular vectors are defined up to a *gauge*: the phase of each (complex)
vector, and any unitary rotation inside the eigenspace (singular subspace) of a repeated value.
A loss that changes under the gauge is not a function of the matrix (its value depends on the
arbitrary choice LAPACK made), so its derivative does not exist. The pullbacks drop the gauge
components of the cotangent (the masked coupling of ``kernels.eigh`` and ``kernels.svd``) and
first measure them; :func:`raise_if_gauge_dependent` raises :class:`GaugeError` when a component
exceeds :func:`gauge_rtol` ``= sqrt(eps)`` (1.5e-8 in double, 3.5e-4 in single precision) times
the Frobenius norm of the vector cotangents of that matrix. Gauge-invariant losses
leave rounding-level residuals, about ``eps`` times that norm, far below the threshold.

The degeneracy threshold is the kernels' (:func:`kernels._spectral.default_rtol`): two values
closer than ``rtol * max|w|``, ``rtol = 8 n eps``, count as equal.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from scipy.linalg import lapack

from kernels import crossovers
from kernels._spectral import default_rtol, near_tie_rows
from rules.core.cotangents import as_array_cotangent
from rules.core.dispatch import kernel_eligible
from rules.core.nesting import as_array, contiguous, is_traced
from rules.linalg._stacks import square_matrices
from rules.linalg.traced_spectral import masked_inverse_traced
from tangents import AbstractZero, ProjectTo, unthunk

__all__ = [
    "GaugeError",
    "TieError",
    "default_rtol",
    "frobenius",
    "gauge_rtol",
    "lapack_eigh_vectors",
    "lapack_svd_vectors",
    "masked_inverse",
    "near_ties",
    "optional_cotangent",
    "plain_projector",
    "raise_if_gauge_dependent",
    "raise_if_tie_coupled",
    "square_input",
]


class GaugeError(ValueError):
    """The cotangent of eigenvectors or singular vectors depends on their arbitrary gauge.

    Raised by the eigh, svd and eig pullbacks when the loss changes under the phase of a complex
    vector, or under a rotation inside a degenerate eigenspace (singular subspace): such a loss is
    not a function of the matrix, so it has no derivative.
    """


class TieError(ValueError):
    """At a repeated eigenvalue (singular value) the cotangent does not determine the derivative.

    Raised by the eigh and svd pullbacks when the vector cotangents couple vectors inside the
    eigenspace (singular subspace) of a repeated value through a part that is no gauge motion:
    the decomposition is not differentiable there, and losses with different derivatives, such
    as ``tr(G A^2)`` and ``tr(G V V^H)`` at ``A = I``, give the very same cotangents. Returning
    either answer would be silently wrong for the other; differentiate a function of the matrix
    through the matrix itself instead (``A @ A``, ``scipy.linalg.expm``, ``funm``, ... and the
    rules of ``rules.linalg.matfun``), which is exact at ties.
    """


@functools.cache
def gauge_rtol(dtype: Any) -> float:
    """``sqrt(eps(dtype))``: the largest gauge residual, relative to the cotangent, that is accepted."""
    return float(np.sqrt(np.finfo(dtype).eps))


def square_input(name: str, A: Any) -> np.ndarray:
    """``A`` as a dense array of square matrices, or ``LinAlgError`` naming ``name`` and the shape."""
    return square_matrices(name, A)


def optional_cotangent(
    x_bar: Any, name: str, what: str, shape: tuple[int, ...], dtype: np.dtype[Any]
) -> np.ndarray | None:
    """A component of a multi-output cotangent as a writeable C-order array of ``dtype``, or ``None``.

    ``None`` stands for a zero cotangent.

    The shape must be ``shape`` (``ValueError`` naming ``name`` and ``what`` otherwise). A complex
    cotangent of a real output keeps its real part (the cotangent convention). Tangent types that
    are not arrays raise ``TypeError`` (the pullbacks need elementwise access).
    """
    if (
        type(x_bar) is np.ndarray  # the hot case, before the conversions below
        and x_bar.shape == shape
        and x_bar.dtype == dtype
        and x_bar.flags.carray
    ):
        return x_bar
    x_bar = unthunk(x_bar)
    if isinstance(x_bar, AbstractZero):
        return None
    if is_traced(x_bar):  # a nested differentiation: checked, never copied or cast
        if x_bar.shape != shape:
            raise ValueError(
                f"{name} pullback: the cotangent of {what} has shape {x_bar.shape}, expected {shape}"
            )
        return x_bar
    if type(x_bar) is not np.ndarray:
        x_bar = as_array(as_array_cotangent(x_bar, f"{name}'s pullback (masked coupling)"))
    if x_bar.shape != shape:
        raise ValueError(
            f"{name} pullback: the cotangent of {what} has shape {x_bar.shape}, expected {shape}"
        )
    if x_bar.dtype == dtype and x_bar.flags.c_contiguous and x_bar.flags.writeable:
        return x_bar
    if x_bar.dtype.kind == "c" and dtype.kind != "c":
        x_bar = x_bar.real
    # a copy when read-only too: Numba would compile every kernel again for read-only arrays
    return np.array(x_bar, dtype=dtype, order="C")


def near_ties(values: np.ndarray, rtol: float, zeros: bool = False) -> np.ndarray:
    """Indices of the rows of the sorted ``values`` (b, k) with two entries within ``rtol * max|v|``.

    Sorted input (ascending or descending) has its closest pair adjacent, so the test is O(k).
    ``zeros=True`` (singular values, descending) also flags rows whose last entry is within the
    tolerance of 0. Rows holding NaN are not flagged (NaN propagates instead). One compiled pass
    (:func:`kernels._spectral.near_tie_rows`) instead of several numpy passes, whose fixed cost
    was a large part of a single 4x4 svd pullback (bench case ``svd.pullback --sizes 4``).
    """
    b, k = values.shape
    if b * k == 0:
        return np.zeros(0, dtype=np.intp)
    return near_tie_rows(contiguous(values), float(rtol), bool(zeros))


def masked_inverse(d: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """``1/d`` with 0 where ``|d| <= tol`` (broadcast over the last two axes); NaN stays NaN.

    A traced ``d`` takes :func:`masked_inverse_traced`, whose derivative has no ``0 * inf``.
    """
    if is_traced(d):
        return masked_inverse_traced(d, tol)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.abs(d) <= tol[..., None, None], 0.0, 1.0 / d)


def frobenius(X: np.ndarray) -> np.ndarray:
    """The Frobenius norm of each matrix of the stack ``X`` (b, m, n)."""
    flat = contiguous(X).reshape(X.shape[0], -1)
    if flat.dtype.kind == "c":
        flat = flat.view(flat.real.dtype)  # (re, im) pairs: a real dot product, no conj copy
    return np.sqrt(np.einsum("bi,bi->b", flat, flat))


def raise_if_gauge_dependent(
    name: str,
    residuals: dict[str, np.ndarray],
    scale: Any,
    dtype: Any,
    index: np.ndarray | None = None,
) -> None:
    """Raise :class:`GaugeError` when a residual exceeds ``gauge_rtol(dtype) * scale()``.

    ``residuals`` maps a description of the gauge ("the phase of complex eigenvectors", ...) to
    per-matrix residuals (b,); ``scale`` is a function of the matrix indices (an index array or
    a slice) returning the Frobenius norms of their vector cotangents (only called when some
    residual is non-zero).
    ``index`` maps the rows back to positions in the stack, for the message. NaN residuals (NaN
    input) never raise.
    """
    if not any(r.any() for r in residuals.values()):  # nothing dropped: real input, no tie
        return
    candidates = np.zeros(len(next(iter(residuals.values()))), dtype=bool)
    for r in residuals.values():
        candidates |= r > 0
    rows = np.flatnonzero(candidates)
    if rows.size == 0:
        return
    everything = rows.size == candidates.size  # usual for complex input (rounding-level phases)
    limit = gauge_rtol(dtype) * scale(slice(None) if everything else rows)
    for what, r in residuals.items():
        bad = np.flatnonzero(r[rows] > limit)
        if bad.size:
            row = rows[bad[0]]
            where = int(row if index is None else index[row])
            raise GaugeError(
                f"{name} pullback: the loss depends on {what}, which the decomposition leaves "
                f"free, so it is not a function of the input and has no derivative (matrix "
                f"{where} of the stack: gauge component {float(r[row]):.3g} against "
                f"{gauge_rtol(dtype):.2g} x |cotangent| = {float(limit[bad[0]]):.3g}). Make the "
                "loss invariant, e.g. use |v|**2 or v v^H instead of v, or the matrix-function "
                "rules for functions of a symmetric/Hermitian matrix"
            )


def raise_if_tie_coupled(
    name: str,
    values: np.ndarray,
    coupling: Any,
    scale: Any,
    dtype: Any,
    rtol: float,
    what: str,
    nonzero: bool = False,
) -> None:
    """Raise :class:`TieError` when a cotangent couples vectors inside a tie that no mask resolves.

    ``values`` (b, k) are sorted eigenvalues (singular values: ``nonzero=True`` leaves ties of
    values within the tolerance of 0 to the null-space gauge check). For the rows with a tie,
    ``coupling(rows)`` returns the (r, k, k) matrices whose off-diagonal entries inside a tie the
    pullback cannot use (eigh: the Hermitian part of ``V^H V_bar``; svd: the difference of the
    Hermitian parts of ``U^H U_bar`` and ``V^H V_bar``), and ``scale(rows)`` the norms of the
    vector cotangents; an entry above ``gauge_rtol(dtype)`` times that norm raises. Rows without
    a tie cost one compiled pass (:func:`near_ties`); NaN never raises.
    """
    k = values.shape[-1]
    if k < 2:
        return
    rows = near_ties(values, rtol)
    if rows.size == 0:
        return
    v = values[rows]
    tol = rtol * np.max(np.abs(v), axis=-1)
    tie = np.abs(v[:, None, :] - v[:, :, None]) <= tol[:, None, None]
    tie &= ~np.eye(k, dtype=bool)
    if nonzero:
        large = v > tol[:, None]
        tie &= large[:, None, :] & large[:, :, None]
    if not tie.any():
        return
    residual = np.max(np.where(tie, np.abs(coupling(rows)), 0.0), axis=(-2, -1))
    limit = gauge_rtol(dtype) * scale(rows)
    bad = np.flatnonzero(residual > limit)
    if bad.size:
        i = bad[0]
        raise TieError(
            f"{name} pullback: at a repeated {what} (matrix {int(rows[i])} of the stack) the "
            f"cotangent couples the vectors inside its eigenspace ({float(residual[i]):.3g} "
            f"against {gauge_rtol(dtype):.2g} x |cotangent| = {float(limit[i]):.3g}), which no "
            "cotangent of the decomposition resolves: losses with different derivatives give "
            "these same cotangents there (e.g. tr(G A^2) and tr(G V V^H) at A = I). For a smooth "
            "function of the matrix, differentiate it through the matrix itself (A @ A, "
            "scipy.linalg.expm, sqrtm, funm: the rules of rules.linalg.matfun), exact at ties"
        )


# --- one small matrix: LAPACK directly ------------------------------------------------------------
# eigvalsh and svdvals need the vectors only inside their derivatives, so one matrix may take
# LAPACK through scipy's raw wrappers (syevd/heevd, gesdd: the drivers numpy calls), skipping
# numpy's Python wrapper, whose fixed cost exceeds the decomposition of a small matrix. The
# functions that return vectors keep numpy's call (the same LAPACK, but another library build).


def _single_lapack(dense: Any, entry: str) -> bool:
    """Whether ``dense`` is one matrix of a kernel dtype up to the crossover ``entry``."""
    return (
        kernel_eligible(dense)
        and dense.ndim == 2
        and dense.size > 0
        and max(dense.shape) <= getattr(crossovers, entry)
    )


def lapack_eigh(dense: Any, UPLO: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """``(w, V)`` of one small Hermitian matrix by LAPACK ``syevd``/``heevd``, else ``None``.

    Reads the triangle ``UPLO`` ('L' or 'U'), as ``np.linalg.eigh``. Up to
    ``kernels.crossovers.EIGH_VALUES_SINGLE_MAX_N``; ``None`` (take numpy's path) for anything
    else and when LAPACK reports no convergence. NaN gives NaN values, as numpy's eigh.
    """
    if not isinstance(UPLO, str) or UPLO.upper() not in ("L", "U"):
        return None
    if not _single_lapack(dense, "EIGH_VALUES_SINGLE_MAX_N"):
        return None
    (evd,) = _lapack(("heevd" if dense.dtype.kind == "c" else "syevd",), dense.dtype)
    w, V, info = evd(dense, 1, int(UPLO.upper() == "L"))  # compute_v, lower (positional)
    return None if info else (w, np.ascontiguousarray(V))  # C order: the pullback's kernel takes it


def lapack_svd(dense: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Thin ``(U, s, Vh)`` of one small matrix by LAPACK ``gesdd``, else ``None``.

    Up to ``kernels.crossovers.SVD_VALUES_SINGLE_MAX_N``; ``None`` (take numpy's path, which
    raises on NaN) for anything else and whenever LAPACK reports an error or no convergence.
    """
    if not _single_lapack(dense, "SVD_VALUES_SINGLE_MAX_N"):
        return None
    (gesdd,) = _lapack(("gesdd",), dense.dtype)
    # The transposed problem A^T = U' S Vh' (compute_uv, thin: positional, cheaper): LAPACK's
    # factors are Fortran-ordered, so U = Vh'^T and Vh = U'^T are C-ordered views, no copies.
    # The vectors stay internal; the values agree with A's to rounding, as with every driver.
    Ut, s, Vht, info = gesdd(dense.T, 1, 0)
    return None if info else (Vht.T, s, Ut.T)


@functools.cache
def _lapack(names: tuple[str, ...], dtype: np.dtype[Any]) -> tuple[Any, ...]:
    return tuple(lapack.get_lapack_funcs(names, dtype=dtype))


# --- one small matrix with its vectors: numpy's LAPACK call, without numpy's wrapper ------------
# np.linalg.eigh and np.linalg.svd call syevd/heevd and gesdd through a gufunc whose Python
# wrapper (type resolution, errstate, result wrapping) costs more than the decomposition of a
# 4x4 matrix. Called through scipy's raw wrappers, the same drivers return numpy's bits,
# eigenvector and singular-vector signs and phases included (tests/rules/linalg/
# test_spectral_lapack.py checks it bit for bit on random, symmetric, degenerate and strided
# inputs). numpy computes float32 in double precision and rounds the results; so does this.
# numpy raises exactly when LAPACK reports info != 0 (NaN input, no convergence) and returns
# LAPACK's output otherwise, NaN included; info != 0 goes back to numpy's call, which raises.

_VECTOR_WORK = {
    np.dtype(np.float64): np.dtype(np.float64),
    np.dtype(np.float32): np.dtype(np.float64),
    np.dtype(np.complex128): np.dtype(np.complex128),
}
"""The dtypes of the direct calls, each with the precision numpy's linalg computes it in."""

_EVD: dict[np.dtype[Any], Any] = {}  # syevd/heevd and gesdd by dtype: a dict costs less than
_GESDD: dict[np.dtype[Any], Any] = {}  # functools.cache's key building


def lapack_eigh_vectors(a: Any, UPLO: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """``np.linalg.eigh(a, UPLO)`` of one small plain matrix by ``syevd``/``heevd``, else ``None``.

    ``a``: a plain 2-D ndarray of float64, float32 or complex128 up to
    ``kernels.crossovers.EIGH_VALUES_SINGLE_MAX_N``, ``UPLO`` ``"L"`` or ``"U"``. ``(w, V)`` are
    numpy's (dtypes, C order, bits); ``None`` for anything else, so the caller takes numpy's path.
    """
    if type(a) is not np.ndarray or a.ndim != 2 or (UPLO != "L" and UPLO != "U"):
        return None
    n = a.shape[0]
    work = _VECTOR_WORK.get(a.dtype)
    if work is None or a.shape[1] != n or not 0 < n <= crossovers.EIGH_VALUES_SINGLE_MAX_N:
        return None
    evd = _EVD.get(work)
    if evd is None:
        evd = _EVD[work] = _lapack(("heevd" if work.kind == "c" else "syevd",), work)[0]
    w, V, info = evd(a, 1, int(UPLO == "L"))  # compute_v, lower: positional (keywords cost 1 us)
    if info:
        return None
    if work != a.dtype:  # float32: numpy's rounding of its double-precision result
        return w.astype(a.dtype), V.astype(a.dtype, order="C")
    return w, np.ascontiguousarray(V)


def lapack_svd_vectors(a: Any, full_matrices: Any) -> tuple[np.ndarray, ...] | None:
    """``np.linalg.svd(a, full_matrices)`` of one small plain matrix by ``gesdd``, else ``None``.

    ``a``: a plain 2-D ndarray of float64, float32 or complex128 with ``max(m, n)`` up to
    ``kernels.crossovers.SVD_VALUES_SINGLE_MAX_N``. ``(U, s, Vh)`` are numpy's (dtypes, C order,
    bits); ``None`` for anything else, so the caller takes numpy's path.
    """
    if type(a) is not np.ndarray or a.ndim != 2:
        return None
    work = _VECTOR_WORK.get(a.dtype)
    if work is None or a.size == 0 or max(a.shape) > crossovers.SVD_VALUES_SINGLE_MAX_N:
        return None
    gesdd = _GESDD.get(work)
    if gesdd is None:
        gesdd = _GESDD[work] = _lapack(("gesdd",), work)[0]
    U, s, Vh, info = gesdd(a, 1, int(bool(full_matrices)))  # compute_uv, full_matrices
    if info:
        return None
    if work != a.dtype:  # float32: numpy's rounding of its double-precision result
        real = np.dtype(np.float32)
        return U.astype(a.dtype, order="C"), s.astype(real), Vh.astype(a.dtype, order="C")
    return np.ascontiguousarray(U), s, np.ascontiguousarray(Vh)


def plain_projector(A: Any, dtype: np.dtype[Any]) -> Any:
    """``ProjectTo(A)``, skipped where it is the identity: ``A`` a plain ndarray of ``dtype``.

    ``ProjectTo`` of an ndarray returns a cotangent of the primal's dtype and shape as it is
    (``tangents.projection``), so for such an ``A`` the projector only runs, built then, on
    cotangents of another type, dtype or shape (traced values of a nested differentiation).
    """
    if type(A) is not np.ndarray or A.dtype is not dtype:
        return ProjectTo(A)
    shape = A.shape

    def project_plain(A_bar: Any) -> Any:
        if type(A_bar) is np.ndarray and A_bar.dtype is dtype and A_bar.shape == shape:
            return A_bar
        return ProjectTo(np.empty(shape, dtype))(A_bar)

    return project_plain
