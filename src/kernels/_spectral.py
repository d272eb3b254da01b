"""Helpers shared by the eigh and svd kernels: degeneracy tolerance, dispatch, small fused matmuls.

Small matrices (order up to 8 for eigh, 6 for svd) go to loop kernels that handle a whole stack in
one compiled call, with no allocation and no BLAS call per matrix. Each loop kernel is built by a
factory, memoised with ``functools.cache``, for one compile-time matrix order, so LLVM unrolls
its loops (faster than reading the order from the arrays at small n). Numba freezes closure
constants into the compiled code and keys its disk cache on their values, so each order is
compiled and cached on its own, on first use. Larger orders use BLAS through numpy's ``@``.

The ``_mul_*_inplace`` helpers are inlined into their callers (``jit_inline``), so the caller's
constant order reaches their loops. Their size arguments come first: the output is ``(m, n)`` and
the contraction has length ``k``. Numba's on-disk cache does not see edits to this file from
``eigh.py``/``svd.py``: clear ``__pycache__/*.nbi`` and ``*.nbc`` after changing a helper here.
"""

import functools

import numpy as np

from kernels import crossovers
from kernels._jit import jit, jit_inline

#: Block size for the passes over ``(i, j)`` and ``(j, i)`` pairs of large matrices: a 32 x 32 block
#: of rows and one of columns fit in L1 together (faster than row-by-row at n = 256).
TILE = 32

#: Row-block height of :func:`hermitian_product` for orders of at least ``2 * PRODUCT_BLOCK``.
PRODUCT_BLOCK = 128

#: Default degeneracy threshold, in units of ``eps(dtype) * order * spectral scale``.
RTOL_EPS_PER_ORDER = 8.0


@functools.cache  # np.finfo costs as much as a good part of a 4x4 pullback
def default_rtol(order, dtype):
    """Return the default relative degeneracy threshold ``8 * order * eps(dtype)``.

    Two eigenvalues (singular values) closer than ``rtol * max|w|`` are treated as equal. LAPACK's
    eigenvalue and singular-value error bounds are ``p(n) * eps * ||A||_2`` with a slowly growing
    ``p(n)`` (LAPACK Users' Guide, sec. 4.7 and 4.9). Measured here on matrices built with exactly
    repeated eigenvalues (``Q diag(w) Q^H`` with random unitary ``Q``), the computed copies of a
    repeated value differed by at most ~10 eps ``max|w|`` for ``eigh`` (n = 4..256) and ~0.15 n eps
    ``s_max`` for ``svd``; ``8 * n * eps`` covers both with a margin of 3x at n = 4 and more beyond.
    Pairs that are genuinely distinct but closer than this lose their coupling term; their
    eigenvectors have condition number above ``1 / (8 n eps)`` (about 1e14 for n = 4 in float64),
    so no float computation resolves them anyway.
    """
    return RTOL_EPS_PER_ORDER * max(int(order), 1) * float(np.finfo(dtype).eps)


def use_loops(n, crossover):
    """Return True when order ``n`` goes to the loop kernels: ``n <= kernels.crossovers.<name>``.

    ``crossover`` names the entry (``"EIGH_LOOPS_MAX_N"``, ``"SVD_LOOPS_MAX_N"``), read at each
    call so that tests can lower it to run the BLAS path at tiny sizes.
    """
    return n <= getattr(crossovers, crossover)


def shape_error(expected, **arrays):
    """Return a ValueError for arrays whose shapes do not fit together (the kernels index blindly).

    ``expected`` names the function and the shapes it takes, e.g. ``"eigh_pullback: w (b, n), ..."``.
    """
    got = ", ".join(f"{name} {a.shape}" for name, a in arrays.items() if a is not None)
    return ValueError(f"{expected}; got {got}")


def quiet(func):
    """Decorate a BLAS-path function so numpy's floating-point warnings stay off inside it.

    NaN and inf then propagate silently, as they do in the compiled kernels (``error_model="numpy"``
    raises nothing and warns nothing); a caller running with warnings as errors gets NaN out for
    NaN in, not an exception that depends on the matrix size.
    """

    @functools.wraps(func)
    def quiet_func(*args):
        with np.errstate(all="ignore"):
            return func(*args)

    return quiet_func


def conj_t(X):
    """Return ``X^H`` over the last two axes; a view for real dtypes, one copy for complex."""
    return X.conj().swapaxes(-1, -2)


