"""Kernels for the pullback and pushforward of the Hermitian eigendecomposition ``np.linalg.eigh``.

``A = V diag(w) V^H`` with ``w`` ascending (numpy's output). With ``M = V^H V_bar`` and the masked
inverse gaps ``F_ij = 1/(w_j - w_i)`` (0 on the diagonal and where ``|w_j - w_i| <= tol``)::

    pullback     A_bar = V (diag(w_bar) + F o skew(M)) V^H,    skew(M) = (M - M^H) / 2
    pushforward  w_dot = Re diag(C),  V_dot = V (F o herm(C)),  C = V^H A_dot V, herm(C) = (C + C^H)/2

References: M. Giles, "An extended collection of matrix derivative results for forward and reverse
mode algorithmic differentiation" (2008), eigenvalues and eigenvectors; M. Seeger, A. Hetzel,
Z. Dai, E. Meissner, N. D. Lawrence, "Auto-differentiating linear algebra" (2017); C. Ionescu,
O. Vantzos, C. Sminchisescu, "Matrix backpropagation for deep networks with structured layers"
(ICCV 2015); degenerate eigenvalues: M. F. Kasim, "Derivatives of partial eigendecomposition of a
real symmetric matrix for degenerate cases" (arXiv:2011.04366, 2020).

Why ``skew(M)`` and the mask are exact, not a regularisation. ``F`` is antisymmetric, so
``herm(F o M) = F o skew(M)``: the Hermitian part of the textbook ``V (F o M) V^H`` only ever sees
``skew(M)``, and taking it first makes the intermediate matrix Hermitian (half the work, exactly
Hermitian output). A loss that does not change when the eigenvectors of a degenerate block are
rotated into each other (``V -> V Q`` with ``Q`` unitary on the block) has ``skew(M) = 0`` on that
block, because ``d/dt L(V exp(tX)) = Re <M, X> = 0`` for every skew-Hermitian ``X`` on the block;
so there ``F o skew(M)`` is ``0 * (1/0)`` and the mask gives the exact value 0. The diagonal of
``skew(M)`` is ``i Im diag(M)``, the component along the phase gauge ``v_i -> e^{i t} v_i`` of
complex eigenvectors: ``F_ii = 0`` drops it, so the pullback is that of the loss evaluated in the
gauge where ``Im diag(V^H dV) = 0``, the same gauge the pushforward produces. Both dropped
components are measured by :func:`eigh_gauge_residual`, so a rule can raise for gauge-dependent
losses instead of returning a number that depends on LAPACK's arbitrary choice of ``V``.

What the mask cannot do. At an exact tie the eigendecomposition is not differentiable, and the
pair ``(w_bar, V_bar)`` does not determine the derivative of every smooth gauge-invariant loss:
``tr(G A^2)`` (gradient ``2G``) and ``tr(G V V^H)`` (a constant) give the same cotangents at
``A = I`` when ``G`` is symmetric with zero diagonal. The in-block coupling ``f'(w) (V^H G V)_ij``
(Daleckii-Krein) of losses such as ``tr(G f(A))`` is therefore returned as 0, and no residual
can flag it (the example passes :func:`eigh_gauge_residual`). The result is exact for losses
without that coupling: symmetric functions of the spectrum such as ``sum_i f(w_i)``, also when
written through ``V`` as ``tr(V diag(f(w)) V^H)``. Losses like ``w[0]`` at a tie (``w_bar``
unequal within a block) are not differentiable there; the kernel returns one one-sided value.

Degeneracy tolerance: ``tol = rtol * max|w|`` per matrix, with ``rtol`` defaulting to
``8 * n * eps(dtype)`` (:func:`kernels._spectral.default_rtol` explains the choice). NaN anywhere
in ``w`` makes ``tol`` NaN, so nothing is masked and the NaN reaches the output.

Input contract: C-contiguous arrays, ``V`` of dtype float32, float64 or complex128 and ``w`` of
the matching real dtype (what ``np.linalg.eigh`` returns); single-matrix kernels take ``(n,)`` and
``(n, n)``, batched ones ``(b, n)`` and ``(b, n, n)``. Outputs are new arrays; inputs are never
written. Small orders (``n <= 8``; for ``eigvalsh_pullback`` up to
``kernels.crossovers.EIGVALSH_LOOPS_MAX_N``, 16 in float64 and complex128) run one compiled loop
over the stack; larger ones
use BLAS matmuls through numpy's ``@`` plus compiled passes: the coupling, and the mirroring of
the lower triangle of the Hermitian result (:func:`kernels._spectral.hermitian_product`).
"""

