"""Linear systems ``A X = B`` for the solve, inverse, triangular and determinant rules.

Shared plumbing:

* :func:`linalg_dtypes` (numpy.linalg's result dtype and the kernel dtype to compute in),
  :func:`check_scipy_options` (scipy's ``overwrite_*`` and ``check_finite``), and the errors
  naming the function and the shape;
* the ``assume_a`` structures of ``scipy.linalg.solve``/``inv``: :func:`read_matrix` (the
  matrix a solver actually uses) and :func:`fold_cotangent` (its adjoint, with the
  symmetric-cotangent convention for the symmetric ones);
* :class:`Layout` maps the operands of ``solve(a, b)`` to the stacks that kernels take and
  cotangents back. Semantics of numpy 2 and scipy: a ``b`` of shape ``(n,)`` is one vector,
  ``(..., n, k)`` a stack of matrices, and batch axes broadcast. When ``a`` is one matrix, every
  right-hand side of a stacked ``b`` becomes a column of a single system ``(1, n, K)``: ``a`` is
  factored once, and ``a_bar = -B_bar X^H`` sums over the batch inside one product.
* :func:`factor` factors a stack ``(s, n, n)`` once in the forward pass and returns an object
  whose ``solve(B, trans)`` gives ``op(A)^-1 B`` (``trans`` 0, 1, 2 for ``A``, ``A^T``,
  ``A^H``), so that a pullback solves with the forward's factors instead of factoring again.
  The kind of factorization is chosen by :func:`rules.core.dispatch.paths` (one table per
  kind, ``_FACTOR``) on the crossovers ``kernels.crossovers.SOLVE_STACK_MAX_N`` and
  ``SOLVE_GUFUNC_STACK_MAX_N``. Small stacks use the batched LU kernel (:class:`BatchedLU`; its ``lu`` and ``piv`` also feed
  the fused solve and slogdet pullback kernels), or ``numpy.linalg.cholesky`` plus the batched
  triangular solves for positive definite stacks; mid-size stacks (LU kind) go to numpy's batched
  ``np.linalg.solve`` (:class:`GufuncLU`, which keeps no factors); large matrices call LAPACK per
  matrix through scipy's wrappers: ``getrf``/``getrs``, ``potrf``/``potrs``, ``sytrf``/``hetrf``
  (the routines behind ``scipy.linalg.solve``'s ``assume_a``).

A singular matrix (an exact zero pivot, LAPACK's ``info > 0``) raises ``LinAlgError`` naming
the function and the shape, as ``numpy.linalg.solve`` raises "Singular matrix"; a matrix that
is not positive definite raises for the Cholesky kind. NaN is not a zero pivot: it passes
through to NaN results, as in numpy.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from scipy.linalg import lapack

from kernels import crossovers
from kernels import lu as klu
from kernels._blas import lu_solve_rows
from kernels.triangular import solve_triangular_batched
from rules.core.broadcasting import unbroadcast
from rules.core.cotangents import as_array_cotangent, conj
from rules.core.dispatch import kernel_array, paths
from rules.core.nesting import as_array
from rules.linalg._stacks import adjoint

__all__ = [
    "KINDS",
    "STRUCTURES",
    "BatchedLU",
    "GufuncLU",
    "LapackLU",
    "Layout",
    "cast",
    "check_scipy_options",
    "factor",
    "fold_cotangent",
    "kernel_array",
    "lapack_functions",
    "linalg_dtypes",
    "potrf_factor",
    "read_matrix",
    "singular_error",
]

_WORK = {
    np.dtype(np.float32): np.dtype(np.float32),
    np.dtype(np.float64): np.dtype(np.float64),
    np.dtype(np.complex64): np.dtype(np.complex128),
    np.dtype(np.complex128): np.dtype(np.complex128),
}


def linalg_dtypes(name: str, *dtypes: Any) -> tuple[np.dtype[Any], np.dtype[Any]]:
    """``(work, result)``: the kernel dtype to compute in and the dtype numpy.linalg returns.

    numpy.linalg's rule: integers and bools compute as float64; float32 (complex64) only when
    every operand is single precision; complex when one operand is. complex64 is computed in
    complex128 (no kernels for it) and the result cast back. float16 and longdouble raise
    ``TypeError`` as in numpy; for scipy's functions (``name`` starting with ``scipy.``) float16
    counts as float32, as scipy.linalg computes it.
    """
    key = (name.startswith("scipy."), dtypes)
    try:
        return _DTYPES[key]
    except KeyError:
        pass
    result = _linalg_dtypes(name, dtypes)
    _DTYPES[key] = result
    return result


_DTYPES: dict[tuple[bool, tuple[Any, ...]], tuple[np.dtype[Any], np.dtype[Any]]] = {}


def _linalg_dtypes(name: str, dtypes: tuple[Any, ...]) -> tuple[np.dtype[Any], np.dtype[Any]]:
    single, complex_ = True, False
    for d in dtypes:
        d = np.dtype(d)
        if d == np.float16 and name.startswith("scipy."):
            d = np.dtype(np.float32)  # scipy.linalg computes float16 as float32
        if d.kind in "biu":
            single = False
        elif d.kind in "fc":
            if d.itemsize not in ((4, 8) if d.kind == "f" else (8, 16)):
                raise TypeError(f"{name}: array type {d} is unsupported in linalg")
            single = single and d.itemsize == (4 if d.kind == "f" else 8)
            complex_ = complex_ or d.kind == "c"
        else:
            raise TypeError(f"{name}: array type {d} is unsupported in linalg")
    result = np.dtype(
        (np.complex64 if single else np.complex128)
        if complex_
        else (np.float32 if single else np.float64)
    )
    return _WORK[result], result


def cast(x: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """``x`` as ``dtype``, without a copy when it already is.

    A complex ``x`` keeps its real part for a real ``dtype``: the part that the tangent space
    of a real primal sees.
    """
    if x.dtype == dtype:
        return x
    if x.dtype.kind == "c" and dtype.kind != "c":
        x = x.real
    return x.astype(dtype)


def singular_error(name: str, shape: tuple[int, ...], what: str = "singular") -> Exception:
    return np.linalg.LinAlgError(f"{name}: {what} matrix (input of shape {tuple(shape)})")


_SCIPY_OPTIONS = frozenset({"overwrite_a", "overwrite_b", "check_finite"})


def check_scipy_options(name: str, arrays: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Check scipy's ``overwrite_a``/``overwrite_b``/``check_finite`` options of a rule.

    Refuses ``overwrite_*=True`` (a rule never modifies its inputs) and any other keyword (a
    ``TypeError`` as Python raises for an unexpected keyword argument, for rules that take
    ``**kwargs``); honours ``check_finite`` on ``arrays``.
    """
    unknown = set(kwargs) - _SCIPY_OPTIONS
    if unknown:
        raise TypeError(f"{name} got unexpected keyword argument(s) {sorted(unknown)}")
    if any(kwargs.get(k) for k in ("overwrite_a", "overwrite_b")):
        raise ValueError(
            f"{name}: overwrite_a/overwrite_b=True is not differentiable (it mutates the input)"
        )
    if kwargs.get("check_finite", True):
        for x in arrays:
            x = x if type(x) is np.ndarray else as_array(x)
            if x.dtype.kind in "fc" and not _all_finite(x):
                raise ValueError(f"{name}: array must not contain infs or NaNs (check_finite=True)")


