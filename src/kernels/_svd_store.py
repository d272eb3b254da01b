"""The last step of the one-sided Jacobi SVD (:mod:`kernels.svd_forward`): sort, normalise, store.

From the orthogonalised columns ``g_j`` of a lane block and the accumulated ``V``: the singular
values ``||g_j||`` in descending order, and the vectors ``g_j / ||g_j||`` and ``v_j`` with
:mod:`kernels.svd_forward`'s sign (phase) convention, written into ``U``, ``s`` and ``Vh``.
Columns below the zero-column norm are completed to an orthonormal set (Gram-Schmidt on the unit
vectors). Also the two helpers the sweeps share with it: the zero-column norm by dtype and
``|x|^2``.
"""

import numpy as np
from numba import types
from numba.extending import overload

from kernels._jit import jit

#: A scaled column below this norm is treated as exactly zero (its direction is completed), in
#: float64 and complex128; float32's is :data:`_ZERO_COLUMN_32`.
_ZERO_COLUMN = 1e-140

#: float32's: ``2^-60``, whose square is still a normal float32 number. Below it the squared
#: norms and dot products that the sweeps and the normalisation take underflow in float32.
_ZERO_COLUMN_32 = 2.0**-60


def _zero_column(x):
    """The zero-column norm of ``x``'s dtype: :data:`_ZERO_COLUMN` or :data:`_ZERO_COLUMN_32`."""
    return _ZERO_COLUMN_32 if np.asarray(x).dtype == np.float32 else _ZERO_COLUMN


@overload(_zero_column, inline="always")
def _zero_column_overload(x):
    zero = _ZERO_COLUMN_32 if isinstance(x, types.Float) and x.bitwidth == 32 else _ZERO_COLUMN
    return lambda x: zero


def _abs2(x):
    """Return ``|x|^2`` (``re^2 + im^2`` for complex, no square root)."""
    return abs(x) ** 2


@overload(_abs2, inline="always")
def _abs2_overload(x):
    if isinstance(x, types.Complex):
        return lambda x: x.real * x.real + x.imag * x.imag
    return lambda x: x * x


@jit
def _complete_inplace(u, valid, j):
    """Set column ``j`` of ``u`` (M, N) to a unit vector orthogonal to the ``valid`` columns.

    Gram-Schmidt (twice) of the unit vectors ``e_0, e_1, ...`` against the valid columns; the
    first that keeps a norm above 1/2 is taken. ``valid[j]`` is set.
    """
    M, N = u.shape
    for k in range(M):
        for i in range(M):
            u[i, j] = 1.0 if i == k else 0.0
        for _ in range(2):
            for r in range(N):
                if valid[r] and r != j:
                    d = u[0, r].conjugate() * u[0, j]
                    for i in range(1, M):
                        d += u[i, r].conjugate() * u[i, j]
                    for i in range(M):
                        u[i, j] -= d * u[i, r]
        nrm = 0.0
        for i in range(M):
            nrm += _abs2(u[i, j])
        nrm = np.sqrt(nrm)
        if nrm > 0.5:
            for i in range(M):
                u[i, j] /= nrm
            valid[j] = True
            return


@jit
def _normalise_pair_inplace(X, Y, j):
    """Make the first largest-magnitude entry of column ``j`` of ``X`` real positive; ``Y`` too.

    Both columns are multiplied by the same phase, so ``x_j y_j^H`` is unchanged.
    """
    best = -1.0
    imax = 0
    for i in range(X.shape[0]):
        a = abs(X[i, j])
        if a > best:
            best = a
            imax = i
    if not best > 0:
        return
    ph = X[imax, j].conjugate() / best
    for i in range(X.shape[0]):
        X[i, j] *= ph
    X[imax, j] = best
    for i in range(Y.shape[0]):
        Y[i, j] *= ph