import functools

import numpy as np

from kernels import crossovers
from kernels._jit import jit, jit_inline
from kernels._spectral import (
    TILE,
    _inv_gap,
    _mul_a_b_inplace,
    _mul_a_bh_hermitian_inplace,
    _mul_ah_b_inplace,
    _mul_v_diag_vh_inplace,
    _scale_tol,
    conj_t,
    default_rtol,
    hermitian_product,
    quiet,
    shape_error,
    use_loops,
)
from kernels.hermitian_products import hermitian_part_times

__all__ = [
    "eigh_gauge_residual",
    "eigh_gauge_residual_batched",
    "eigh_pullback",
    "eigh_pullback_and_residual",
    "eigh_pullback_and_residual_batched",
    "eigh_pullback_batched",
    "eigh_pushforward",
    "eigh_pushforward_batched",
    "eigvalsh_pullback",
    "eigvalsh_pullback_batched",
    "eigvalsh_uses_loops",
]

_PULLBACK_SHAPES = "eigh_pullback: w and w_bar (b, n), V and V_bar (b, n, n)"


# --- compiled pieces ----------------------------------------------------------------------------


@jit_inline
def _pullback_core_inplace(n, w, w_bar, K, tol, tile):
    """Overwrite ``K = V^H V_bar`` with ``diag(w_bar) + F o skew(K)`` (Hermitian).

    Pairs ``(i, j)`` are visited in ``tile x tile`` blocks so that the column reads ``K[j, i]`` stay
    in cache at large ``n``; the loop kernels pass ``tile = n`` (one block).
    """
    for ib in range(0, n, tile):
        for jb in range(0, ib + 1, tile):
            for i in range(ib, min(ib + tile, n)):
                for j in range(jb, min(jb + tile, i)):
                    k = _inv_gap(w[j] - w[i], tol) * (0.5 * (K[i, j] - np.conj(K[j, i])))
                    K[i, j] = k
                    K[j, i] = np.conj(k)  # F_ji skew_ji = (-F_ij)(-conj skew_ij)
    for i in range(n):
        K[i, i] = w_bar[i]


@jit_inline
def _pushforward_core_inplace(n, w, C, w_dot, tol, tile):
    """Set ``w_dot = Re diag(C)`` and overwrite ``C = V^H A_dot V`` with ``F o herm(C)``."""
    for i in range(n):
        w_dot[i] = C[i, i].real
        C[i, i] = 0
    for ib in range(0, n, tile):
        for jb in range(0, ib + 1, tile):
            for i in range(ib, min(ib + tile, n)):
                for j in range(jb, min(jb + tile, i)):
                    k = _inv_gap(w[j] - w[i], tol) * (0.5 * (C[i, j] + np.conj(C[j, i])))
                    C[i, j] = k
                    C[j, i] = -np.conj(k)  # F_ji herm_ji = (-F_ij)(conj herm_ij)


@jit_inline
def _gauge_residual_of_m(n, w, M, tol):
    """Return ``(phase, rotation)`` of :func:`eigh_gauge_residual_batched` from a formed ``M``.

    ``M = V^H V_bar``, as the pullback forms it anyway. The arithmetic and the order of the
    visits are those of :func:`_gauge_residual_loops`, whose column dot products are the sums
    of ``_mul_ah_b_inplace``: on the loop path both give the same bits.
    """
    ph = 0.0
    for i in range(n):
        a = abs(M[i, i].imag) + 0.0 * abs(M[i, i])  # the 0 * |d| term turns NaN/inf into NaN
        if a > ph or np.isnan(a):
            ph = a
    rot = np.nan if np.isnan(tol) else 0.0  # NaN in w: report NaN, not "no degenerate pair"
    for i in range(n):
        for j in range(i):
            if abs(w[j] - w[i]) <= tol:
                a = 0.5 * abs(M[i, j] - np.conj(M[j, i]))
                if a > rot or np.isnan(a):
                    rot = a
    return ph, rot


