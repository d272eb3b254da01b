"""Batched Householder QR of stacks of small matrices, with LAPACK's conventions, lane-blocked.

``qr_batched(A, mode)`` factors every matrix of a stack ``A`` (b, m, n) of float32, float64 or
complex128 as ``np.linalg.qr(A, mode)`` does, in one compiled call instead of one LAPACK call
per matrix. ``k = min(m, n)``. Modes, as numpy's (scipy's names in brackets):

* ``"reduced"`` (``"economic"``): ``(Q (b, m, k), R (b, k, n))``;
* ``"complete"`` (``"full"``): ``(Q (b, m, m), R (b, m, n))``, ``R`` with zero rows below ``k``;
* ``"r"``: ``R (b, k, n)`` only (scipy's ``"r"`` is this ``R`` padded with zero rows to ``m``);
* ``"raw"``: ``(h (b, n, m), tau (b, k))``, LAPACK ``geqrf``'s packed reflectors and ``R`` in
  numpy's transposed layout (``h[p].T`` is the Fortran-ordered ``geqrf`` output).

Method and conventions: LAPACK's ``geqr2`` (unblocked Householder QR) and ``ung2r`` (forming
``Q`` by backward accumulation), with ``larfg``'s reflector: for ``x = [alpha, x_2]``,
``beta = -sign(Re alpha) ||x||``, ``tau = (beta - alpha) / beta``, ``v = [1, x_2 / (alpha -
beta)]``, and ``H = I - tau v v^H``; when ``x_2 = 0`` and ``alpha`` is real, ``tau = 0`` and
``H = I``. So ``R``'s diagonal is real (also for complex ``A``) and may be negative, exactly as
numpy and scipy return it: the factors agree with LAPACK's to rounding, with no gauge to
normalise, and the QR rules' pullbacks and completion formulas (``rules.linalg.qr``, which
differentiate LAPACK's ``Q``) apply unchanged. References: G. H. Golub, C. F. Van Loan,
"Matrix Computations", 4th ed., section 5.2; E. Anderson et al., "LAPACK Users' Guide", 3rd
ed. (1999), ``xGEQRF``/``xLARFG``.

Each matrix is scaled by a power of two to a largest entry in [0.5, 1) before the norms are
taken (exact; ``R`` is scaled back), so no norm over- or underflows. Matrices go in lane blocks
of up to 32 with the matrix index innermost, so every step vectorises across matrices (see
:mod:`kernels._smallmat`). A rank-deficient matrix gives zeros (or rounding) on ``R``'s
diagonal, never an exception; NaN in gives NaN out.

Input contract: (b, m, n) float32, float64 or complex128, ``m, n >= 1``, any strides (read
as they are: one compile per dtype for C order, one more for any other layout); the input is
never written.
"""

import numpy as np

from kernels._householder import householder
from kernels._jit import jit
from kernels._scaling import unit_scale
from kernels._smallmat import _div
from kernels._spectral import shape_error
from kernels.svd_forward import _abs2, _smallest_normal

__all__ = ["qr_batched"]

# The rules call these kernels for stacks up to kernels.crossovers' *_FORWARD_STACK_MAX_N.

_MODES = ("reduced", "complete", "r", "raw")


@jit
def _load_scaled_inplace(A, t0, nb, a, scale):
    """``a[i * n + j, l] = f_l A[t0 + l, i, j]``, ``f_l`` the power of two of the module docstring."""
    m, n = A.shape[1], A.shape[2]
    for l in range(nb):
        mx = 0.0
        for i in range(m):
            for j in range(n):
                mx = max(mx, abs(A[t0 + l, i, j]))
        f = unit_scale(mx)  # a power of two, finite for a subnormal mx
        scale[l] = f
        for i in range(m):
            for j in range(n):
                a[i * n + j, l] = A[t0 + l, i, j] * f


