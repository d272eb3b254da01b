r"""Rules for the matrix exponential ``scipy.linalg.expm``, with its exact Frechet derivative.

The forward pass is the scaling-and-squaring algorithm with a diagonal Pade approximant
:math:`r_m(A/2^s)^{2^s}` (Al-Mohy and Higham 2009, the algorithm ``scipy.linalg.expm``
implements), written with numpy's (stacked) products so that it keeps what the derivative needs:
the powers ``A^2, A^4, A^6``, the Pade polynomials, the inverse of the Pade denominator and the
squares ``R_k``. The derivative is the Frechet derivative of that same approximant (Al-Mohy and
Higham 2009b, Algorithm 6.4), the chain rule through every product, which reuses all of them:

.. math::

    \dot X = L(A, \dot A), \qquad \bar A = L(A^H, \bar X) = L(A, \bar X^H)^H,

the second form because the Pade coefficients are real (``r(A)^H = r(A^H)`` for a fixed degree and
scaling), so the pullback is the exact adjoint of the pushforward and reuses the intermediates at
``A`` (ChainRules.jl's ``exp`` rule does the same). For ``m = 13`` the derivative costs
``14 + 2 s`` matrix products and no factorization (the inverse of ``V - U`` is kept), against
``6 + s`` products, an inverse and 1-norms for the forward pass, so the pullback costs about as
much as ``scipy.linalg.expm`` itself (bench case ``expm.pullback``, whose reference is
``scipy.linalg.expm_frechet``).

Degree and scaling: ``m`` in (3, 5, 7, 9, 13) and ``s`` from the bounds
``eta = max(d_p, d_{p+1})``, ``d_k = ||A^k||_1^{1/k}``, of Al-Mohy and Higham 2009 (section 4),
with the norms of ``A^8`` and ``A^10`` bounded by products of the norms of the computed powers (so
``eta`` is never underestimated). The rrule returns its own ``X``, which agrees with
``scipy.linalg.expm(A)`` to rounding error (scipy adds a backward-error correction to ``s`` and an
exact diagonal for triangular input); dtypes follow scipy (float32 stays float32, computed in
double). Stacks ``(..., n, n)`` use one degree for the stack and a scaling ``s`` per matrix.

Paths: for Hermitian input (a ``Hermitian``, or a real ``Symmetric``:
:func:`rules.linalg.matfun.is_hermitian`) the rule is the Daleckii-Krein formula of
:mod:`rules.linalg.matfun` (exact at repeated eigenvalues); a complex ``Symmetric`` is not Hermitian
and takes the general path. Otherwise the derivative is the
product chain above: with a single matrix it is written with the tangent algebra only (``@``,
``+``, scalar ``*``, ``.mT``/``.conj()``), so a user's cotangent type flows through the
pullback unconverted; stacks need ndarray cotangents (per-matrix scaling). The product chain runs on
BLAS for large matrices and on numpy's stacked matmul for stacks of small ones. For plain ndarrays
of a kernel dtype up to ``EXPM_SINGLE_MAX_N`` (one matrix) and ``EXPM_STACK_MAX_N`` (stacks) of
:mod:`kernels.crossovers`, the kernel path :mod:`kernels.expm` runs the same forward pass (same
``m``, ``s``, bounds and product chain) and the same derivative in one compiled call each, where
numpy's path makes some 25 calls of about a microsecond each on a 4x4 matrix (bench cases
``expm.pullback`` and ``expm.pushforward --sizes 4,10000x4``). A cotangent that is not a plain
ndarray after a kernel forward (a user's type, a traced value) takes the paths above, on the
numpy forward pass rebuilt from the kernel's scaled copy of ``A``.

References
----------
.. [1] A. H. Al-Mohy, N. J. Higham, "A new scaling and squaring algorithm for the matrix
   exponential", SIAM J. Matrix Anal. Appl. 31(3) (2009) 970-989.
.. [2] A. H. Al-Mohy, N. J. Higham, "Computing the Frechet derivative of the matrix exponential,
   with an application to condition number estimation", SIAM J. Matrix Anal. Appl. 30(4) (2009)
   1639-1657, Algorithm 6.4.
.. [3] N. J. Higham, "Functions of Matrices: Theory and Computation", SIAM 2008, section 10.6.
"""

from __future__ import annotations

import contextlib
import operator
from typing import Any

import numpy as np
import scipy.linalg as sla