def hermitian_product(T, Vh):
    """Return ``T @ Vh`` (b, n, n) for a product known to be Hermitian, made exactly Hermitian.

    BLAS rounds the two triangles differently; the lower one is kept and mirrored
    (:func:`_mirror_lower_inplace`). So for ``n >= 2 * PRODUCT_BLOCK`` only the block lower
    triangle is multiplied, each block of rows against the columns up to its end (75% of the
    flops at n = 256, 56% at 1024), which beats the full product and mirroring from n = 256 on
    (bench case ``eigh.pullback --sizes 256,1024``). Thinner blocks lose more per flop than they
    save.
    """
    b, n, _ = T.shape
    out = np.empty((b, n, n), dtype=T.dtype)
    step = PRODUCT_BLOCK if n >= 2 * PRODUCT_BLOCK else n
    for lo in range(0, n, step):
        hi = min(lo + step, n)
        np.matmul(T[:, lo:hi], Vh[:, :, :hi], out=out[:, lo:hi, :hi])
    _mirror_lower_inplace(out)
    return out


@jit
def near_tie_rows(values, rtol, zeros):
    """Return the indices of the rows of the sorted ``values`` (b, k), k >= 1, with a near tie.

    A row is flagged when two adjacent entries are within ``rtol * max(|v_0|, |v_{k-1}|)`` (its
    largest magnitude, the values being sorted), or, with ``zeros``, when its last entry is within
    that of 0. Rows whose first or last entry is NaN are not flagged (NaN propagates instead).
    """
    b, k = values.shape
    rows = np.empty(b, dtype=np.intp)
    count = 0
    for p in range(b):
        first, last = abs(values[p, 0]), abs(values[p, k - 1])
        if np.isnan(first) or np.isnan(last):
            continue
        tol = rtol * max(first, last)
        hit = zeros and last <= tol
        for i in range(k - 1):
            if abs(values[p, i + 1] - values[p, i]) <= tol:
                hit = True
                break
        if hit:
            rows[count] = p
            count += 1
    return rows[:count].copy()


@jit_inline
def _scale_tol(n, x, rtol):
    """Return ``rtol * max|x[:n]|``; NaN anywhere in ``x[:n]`` gives NaN."""
    m = 0.0
    for i in range(n):
        a = abs(x[i])
        if a > m or np.isnan(a):
            m = a
    return rtol * m


@jit_inline
def _inv_gap(d, tol):
    """Return ``1/d``, or 0 when ``|d| <= tol`` (a degenerate pair). NaN ``d`` gives NaN."""
    return 0.0 if abs(d) <= tol else 1.0 / d


@jit_inline
def _mul_ah_b_inplace(m, k, n, A, B, out):
    """Write ``A^H B`` into ``out`` (m, n); ``A`` is (k, m), ``B`` is (k, n)."""
    for i in range(m):
        for j in range(n):
            acc = np.conj(A[0, i]) * B[0, j]
            for r in range(1, k):
                acc += np.conj(A[r, i]) * B[r, j]
            out[i, j] = acc


@jit_inline
def _mul_a_b_inplace(m, k, n, A, B, out):
    """Write ``A B`` into ``out`` (m, n); ``A`` is (m, k), ``B`` is (k, n)."""
    for i in range(m):
        for j in range(n):
            acc = A[i, 0] * B[0, j]
            for r in range(1, k):
                acc += A[i, r] * B[r, j]
            out[i, j] = acc


@jit_inline
def _mul_a_bh_inplace(m, k, n, A, B, out):
    """Write ``A B^H`` into ``out`` (m, n); ``A`` is (m, k), ``B`` is (n, k)."""
    for i in range(m):
        for j in range(n):
            acc = A[i, 0] * np.conj(B[j, 0])
            for r in range(1, k):
                acc += A[i, r] * np.conj(B[j, r])
            out[i, j] = acc


# From this order on, _mul_a_bh_hermitian_inplace and _mul_v_diag_vh_inplace go through a
# scratch (below).
HERMITIAN_PRODUCT_SCRATCH_MIN_N = 8


@jit_inline
def _mul_hermitian_inplace(n, k, A, S, out):
    """Write ``A S`` (n, n), known to be Hermitian, into ``out``: lower triangle, mirrored.

    Entry ``(i, j)`` is the dot of row ``i`` of ``A`` with column ``j`` of ``S``, summed in
    order; the loop over ``j`` reads contiguous ``S[r, j]`` and vectorises.
    """
    for i in range(n):
        for j in range(i + 1):
            acc = A[i, 0] * S[0, j]
            for r in range(1, k):
                acc += A[i, r] * S[r, j]
            out[i, j] = acc
        out[i, i] = out[i, i].real
    for i in range(n):
        for j in range(i):
            out[j, i] = np.conj(out[i, j])