@functools.cache
def _pullback_loops(n):
    """Return the loop kernel below compiled for order ``n`` (a closure constant)."""

    @jit
    def pullback_loops(w, V, w_bar, V_bar, rtol, out, phase, rotation):
        """``out[p] = V (diag(w_bar) + F o skew(V^H V_bar)) V^H`` and the gauge residuals."""
        K = np.empty((n, n), dtype=V.dtype)
        T = np.empty((n, n), dtype=V.dtype)
        for p in range(w.shape[0]):
            _mul_ah_b_inplace(n, n, n, V[p], V_bar[p], K)  # K = V^H V_bar
            tol = _scale_tol(n, w[p], rtol)
            phase[p], rotation[p] = _gauge_residual_of_m(n, w[p], K, tol)
            _pullback_core_inplace(n, w[p], w_bar[p], K, tol, n)
            _mul_a_b_inplace(n, n, n, V[p], K, T)  # T = V K
            _mul_a_bh_hermitian_inplace(n, n, T, V[p], K, out[p])  # out = V K V^H (K: scratch)

    return pullback_loops


@functools.cache
def _eigvalsh_pullback_loops(n):
    """Return the loop kernel below compiled for order ``n`` (a closure constant)."""

    @jit
    def eigvalsh_pullback_loops(V, w_bar, out):
        """``out[p] = V diag(w_bar) V^H`` for each matrix of the stack."""
        S = np.empty((n, n), dtype=V.dtype)
        for p in range(V.shape[0]):
            _mul_v_diag_vh_inplace(n, V[p], w_bar[p], S, out[p])

    return eigvalsh_pullback_loops


@functools.cache
def _pushforward_loops(n):
    """Return the loop kernel below compiled for order ``n`` (a closure constant)."""

    @jit
    def pushforward_loops(w, V, A_dot, rtol, w_dot, V_dot):
        """``w_dot = Re diag(C)``, ``V_dot = V (F o herm(C))``, ``C = V^H A_dot V``, per matrix."""
        C = np.empty((n, n), dtype=V.dtype)
        T = np.empty((n, n), dtype=V.dtype)
        for p in range(w.shape[0]):
            _mul_a_b_inplace(n, n, n, A_dot[p], V[p], T)  # T = A_dot V
            _mul_ah_b_inplace(n, n, n, V[p], T, C)  # C = V^H A_dot V
            _pushforward_core_inplace(n, w[p], C, w_dot[p], _scale_tol(n, w[p], rtol), n)
            _mul_a_b_inplace(n, n, n, V[p], C, V_dot[p])

    return pushforward_loops


@jit
def _pullback_core_batched_inplace(w, w_bar, K, rtol, phase, rotation):
    """Apply :func:`_pullback_core_inplace` to each matrix of the stack ``K`` (BLAS path).

    Also sets the gauge residuals of each matrix from ``K = V^H V_bar`` before overwriting it.
    """
    n = w.shape[1]
    for p in range(w.shape[0]):
        tol = _scale_tol(n, w[p], rtol)
        phase[p], rotation[p] = _gauge_residual_of_m(n, w[p], K[p], tol)
        _pullback_core_inplace(n, w[p], w_bar[p], K[p], tol, TILE)


@jit
def _pushforward_core_batched_inplace(w, C, rtol, w_dot):
    """Apply :func:`_pushforward_core_inplace` to each matrix of the stack ``C`` (BLAS path)."""
    n = w.shape[1]
    for p in range(w.shape[0]):
        _pushforward_core_inplace(n, w[p], C[p], w_dot[p], _scale_tol(n, w[p], rtol), TILE)