from kernels.expm import PADE, THETA, expm_forward_batched, expm_frechet_batched
from rules.core.cotangents import as_array_cotangent
from rules.core.dispatch import KERNEL_DTYPES, crossover
from rules.core.nesting import as_array, call, innermost_value, is_traced
from rules.core.registry import frule, rrule, split_cotangent
from rules.linalg import matfun
from rules.linalg._stacks import adjoint, check_shape, square_matrices
from tangents import AbstractZero, NoTangent, ProjectTo, Tangent, unthunk

__all__ = ["expm_frule", "expm_rrule"]

_THETA, _PADE = THETA, PADE  # Al-Mohy and Higham 2009: the kernels' tables


def _norm1(M: np.ndarray) -> np.ndarray:
    """The 1-norm of each matrix of a stack (largest absolute column sum)."""
    return np.abs(M).sum(axis=-2).max(axis=-1, initial=0.0)


class _Pade:
    """The intermediates of ``expm(A) = r_m(2^-s A)^(2^s)`` that its Frechet derivative reuses.

    ``A`` and the powers are scaled by ``2^-s``; ``Q = (V - U)^-1``; ``squares[k]`` is the
    matrix squared in step ``k`` (``squares[0] = r_m(2^-s A)``); ``s`` has the batch shape.
    """

    __slots__ = ("A", "Q", "W", "W1", "X", "Z1", "m", "mm", "powers", "s", "scale", "squares")

    def __init__(self, A: np.ndarray) -> None:
        self.A = A
        # one matrix: ndarray.dot, the same BLAS gemm as @ for a third of its per-call cost at
        # 4x4 (a 4x4 expm and its derivative take some 25 products)
        mm = self.mm = np.ndarray.dot if A.ndim == 2 else operator.matmul
        n = A.shape[-1]
        eye = np.eye(n, dtype=A.dtype)
        with np.errstate(all="ignore"):  # NaN in, NaN out
            A2 = mm(A, A)
            A4 = mm(A2, A2)
            n1, n2, n4 = _norm1(A), _norm1(A2), _norm1(A4)
            d4, d6_bound = n4**0.25, (n2 * n4) ** (1 / 6)
            eta1 = np.maximum(d4, d6_bound)
            A6 = None
            if (eta1 <= _THETA[3]).all():
                m = 3
            elif (eta1 <= _THETA[5]).all():
                m = 5
            else:
                A6 = mm(A4, A2)
                n6 = _norm1(A6)
                d8 = np.minimum(d4, (n2 * n6) ** 0.125)
                eta3 = np.maximum(n6 ** (1 / 6), d8)
                if (eta3 <= _THETA[7]).all():
                    m = 7
                elif (eta3 <= _THETA[9]).all():
                    m = 9
                else:
                    m = 13
                    eta5 = np.minimum(eta3, np.maximum(d8, (n4 * n6) ** 0.1))
                    eta5 = np.minimum(eta5, n1)
            self.m = m
            if m == 13:
                s = np.ceil(np.log2(eta5 / _THETA[13]))
                s = np.where(np.isfinite(s) & (s > 0), s, 0).astype(np.int64)
            else:
                s = np.zeros(A.shape[:-2], dtype=np.int64)
            self.s = s
            powers = {2: A2, 4: A4}
            if A6 is not None:
                powers[6] = A6
            if m == 9:
                powers[8] = mm(A4, A4)
            if s.any():
                scale = np.ldexp(1.0, -s)[..., None, None] if s.ndim else float(np.ldexp(1.0, -s))
                self.A = A = A * scale
                powers = {k: P * scale**k for k, P in powers.items()}
            else:
                scale = None
            self.scale = scale
            self.powers = powers
            b = _PADE[m]
            if m == 13:
                A2, A4, A6 = powers[2], powers[4], powers[6]
                self.W1 = b[13] * A6 + b[11] * A4 + b[9] * A2
                W2 = b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * eye
                self.Z1 = b[12] * A6 + b[10] * A4 + b[8] * A2
                Z2 = b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * eye
                self.W = mm(A6, self.W1) + W2
                V = mm(A6, self.Z1) + Z2
            else:
                self.W = b[1] * eye + sum(b[k] * powers[k - 1] for k in range(3, m + 1, 2))
                V = b[0] * eye + sum(b[k] * powers[k] for k in range(2, m + 1, 2))
            U = mm(A, self.W)
            self.Q = _inverse(V - U)
            R = mm(self.Q, V + U)
            squares = [R]
            for k in range(int(s.max(initial=0))):
                R = _square_where(R, s > k)
                squares.append(R)
            self.squares = squares
            self.X = R

    def frechet(self, E: Any) -> Any:
        """``L(A, E)``: the derivative of ``r_m(2^-s A)^(2^s)`` in the direction ``E``.

        Only products with the stored ndarrays, sums and scalar multiples of ``E``, so any
        tangent type with ``@`` flows through for a single matrix (``s`` a scalar).
        """
        A, P, b = self.A, self.powers, _PADE[self.m]
        mm = self.mm if type(E) is np.ndarray else operator.matmul  # @ for other tangent types
        if self.scale is not None:
            E = E * self.scale
        M = {2: mm(A, E) + mm(E, A)}  # M_k = L_{x^k}(A, E)
        M[4] = mm(P[2], M[2]) + mm(M[2], P[2])
        if self.m >= 7:
            M[6] = mm(P[4], M[2]) + mm(M[4], P[2])
        if self.m == 9:
            M[8] = mm(P[4], M[4]) + mm(M[4], P[4])
        if self.m == 13:
            A6, M6 = P[6], M[6]
            Lw1 = b[13] * M6 + b[11] * M[4] + b[9] * M[2]
            Lw2 = b[7] * M6 + b[5] * M[4] + b[3] * M[2]
            Lz1 = b[12] * M6 + b[10] * M[4] + b[8] * M[2]
            Lz2 = b[6] * M6 + b[4] * M[4] + b[2] * M[2]
            Lw = mm(A6, Lw1) + mm(M6, self.W1) + Lw2  # L of W = A6 W1 + W2
            Lv = mm(A6, Lz1) + mm(M6, self.Z1) + Lz2  # L of V = A6 Z1 + Z2
        else:
            Lw = _combination(b, M, range(3, self.m + 1, 2), shift=1)
            Lv = _combination(b, M, range(2, self.m + 1, 2), shift=0)
        Lu = mm(A, Lw) + mm(E, self.W)  # L of U = A W
        # R = Q (V + U) with Q = (V - U)^-1:  L_R = Q (L_U + L_V + (L_U - L_V) R)
        L = mm(self.Q, Lu + Lv + mm(Lu - Lv, self.squares[0]))
        for k, R in enumerate(self.squares[:-1]):
            if self.s.ndim == 0:
                L = mm(R, L) + mm(L, R)  # L of R^2
            else:
                active = self.s > k
                L = L.copy()
                L[active] = mm(R[active], L[active]) + mm(L[active], R[active])
        return L