@jit
def _signed_columns_inplace(M, N, g, v, nrm, nb, wide, XS, YS, best, top, ph, imax):
    """The normalised, sign-fixed vectors of every column of every lane, lanes innermost.

    ``q = g_c / ||g_c||``; ``X`` is the side whose columns fix the sign (``q``, or ``v`` if
    ``wide``: the user's ``U``), ``Y`` the other. For each column ``c`` the phase ``ph`` makes
    the first entry of largest magnitude of ``X[:, c]`` real and positive (that entry is set to
    the magnitude itself, exactly real); ``XS = X ph`` and ``YS = Y ph``, so ``x y^H`` is
    unchanged. The operations and their order per entry are those of a scan per lane, but the
    scan is a select in every lane at once, without a branch that random data mispredicts.
    Columns below the zero-column norm get numbers here that :func:`_store_inplace` does not use.
    """
    RX = N if wide else M
    one = XS.dtype.type(1)
    for c in range(N):
        for i in range(M):  # q, by the norm; a zero norm (never used) divides by 1
            for l in range(nb):
                d = nrm[c, l]
                x = g[i * N + c, l] / (d if d != 0 else 1.0)
                if wide:
                    YS[i * N + c, l] = x
                else:
                    XS[i * N + c, l] = x
        if wide:
            for i in range(N):
                for l in range(nb):
                    XS[i * N + c, l] = v[i * N + c, l]
        for l in range(nb):
            best[l] = -1.0
            imax[l] = 0
        for i in range(RX):  # the first largest |x|; NaN never wins
            for l in range(nb):
                x = XS[i * N + c, l]
                a = abs(x)
                take = a > best[l]
                best[l] = a if take else best[l]
                top[l] = x if take else top[l]
                imax[l] = i if take else imax[l]
        for l in range(nb):
            b = best[l]
            ph[l] = top[l].conjugate() / (b if b > 0 else 1.0) if b > 0 else one
        for i in range(RX):
            for l in range(nb):
                x = XS[i * N + c, l] * ph[l]
                XS[i * N + c, l] = best[l] if i == imax[l] and best[l] > 0 else x
        for i in range(N if not wide else M):
            for l in range(nb):
                y = v[i * N + c, l] if not wide else YS[i * N + c, l]
                YS[i * N + c, l] = y * ph[l]


@jit
def _store_fused_inplace(M, N, g, v, nrm, order, l, t, wide, U, Vh):
    """Write the normalised vectors of lane ``l`` into ``U[t]``, ``Vh[t]`` in one pass (complex).

    The path of complex lanes without a column to complete, per lane: the same operations in
    the same order as the general path and as :func:`_signed_columns_inplace`, so the same
    factors. For complex128 that function's passes over the whole block cost more than they
    save (10000 x (4x4): 19.2 against 18.0 ms), unlike for real dtypes.
    """
    one = g.dtype.type(1)
    for j in range(N):
        col = order[j]
        d = nrm[col, l]
        best = -1.0
        imax = 0
        for i in range(N if wide else M):
            x = abs(v[i * N + col, l] if wide else g[i * N + col, l] / d)
            if x > best:
                best = x
                imax = i
        top = v[imax * N + col, l] if wide else g[imax * N + col, l] / d
        ph = top.conjugate() / best if best > 0 else one
        if wide:  # A = V diag(s) G^H: the user's U is V
            for i in range(N):
                U[t, i, j] = v[i * N + col, l] * ph
            for i in range(M):
                Vh[t, j, i] = ((g[i * N + col, l] / d) * ph).conjugate()
        else:
            for i in range(M):
                U[t, i, j] = (g[i * N + col, l] / d) * ph
            for i in range(N):
                Vh[t, j, i] = (v[i * N + col, l] * ph).conjugate()
        if best > 0:
            U[t, imax, j] = best  # exactly real, as _normalise_pair_inplace