@jit
def _gauge_residual_loops(w, V, V_bar, rtol, phase, rotation):
    """Per matrix: ``max_i |Im M_ii|`` and ``max |skew(M)_ij|`` over degenerate pairs, ``M = V^H V_bar``.

    Only the needed entries of ``M`` are formed (column dot products), so the cost is ``O(n^2)``
    plus ``O(n)`` per degenerate pair, at every ``n``.
    """
    b, n = w.shape
    d = np.empty(n, dtype=V.dtype)
    for p in range(b):
        tol = _scale_tol(n, w[p], rtol)
        d[:] = 0
        for k in range(n):
            for i in range(n):
                d[i] += np.conj(V[p, k, i]) * V_bar[p, k, i]
        ph = 0.0
        for i in range(n):
            a = abs(d[i].imag) + 0.0 * abs(d[i])  # the 0 * |d| term turns NaN/inf into NaN
            if a > ph or np.isnan(a):
                ph = a
        rot = np.nan if np.isnan(tol) else 0.0  # NaN in w: report NaN, not "no degenerate pair"
        for i in range(n):
            for j in range(i):
                if abs(w[p, j] - w[p, i]) <= tol:
                    m_ij = np.conj(V[p, 0, i]) * V_bar[p, 0, j]
                    m_ji = np.conj(V[p, 0, j]) * V_bar[p, 0, i]
                    for k in range(1, n):
                        m_ij += np.conj(V[p, k, i]) * V_bar[p, k, j]
                        m_ji += np.conj(V[p, k, j]) * V_bar[p, k, i]
                    a = 0.5 * abs(m_ij - np.conj(m_ji))
                    if a > rot or np.isnan(a):
                        rot = a
        phase[p] = ph
        rotation[p] = rot


# --- BLAS path (orders above kernels.crossovers.EIGH_LOOPS_MAX_N) --------------------------------


@quiet
def _pullback_blas(w, V, w_bar, V_bar, rtol, phase, rotation):
    Vh = conj_t(V)
    K = Vh @ V_bar
    _pullback_core_batched_inplace(w, w_bar, K, rtol, phase, rotation)
    return hermitian_product(V @ K, Vh)  # V K V^H, Hermitian as K is


@quiet
def _eigvalsh_pullback_blas(V, w_bar):
    return hermitian_product(V * w_bar[:, None, :], conj_t(V))


@quiet
def _pushforward_blas(w, V, A_dot, rtol):
    C = conj_t(V) @ hermitian_part_times(A_dot, V)  # herm(C) = V^H herm(A_dot) V
    w_dot = np.empty_like(w)
    _pushforward_core_batched_inplace(w, C, rtol, w_dot)
    return w_dot, V @ C


# --- public entry points ------------------------------------------------------------------------


def eigh_pullback_batched(w, V, w_bar, V_bar, *, rtol=None):
    """Return ``A_bar = V (diag(w_bar) + F o skew(V^H V_bar)) V^H`` for a stack, shape (b, n, n).

    ``w``, ``w_bar``: (b, n) real; ``V``, ``V_bar``: (b, n, n). Either cotangent may be ``None``
    (absent, i.e. zero); with ``V_bar=None`` this is :func:`eigvalsh_pullback_batched`. The result
    is exactly Hermitian, of ``V``'s dtype. ``rtol``: degeneracy threshold relative to ``max|w|``
    (default ``8 n eps``); see the module docstring for the policy.
    """
    return eigh_pullback_and_residual_batched(w, V, w_bar, V_bar, rtol=rtol)[0]


