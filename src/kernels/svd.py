"""Kernels for the pullback and pushforward of the thin SVD ``np.linalg.svd(A, full_matrices=False)``.

``A = U diag(s) Vh`` with ``A`` (m, n), ``k = min(m, n)``, ``U`` (m, k), ``s`` (k,) descending,
``Vh = V^H`` (k, n). Write ``S = diag(s)``, ``J = U^H U_bar``, ``K = V^H V_bar = Vh Vh_bar^H``
(``V_bar = Vh_bar^H``), and the skew-Hermitian ``Ja = J - J^H``, ``Ka = K - K^H``. Two masked
inverse matrices replace the textbook ``1/(s_j^2 - s_i^2)``::

    Fm_ij = 1/(s_j - s_i)   0 where |s_j - s_i| <= tol, in particular on the diagonal
    Fp_ij = 1/(s_i + s_j)   0 where max(s_i, s_j) <= tol (both singular values numerically zero)
    s_inv_i = 1/s_i         0 where s_i <= tol

    pullback   X = diag(s_bar) + Fm o (Ja + Ka)/2 + Fp o (Ja - Ka)/2
               A_bar = U X Vh + (I - U U^H) U_bar S_inv Vh + U S_inv Vh_bar (I - V V^H)
    pushforward  P = U^H A_dot V,  s_dot = Re diag(P),  P_h = (P + P^H)/2,  P_a = (P - P^H)/2
               U_dot  = U (Fm o P_h + Fp o P_a) + (I - U U^H) A_dot V S_inv
               Vh_dot = (Fp o P_a - Fm o P_h) Vh + S_inv U^H A_dot (I - V V^H)

The complement terms vanish for square ``A``; only the tall one (m > n) or the wide one (m < n)
is formed. This is the formula of J. Townsend, "Differentiating the singular value
decomposition" (2016), and M. Seeger et al., "Auto-differentiating linear algebra" (2017),
extended to complex input as in Z.-Q. Wan and S.-X. Zhang, "Automatic differentiation for
complex valued SVD" (arXiv:1909.02659, 2019), with the split
``(Ja s_j + s_i Ka)/(s_j^2 - s_i^2) = Fm (Ja + Ka)/2 + Fp (Ja - Ka)/2``. The split matters at
ties: ``Ja + Ka`` restricted to a block of equal singular values is the derivative along the
gauge ``U -> U Q, V -> V Q`` (``Q`` unitary on the block), zero for a gauge-invariant loss, so
masking ``Fm`` there is exact; ``Fp`` stays finite at a tie, so the ``Ja - Ka`` part, which
gauge-invariant losses such as ``Re <G, U f(S) Vh>`` do feel, is kept in full instead of being
lost to a ``0/0``. The diagonal of ``Fp o (Ja - Ka)/2`` is the complex term
``i Im(J_ii - K_ii) / (2 s_i)``; the diagonal of ``Ja + Ka`` is the common phase gauge of
``(u_i, v_i)`` and is dropped (the pushforward correspondingly gives ``U^H U_dot`` and
``V^H V_dot`` opposite imaginary diagonals).

Zero singular values (``s_i <= tol``): ``u_i`` and ``v_i`` are then not determined by ``A`` (their
phases are independent, and for non-square ``A`` they may turn into the complement), so the
terms that would divide by ``s_i`` are set to 0: exact for losses that do not read those
singular vectors (e.g. ``U f(S) Vh`` with ``f(0) = 0``), finite always. Losses of ``s`` alone
never divide by ``s``; ``sum(s**2)``, ``sum(s**3)`` are exact at rank-deficient ``A``, while
``sum(s)`` (nuclear norm) is not differentiable at ``s_i = 0`` and gets the subgradient
``U Vh``. :func:`svd_gauge_residual` measures every component the masks drop. As for eigh, at
an exact tie the symmetric in-block coupling ``f'(s) (H + H^H)/2``, ``H = U^H G V``, of a loss
like ``Re <G, U f(S) Vh>`` is not carried by the cotangents at all (``Re <G, A>`` and
``Re <G, U Vh>`` give identical cotangents at ``A = I``), so no pullback of the SVD can return
it; it comes out as 0 and no residual flags it.

Degeneracy tolerance: ``tol = rtol * max(s)`` per matrix, ``rtol`` defaulting to
``8 * max(m, n) * eps(dtype)`` (see :func:`kernels._spectral.default_rtol`).

``full_matrices=True``: pass the thin factors ``U[..., :k]``, ``Vh[..., :k, :]``; the extra columns
(rows) are not determined by ``A`` and their cotangents must be dropped (they are pure gauge).

Input contract: C-contiguous float32, float64 or complex128 ``U``, ``Vh`` and ``s`` of the
matching real dtype; single-matrix kernels take ``(m, k)``, ``(k,)``, ``(k, n)``, batched ones
add a leading ``b``. Outputs are new arrays; inputs are never written. Stacks of matrices with
``max(m, n) <= 6`` run one compiled loop per call, compiled for that shape; larger ones
use BLAS through numpy's ``@`` plus one compiled pass.
"""