def _all_finite(x: np.ndarray) -> bool:
    """Whether every entry of the float or complex array ``x`` is finite.

    A small real ``x`` first by a sum of Python floats: it is finite only when every entry is
    (an inf or NaN entry makes it inf or NaN), a fifth of ``isfinite(x).all()``'s cost at 4x4,
    and Python floats overflow without numpy's warnings; a sum that overflows falls back to the
    exact test.
    """
    small = type(x) is np.ndarray and x.dtype.kind == "f" and x.size <= _SUM_FINITE_MAX_SIZE
    if small and math.isfinite(sum(x.ravel().tolist())):
        return True
    return bool(np.isfinite(x).all())


_SUM_FINITE_MAX_SIZE = 48
"""Up to this size :func:`_all_finite` tries the sum first (beyond, ``tolist`` costs more: bench of 4x4 and 16x16)."""


# --- layout ------------------------------------------------------------------------------------


class Layout:
    """How ``solve(a, b)`` with shapes ``a_shape``, ``b_shape`` maps to kernel stacks.

    ``matrices(A)`` gives the ``(s, n, n)`` stack, ``rhs(b)`` the ``(s, n, k)`` right-hand
    sides (also for tangents of ``b`` and cotangents of ``x``), ``solution(X)`` the output ``x``;
    ``a_cotangent`` and ``b_cotangent`` sum kernel cotangents back to the inputs' shapes.
    """

    __slots__ = ("a_shape", "b_shape", "batch", "folded", "n", "vector", "x_shape")

    def __init__(
        self, name: str, a_shape: tuple[int, ...], b_shape: tuple[int, ...], a_name: str = "a"
    ) -> None:
        n = a_shape[-1]
        self.n, self.a_shape, self.b_shape = n, a_shape, b_shape
        self.vector = len(b_shape) == 1
        rows = b_shape[0] if self.vector else (b_shape[-2] if len(b_shape) >= 2 else None)
        if rows != n:
            raise ValueError(
                f"{name}: {a_name} of shape {a_shape} and b of shape {b_shape} do not match "
                "(b must be (n,) or (..., n, k))"
            )
        b_batch = () if self.vector else b_shape[:-2]
        self.folded = len(a_shape) == 2
        if self.folded or a_shape[:-2] == b_batch:
            self.batch = b_batch
        else:
            try:
                self.batch = np.broadcast_shapes(a_shape[:-2], b_batch)
            except ValueError:
                raise ValueError(
                    f"{name}: the batch axes of {a_name} {a_shape} and b {b_shape} do not broadcast"
                ) from None
        core = (n,) if self.vector else (n, b_shape[-1])
        self.x_shape = self.batch + core

    def matrices(self, A: np.ndarray) -> np.ndarray:
        """``A`` as a C-contiguous stack ``(s, n, n)``, broadcast to the batch when stacked."""
        if self.folded:
            return kernel_array(A).reshape(1, self.n, self.n)
        return _stack(A, self.batch, (self.n, self.n))

    def rhs(self, b: np.ndarray) -> np.ndarray:
        """``b`` (or a tangent of ``b``, a cotangent of ``x``) as a C-contiguous ``(s, n, k)``."""
        if self.vector and b.ndim == 1:
            b = b[:, None]
        elif self.vector:  # a cotangent of x, shape batch + (n,)
            b = b[..., None]
        if self.folded:
            if b.ndim > 2:  # the batch becomes columns: (..., n, k) -> (n, ... * k)
                b = np.moveaxis(b, -2, 0).reshape(self.n, -1)
            return kernel_array(b)[None]
        return _stack(b, self.batch, b.shape[-2:])

    def solution(self, X: np.ndarray) -> np.ndarray:
        """The kernel result ``(s, n, k)`` in the shape of ``x``."""
        if self.folded:
            X = X[0]
            if len(self.x_shape) > 2 and not self.vector:
                X = np.moveaxis(X.reshape(self.n, *self.batch, self.x_shape[-1]), 0, -2)
        return X.reshape(self.x_shape)

    def b_cotangent(self, B_bar: np.ndarray) -> np.ndarray:
        """The cotangent ``(s, n, k)`` of the right-hand sides, summed back to ``b``'s shape."""
        if self.folded:
            return self.solution(B_bar)  # b has the batch of x when a is one matrix
        matrix_shape = (self.n, 1) if self.vector else self.b_shape
        b_bar = unbroadcast(B_bar.reshape(self.batch + B_bar.shape[-2:]), matrix_shape)
        return b_bar[:, 0] if self.vector else b_bar

    def a_cotangent(self, A_bar: np.ndarray) -> np.ndarray:
        """The cotangent ``(s, n, n)`` of the matrices, summed back to ``a``'s shape."""
        if self.folded:
            return A_bar[0]
        return unbroadcast(A_bar.reshape((*self.batch, self.n, self.n)), self.a_shape)