def _combination(b: tuple[float, ...], M: dict[int, Any], ks: range, shift: int) -> Any:
    """``sum_k b_k M_{k - shift}`` over ``ks`` (skipping ``M_0``, the derivative of ``I``)."""
    total: Any = None
    for k in ks:
        if k - shift == 0:
            continue
        term = b[k] * M[k - shift]
        total = term if total is None else total + term
    return total


def _inverse(M: np.ndarray) -> np.ndarray:
    """``M^-1``, all NaN for matrices LAPACK calls singular (only reached with NaN or inf input)."""
    try:
        return np.linalg.inv(M)
    except np.linalg.LinAlgError:
        out = np.full_like(M, np.nan)
        finite = np.all(np.isfinite(M), axis=(-2, -1))
        if M.ndim == 2:
            return out
        for index in zip(*np.nonzero(finite), strict=True):
            with contextlib.suppress(np.linalg.LinAlgError):
                out[index] = np.linalg.inv(M[index])
        return out


def _square_where(R: np.ndarray, active: np.ndarray) -> np.ndarray:
    """``R @ R`` for the matrices of the stack where ``active`` holds, ``R`` for the others."""
    if np.all(active):
        return R @ R
    out = R.copy()
    out[active] = R[active] @ R[active]
    return out


def _output_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype ``scipy.linalg.expm`` returns: float16 and integers are promoted."""
    if dtype.kind in "fc":
        return np.result_type(dtype, np.float32)
    return np.dtype(np.float64)


def _pade(A: np.ndarray) -> _Pade:
    compute = np.complex128 if np.iscomplexobj(A) else np.float64
    return _Pade(np.array(A, dtype=compute))  # a copy: the scaling never touches the caller's A


class _Kernel:
    """The kernel path (:mod:`kernels.expm`): the compiled forward pass and its kept parts.

    Taken for plain ndarrays of a kernel dtype up to the crossovers ``EXPM_SINGLE_MAX_N`` (one
    matrix) and ``EXPM_STACK_MAX_N`` (stacks) of :mod:`kernels.crossovers`; computed in
    float64 or complex128 as the numpy path is, with the same degree, scalings and products.
    """

    __slots__ = ("F", "P", "S", "X", "m", "s", "shape")

    def __init__(self, stack: np.ndarray, shape: tuple[int, ...]) -> None:
        self.shape = shape
        X, self.m, self.s, self.P, self.F, self.S = expm_forward_batched(stack)
        self.X = X.reshape(shape)

    @classmethod
    def start(cls, A: Any) -> _Kernel | None:
        """The forward pass of ``A`` on the kernel path, or ``None`` when ``A`` does not take it."""
        if type(A) is not np.ndarray or A.dtype not in KERNEL_DTYPES or A.size == 0:
            return None
        n = A.shape[-1]
        if n > crossover("EXPM_SINGLE_MAX_N" if A.ndim == 2 else "EXPM_STACK_MAX_N"):
            return None
        return cls(_kernel_stack(A, np.complex128 if A.dtype.kind == "c" else np.float64), A.shape)

    def frechet(self, E: np.ndarray, adjoint: bool) -> np.ndarray:
        """``L(A, E)``, or ``L(A, E^H)^H`` when ``adjoint``, for an ndarray ``E`` shaped as ``A``."""
        E = _kernel_stack(E, self.P.dtype)
        out = expm_frechet_batched(self.m, self.s, self.P, self.F, self.S, E, adjoint)
        return out.reshape(self.shape)

    def pade(self) -> _Pade:
        """The numpy path's forward pass at the same ``A`` (for tangents the kernel does not take).

        ``A`` is recovered exactly from the kernel's scaled copy (a scaling by ``2^s``).
        """
        n = self.shape[-1]
        A = np.moveaxis(self.P[:, 0], -1, 1).reshape(-1, n, n)[: self.s.shape[0]]
        A = A * np.ldexp(1.0, self.s)[:, None, None]
        return _Pade(A.reshape(self.shape))


def _kernel_stack(x: np.ndarray, dtype: Any) -> np.ndarray:
    """``x`` as a C-contiguous, writable ``(b, n, n)`` stack of ``dtype`` (copied only if not)."""
    dtype = np.dtype(dtype)
    if x.dtype != dtype and dtype.kind != "c":
        x = x.real  # the cotangent of a real primal: its real part
    x = np.ascontiguousarray(x, dtype=dtype)
    if not x.flags.writeable:  # Numba compiles a read-only array as another type
        x = x.copy()
    n = x.shape[-1]
    return x.reshape(-1, n, n)


def _frechet_traced(A: Any, E: Any) -> Any:
    r"""``L(A, E)`` for traced operands (a nested differentiation), as a block of a traced ``expm``.

    The top-right block of :math:`\exp\begin{bmatrix} A & E \\ 0 & A \end{bmatrix}` [Mathias
    1996], built with traced concatenations: every step is a rule, so the result is
    differentiated again, to any order.
    """
    n = A.shape[-1]
    zero = np.zeros(A.shape, dtype=np.result_type(innermost_value(A), innermost_value(E)))
    M = np.concatenate(
        (np.concatenate((A, E), axis=-1), np.concatenate((zero, A), axis=-1)), axis=-2
    )
    return call(sla.expm, M)[..., :n, n:]


def _expm_traced_rrule(A: Any) -> tuple[Any, Any]:
    """``expm`` of a traced ``A``: the traced call, and the pullback ``L(A^H, X_bar)``."""
    square_matrices("scipy.linalg.expm", innermost_value(A))
    X = call(sla.expm, A)
    project_A = ProjectTo(A)

    def expm_pullback(X_bar: Any) -> tuple[Any, Any]:
        X_bar = unthunk(X_bar)
        check_shape("scipy.linalg.expm pullback", "the cotangent", X_bar, X.shape)
        return NoTangent(), project_A(_frechet_traced(adjoint(A), X_bar))

    return X, expm_pullback


@rrule.register(sla.expm)
def expm_rrule(A: Any) -> tuple[np.ndarray, Any]:
    r"""Reverse rule for ``X = scipy.linalg.expm(A)``: :math:`\bar A = L(A, \bar X^H)^H`.

    See the module docstring for the algorithm, the exact adjoint and the paths; a
    Hermitian ``A`` (:func:`rules.linalg.matfun.is_hermitian`) takes the Daleckii-Krein rule of
    :mod:`rules.linalg.matfun`.
    """
    if matfun.is_hermitian(A):
        return matfun.hermitian_rrule("scipy.linalg.expm", sla.expm, matfun.EXP, A)
    if is_traced(A):
        return _expm_traced_rrule(A)
    dense = as_array(A)
    square_matrices("scipy.linalg.expm", dense)
    kernel = _Kernel.start(A)
    if kernel is not None:
        return _expm_kernel_rrule(A, kernel)
    pade = _pade(dense)
    out_dtype = _output_dtype(dense.dtype)
    X = pade.X.astype(out_dtype, copy=False)
    project_A, project_X = ProjectTo(A), ProjectTo(X)
    single = dense.ndim == 2

    def expm_pullback(X_bar: Any) -> tuple[Any, Any]:
        X_bar = unthunk(X_bar)
        check_shape("scipy.linalg.expm pullback", "the cotangent", X_bar, X.shape)
        return NoTangent(), project_A(_numpy_pullback(pade, single, project_X(X_bar)))

    return X, expm_pullback


def _numpy_pullback(pade: _Pade, single: bool, X_bar: Any) -> Any:
    """``L(A, X_bar^H)^H`` on the numpy path; the algebra path for one matrix's other types."""
    if single and not isinstance(X_bar, np.ndarray):  # algebra path: the tangent algebra only
        return adjoint(pade.frechet(adjoint(X_bar)))
    G = as_array(as_array_cotangent(X_bar, "scipy.linalg.expm's pullback"))
    return adjoint(pade.frechet(adjoint(G.astype(pade.A.dtype, copy=False))))