def eigh_pullback_and_residual_batched(w, V, w_bar, V_bar, *, rtol=None):
    """Return ``(A_bar, phase, rotation)``: the pullback and the gauge residuals of ``V_bar``.

    :func:`eigh_pullback_batched` and :func:`eigh_gauge_residual_batched` in one pass: the
    residuals are read off ``V^H V_bar``, which the pullback forms anyway, before the masks drop
    them (zeros when ``V_bar`` is ``None``). On the loop path (``n <= 8``) they equal
    :func:`eigh_gauge_residual_batched`'s bit for bit; on the BLAS path ``V^H V_bar`` is BLAS's,
    so they agree to rounding.
    """
    b, n = w.shape[0], w.shape[-1]
    if (
        w.shape != (b, n)
        or V.shape != (b, n, n)
        or (w_bar is not None and w_bar.shape != w.shape)
        or (V_bar is not None and V_bar.shape != V.shape)
    ):
        raise shape_error(_PULLBACK_SHAPES, w=w, V=V, w_bar=w_bar, V_bar=V_bar)
    phase = np.zeros(b, dtype=w.dtype)
    rotation = np.zeros(b, dtype=w.dtype)
    if V_bar is None:
        if w_bar is None:
            return np.zeros_like(V), phase, rotation
        return eigvalsh_pullback_batched(V, w_bar), phase, rotation
    if w_bar is None:
        w_bar = np.zeros_like(w)
    if rtol is None:
        rtol = default_rtol(n, w.dtype)
    if not use_loops(n, "EIGH_LOOPS_MAX_N"):
        return _pullback_blas(w, V, w_bar, V_bar, float(rtol), phase, rotation), phase, rotation
    out = np.empty_like(V)
    _pullback_loops(n)(w, V, w_bar, V_bar, float(rtol), out, phase, rotation)
    return out, phase, rotation


def eigh_pullback(w, V, w_bar, V_bar, *, rtol=None):
    """Return ``A_bar`` (n, n) for one matrix; see :func:`eigh_pullback_batched`."""
    return eigh_pullback_and_residual(w, V, w_bar, V_bar, rtol=rtol)[0]


def eigh_pullback_and_residual(w, V, w_bar, V_bar, *, rtol=None):
    """Return ``(A_bar (n, n), phase, rotation)`` for one matrix, the residuals as floats.

    See :func:`eigh_pullback_and_residual_batched`. Both cotangents given at a loop order (the
    rules' single-matrix case) go straight to the loop kernel, without the stacking.
    """
    n = w.shape[-1]
    if (
        w_bar is not None
        and V_bar is not None
        and use_loops(n, "EIGH_LOOPS_MAX_N")
        and w.shape == w_bar.shape == (n,)
        and V.shape == V_bar.shape == (n, n)
    ):
        if rtol is None:
            rtol = default_rtol(n, w.dtype)
        out = np.empty((1, n, n), dtype=V.dtype)
        residuals = np.empty(2, dtype=w.dtype)
        _pullback_loops(n)(
            w[None], V[None], w_bar[None], V_bar[None], float(rtol), out, residuals, residuals[1:]
        )
        return out[0], float(residuals[0]), float(residuals[1])
    w_bar = None if w_bar is None else w_bar[None]
    V_bar = None if V_bar is None else V_bar[None]
    A_bar, phase, rotation = eigh_pullback_and_residual_batched(
        w[None], V[None], w_bar, V_bar, rtol=rtol
    )
    return A_bar[0], float(phase[0]), float(rotation[0])


def eigvalsh_uses_loops(n, dtype):
    """Whether order ``n`` of ``dtype`` takes the eigvalsh pullback's loop kernel (else BLAS).

    Up to ``kernels.crossovers.EIGVALSH_LOOPS_MAX_N`` for the dtype (read at each call, as
    :func:`kernels._spectral.use_loops`), ``EIGH_LOOPS_MAX_N`` for a dtype it does not list.
    """
    limits = crossovers.EIGVALSH_LOOPS_MAX_N
    return n <= limits.get(dtype.char, crossovers.EIGH_LOOPS_MAX_N)


def eigvalsh_pullback_batched(V, w_bar):
    """Return ``A_bar = V diag(w_bar) V^H`` (b, n, n), exactly Hermitian; no degeneracy issue."""
    b, n = w_bar.shape[0], w_bar.shape[-1]
    if w_bar.shape != (b, n) or V.shape != (b, n, n):
        raise shape_error("eigvalsh_pullback: V (b, n, n), w_bar (b, n)", V=V, w_bar=w_bar)
    if not eigvalsh_uses_loops(n, V.dtype):
        return _eigvalsh_pullback_blas(V, w_bar)
    out = np.empty_like(V)
    _eigvalsh_pullback_loops(n)(V, w_bar, out)
    return out