import functools

import numpy as np

from kernels._jit import jit, jit_inline
from kernels._spectral import (
    TILE,
    _mul_a_b_inplace,
    _mul_a_bh_inplace,
    _mul_ah_b_inplace,
    _scale_tol,
    conj_t,
    default_rtol,
    quiet,
    shape_error,
    use_loops,
)
from kernels._svd_gauge import _gauge_residual_loops
from kernels.tiled_products import scaled_products

__all__ = [
    "svd_gauge_residual",
    "svd_gauge_residual_batched",
    "svd_pullback",
    "svd_pullback_batched",
    "svd_pushforward",
    "svd_pushforward_batched",
    "svdvals_pullback",
    "svdvals_pullback_batched",
]

_SHAPES = (
    "{}: U and U_bar (b, m, k), s and s_bar (b, k), Vh and Vh_bar (b, k, n), A_dot (b, m, n), "
    "k = min(m, n)"
)

# Shape modes, compile-time constants in the loop kernels: which complement term exists.
_SQUARE, _TALL, _WIDE = 0, 1, 2


def _mode(m, n):
    return _TALL if m > n else (_WIDE if m < n else _SQUARE)


# --- compiled pieces ----------------------------------------------------------------------------


@jit_inline
def _inv_gap_and_sum(s_i, s_j, tol):
    """Return ``(Fm_ij, Fp_ij) = (1/(s_j - s_i), 1/(s_i + s_j))`` with the masks; NaN propagates.

    Distinct pairs share one division, ``1/((s_j - s_i)(s_j + s_i))``, in float64 (float32 input
    would underflow the product for singular values below ~1e-19).
    """
    d = np.float64(s_j) - np.float64(s_i)
    t = np.float64(s_i) + np.float64(s_j)
    if abs(d) > tol:  # then max(s_i, s_j) > tol too (s >= 0)
        e = 1.0 / (d * t)
        if np.isfinite(e):
            return e * t, e * d
    fm = 0.0 if abs(d) <= tol else 1.0 / d
    fp = 0.0 if max(s_i, s_j) <= tol else 1.0 / t
    return fm, fp


@jit_inline
def _pullback_core_inplace(k, mode, s, s_bar, J, K, tol, s_inv, tile):
    """Overwrite ``J`` with ``X`` (module docstring), folding in the complement term's ``U``/``Vh`` part.

    Tall: ``X - J S_inv``; wide: ``X - S_inv K^H``; then ``A_bar = (U X' + U_bar S_inv) Vh`` (tall),
    ``U (X' Vh + S_inv Vh_bar)`` (wide), ``U X Vh`` (square). Also sets ``s_inv``. Pairs are
    visited in ``tile x tile`` blocks (cache-friendly column reads); loop kernels pass ``tile = k``.
    """
    if mode != _SQUARE:
        for i in range(k):
            s_inv[i] = 0.0 if s[i] <= tol else 1.0 / s[i]
    for ib in range(0, k, tile):
        for jb in range(0, ib + 1, tile):
            for i in range(ib, min(ib + tile, k)):
                for j in range(jb, min(jb + tile, i + 1)):
                    _pullback_pair_inplace(mode, s, s_bar, J, K, tol, s_inv, i, j)