def _expm_kernel_rrule(A: np.ndarray, kernel: _Kernel) -> tuple[np.ndarray, Any]:
    """``expm_rrule`` on the kernel path: the compiled forward, and the adjoint in one call."""
    X = kernel.X.astype(_output_dtype(A.dtype), copy=False)
    project_A, project_X = ProjectTo(A), ProjectTo(X)

    def expm_pullback(X_bar: Any) -> tuple[Any, Any]:
        X_bar = unthunk(X_bar)
        check_shape("scipy.linalg.expm pullback", "the cotangent", X_bar, X.shape)
        X_bar = project_X(X_bar)
        if type(X_bar) is np.ndarray:
            return NoTangent(), project_A(kernel.frechet(X_bar, adjoint=True))
        return NoTangent(), project_A(_numpy_pullback(kernel.pade(), A.ndim == 2, X_bar))

    return X, expm_pullback


@frule.register(sla.expm)
def expm_frule(tangents: tuple[Any, Any], A: Any) -> tuple[np.ndarray, Any]:
    r"""Forward rule for ``X = scipy.linalg.expm(A)``: :math:`\dot X = L(A, \dot A)`."""
    A_dot = unthunk(tangents[1])
    if matfun.is_hermitian(A):
        return matfun.hermitian_frule("scipy.linalg.expm", sla.expm, matfun.EXP, A, A_dot)
    if is_traced(A) or is_traced(A_dot):
        X = call(sla.expm, A)
        if isinstance(A_dot, AbstractZero):
            return X, A_dot
        return X, _frechet_traced(A, A_dot)
    dense = as_array(A)
    square_matrices("scipy.linalg.expm", dense)
    check_shape("scipy.linalg.expm pushforward", "the tangent", A_dot, dense.shape)
    kernel = _Kernel.start(A)
    if kernel is not None and type(A_dot) is np.ndarray:
        X = kernel.X.astype(_output_dtype(dense.dtype), copy=False)
        return X, ProjectTo(X)(kernel.frechet(A_dot, adjoint=False))
    pade = _pade(dense) if kernel is None else kernel.pade()
    X = pade.X.astype(_output_dtype(dense.dtype), copy=False)
    project_X = ProjectTo(X)
    if dense.ndim == 2 and not isinstance(A_dot, np.ndarray):
        return X, project_X(pade.frechet(A_dot))
    A_dot = as_array(as_array_cotangent(A_dot, "scipy.linalg.expm's pushforward"))
    return X, project_X(pade.frechet(A_dot.astype(pade.A.dtype, copy=False)))


