"""Leaf helpers for stacks of small matrices: lane blocks, LU, triangular solves, products.

Batched kernels do not loop over the stack one matrix at a time: loops of length 4 cost more
in loop overhead than in arithmetic. They copy a block of ``nl`` matrices into a *lane block*
``W[i, j, l] = X[t0 + l, i, j]`` (shape ``(rows, cols, nl)``, C-contiguous) and run every
operation with the lane ``l`` as the innermost loop, which LLVM vectorises across matrices.
That beats per-matrix loops on stacks of small matrices (bench sizes ``10000x4``).

Every helper below works on lane blocks and writes only into its last argument, which the
``_inplace`` suffix announces; ``nb <= nl`` is the number of active lanes in the block. They
are generic over float32, float64 and complex128 (``conjugate()`` is the identity on reals).
Divisions are by per-lane pivots, so a zero pivot gives inf/nan in that lane only and never an
exception (``error_model="numpy"``); NaN propagates.

Triangular helpers read only their triangle, so they accept a packed LU block (``L`` strictly
below the diagonal with an implicit unit diagonal, ``U`` on and above it) or a trapezoidal
factor, of which they use the leading ``k x k`` block: ``k = T.shape[1]`` for lower and
``k = T.shape[0]`` for upper factors.

Numba's on-disk cache does not notice edits to this module from the kernels that call it:
clear ``src/kernels/__pycache__/*.nbi|*.nbc`` after changing anything here.
"""

import numpy as np
from numba import types
from numba.extending import overload

from kernels._jit import jit, jit_inline

# --- division ------------------------------------------------------------------------------


def _div(a, b):
    """Return ``a / b``; in compiled code a complex ``b == 0`` gives inf/nan instead of raising.

    Numba raises ``ZeroDivisionError`` for complex division by zero even under
    ``error_model="numpy"`` (checked with numba 0.68), so a kernel that divides by a complex
    pivot calls this instead of ``/``. Real division is plain ``/`` (inf/nan by the error model).
    """
    return a / b


@overload(_div, inline="always")  # inlined, so the caller's error model applies
def _div_overload(a, b):
    if isinstance(b, types.Complex):

        def complex_div(a, b):
            # Smith's algorithm (Smith 1962), as numba's own complex division but without the raise
            ar, ai, br, bi = a.real, a.imag, b.real, b.imag
            if br == 0 and bi == 0:
                return complex(ar / br, ai / br)
            if abs(br) >= abs(bi):
                r = bi / br
                den = br + bi * r
                return complex((ar + ai * r) / den, (ai - ar * r) / den)
            r = br / bi
            den = bi + br * r
            return complex((ar * r + ai) / den, (ai * r - ar) / den)

        return complex_div
    return lambda a, b: a / b


def _abs1(x):
    """Return ``|Re x| + |Im x|``, the pivot size LAPACK uses (``izamax``/``cabs1``).

    Cheaper than ``abs`` for complex numbers (no square root) and gives the same pivots as
    ``scipy.linalg.lu_factor``; zero exactly when ``x`` is zero.
    """
    return abs(x.real) + abs(x.imag)


@overload(_abs1, inline="always")
def _abs1_overload(x):
    if isinstance(x, types.Complex):
        return lambda x: abs(x.real) + abs(x.imag)
    return lambda x: abs(x)


# --- lane blocks ---------------------------------------------------------------------------