@jit
def _store_inplace(M, N, g, v, scale, t0, nb, wide, vectors, U, sv, Vh, scratch):
    """Sort, normalise and write the factors of the lanes ``l < nb`` (module docstring).

    The column norms and (real dtypes) the normalised, sign-fixed vectors are taken for every
    lane at once, lanes innermost (:func:`_signed_columns_inplace`), so that the square roots
    and divisions vectorise; the sort and the copy into ``U`` and ``Vh`` run per lane. A lane
    with a column below the zero-column norm takes the general path (completion, then the
    signs) instead.
    ``scratch`` is ``(nrm, XS, YS, best, top, ph, imax)`` of :func:`_scratch`.
    """
    nrm, XS, YS, best, top, ph, imax = scratch
    zero = _zero_column(g[0, 0].real)
    for j in range(N):
        for l in range(nb):
            nrm[j, l] = 0.0  # float64 sums, also for float32 input
        for i in range(M):
            for l in range(nb):
                nrm[j, l] += _abs2(g[i * N + j, l])
        for l in range(nb):
            nrm[j, l] = np.sqrt(nrm[j, l])
    lanes = vectors and not np.iscomplexobj(g)  # complex: _store_fused_inplace, per lane
    if lanes:
        _signed_columns_inplace(M, N, g, v, nrm, nb, wide, XS, YS, best, top, ph, imax)
    order = np.empty(N, dtype=np.intp)
    u = np.empty((M, N), dtype=g.dtype)
    vv = np.empty((N, N), dtype=g.dtype)
    valid = np.empty(N, dtype=np.bool_)
    RU, RV = (N, M) if wide else (M, N)  # the rows of the user's U and of Vh
    for l in range(nb):
        for i in range(N):  # insertion sort, descending; NaN stays where it is
            k = i
            while k > 0 and nrm[order[k - 1], l] < nrm[i, l]:
                order[k] = order[k - 1]
                k -= 1
            order[k] = i
        for j in range(N):
            sv[t0 + l, j] = nrm[order[j], l] / scale[l]
        if not vectors:
            continue
        general = False
        for j in range(N):
            general |= nrm[j, l] < zero  # NaN counts as nonzero: it propagates
        if not general and not lanes:
            _store_fused_inplace(M, N, g, v, nrm, order, l, t0 + l, wide, U, Vh)
            continue
        if not general:
            for j in range(N):
                col = order[j]
                for i in range(RU):
                    U[t0 + l, i, j] = XS[i * N + col, l]
                for i in range(RV):
                    Vh[t0 + l, j, i] = YS[i * N + col, l].conjugate()
            continue
        for j in range(N):  # a zero column to complete: the general path
            col = order[j]
            d = nrm[col, l]
            valid[j] = not d < zero  # NaN counts as valid: it propagates
            for i in range(M):
                u[i, j] = g[i * N + col, l] / d if valid[j] else 0.0
            for i in range(N):
                vv[i, j] = v[i * N + col, l]
        for j in range(N):
            if not valid[j]:
                _complete_inplace(u, valid, j)
        for j in range(N):
            if wide:  # A = vv diag(s) u^H: the user's U is vv
                _normalise_pair_inplace(vv, u, j)
            else:
                _normalise_pair_inplace(u, vv, j)
        if wide:
            for i in range(N):
                for j in range(N):
                    U[t0 + l, i, j] = vv[i, j]
            for j in range(N):
                for i in range(M):
                    Vh[t0 + l, j, i] = u[i, j].conjugate()
        else:
            for i in range(M):
                for j in range(N):
                    U[t0 + l, i, j] = u[i, j]
            for j in range(N):
                for i in range(N):
                    Vh[t0 + l, j, i] = vv[i, j].conjugate()


def _scratch(M, N, nl, g, vectors):
    """The scratch of :func:`_store_inplace`: ``(nrm, XS, YS, best, top, ph, imax)``.

    ``nrm`` (N, nl) is float64; the others serve :func:`_signed_columns_inplace` (real ``g``
    with ``vectors``; else they are of one entry): float64, the type of the quotient
    ``g / nrm``, also for float32 ``g``.
    """
    lanes = vectors and not np.iscomplexobj(g)
    R, m = (max(M, N) * N, nl) if lanes else (1, 1)
    XS, YS = np.empty((R, m)), np.empty((R, m))
    return (np.empty((N, nl)), XS, YS, np.empty(m), np.empty(m), np.empty(m), np.zeros(m, np.intp))


@overload(_scratch)
def _scratch_overload(M, N, nl, g, vectors):
    dt = np.complex128 if isinstance(g.dtype, types.Complex) else np.float64
    real = not isinstance(g.dtype, types.Complex)

    def scratch(M, N, nl, g, vectors):
        lanes = vectors and real
        R, m = (max(M, N) * N, nl) if lanes else (1, 1)
        XS, YS = np.empty((R, m), dtype=dt), np.empty((R, m), dtype=dt)
        top, ph = np.empty(m, dtype=dt), np.empty(m, dtype=dt)
        return (np.empty((N, nl)), XS, YS, np.empty(m), top, ph, np.zeros(m, np.intp))

    return scratch