@jit_inline
def _pullback_pair_inplace(mode, s, s_bar, J, K, tol, s_inv, i, j):
    """Entries ``(i, j)`` and ``(j, i)``, ``j <= i``, of :func:`_pullback_core_inplace`."""
    j_ij, j_ji, k_ij, k_ji = J[i, j], J[j, i], K[i, j], K[j, i]
    ja = j_ij - np.conj(j_ji)  # (J - J^H)_ij; (J - J^H)_ji = -conj(ja)
    ka = k_ij - np.conj(k_ji)
    fm, fp = _inv_gap_and_sum(s[i], s[j], tol)  # Fm_ji = -fm, Fp_ji = fp
    x_ij = 0.5 * (fm * (ja + ka) + fp * (ja - ka))
    x_ji = 0.5 * (fm * np.conj(ja + ka) - fp * np.conj(ja - ka))
    if mode == _TALL:
        x_ij -= j_ij * s_inv[j]
        x_ji -= j_ji * s_inv[i]
    elif mode == _WIDE:
        x_ij -= s_inv[i] * np.conj(k_ji)
        x_ji -= s_inv[j] * np.conj(k_ij)
    if i == j:
        J[i, i] = x_ij + s_bar[i]
    else:
        J[i, j] = x_ij
        J[j, i] = x_ji


@jit_inline
def _pushforward_core_inplace(k, mode, s, P, tol, s_dot, Om_V, s_inv, tile):
    """Overwrite ``P = U^H A_dot V`` with ``Om_U`` and fill ``Om_V`` (``Vh_dot = Om_V Vh + ...``).

    ``Om_U = Fm o P_h + Fp o P_a`` (tall: ``- P S_inv``), ``Om_V = Fp o P_a - Fm o P_h`` (wide:
    ``- S_inv P``); then ``U_dot = U Om_U + A_dot V S_inv`` (tall) and
    ``Vh_dot = Om_V Vh + S_inv U^H A_dot`` (wide). Also sets ``s_dot`` and ``s_inv``. Pairs are
    visited in ``tile x tile`` blocks, as in :func:`_pullback_core_inplace`.
    """
    for i in range(k):
        s_dot[i] = P[i, i].real
        if mode != _SQUARE:
            s_inv[i] = 0.0 if s[i] <= tol else 1.0 / s[i]
    for ib in range(0, k, tile):
        for jb in range(0, ib + 1, tile):
            for i in range(ib, min(ib + tile, k)):
                for j in range(jb, min(jb + tile, i + 1)):
                    _pushforward_pair_inplace(mode, s, P, tol, Om_V, s_inv, i, j)


@jit_inline
def _pushforward_pair_inplace(mode, s, P, tol, Om_V, s_inv, i, j):
    """Entries ``(i, j)`` and ``(j, i)``, ``j <= i``, of :func:`_pushforward_core_inplace`."""
    p_ij, p_ji = P[i, j], P[j, i]
    h = 0.5 * (p_ij + np.conj(p_ji))  # P_h_ij; P_h_ji = conj(h)
    a = 0.5 * (p_ij - np.conj(p_ji))  # P_a_ij; P_a_ji = -conj(a)
    fm, fp = _inv_gap_and_sum(s[i], s[j], tol)
    u_ij = fm * h + fp * a
    u_ji = -fm * np.conj(h) - fp * np.conj(a)
    v_ij = fp * a - fm * h
    v_ji = fm * np.conj(h) - fp * np.conj(a)
    if mode == _TALL:
        u_ij -= p_ij * s_inv[j]
        u_ji -= p_ji * s_inv[i]
    elif mode == _WIDE:
        v_ij -= s_inv[i] * p_ij
        v_ji -= s_inv[j] * p_ji
    P[i, j] = u_ij
    Om_V[i, j] = v_ij
    if i != j:
        P[j, i] = u_ji
        Om_V[j, i] = v_ji