@jit
def _larfg_small_inplace(m, n, j, a, tau, rcp, alpha, x2, small_norm2):
    """Redo ``larfg`` of column ``j`` for the lanes whose squared norm ``x2`` is small.

    ``alpha`` and ``x2`` (nl,) are each lane's diagonal entry and ``|alpha|^2 + ||x||^2`` from
    before the plain ``larfg``; ``x`` is still in ``a``. A lane with ``x2`` below
    ``small_norm2`` (and not an exact zero column) takes ``kernels._householder.householder``'s
    reflector: the column scaled by a power of two before its norm is taken, as LAPACK's
    ``larfg`` rescales. Unscaled, a column of entries near 1e-162 (float64) had a reflector off
    orthogonal by 0.34, and a complex one whose squares all underflowed had divided by a zero
    ``beta``. The other lanes keep their plain ``larfg``, so their results do not depend on a
    small neighbour; so do exact zero columns, and ``alpha = 0`` with an ``x`` whose squares
    all underflow (``H = I`` leaves entries below 1e-160 of the largest, far below rounding).
    """
    jj = j * n + j
    safmin = _smallest_normal(a[0, 0].real)
    for l in range(a.shape[1]):
        if x2[l] < small_norm2 and (x2[l] != 0 or alpha[l] != 0):
            beta, t, scal = householder(alpha[l], a[jj + n :: n, l], safmin)
            a[jj, l] = beta
            tau[j, l] = t
            rcp[l] = scal


@jit
def _householder_inplace(m, n, a, tau, w, rcp, alpha0, x2):
    """Overwrite the lane block ``a`` (m * n, nl) with ``R`` and the reflectors (``geqr2``).

    ``tau`` (k, nl) receives the reflectors' scalars; ``w``, ``rcp``, ``alpha0`` (nl, ``a``'s
    dtype) and ``x2`` (nl, real) are scratch.
    """
    nl = a.shape[1]
    # Below this squared column norm the squares in it may be subnormal (each then off by up
    # to eps tiny absolutely), and the reflector computed from them is not orthogonal: such a
    # column is scaled first (_larfg_small_inplace). m tiny, times 4: m such errors stay below
    # eps of the norm.
    small_norm2 = 4.0 * m * _smallest_normal(a[0, 0].real)
    for j in range(min(m, n)):
        jj = j * n + j
        for l in range(nl):
            w[l] = 0.0
        for i in range(j + 1, m):
            for l in range(nl):
                w[l] += _abs2(a[i * n + j, l])
        small = False
        for l in range(nl):  # larfg
            alpha = a[jj, l]
            xnorm2 = w[l].real
            alpha0[l] = alpha  # kept for _larfg_small_inplace
            x2[l] = _abs2(alpha) + xnorm2
            small |= (x2[l] < small_norm2) & ((x2[l] != 0) | (alpha != 0))
            trivial = xnorm2 == 0 and alpha.imag == 0
            norm = np.sqrt(x2[l])
            beta = -norm if alpha.real >= 0 else norm
            beta = alpha.real if trivial else beta
            plain = not trivial and norm != 0  # 0: a small lane, redone below; NaN: plain
            tau[j, l] = _div(beta - alpha, beta) if plain else 0.0
            rcp[l] = _div(1.0, alpha - beta) if plain else 0.0
            a[jj, l] = beta
        if small:  # rare: a separate loop, so that the one above stays vectorised
            _larfg_small_inplace(m, n, j, a, tau, rcp, alpha0, x2, small_norm2)
        for i in range(j + 1, m):
            for l in range(nl):
                a[i * n + j, l] *= rcp[l]
        for c in range(j + 1, n):  # a_c <- H^H a_c = a_c - conj(tau) v (v^H a_c)
            for l in range(nl):
                w[l] = a[j * n + c, l]
            for i in range(j + 1, m):
                for l in range(nl):
                    w[l] += a[i * n + j, l].conjugate() * a[i * n + c, l]
            for l in range(nl):
                w[l] *= tau[j, l].conjugate()
                a[j * n + c, l] -= w[l]
            for i in range(j + 1, m):
                for l in range(nl):
                    a[i * n + c, l] -= a[i * n + j, l] * w[l]


@jit
def _form_q_inplace(m, n, kq, a, tau, q, w):
    """Write ``Q = H_0 ... H_{k-1} I[:, :kq]`` (m * kq, nl) into ``q`` (``ung2r``)."""
    nl = a.shape[1]
    k = min(m, n)
    for i in range(m):
        for c in range(kq):
            for l in range(nl):
                q[i * kq + c, l] = 1.0 if i == c else 0.0
    for j in range(k - 1, -1, -1):
        for c in range(j, kq):  # q_c <- H q_c = q_c - tau v (v^H q_c), v_j = 1
            for l in range(nl):
                w[l] = q[j * kq + c, l]
            for i in range(j + 1, m):
                for l in range(nl):
                    w[l] += a[i * n + j, l].conjugate() * q[i * kq + c, l]
            for l in range(nl):
                w[l] *= tau[j, l]
                q[j * kq + c, l] -= w[l]
            for i in range(j + 1, m):
                for l in range(nl):
                    q[i * kq + c, l] -= a[i * n + j, l] * w[l]