# --- scipy.linalg.expm_frechet -------------------------------------------------------------------


def _frechet_block(A: Any, E: Any) -> np.ndarray:
    """``[[A, E], [0, A]]``, whose exponential holds ``expm(A)`` and ``L(A, E)`` (Mathias 1996)."""
    A, E = as_array(A), as_array(E)
    n = A.shape[-1]
    M = np.zeros((2 * n, 2 * n), dtype=np.result_type(A, E))
    M[:n, :n] = M[n:, n:] = A
    M[:n, n:] = E
    return M


def _frechet_outputs(y: Any, compute_expm: bool) -> tuple[Any, Any]:
    return (y[0], y[1]) if compute_expm else (None, y)


@rrule.register(sla.expm_frechet)
def expm_frechet_rrule(
    A: Any, E: Any, method: Any = None, compute_expm: bool = True, check_finite: bool = True
) -> tuple[Any, Any]:
    r"""Reverse rule for ``scipy.linalg.expm_frechet``: through ``expm`` of the block matrix.

    :math:`\exp\begin{bmatrix} A & E \\ 0 & A \end{bmatrix} = \begin{bmatrix} e^A & L(A, E) \\ 0
    & e^A \end{bmatrix}` [Higham 2008, Theorem 3.6; Mathias 1996], so both outputs are blocks of
    one ``expm`` whose rule is exact: :math:`\bar M` from ``expm``'s pullback of the cotangents
    placed in their blocks, then :math:`\bar A = \bar M_{11} + \bar M_{22}`,
    :math:`\bar E = \bar M_{12}`.
    """
    y = call(sla.expm_frechet, A, E, method, compute_expm, check_finite)
    n = np.shape(A)[-1]
    M = _frechet_block(A, E)
    _, expm_pullback = expm_rrule(M)
    project_A, project_E = ProjectTo(A), ProjectTo(E)

    def expm_frechet_pullback(y_bar: Any) -> tuple[Any, Any, Any]:
        parts = split_cotangent(y_bar, 2) if compute_expm else (None, y_bar)
        G = np.zeros(M.shape, dtype=np.result_type(M, np.float64))
        blocks = ((slice(0, n), slice(0, n)), (slice(0, n), slice(n, None)))
        for block, part in zip(blocks, parts, strict=True):
            part = unthunk(part)
            if part is None or isinstance(part, AbstractZero):
                continue
            G[block] = as_array_cotangent(part, "scipy.linalg.expm_frechet's pullback")
        M_bar = as_array(unthunk(expm_pullback(G)[1]))
        return (
            NoTangent(),
            project_A(M_bar[:n, :n] + M_bar[n:, n:]),
            project_E(M_bar[:n, n:]),
        )

    return y, expm_frechet_pullback