@functools.cache
def _pullback_loops(m, n):
    """Return the loop kernel below compiled for ``(m, n)`` matrices (closure constants)."""
    k = min(m, n)
    mode = _mode(m, n)

    @jit
    def pullback_loops(U, s, Vh, U_bar, s_bar, Vh_bar, rtol, out):
        """``out[p] = A_bar`` of the module docstring for each matrix of the stack."""
        J = np.empty((k, k), dtype=U.dtype)
        K = np.empty((k, k), dtype=U.dtype)
        T = np.empty((m, n), dtype=U.dtype)  # (m, k) tall/square, (k, n) wide
        s_inv = np.empty(k, dtype=s.dtype)
        for p in range(U.shape[0]):
            _mul_ah_b_inplace(k, m, k, U[p], U_bar[p], J)  # J = U^H U_bar
            _mul_a_bh_inplace(k, n, k, Vh[p], Vh_bar[p], K)  # K = Vh Vh_bar^H
            tol = _scale_tol(k, s[p], rtol)
            _pullback_core_inplace(k, mode, s[p], s_bar[p], J, K, tol, s_inv, k)
            if mode == _WIDE:
                _mul_a_b_inplace(k, k, n, J, Vh[p], T)  # T = X' Vh + S_inv Vh_bar
                for i in range(k):
                    for j in range(n):
                        T[i, j] += s_inv[i] * Vh_bar[p, i, j]
                _mul_a_b_inplace(m, k, n, U[p], T, out[p])
            else:
                _mul_a_b_inplace(m, k, k, U[p], J, T)  # T = U X' (+ U_bar S_inv)
                if mode == _TALL:
                    for i in range(m):
                        for j in range(k):
                            T[i, j] += U_bar[p, i, j] * s_inv[j]
                _mul_a_b_inplace(m, k, n, T, Vh[p], out[p])

    return pullback_loops


@functools.cache
def _svdvals_pullback_loops(m, n):
    """Return the loop kernel below compiled for ``(m, n)`` matrices (closure constants)."""
    k = min(m, n)

    @jit
    def svdvals_pullback_loops(U, Vh, s_bar, out):
        """``out[p] = U diag(s_bar) Vh`` for each matrix of the stack."""
        T = np.empty((m, k), dtype=U.dtype)
        for p in range(U.shape[0]):
            for i in range(m):
                for j in range(k):
                    T[i, j] = U[p, i, j] * s_bar[p, j]
            _mul_a_b_inplace(m, k, n, T, Vh[p], out[p])

    return svdvals_pullback_loops


@functools.cache
def _pushforward_loops(m, n):
    """Return the loop kernel below compiled for ``(m, n)`` matrices (closure constants)."""
    k = min(m, n)
    mode = _mode(m, n)

    @jit
    def pushforward_loops(U, s, Vh, A_dot, rtol, U_dot, s_dot, Vh_dot):
        """``(U_dot, s_dot, Vh_dot)`` of the module docstring for each matrix of the stack."""
        P = np.empty((k, k), dtype=U.dtype)
        Om_V = np.empty((k, k), dtype=U.dtype)
        W = np.empty((m, n), dtype=U.dtype)  # A_dot V (m, k) if tall, U^H A_dot (k, n) otherwise
        s_inv = np.empty(k, dtype=s.dtype)
        for p in range(U.shape[0]):
            if mode == _TALL:
                _mul_a_bh_inplace(m, n, k, A_dot[p], Vh[p], W)  # W = A_dot V
                _mul_ah_b_inplace(k, m, k, U[p], W, P)  # P = U^H A_dot V
            else:
                _mul_ah_b_inplace(k, m, n, U[p], A_dot[p], W)  # W = U^H A_dot
                _mul_a_bh_inplace(k, n, k, W, Vh[p], P)  # P = U^H A_dot V
            tol = _scale_tol(k, s[p], rtol)
            _pushforward_core_inplace(k, mode, s[p], P, tol, s_dot[p], Om_V, s_inv, k)
            _mul_a_b_inplace(m, k, k, U[p], P, U_dot[p])
            _mul_a_b_inplace(k, k, n, Om_V, Vh[p], Vh_dot[p])
            if mode == _TALL:
                for i in range(m):
                    for j in range(k):
                        U_dot[p, i, j] += W[i, j] * s_inv[j]
            elif mode == _WIDE:
                for i in range(k):
                    for j in range(n):
                        Vh_dot[p, i, j] += s_inv[i] * W[i, j]

    return pushforward_loops