def _stack(x: np.ndarray, batch: tuple[int, ...], core: tuple[int, ...]) -> np.ndarray:
    """``x`` broadcast to ``batch + core`` as a C-contiguous, writable ``(s, *core)`` stack.

    A broadcast that only adds size-1 axes is a reshape, not a (read-only) broadcast view.
    """
    target = batch + core
    if x.shape != target:
        x = x.reshape(target) if x.size == math.prod(target) else np.broadcast_to(x, target)
    return kernel_array(x).reshape(math.prod(batch), *core)


# --- structures: what scipy's assume_a reads, and the adjoint of that -------------------------

# assume_a -> how a is read; the factorization kind of the symmetric ones
STRUCTURES = {
    None: "general",
    "gen": "general",
    "general": "general",
    "banded": "general",
    "sym": "sym",
    "symmetric": "sym",
    "her": "her",
    "hermitian": "her",
    "pos": "pos",
    "positive definite": "pos",
    "diagonal": "diagonal",
    "tridiagonal": "tridiagonal",
    "upper triangular": "upper",
    "lower triangular": "lower",
}
KINDS = {"sym": "sym", "her": "her", "pos": "pos"}


def _mask(X: np.ndarray, structure: str) -> np.ndarray:
    """The entries of ``X`` a diagonal, tridiagonal or triangular solver reads (a new array)."""
    if structure == "upper":
        return np.triu(X)
    if structure == "lower":
        return np.tril(X)
    k = 0 if structure == "diagonal" else 1
    return np.triu(np.tril(X, k), -k)