@jit
def _qr_kernel(A, kq, rows, raw, Q, R, H, T):
    """Factor every matrix of ``A`` into the outputs its arguments ask for.

    ``Q`` (b, m, kq) when ``kq > 0``, ``R`` (b, rows, n) when ``rows > 0``, and with ``raw`` the
    packed ``H`` (b, n, m) and ``T`` (b, k).
    """
    b, m, n = A.shape
    k = min(m, n)
    # no more lanes than matrices: a stack of one (a single matrix) sweeps one lane, not 31
    # idle ones besides (4x faster at 8x8)
    nl = max(1, min(b, 32, 4096 // (m * max(n, kq))))
    a = np.zeros((m * n, nl), dtype=A.dtype)
    q = np.empty((m * kq, nl), dtype=A.dtype)
    tau = np.zeros((k, nl), dtype=A.dtype)
    w = np.empty(nl, dtype=A.dtype)
    rcp = np.empty(nl, dtype=A.dtype)
    alpha0 = np.empty(nl, dtype=A.dtype)
    x2 = np.empty(nl, dtype=w.real.dtype)
    scale = np.ones(nl)
    for t0 in range(0, b, nl):
        nb = min(nl, b - t0)
        if nb < nl:  # the last block: idle lanes hold zero matrices
            a[:] = 0
        _load_scaled_inplace(A, t0, nb, a, scale)
        _householder_inplace(m, n, a, tau, w, rcp, alpha0, x2)
        if kq > 0:
            _form_q_inplace(m, n, kq, a, tau, q, w)
        for l in range(nb):
            p = t0 + l
            f = scale[l]
            for i in range(rows):
                for j in range(n):
                    R[p, i, j] = a[i * n + j, l] / f if i <= j else 0.0
            for i in range(m):
                for c in range(kq):
                    Q[p, i, c] = q[i * kq + c, l]
            if raw:
                for i in range(m):
                    for j in range(n):
                        H[p, j, i] = a[i * n + j, l] / f if i <= j else a[i * n + j, l]
                for j in range(k):
                    T[p, j] = tau[j, l]


def qr_batched(A, mode="reduced"):
    """Householder QR of each ``A[p]`` with numpy's ``mode``; see the module docstring.

    Returns ``(Q, R)`` for ``"reduced"`` and ``"complete"``, ``R`` for ``"r"`` and ``(h, tau)``
    for ``"raw"``, of ``A``'s dtype, with LAPACK's signs (``R``'s diagonal real, maybe negative).
    """
    if mode not in _MODES:
        raise ValueError(f"qr_batched: mode must be one of {_MODES}, got {mode!r}")
    if A.ndim != 3 or 0 in A.shape[1:]:
        raise shape_error("qr_batched: A (b, m, n) with m, n >= 1", A=A)
    if A.dtype not in (np.float32, np.float64, np.complex128):
        raise ValueError(f"qr_batched: A must be float32, float64 or complex128, got {A.dtype}")
    if not A.flags.writeable:  # Numba types a read-only array apart: one compile fewer
        A = A.copy()
    b, m, n = A.shape  # any strides: the kernel reads A entry by entry into its lane block
    k = min(m, n)
    kq = {"reduced": k, "complete": m}.get(mode, 0)
    rows = {"reduced": k, "complete": m, "r": k}.get(mode, 0)
    raw = mode == "raw"
    Q = np.empty((b, m, kq), dtype=A.dtype)
    R = np.empty((b, rows, n), dtype=A.dtype)
    H = np.empty((b, n, m) if raw else (0, 1, 1), dtype=A.dtype)
    T = np.empty((b, k) if raw else (0, 1), dtype=A.dtype)
    _qr_kernel(A, kq, rows, raw, Q, R, H, T)
    if mode == "r":
        return R
    if raw:
        return H, T
    return Q, R