@functools.cache
def _pullback_core_batched(mode):
    """Return :func:`_pullback_core_inplace` over a stack (BLAS path), compiled for one ``mode``.

    ``mode`` must be a compile-time constant: with a run-time ``mode`` the pair loop runs
    several times slower.
    """

    @jit
    def pullback_core_batched_inplace(s, s_bar, J, K, rtol, s_inv):
        k = s.shape[1]
        for p in range(s.shape[0]):
            tol = _scale_tol(k, s[p], rtol)
            _pullback_core_inplace(k, mode, s[p], s_bar[p], J[p], K[p], tol, s_inv[p], TILE)

    return pullback_core_batched_inplace


@functools.cache
def _pushforward_core_batched(mode):
    """Return :func:`_pushforward_core_inplace` over a stack (BLAS path), for one ``mode``."""

    @jit
    def pushforward_core_batched_inplace(s, P, rtol, s_dot, Om_V, s_inv):
        k = s.shape[1]
        for p in range(s.shape[0]):
            tol = _scale_tol(k, s[p], rtol)
            _pushforward_core_inplace(k, mode, s[p], P[p], tol, s_dot[p], Om_V[p], s_inv[p], TILE)

    return pushforward_core_batched_inplace


# --- BLAS path (orders above kernels.crossovers.SVD_LOOPS_MAX_N) ---------------------------------


@quiet
def _pullback_blas(U, s, Vh, U_bar, s_bar, Vh_bar, rtol):
    mode = _mode(U.shape[1], Vh.shape[2])
    X = conj_t(U) @ U_bar  # J, overwritten with X'
    K = Vh @ conj_t(Vh_bar)
    s_inv = np.empty_like(s)
    _pullback_core_batched(mode)(s, s_bar, X, K, rtol, s_inv)
    if mode == _WIDE:
        T = X @ Vh
        T += s_inv[:, :, None] * Vh_bar
        return U @ T
    T = U @ X
    if mode == _TALL:
        T += U_bar * s_inv[:, None, :]
    return T @ Vh


@quiet
def _svdvals_pullback_blas(U, Vh, s_bar):
    return scaled_products(U, s_bar, Vh)


@quiet
def _pushforward_blas(U, s, Vh, A_dot, rtol):
    mode = _mode(U.shape[1], Vh.shape[2])
    if mode == _TALL:
        W = A_dot @ conj_t(Vh)  # A_dot V
        P = conj_t(U) @ W
    else:
        W = conj_t(U) @ A_dot  # U^H A_dot
        P = W @ conj_t(Vh)
    s_dot, Om_V, s_inv = np.empty_like(s), np.empty_like(P), np.empty_like(s)
    _pushforward_core_batched(mode)(s, P, rtol, s_dot, Om_V, s_inv)
    U_dot = U @ P
    Vh_dot = Om_V @ Vh
    if mode == _TALL:
        U_dot += W * s_inv[:, None, :]
    elif mode == _WIDE:
        Vh_dot += s_inv[:, :, None] * W
    return U_dot, s_dot, Vh_dot


# --- public entry points ------------------------------------------------------------------------


def _resolve_rtol(rtol, m, n, dtype):
    return float(default_rtol(max(m, n), dtype) if rtol is None else rtol)


def _dims(func, U, s, Vh, U_bar=None, s_bar=None, Vh_bar=None, A_dot=None):
    """Return ``(b, m, n)`` after checking that the given arrays have thin-SVD shapes."""
    b, m, n = U.shape[0], U.shape[1], Vh.shape[-1]
    k = min(m, n)
    if not (
        U.shape == (b, m, k)
        and Vh.shape == (b, k, n)
        and (s is None or s.shape == (b, k))
        and (U_bar is None or U_bar.shape == U.shape)
        and (s_bar is None or s_bar.shape == (b, k))
        and (Vh_bar is None or Vh_bar.shape == Vh.shape)
        and (A_dot is None or A_dot.shape == (b, m, n))
    ):
        arrays = {"U": U, "s": s, "Vh": Vh, "U_bar": U_bar, "s_bar": s_bar, "Vh_bar": Vh_bar}
        raise shape_error(_SHAPES.format(func), **arrays, A_dot=A_dot)
    return b, m, n