def read_matrix(A: np.ndarray, structure: str, lower: bool) -> np.ndarray:
    """The matrix a solver with this structure actually uses, given the stored ``A``."""
    if structure == "general":
        return A
    if structure in ("sym", "her", "pos"):
        T = np.tril(A) if lower else np.triu(A)
        strict = np.tril(T, -1) if lower else np.triu(T, 1)
        S = T + (strict.mT if structure == "sym" else strict.conj().mT)
        if structure != "sym" and np.iscomplexobj(S):
            n = S.shape[-1]
            S[..., range(n), range(n)] = S[..., range(n), range(n)].real
        return S
    return _mask(A, structure)


def fold_cotangent(G: Any, structure: str, operation: str) -> Any:
    """The cotangent of the stored ``a`` from the cotangent ``G`` of the matrix read from it.

    Symmetric structures follow the symmetric-input convention (``sym(G)``); masked ones keep
    the read entries. Also maps forward tangents of ``a`` to tangents of the read matrix.
    """
    if structure == "general":
        return G
    if structure == "sym":
        return (G + G.mT) * 0.5
    if structure in ("her", "pos"):
        return (G + adjoint(G)) * 0.5
    return _mask(as_array(as_array_cotangent(G, operation)), structure)


# --- factorizations ----------------------------------------------------------------------------