def eigvalsh_pullback(V, w_bar):
    """Return ``A_bar = V diag(w_bar) V^H`` (n, n) for one matrix."""
    n = V.shape[-1]
    if V.shape == (n, n) and w_bar.shape == (n,) and eigvalsh_uses_loops(n, V.dtype):
        # the loop kernel straight away: the stack wrapper's checks cost as much at 4x4
        out = np.empty((1, n, n), dtype=V.dtype)
        _eigvalsh_pullback_loops(n)(V[None], w_bar[None], out)
        return out[0]
    return eigvalsh_pullback_batched(V[None], w_bar[None])[0]


def eigh_pushforward_batched(w, V, A_dot, *, rtol=None):
    """Return ``(w_dot, V_dot)``: ``Re diag(C)`` (b, n) and ``V (F o herm(C))`` (b, n, n).

    ``C = V^H A_dot V``. ``A_dot`` is read through its Hermitian part ``(A_dot + A_dot^H)/2``, the
    adjoint of the pullback's symmetrisation. ``V_dot`` has ``V^H V_dot`` skew-Hermitian with zero
    diagonal (no phase drift) and no rotation inside degenerate blocks. ``rtol`` as in the pullback.
    """
    b, n = w.shape[0], w.shape[-1]
    if w.shape != (b, n) or V.shape != (b, n, n) or A_dot.shape != V.shape:
        raise shape_error(
            "eigh_pushforward: w (b, n), V and A_dot (b, n, n)", w=w, V=V, A_dot=A_dot
        )
    if rtol is None:
        rtol = default_rtol(n, w.dtype)
    if not use_loops(n, "EIGH_LOOPS_MAX_N"):
        return _pushforward_blas(w, V, A_dot, float(rtol))
    w_dot, V_dot = np.empty_like(w), np.empty_like(V)
    _pushforward_loops(n)(w, V, A_dot, float(rtol), w_dot, V_dot)
    return w_dot, V_dot


def eigh_pushforward(w, V, A_dot, *, rtol=None):
    """Return ``(w_dot (n,), V_dot (n, n))`` for one matrix; see :func:`eigh_pushforward_batched`."""
    w_dot, V_dot = eigh_pushforward_batched(w[None], V[None], A_dot[None], rtol=rtol)
    return w_dot[0], V_dot[0]


def eigh_gauge_residual_batched(w, V, V_bar, *, rtol=None):
    """Return ``(phase, rotation)``, each (b,) real: the gauge-dependent parts of ``V_bar``.

    With ``M = V^H V_bar``: ``phase = max_i |Im M_ii|`` (always 0 for real input) and
    ``rotation = max |M_ij - conj(M_ji)| / 2`` over pairs ``i != j`` inside a degenerate block
    (``|w_j - w_i| <= rtol max|w|``, same default as the pullback). Both are what the pullback drops;
    for a gauge-invariant loss they are rounding-level, about ``eps * max|V_bar|``. A rule may raise
    when either exceeds e.g. ``sqrt(eps) * max(1, max|V_bar|)``. Cost ``O(n^2)`` per matrix.
    """
    b, n = w.shape[0], w.shape[-1]
    if w.shape != (b, n) or V.shape != (b, n, n) or V_bar.shape != V.shape:
        raise shape_error(
            "eigh_gauge_residual: w (b, n), V and V_bar (b, n, n)", w=w, V=V, V_bar=V_bar
        )
    if rtol is None:
        rtol = default_rtol(n, w.dtype)
    phase = np.empty(b, dtype=w.dtype)
    rotation = np.empty(b, dtype=w.dtype)
    _gauge_residual_loops(w, V, V_bar, float(rtol), phase, rotation)
    return phase, rotation


def eigh_gauge_residual(w, V, V_bar, *, rtol=None):
    """Return ``(phase, rotation)`` as floats for one matrix; see :func:`eigh_gauge_residual_batched`."""
    phase, rotation = eigh_gauge_residual_batched(w[None], V[None], V_bar[None], rtol=rtol)
    return float(phase[0]), float(rotation[0])