def svd_pullback_batched(U, s, Vh, U_bar, s_bar, Vh_bar, *, rtol=None):
    """Return ``A_bar`` (b, m, n) of the module docstring for a stack.

    ``U`` (b, m, k), ``s`` (b, k) real, ``Vh`` (b, k, n); cotangents of the same shapes, any of
    which may be ``None`` (absent, i.e. zero). With ``U_bar = Vh_bar = None`` this is
    :func:`svdvals_pullback_batched`. ``rtol``: degeneracy threshold relative to ``max(s)``
    (default ``8 max(m, n) eps``); see the module docstring for the policy at ties and zeros.
    """
    b, m, n = _dims("svd_pullback", U, s, Vh, U_bar=U_bar, s_bar=s_bar, Vh_bar=Vh_bar)
    if U_bar is None and Vh_bar is None:
        if s_bar is None:
            return np.zeros((b, m, n), dtype=U.dtype)
        return svdvals_pullback_batched(U, Vh, s_bar)
    U_bar = np.zeros_like(U) if U_bar is None else U_bar
    Vh_bar = np.zeros_like(Vh) if Vh_bar is None else Vh_bar
    s_bar = np.zeros_like(s) if s_bar is None else s_bar
    rtol = _resolve_rtol(rtol, m, n, s.dtype)
    if not use_loops(max(m, n), "SVD_LOOPS_MAX_N"):
        return _pullback_blas(U, s, Vh, U_bar, s_bar, Vh_bar, rtol)
    out = np.empty((b, m, n), dtype=U.dtype)
    _pullback_loops(m, n)(U, s, Vh, U_bar, s_bar, Vh_bar, rtol, out)
    return out


def svd_pullback(U, s, Vh, U_bar, s_bar, Vh_bar, *, rtol=None):
    """Return ``A_bar`` (m, n) for one matrix (:func:`svd_pullback_batched`, without the stacking)."""
    m, n, k = U.shape[0], Vh.shape[-1], min(U.shape[0], Vh.shape[-1])
    # all three cotangents (the rules' one-matrix case) at a loop order: no batched wrapper
    if (
        U_bar is not None
        and s_bar is not None
        and Vh_bar is not None
        and use_loops(max(m, n), "SVD_LOOPS_MAX_N")
        and U.shape == U_bar.shape == (m, k)
        and Vh.shape == Vh_bar.shape == (k, n)
        and s.shape == s_bar.shape == (k,)
    ):
        out = np.empty((1, m, n), dtype=U.dtype)
        rtol = _resolve_rtol(rtol, m, n, s.dtype)
        _pullback_loops(m, n)(
            U[None], s[None], Vh[None], U_bar[None], s_bar[None], Vh_bar[None], rtol, out
        )
        return out[0]
    U_bar, s_bar, Vh_bar = (None if x is None else x[None] for x in (U_bar, s_bar, Vh_bar))
    return svd_pullback_batched(U[None], s[None], Vh[None], U_bar, s_bar, Vh_bar, rtol=rtol)[0]


def svdvals_pullback_batched(U, Vh, s_bar):
    """Return ``A_bar = U diag(s_bar) Vh`` (b, m, n): the pullback of ``svdvals``, no division."""
    b, m, n = _dims("svdvals_pullback", U, None, Vh, s_bar=s_bar)
    if not use_loops(max(m, n), "SVD_LOOPS_MAX_N"):
        return _svdvals_pullback_blas(U, Vh, s_bar)
    out = np.empty((b, m, n), dtype=U.dtype)
    _svdvals_pullback_loops(m, n)(U, Vh, s_bar, out)
    return out