class BatchedLU:
    """``A = P L U`` of a small stack in ``kernels.lu.lu_factor_batched`` format."""

    __slots__ = ("lu", "piv")

    def __init__(self, A: np.ndarray) -> None:
        self.lu, self.piv = klu.lu_factor_batched(A)

    def singular(self) -> bool:
        return bool(np.any(np.diagonal(self.lu, axis1=1, axis2=2) == 0))

    def solve(self, B: np.ndarray, trans: int) -> np.ndarray:
        return klu.lu_solve_batched(self.lu, self.piv, B, trans)


@functools.cache
def lapack_functions(names: tuple[str, ...], dtype: np.dtype[Any]) -> tuple[Any, ...]:
    """The LAPACK wrappers of scipy for ``dtype``, looked up once per dtype."""
    return tuple(lapack.get_lapack_funcs(names, dtype=dtype))


class LapackLU:
    """``A = P L U`` per matrix by LAPACK ``getrf`` (scipy.linalg.lu_factor format).

    Also the path for one small matrix: a scipy wrapper's call costs less than a kernel
    dispatch there (bench case ``solve.pullback`` at n = 4).
    """

    __slots__ = ("factors", "getrs", "info")

    def __init__(self, A: np.ndarray) -> None:
        getrf, self.getrs = lapack_functions(("getrf", "getrs"), A.dtype)
        results = [getrf(a) for a in A]
        self.factors = [(lu, piv) for lu, piv, _ in results]
        self.info = max(info for _, _, info in results) if results else 0

    def singular(self) -> bool:
        return self.info > 0

    def solve(self, B: np.ndarray, trans: int) -> np.ndarray:
        """``op(A)^-1 B``; for one matrix a ``(1, n, k)`` view of :func:`lu_solve`'s result."""
        if len(self.factors) == 1:
            lu, piv = self.factors[0]
            return lu_solve(self.getrs, lu, piv, B[0], trans)[None]
        X = np.empty_like(B)
        for t, (lu, piv) in enumerate(self.factors):
            X[t] = lu_solve(self.getrs, lu, piv, B[t], trans)
        return X


def lu_solve(getrs: Any, lu: np.ndarray, piv: np.ndarray, B: np.ndarray, trans: int = 0) -> Any:
    """``op(A)^-1 B`` from ``getrf``'s factors: LAPACK ``getrs``, or by rows for larger ``B``.

    A matrix ``B`` of C order with both sides above ``kernels.crossovers.SOLVE_GETRS_MAX_N`` (by
    dtype kind) takes ``kernels._blas.lu_solve_rows``: the transposed problem on Fortran views,
    which skips ``getrs``'s transposing copies in and out and returns C order, as numpy's
    ``solve`` does. Vectors, small matrices and other layouts take ``getrs`` (Fortran result).
    ``B`` is never modified.
    """
    if takes_rows(B):
        return lu_solve_rows(lu, piv, B, trans)
    return getrs(lu, piv, B, trans=trans)[0]


def takes_rows(B: np.ndarray) -> bool:
    """Whether :func:`lu_solve` solves ``B`` by rows (C order, sides above the crossover)."""
    if B.ndim != 2 or not B.flags.c_contiguous:
        return False
    limit = crossovers.SOLVE_GETRS_MAX_N.get(B.dtype.kind)
    return limit is not None and min(B.shape) > limit


class GufuncLU:
    """A mid-size stack solved by numpy's batched ``np.linalg.solve``, which keeps no factors.

    ``np.linalg.solve`` loops over the stack in C (LAPACK ``gesv`` per matrix), where a Python loop
    over scipy's ``getrf``/``getrs`` wrappers pays a few microseconds per matrix and call: more
    than factoring a 17 x 17 matrix. numpy returns no LU, so every solve factors again (the
    pullback's ``A^{-H}``, too); up to ``kernels.crossovers.SOLVE_GUFUNC_STACK_MAX_N`` that is still faster. A singular
    matrix is found by the solve, which raises ``LinAlgError`` naming the function and the shape.
    """

    __slots__ = ("A", "name", "shape")

    def __init__(self, A: np.ndarray, name: str = "np.linalg.solve", shape: Any = None) -> None:
        self.A, self.name, self.shape = A, name, A.shape if shape is None else shape

    def singular(self) -> bool:
        return False  # not known before a solve; solve() raises instead

    def solve(self, B: np.ndarray, trans: int) -> np.ndarray:
        M = self.A if trans == 0 else (self.A.mT if trans == 1 else adjoint(self.A))
        try:
            return np.linalg.solve(M, B)
        except np.linalg.LinAlgError:
            raise singular_error(self.name, self.shape) from None