@frule.register(sla.expm_frechet)
def expm_frechet_frule(
    tangents: tuple[Any, ...],
    A: Any,
    E: Any,
    method: Any = None,
    compute_expm: bool = True,
    check_finite: bool = True,
) -> tuple[Any, Any]:
    """Forward rule for ``scipy.linalg.expm_frechet``: ``expm``'s at ``[[Ȧ, Ė], [0, Ȧ]]``."""
    y = call(sla.expm_frechet, A, E, method, compute_expm, check_finite)
    n = np.shape(A)[-1]
    dots = []
    for value, t in zip((A, E), tangents[1:3], strict=True):
        t = unthunk(t)
        zero = isinstance(t, AbstractZero)
        dots.append(
            np.zeros(np.shape(value))
            if zero
            else as_array_cotangent(t, "scipy.linalg.expm_frechet's frule")
        )
    M = _frechet_block(A, E)
    M_dot = _frechet_block(*dots).astype(np.result_type(M, *dots), copy=False)
    _, Y_dot = expm_frule((NoTangent(), M_dot), M)
    Y_dot = as_array(unthunk(Y_dot))
    expm_dot, frechet_dot = Y_dot[:n, :n], Y_dot[:n, n:]
    if not compute_expm:
        return y, ProjectTo(y)(frechet_dot)
    return y, Tangent(tuple, ProjectTo(y[0])(expm_dot), ProjectTo(y[1])(frechet_dot))