@jit
def _lanes(b, size):
    """Return the lane count for a stack of ``b`` matrices of ``size`` entries each.

    32 lanes at 4x4 (16, 32 and 64 measured within noise), fewer for larger matrices so
    that a handful of lane blocks stays in L1/L2.
    """
    return max(1, min(b, 32, 4096 // max(size, 1)))


@jit
def _load_inplace(X, t0, nb, out):
    """``out[i, j, l] = X[t0 + l, i, j]`` for the first ``nb`` lanes."""
    for l in range(nb):
        for i in range(X.shape[1]):
            for j in range(X.shape[2]):
                out[i, j, l] = X[t0 + l, i, j]


@jit
def _store_inplace(src, t0, nb, X):
    """``X[t0 + l, i, j] = src[i, j, l]`` for the first ``nb`` lanes."""
    for l in range(nb):
        for i in range(X.shape[1]):
            for j in range(X.shape[2]):
                X[t0 + l, i, j] = src[i, j, l]


@jit
def _load_piv_inplace(piv, t0, nb, out):
    """``out[k, l] = piv[t0 + l, k]``: the pivots of a lane block."""
    for l in range(nb):
        for k in range(piv.shape[1]):
            out[k, l] = piv[t0 + l, k]


@jit
def _negate_inplace(nb, a):
    """Negate ``a`` on the first ``nb`` lanes."""
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            for l in range(nb):
                a[i, j, l] = -a[i, j, l]


# --- LU factorizations ---------------------------------------------------------------------


@jit_inline
def _eliminate_inplace(k, nb, a, n):
    """Scale column ``k`` below the pivot and update the trailing block (one LU step).

    As LAPACK ``getf2`` does, an exactly zero pivot leaves its column unscaled, so a singular
    matrix factors without inf/nan (the zero stays on the diagonal of ``U``). ``n`` is
    ``a.shape[0]``, an argument so that a constant can reach the loops (``kernels._jit``).
    """
    for i in range(k + 1, n):
        for l in range(nb):
            p = a[k, k, l]
            a[i, k, l] = _div(a[i, k, l], p) if p != 0 else a[i, k, l]
        for j in range(k + 1, n):
            for l in range(nb):
                a[i, j, l] -= a[i, k, l] * a[k, j, l]


@jit_inline
def _lu_partial_sized_inplace(nb, a, piv, sign, n):
    """``_lu_partial_inplace`` for ``n = a.shape[0]`` given as an argument (inlined)."""
    for l in range(nb):
        sign[l] = 1
    for k in range(n):
        for l in range(nb):
            p = k
            best = _abs1(a[k, k, l])
            for i in range(k + 1, n):
                v = _abs1(a[i, k, l])
                if v > best:
                    best = v
                    p = i
            piv[k, l] = p
            if p != k:
                sign[l] = -sign[l]
                for j in range(n):
                    t = a[k, j, l]
                    a[k, j, l] = a[p, j, l]
                    a[p, j, l] = t
        _eliminate_inplace(k, nb, a, n)


@jit
def _lu_partial_inplace(nb, a, piv, sign):
    """Overwrite square lanes of ``a`` with packed ``L, U`` of ``a = P L U`` (partial pivoting).

    ``piv[k, l]`` receives LAPACK ``getrf`` swaps, 0-based (row ``k`` swapped with
    ``piv[k, l]``) as in ``scipy.linalg.lu_factor``; ``sign[l]`` the permutation sign. The pivot
    is the first entry of largest ``|Re| + |Im|`` in its column, as LAPACK's ``i?amax``. Orders 2
    to 4 run loops of constant length, which LLVM unrolls (10000 x (4x4), float64: about twice
    as fast as the loops of variable length).
    """
    n = a.shape[0]
    if n == 4:
        _lu_partial_sized_inplace(nb, a, piv, sign, 4)
    elif n == 3:
        _lu_partial_sized_inplace(nb, a, piv, sign, 3)
    elif n == 2:
        _lu_partial_sized_inplace(nb, a, piv, sign, 2)
    else:
        _lu_partial_sized_inplace(nb, a, piv, sign, n)


@jit
def _lu_complete_inplace(nb, a, prow, pcol, sign):
    """Overwrite square lanes of ``a`` with packed ``L, U`` of ``Pr a Pc = L U`` (complete pivoting).

    At step ``k`` row ``k`` was swapped with ``prow[k, l]`` and column ``k`` with
    ``pcol[k, l]``; ``sign[l]`` is the sign of both permutations. Complete pivoting reveals
    rank: at rank ``n - 1`` only the last pivot vanishes (in exact arithmetic), which the
    adjugate needs and partial pivoting does not give (``[[0, 1], [0, 0]]`` has two zero
    pivots under partial pivoting).
    """
    n = a.shape[0]
    for l in range(nb):
        sign[l] = 1
    for k in range(n):
        for l in range(nb):
            p = k
            q = k
            best = _abs1(a[k, k, l])
            for i in range(k, n):
                for j in range(k, n):
                    v = _abs1(a[i, j, l])
                    if v > best:
                        best = v
                        p = i
                        q = j
            prow[k, l] = p
            pcol[k, l] = q
            if p != k:
                sign[l] = -sign[l]
                for j in range(n):
                    t = a[k, j, l]
                    a[k, j, l] = a[p, j, l]
                    a[p, j, l] = t
            if q != k:
                sign[l] = -sign[l]
                for i in range(n):
                    t = a[i, k, l]
                    a[i, k, l] = a[i, q, l]
                    a[i, q, l] = t
        _eliminate_inplace(k, nb, a, n)


@jit
def _swap_rows_inplace(piv, nb, reverse, b):
    """Apply the row swaps ``piv`` to ``b`` in order, or in reverse order when ``reverse``.

    In order is ``b <- P^T b`` and in reverse order ``b <- P b`` for ``A = P L U``.
    """
    n = piv.shape[0]
    for l in range(nb):
        for s in range(n):
            k = n - 1 - s if reverse else s
            p = piv[k, l]
            if p != k:
                for j in range(b.shape[1]):
                    t = b[k, j, l]
                    b[k, j, l] = b[p, j, l]
                    b[p, j, l] = t


@jit
def _swap_cols_inplace(piv, nb, reverse, b):
    """Apply the column swaps ``piv`` to ``b``, in order or in reverse order."""
    n = piv.shape[0]
    for l in range(nb):
        for s in range(n):
            k = n - 1 - s if reverse else s
            p = piv[k, l]
            if p != k:
                for i in range(b.shape[0]):
                    t = b[i, k, l]
                    b[i, k, l] = b[i, p, l]
                    b[i, p, l] = t


@jit
def _lu_solve_inplace(lu, piv, trans, nb, b):
    """Overwrite ``b`` (n, k, nl) with ``op(A)^-1 b`` for ``A = P L U`` packed in ``lu``, ``piv``.

    ``trans`` as in ``scipy.linalg.lu_solve``: 0 solves ``A x = b``, 1 ``A^T x = b``,
    2 ``A^H x = b``.
    """
    if trans == 0:
        _swap_rows_inplace(piv, nb, False, b)
        _lower_unit_solve_inplace(lu, nb, b)
        _upper_solve_inplace(lu, nb, b)
    else:
        conj = trans == 2
        n = lu.shape[0]
        m = b.shape[1]
        for i in range(n):  # U^T y = b or U^H y = b: forward substitution
            for r in range(i):
                for j in range(m):
                    for l in range(nb):
                        u = lu[r, i, l].conjugate() if conj else lu[r, i, l]
                        b[i, j, l] -= u * b[r, j, l]
            rcp = _diag_reciprocal(lu, i, nb, conj)
            for j in range(m):
                for l in range(nb):
                    b[i, j, l] *= rcp[l]
        for i in range(n - 1, -1, -1):  # L^T z = y or L^H z = y: back substitution, unit diagonal
            for r in range(i + 1, n):
                for j in range(m):
                    for l in range(nb):
                        e = lu[r, i, l].conjugate() if conj else lu[r, i, l]
                        b[i, j, l] -= e * b[r, j, l]
        _swap_rows_inplace(piv, nb, True, b)


# --- triangular solves ---------------------------------------------------------------------


@jit
def _lower_unit_solve_inplace(low, nb, b):
    """Overwrite the first ``k`` rows of ``b`` with ``L^-1 b`` (``L`` unit lower, k x k)."""
    k = low.shape[1]
    for i in range(k):
        for r in range(i):
            for j in range(b.shape[1]):
                for l in range(nb):
                    b[i, j, l] -= low[i, r, l] * b[r, j, l]


@jit
def _lower_unit_adj_solve_inplace(low, nb, b):
    """Overwrite the first ``k`` rows of ``b`` with ``L^-H b`` (``L`` unit lower, k x k)."""
    k = low.shape[1]
    for i in range(k - 1, -1, -1):
        for r in range(i + 1, k):
            for j in range(b.shape[1]):
                for l in range(nb):
                    b[i, j, l] -= low[r, i, l].conjugate() * b[r, j, l]


@jit
def _diag_reciprocal(up, j, nb, conj):
    """Return ``1 / U[j, j]`` (conjugated if ``conj``) for each lane, as a new (nl,) array.

    The solves below multiply by it: one (complex, scalar) division per diagonal entry and lane
    instead of one per entry of ``b``, which lets the updates vectorise (bench case
    ``qr.pullback``, complex, ``10000x4``). A subnormal pivot gives inf where a division
    might stay finite; such a factor is singular to working precision anyway.
    """
    rcp = np.empty(up.shape[2], dtype=up.dtype)
    for l in range(nb):
        rcp[l] = _div(1, up[j, j, l].conjugate() if conj else up[j, j, l])
    return rcp


@jit
def _upper_solve_inplace(up, nb, b):
    """Overwrite the first ``k`` rows of ``b`` with ``U^-1 b`` (``U`` upper, k x k)."""
    k = up.shape[0]
    for i in range(k - 1, -1, -1):
        for r in range(i + 1, k):
            for j in range(b.shape[1]):
                for l in range(nb):
                    b[i, j, l] -= up[i, r, l] * b[r, j, l]
        rcp = _diag_reciprocal(up, i, nb, False)
        for j in range(b.shape[1]):
            for l in range(nb):
                b[i, j, l] *= rcp[l]


@jit
def _upper_right_solve_inplace(up, nb, b):
    """Overwrite the first ``k`` columns of ``b`` with ``b U^-1`` (``U`` upper, k x k)."""
    k = up.shape[0]
    for j in range(k):
        rcp = _diag_reciprocal(up, j, nb, False)
        for i in range(b.shape[0]):
            for r in range(j):
                for l in range(nb):
                    b[i, j, l] -= b[i, r, l] * up[r, j, l]
            for l in range(nb):
                b[i, j, l] *= rcp[l]


@jit
def _upper_right_adj_solve_inplace(up, nb, b):
    """Overwrite the first ``k`` columns of ``b`` with ``b U^-H`` (``U`` upper, k x k)."""
    k = up.shape[0]
    for j in range(k - 1, -1, -1):
        rcp = _diag_reciprocal(up, j, nb, True)
        for i in range(b.shape[0]):
            for r in range(j + 1, k):
                for l in range(nb):
                    b[i, j, l] -= b[i, r, l] * up[j, r, l].conjugate()
            for l in range(nb):
                b[i, j, l] *= rcp[l]


@jit
def _lower_unit_right_solve_inplace(low, nb, b):
    """Overwrite the first ``k`` columns of ``b`` with ``b L^-1`` (``L`` unit lower, k x k)."""
    k = low.shape[1]
    for i in range(b.shape[0]):
        for j in range(k - 1, -1, -1):
            for r in range(j + 1, k):
                for l in range(nb):
                    b[i, j, l] -= b[i, r, l] * low[r, j, l]


# --- products ------------------------------------------------------------------------------


@jit
def _mul_nn_inplace(a, b, nb, out):
    """``out <- a @ b`` lane by lane."""
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            for l in range(nb):
                out[i, j, l] = 0
            for r in range(a.shape[1]):
                for l in range(nb):
                    out[i, j, l] += a[i, r, l] * b[r, j, l]


@jit
def _mul_hn_inplace(a, b, nb, out):
    """``out <- a^H @ b`` lane by lane."""
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            for l in range(nb):
                out[i, j, l] = 0
            for r in range(a.shape[0]):
                for l in range(nb):
                    out[i, j, l] += a[r, i, l].conjugate() * b[r, j, l]


@jit
def _mul_nh_inplace(a, b, nb, out):
    """``out <- a @ b^H`` lane by lane."""
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            for l in range(nb):
                out[i, j, l] = 0
            for r in range(a.shape[1]):
                for l in range(nb):
                    out[i, j, l] += a[i, r, l] * b[j, r, l].conjugate()