@jit_inline
def _mul_a_bh_hermitian_inplace(n, k, A, B, S, out):
    """Write ``A B^H`` (n, n), known to be Hermitian, into ``out``: lower triangle, mirrored.

    The diagonal keeps its real part only, so ``out`` is exactly Hermitian. From
    ``HERMITIAN_PRODUCT_SCRATCH_MIN_N`` on, ``B^H`` is first copied into the scratch ``S``
    (at least (k, n)), so that the loop over ``j`` reads contiguous ``S[r, j]``: with ``n`` and
    ``k`` constants LLVM unrolls the dot over ``r`` and vectorises over ``j`` (1000 x (16x16)
    float64 ``V diag(w_bar) V^T``: 0.33 against 0.52 ms; complex128 1.35 against 1.89 ms),
    which the dots of rows of ``A`` with rows of ``B`` never were. The products and their
    order are the same, so are the bits. Below that order ``S`` is not touched (pass any array).
    """
    if n >= HERMITIAN_PRODUCT_SCRATCH_MIN_N:
        for r in range(k):
            for j in range(n):
                S[r, j] = np.conj(B[j, r])
        _mul_hermitian_inplace(n, k, A, S, out)
        return
    for i in range(n):
        for j in range(i + 1):
            acc = A[i, 0] * np.conj(B[j, 0])
            for r in range(1, k):
                acc += A[i, r] * np.conj(B[j, r])
            if i == j:
                out[i, i] = acc.real
            else:
                out[i, j] = acc
                out[j, i] = np.conj(acc)


@jit_inline
def _mul_v_diag_vh_inplace(n, V, d, S, out):
    """Write ``V diag(d) V^H`` (n, n) into ``out``, exactly Hermitian; ``S`` (n, n) is scratch.

    From ``HERMITIAN_PRODUCT_SCRATCH_MIN_N`` on, ``S = diag(d) V^H`` and ``out = V S`` by
    :func:`_mul_hermitian_inplace` (1000 x (16x16) float64: 0.33 against 0.52 ms for the dots
    of rows of ``V diag(d)`` with rows of ``V``); below, those dots, ``V diag(d)`` in ``S``.
    """
    if n >= HERMITIAN_PRODUCT_SCRATCH_MIN_N:
        for r in range(n):
            dr = d[r]
            for j in range(n):
                S[r, j] = dr * np.conj(V[j, r])
        _mul_hermitian_inplace(n, n, V, S, out)
        return
    for i in range(n):
        for r in range(n):
            S[i, r] = V[i, r] * d[r]
    _mul_a_bh_hermitian_inplace(n, n, S, V, S, out)  # below the threshold S is only read as A


@jit
def _mirror_lower_inplace(X):
    """Make each matrix of ``X`` (b, n, n) exactly Hermitian from its lower triangle, in place.

    The strict upper triangle becomes the conjugate transpose of the strict lower one, the
    diagonal its real part. Only the lower triangle is read, so a caller may leave the upper one
    unwritten. Tiles below the diagonal go through a small contiguous buffer: writing the
    transpose straight into ``X`` touches ``TILE`` rows ``n`` apart, which at power-of-two ``n``
    share a few cache sets and evict each other (the direct ``(X + X^H) / 2`` tile pass this
    replaces was several times slower; this one takes about the time of a copy of the matrix).
    """
    n = X.shape[1]
    buf = np.empty((TILE, TILE), dtype=X.dtype)
    for p in range(X.shape[0]):
        Xp = X[p]
        for ib in range(0, n, TILE):
            ie = min(ib + TILE, n)
            for jb in range(0, ib, TILE):  # full tiles strictly below the diagonal
                for i in range(ib, ie):
                    for j in range(jb, jb + TILE):
                        buf[j - jb, i - ib] = np.conj(Xp[i, j])
                for j in range(jb, jb + TILE):
                    for i in range(ib, ie):
                        Xp[j, i] = buf[j - jb, i - ib]
            for i in range(ib, ie):  # the diagonal tile
                for j in range(ib, i):
                    Xp[j, i] = np.conj(Xp[i, j])
                Xp[i, i] = Xp[i, i].real