class BatchedCholesky:
    """``A = L L^H`` of a small Hermitian positive definite stack; solves by the batched kernel."""

    __slots__ = ("L", "failed")

    def __init__(self, A: np.ndarray) -> None:
        try:
            self.L, self.failed = np.linalg.cholesky(A), False
        except np.linalg.LinAlgError:
            self.L, self.failed = A, True

    def singular(self) -> bool:
        return self.failed

    def solve(self, B: np.ndarray, trans: int) -> np.ndarray:
        if trans == 1:  # A^T = conj(A)
            return conj(self.solve(conj(B), 0))
        Y = solve_triangular_batched(self.L, B, True, 0, False)  # L^-1 B
        return solve_triangular_batched(self.L, Y, True, 2, False)  # L^-H L^-1 B


_POTRF = {
    np.dtype(np.float64): lapack.dpotrf,
    np.dtype(np.float32): lapack.spotrf,
    np.dtype(np.complex128): lapack.zpotrf,
}


def potrf_factor(A: np.ndarray, lower: bool) -> np.ndarray | None:
    """The lower (or upper) Cholesky factor of one C-ordered matrix by LAPACK ``potrf``, or ``None``.

    The kernel path of a Cholesky forward pass: ``A`` must pass
    :func:`rules.core.dispatch.kernel_eligible`. ``None`` when ``potrf`` fails (``info > 0``), so
    that the caller's array-formula path words the error. LAPACK sees the C-order ``A`` as the
    Fortran-order ``M = A^T``, whose upper triangle is ``A``'s lower one. Factoring ``M``'s upper
    triangle, ``M = U^H U``, gives ``A = L L^H`` with ``L = U^T`` (for complex too: that ``M`` is
    ``conj(A)``). So ``A``'s lower factor is the transpose of LAPACK's upper one, a C-order view;
    the upper factor likewise. ``A`` is copied, not overwritten.
    """
    c, info = _POTRF[A.dtype](A.T, lower=not lower, clean=1)
    return c.T if info == 0 else None


class LapackCholesky:
    """``A = L L^H`` per matrix by LAPACK ``potrf`` (``A`` is full; its lower triangle is read)."""

    __slots__ = ("factors", "info", "potrs")

    def __init__(self, A: np.ndarray) -> None:
        potrf, self.potrs = lapack_functions(("potrf", "potrs"), A.dtype)
        results = [potrf(a, lower=True) for a in A]
        self.factors = [c for c, _ in results]
        self.info = max(info for _, info in results)

    def singular(self) -> bool:
        return self.info > 0

    def solve(self, B: np.ndarray, trans: int) -> np.ndarray:
        if trans == 1:
            return conj(self.solve(conj(B), 0))
        X = np.empty_like(B)
        for t, c in enumerate(self.factors):
            X[t] = self.potrs(c, B[t], lower=True)[0]
        return X