def svdvals_pullback(U, Vh, s_bar):
    """Return ``A_bar = U diag(s_bar) Vh`` (m, n) for one matrix."""
    m, k = U.shape
    n = Vh.shape[-1]
    if (
        k == min(m, n)
        and Vh.shape == (k, n)
        and s_bar.shape == (k,)
        and use_loops(max(m, n), "SVD_LOOPS_MAX_N")
    ):  # the loop kernel straight away: the stack wrapper's checks cost as much at 4x4
        out = np.empty((1, m, n), dtype=U.dtype)
        _svdvals_pullback_loops(m, n)(U[None], Vh[None], s_bar[None], out)
        return out[0]
    return svdvals_pullback_batched(U[None], Vh[None], s_bar[None])[0]


def svd_pushforward_batched(U, s, Vh, A_dot, *, rtol=None):
    """Return ``(U_dot (b, m, k), s_dot (b, k), Vh_dot (b, k, n))`` of the module docstring.

    ``U^H U_dot`` and ``V^H V_dot`` are skew-Hermitian with opposite diagonals and no rotation
    inside blocks of equal singular values. ``rtol`` as in :func:`svd_pullback_batched`.
    """
    _, m, n = _dims("svd_pushforward", U, s, Vh, A_dot=A_dot)
    rtol = _resolve_rtol(rtol, m, n, s.dtype)
    if not use_loops(max(m, n), "SVD_LOOPS_MAX_N"):
        return _pushforward_blas(U, s, Vh, A_dot, rtol)
    U_dot, s_dot, Vh_dot = np.empty_like(U), np.empty_like(s), np.empty_like(Vh)
    _pushforward_loops(m, n)(U, s, Vh, A_dot, rtol, U_dot, s_dot, Vh_dot)
    return U_dot, s_dot, Vh_dot


def svd_pushforward(U, s, Vh, A_dot, *, rtol=None):
    """Return ``(U_dot, s_dot, Vh_dot)`` for one matrix; see :func:`svd_pushforward_batched`."""
    U_dot, s_dot, Vh_dot = svd_pushforward_batched(
        U[None], s[None], Vh[None], A_dot[None], rtol=rtol
    )
    return U_dot[0], s_dot[0], Vh_dot[0]


def svd_gauge_residual_batched(U, s, Vh, U_bar, Vh_bar, *, rtol=None):
    """Return ``(phase, rotation, null)``, each (b,) real: what the pullback drops as gauge.

    With ``J = U^H U_bar``, ``K = V^H V_bar``: ``phase = max_i |Im(J_ii + K_ii)|`` (common phase of
    ``u_i, v_i``); ``rotation = max |(J - J^H + K - K^H)_ij| / 2`` over ``i != j`` with
    ``|s_i - s_j| <= tol``; ``null`` = the largest dependence on singular vectors of zero singular
    values (``s_i <= tol``): ``|Im(J_ii - K_ii)|``, ``|(J - J^H - K + K^H)_ij| / 2`` within the zero
    block, and the norms of ``(I - U U^H) U_bar`` / ``(I - V V^H) V_bar`` columns. All are
    rounding-level (about ``eps * max(|U_bar|, |Vh_bar|)``) for a gauge-invariant loss; a rule may
    raise above e.g. ``sqrt(eps) * max(1, max|U_bar|, max|Vh_bar|)``. Pass zeros for an absent
    cotangent. Cost ``O((m + n) k)`` plus ``O(m + n)`` per degenerate pair.
    """
    b, m, n = _dims("svd_gauge_residual", U, s, Vh, U_bar=U_bar, Vh_bar=Vh_bar)
    rtol = _resolve_rtol(rtol, m, n, s.dtype)
    phase = np.empty(b, dtype=s.dtype)
    rotation = np.empty(b, dtype=s.dtype)
    null = np.empty(b, dtype=s.dtype)
    _gauge_residual_loops(U, s, Vh, U_bar, Vh_bar, rtol, phase, rotation, null)
    return phase, rotation, null


def svd_gauge_residual(U, s, Vh, U_bar, Vh_bar, *, rtol=None):
    """Return ``(phase, rotation, null)`` as floats for one matrix; see the batched version."""
    res = svd_gauge_residual_batched(
        U[None], s[None], Vh[None], U_bar[None], Vh_bar[None], rtol=rtol
    )
    return tuple(float(r[0]) for r in res)