class LapackLDL:
    """``A = P L D L^T P^T`` (or ``L D L^H``) per matrix by LAPACK ``sytrf``/``hetrf``."""

    __slots__ = ("factors", "hermitian", "info", "trs")

    def __init__(self, A: np.ndarray, hermitian: bool) -> None:
        self.hermitian = hermitian or not np.iscomplexobj(A)
        names = ("hetrf", "hetrs") if np.iscomplexobj(A) and hermitian else ("sytrf", "sytrs")
        trf, self.trs = lapack_functions(names, A.dtype)
        results = [trf(a, lower=True) for a in A]
        self.factors = [(ldu, ipiv) for ldu, ipiv, _ in results]
        self.info = max(info for _, _, info in results)

    def singular(self) -> bool:
        return self.info > 0

    def solve(self, B: np.ndarray, trans: int) -> np.ndarray:
        # Hermitian: A^H = A and A^T = conj(A); complex symmetric: A^T = A and A^H = conj(A).
        if (trans == 1 and self.hermitian and np.iscomplexobj(B)) or (
            trans == 2 and not self.hermitian
        ):
            return conj(self.solve(conj(B), 0))
        X = np.empty_like(B)
        for t, (ldu, ipiv) in enumerate(self.factors):
            X[t] = self.trs(ldu, ipiv, B[t], lower=True)[0]
        return X


Factorization = BatchedLU | LapackLU | GufuncLU | BatchedCholesky | LapackCholesky | LapackLDL


def _one_matrix(cls: Any, **options: Any) -> Any:
    """``cls`` made from one matrix ``(n, n)`` as a stack of one, or from a stack as it is."""

    def make(A: np.ndarray) -> Any:
        return cls(A[None] if A.ndim == 2 else A, **options)

    make.__name__ = make.__qualname__ = cls.__name__
    return make


# The factorization of each kind, chosen by paths() on the matrices: the batched kernels for
# stacks up to SOLVE_STACK_MAX_N (one matrix never: LAPACK through scipy's wrappers is faster
# there at every size), numpy's batched solve for LU-kind stacks up to SOLVE_GUFUNC_STACK_MAX_N,
# LAPACK per matrix above. No algebra or array-formula path: the matrices are ndarrays of a
# kernel dtype (read_matrix and the rules' casts make them so).
_FACTOR = {
    "lu": paths(
        formula=_one_matrix(LapackLU),
        batched=BatchedLU,
        stacked=GufuncLU,
        large=_one_matrix(LapackLU),
        large_takes_stacks=True,
        single_max_n=None,
        stack_max_n="SOLVE_STACK_MAX_N",
        stacked_max_n="SOLVE_GUFUNC_STACK_MAX_N",
    ),
    "pos": paths(
        formula=_one_matrix(LapackCholesky),
        batched=BatchedCholesky,
        large=_one_matrix(LapackCholesky),
        large_takes_stacks=True,
        single_max_n=None,
        stack_max_n="SOLVE_STACK_MAX_N",
    ),
    **{
        kind: paths(
            formula=_one_matrix(LapackLDL, hermitian=kind == "her"),
            batched=BatchedLU,
            large=_one_matrix(LapackLDL, hermitian=kind == "her"),
            large_takes_stacks=True,
            single_max_n=None,
            stack_max_n="SOLVE_STACK_MAX_N",
        )
        for kind in ("sym", "her")
    },
}


def factor(name: str, A: np.ndarray, kind: str = "lu", shape: Any = None) -> Factorization:
    """Factor the C-contiguous stack ``A`` (s, n, n) of a kernel dtype; see the module docstring.

    ``kind`` is ``"lu"``, ``"pos"`` (Hermitian positive definite), ``"sym"`` (symmetric) or
    ``"her"`` (Hermitian); the matrices must be full (both triangles). ``shape`` is the user's
    input shape for error messages. Raises ``LinAlgError`` for a singular matrix (or one that
    is not positive definite, for ``"pos"``).
    """
    shape = A.shape if shape is None else shape
    F: Factorization = _FACTOR[kind](A[0] if len(A) == 1 else A)  # one matrix, or a stack
    if isinstance(F, GufuncLU):  # its solves find singular matrices: they name the function
        F.name, F.shape = name, shape
    if F.singular():
        what = "not positive definite" if kind == "pos" else "singular"
        raise singular_error(name, shape, what)
    return F
