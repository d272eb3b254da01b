r"""Rules for norms: ``np.linalg.norm``, ``np.linalg.vector_norm`` and ``np.linalg.matrix_norm``.

Each call is a vector norm over some axes or a matrix norm over a pair of axes, and its cotangent
is :math:`\bar x = \bar y\, g` with ``g`` a (sub)gradient of the norm; ``ȳ`` is real (the norm is),
``sign(x) = x/|x|`` (0 at 0, complex too). Vector norms of ``x`` over the reduced axes:

=============  ===========================================================================
``ord``        ``g``
=============  ===========================================================================
2, ``None``    ``x / y``
1              ``sign(x)``
``±inf``       ``sign(x)`` on the entries where ``|x|`` attains the max (min), divided by their number
0              none: the count of nonzeros is locally constant, so the cotangent is ``ZeroTangent()``
other ``p``    ``sign(x) (|x| / y)^(p-1)``
=============  ===========================================================================

Matrix norms over ``(row, col)``, with the thin SVD ``x = U diag(s) V^H``:

=============  ===========================================================================
``'fro'``      ``x / y``, as the vector 2-norm over both axes
1, -1          ``sign(x)`` in the column(s) of largest (smallest) ``sum |x|``, divided by their number
``±inf``       the same with rows
``'nuc'``      ``U_r V_r^H``: the singular pairs with ``s_i > tol``
2              ``U_1 V_1^H / r``: the ``r`` singular pairs tied with the largest (``s_i >= s_1 - tol``)
-2             ``U_b V_b^H / r``: the ``r`` pairs tied with the smallest; 0 if that one is ``<= tol``
=============  ===========================================================================

``tol = rtol * s_1`` with the SVD kernels' degeneracy threshold ``rtol = 8 max(m, n) eps``
(:func:`kernels._spectral.default_rtol`): singular values closer than that are not resolved by
LAPACK anyway. The frules are :math:`\dot y = \mathrm{Re} \sum \bar g \dot x` with the same ``g``,
so frule and rrule are adjoint everywhere, kinks included.

Points where a norm is not differentiable get the subgradient of minimum norm: 0 at the zero
vector and zero matrix (every ``ord``), ``sign(0) = 0`` for ord 1 at zero entries, ties of the
max-type norms (``inf``, matrix 1 and ``inf``) split evenly (the centroid of the tied
``sign(x_i) e_i`` is the least-norm point of their hull), ``U_r V_r^H`` for the nuclear norm of
a rank-deficient matrix (the subdifferential is ``U_r V_r^H + W`` with ``W`` on the null spaces,
``||W||_2 <= 1``; the thin-SVD ``U V^H`` would add LAPACK's arbitrary choice of null vectors),
and ``U_1 V_1^H / r`` for the spectral norm at a tie (the subdifferential is ``U_1 M V_1^H`` with
``M`` positive semidefinite of unit trace; ``M = I / r`` is unique and gauge-invariant). For
the norms that are not convex (``-inf``, matrix ``-1``, ``-inf``, ``-2``, ``p < 1``) the same
recipe is a documented convention: ties split evenly, 0 where the norm sits at 0 or an entry is
0 (ChainRules' ``normp`` choice; the one-sided derivative there is infinite for ``0 < p < 1``).

Kernel path: the norms are elementwise passes or BLAS products, so there are no new kernels; the
nuclear norm of stacks of small matrices uses ``kernels.svd.svdvals_pullback_batched`` (one
compiled call for ``U diag(s_bar) V^H``). The forward pass keeps what the pullback needs (``1/y``,
where the extreme entries, rows or columns are, the SVD and its weights), so that a pullback is
one or two passes over ``x``, or a scatter. The primal is numpy's own, except for the max/min-type
norms (the same reductions, done once to find the extremes) and the SVD norms, which take ``s``
from the SVD they need anyway (``svd(compute_uv=True)``; equal to numpy's up to rounding).
Cotangents need elementwise access, so they go through ``as_array_cotangent``.

References
----------
.. [1] G. A. Watson, "Characterization of the subdifferential of some matrix norms", Linear
   Algebra Appl. 170 (1992) 33-45 (the nuclear and spectral norm subdifferentials).
.. [2] ChainRules.jl, ``src/rulesets/LinearAlgebra/norm.jl`` (vector norms, zero handling).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla
from numpy.lib.array_utils import normalize_axis_tuple

from kernels import crossovers
from kernels import svd as ksvd
from kernels._spectral import default_rtol
from rules.core.cotangents import as_array_cotangent
from rules.core.dispatch import kernel_eligible
from rules.core.nesting import as_array, call, is_traced
from rules.core.registry import frule, rrule
from rules.linalg._stacks import as_stack, check_shape, flat_batch
from tangents import NoTangent, ProjectTo, ZeroTangent, unthunk

_INF = float("inf")
_SVD_ORDS = (2, -2, "nuc")


def _is(ord: Any, value: Any) -> bool:
    """``ord == value`` without comparing strings to numbers (or arrays)."""
    return isinstance(ord, str) == isinstance(value, str) and bool(ord == value)


def _norm_plan(x: np.ndarray, ord: Any, axis: Any) -> tuple[str, Any, tuple[int, ...]]:
    """``(kind, ord, axes)`` of a ``np.linalg.norm`` call, following numpy's dispatch.

    ``kind`` is ``"vector"`` (``ord`` a number; 2 for ``None``) over ``axes``, or ``"matrix"``
    (``ord`` ``'fro'``, ``'nuc'`` or a number) over ``axes = (row, col)``.
    """
    if axis is None:
        if ord is None or (x.ndim == 2 and ord in ("f", "fro")) or (x.ndim == 1 and _is(ord, 2)):
            return "vector", 2, tuple(range(x.ndim))
        axes = tuple(range(x.ndim))
    else:
        axes = normalize_axis_tuple(axis if isinstance(axis, tuple) else int(axis), x.ndim)
    if len(axes) == 1:
        return "vector", 2 if ord is None else ord, axes
    if len(axes) != 2:
        raise ValueError(f"improper number of dimensions to norm: axes {axes}")
    return "matrix", _matrix_ord(ord), axes


def _matrix_ord(ord: Any) -> Any:
    """``ord`` of a matrix norm, ``'fro'`` for ``None``; numpy's ``ValueError`` for others."""
    if ord is None or _is(ord, "f") or _is(ord, "fro"):
        return "fro"
    if not any(_is(ord, o) for o in ("nuc", 1, -1, 2, -2, _INF, -_INF)):
        raise ValueError(f"invalid norm order {ord!r} for matrices")
    return ord


def _sign(x: np.ndarray) -> np.ndarray:
    return np.sign(x)  # x / |x| for complex x (numpy >= 2), 0 at 0


class _Norm:
    """One norm evaluation: the plan, the dense input, the value, and what its pullback needs.

    Everything that does not depend on the cotangent is computed here, in the forward pass, as
    JAX saves its residuals: ``1/y``, the positions of the extreme entries (rows, columns) of the
    max/min-type norms, the SVD and its weights. The pullback then costs one or two passes over
    ``x`` (a scatter for the max/min-type norms).
    """

    def __init__(self, name: str, x: Any, plan: Any, keepdims: bool, primal: Any) -> None:
        kind, ord, axes = plan
        X = as_array(x)
        if X.dtype.kind not in "fc":
            X = X.astype(np.float64)  # numpy's norm computes integers in float64
        self.X, self.ord, self.axes = X, ord, axes
        self.kshape = tuple(1 if i in axes else n for i, n in enumerate(X.shape))
        self.case = _case(kind, ord)
        y = getattr(self, f"_prepare_{self.case}")(name, primal, keepdims)
        self.y = y[()] if isinstance(y, np.ndarray) and y.ndim == 0 else y  # numpy's scalar
        self._cotangent = getattr(self, f"_cotangent_{self.case}")

    def _reduced_shape(self) -> tuple[int, ...]:
        return tuple(n for i, n in enumerate(self.X.shape) if i not in self.axes)

    # --- forward passes: the value and the residuals -------------------------------------------

    def _prepare_two(self, name: str, primal: Any, keepdims: bool) -> Any:
        y = primal()
        if y.size == 1 and not is_traced(y):
            value = y.item()
            self.inv_y = 0.0 if value in (0.0, _INF) else 1 / value  # 0 at y = 0 and y = inf
            self.finite = self.inv_y != 0
            return y
        y_k = np.reshape(y, self.kshape)
        with np.errstate(divide="ignore"):
            self.inv_y = np.where((y_k == 0) | (y_k == _INF), 0, 1 / y_k)
        self.finite = bool(np.all(self.inv_y != 0))
        return y

    def _prepare_one(self, name: str, primal: Any, keepdims: bool) -> Any:
        return primal()

    _prepare_zero = _prepare_one

    def _prepare_p(self, name: str, primal: Any, keepdims: bool) -> Any:
        with np.errstate(all="ignore"):  # numpy's own 0 ** (negative p) warns
            y = primal()
        y_k = np.reshape(y, self.kshape)
        zero_norm = y_k == 0
        self.zero_norm = zero_norm if zero_norm.any() else None
        self.y_k = float(y_k.reshape(())) if y_k.size == 1 else y_k
        return y

    def _prepare_extreme(self, name: str, primal: Any, keepdims: bool) -> Any:
        """Vector ``±inf``: ``max|x|`` (``min|x|``), and the flat positions where it is attained."""
        X, axes = self.X, self.axes
        absx = np.abs(X)
        extreme = (
            absx.max(axis=axes, keepdims=True)
            if self.ord > 0
            else absx.min(axis=axes, keepdims=True)
        )
        mask = absx == extreme
        if np.isnan(extreme).any():  # NaN in: every entry of that reduction, NaN out
            mask |= np.isnan(extreme)
        self.where = np.flatnonzero(mask)  # flat indices: cheaper than np.nonzero's tuples
        if extreme.size == 1:
            self.reduced = None
            self.count = float(len(self.where))
        else:  # the position in y of each index, and the number of ties there
            position = list(np.unravel_index(self.where, X.shape))
            for a in axes:
                position[a] = 0
            self.reduced = np.ravel_multi_index(tuple(position), self.kshape)
            self.count = np.bincount(self.reduced, minlength=extreme.size)[self.reduced]
        return extreme if keepdims else extreme.reshape(self._reduced_shape())

    def _prepare_sums(self, name: str, primal: Any, keepdims: bool) -> Any:
        """Matrix ``±1`` (columns) and ``±inf`` (rows): extreme ``sum |x|``, and which lines attain it."""
        X, ord = self.X, self.ord
        row, col = self.axes
        self.summed, pick = (row, col) if _is(ord, 1) or _is(ord, -1) else (col, row)
        sums = np.abs(X).sum(axis=self.summed, keepdims=True)
        extreme = (
            sums.max(axis=pick, keepdims=True) if ord > 0 else sums.min(axis=pick, keepdims=True)
        )
        mask = (sums == extreme) | np.isnan(extreme)
        self.count = np.count_nonzero(mask, axis=pick, keepdims=True)
        self.lines = np.moveaxis(mask, self.summed, -1)[..., 0]  # the lines, along pick
        self.where = np.nonzero(self.lines)
        return extreme if keepdims else extreme.reshape(self._reduced_shape())

    def _prepare_svd(self, name: str, primal: Any, keepdims: bool) -> Any:
        """``2``, ``-2``, ``'nuc'``: the thin SVD, the weights of the singular pairs, the value."""
        try:
            U, s, Vh = np.linalg.svd(np.moveaxis(self.X, self.axes, (-2, -1)), full_matrices=False)
        except np.linalg.LinAlgError as error:
            raise np.linalg.LinAlgError(
                f"{name}: {error} (input of shape {self.X.shape})"
            ) from None
        m, n, k = U.shape[-2], Vh.shape[-1], s.shape[-1]
        tol = default_rtol(max(m, n), s.dtype) * s[..., :1]
        if _is(self.ord, "nuc"):
            y = s.sum(axis=-1)
            weights, lo, hi = (s > tol).astype(s.dtype), 0, k
        else:
            top = _is(self.ord, 2)
            y = s[..., 0] if top else s[..., -1]
            group = s >= s[..., :1] - tol if top else s <= s[..., -1:] + tol
            r = np.count_nonzero(group, axis=-1, keepdims=True)
            nonzero = s[..., :1] > 0 if top else s[..., -1:] > tol
            weights = np.where(group & nonzero, 1 / r, 0).astype(s.dtype)
            r_max = int(np.max(r, initial=0))
            lo, hi = (0, r_max) if top else (k - r_max, k)
        self.kernel = U.ndim >= 3 and kernel_eligible(U) and max(m, n) <= crossovers.SVD_LOOPS_MAX_N
        if self.kernel:  # small stacks: all pairs, one compiled call
            lo, hi = 0, k
        self.U, self.weights, self.Vh = U[..., lo:hi], weights[..., lo:hi], Vh[..., lo:hi, :]
        first = self.weights[..., :1]  # one weight for all pairs (e.g. a full-rank nuclear norm)
        self.uniform = (
            float(first.item()) if first.size == 1 and np.all(self.weights == first) else None
        )
        return np.reshape(y, self.kshape) if keepdims else y

    # --- pullback: w g ---------------------------------------------------------------------------

    def cotangent(self, w: Any) -> Any:
        """``w g`` (``g`` of the module docstring) for real weights ``w``.

        ``w`` is a float when ``y`` has one entry, else an array shaped like ``y`` with the reduced
        axes kept. The result is a new array, or ``None`` for the zero cotangent of ord 0.
        """
        return self._cotangent(w)

    def _cotangent_two(self, w: Any) -> Any:
        if self.finite:  # no 0 * inf possible: no floating-point state to save and restore
            return self.X * (w * self.inv_y)
        with np.errstate(invalid="ignore"):  # inf * 0 at an infinite entry: nan, as in 0 * inf
            return self.X * (w * self.inv_y)

    def _cotangent_one(self, w: Any) -> Any:
        g = _sign(self.X)
        g *= w  # w broadcasts to x's shape: in place, in x's (inexact) dtype
        return g

    def _cotangent_zero(self, w: Any) -> None:
        return None

    def _cotangent_p(self, w: Any) -> Any:
        X, p, y = self.X, self.ord, self.y_k
        with np.errstate(all="ignore"):
            t = np.abs(X)
            zero_entries = t == 0 if p < 1 else None
            t /= y
            t **= p - 1
            t *= w
            g = _sign(X)
            g *= t
        if zero_entries is not None:  # 0 * inf at zero entries: the convention 0
            g[zero_entries] = 0
        if self.zero_norm is not None:  # 0/0 where every entry is 0: the subgradient 0
            g[np.broadcast_to(self.zero_norm, g.shape)] = 0
        return g

    def _cotangent_extreme(self, w: Any) -> Any:
        X, where = self.X, self.where
        g = np.zeros(X.size, dtype=np.result_type(X.dtype, w))
        scale = w if self.reduced is None else np.ravel(w)[self.reduced]
        g[where] = _sign(np.take(X, where)) * (scale / self.count)
        return g.reshape(X.shape)

    def _cotangent_sums(self, w: Any) -> Any:
        X = self.X
        g = np.zeros(X.shape, dtype=np.result_type(X.dtype, w))
        scale = np.broadcast_to(
            np.moveaxis(w / self.count, self.summed, -1)[..., 0], self.lines.shape
        )
        lines = np.moveaxis(X, self.summed, -1)[self.where]  # (t, length of a line)
        np.moveaxis(g, self.summed, -1)[self.where] = _sign(lines) * scale[self.where][:, None]
        return g

    def _cotangent_svd(self, w: Any) -> np.ndarray:
        U, Vh = self.U, self.Vh
        if self.uniform is not None and type(w) is float and not self.kernel:
            scale: Any = w * self.uniform  # one matrix, equal weights: a scalar, cheaper than a row
        else:
            w = np.broadcast_to(w, self.kshape)
            wm = np.moveaxis(w, self.axes, (-2, -1))[..., 0].astype(self.weights.dtype, copy=False)
            weights = self.weights * wm  # (..., r)
            if self.kernel:
                G = ksvd.svdvals_pullback_batched(as_stack(U), as_stack(Vh), flat_batch(weights, 1))
                G = G.reshape(*U.shape[:-1], Vh.shape[-1])
                return np.moveaxis(G, (-2, -1), self.axes)
            scale = weights[..., None, :]
        if U.shape[-1] == 1:  # one singular pair: an outer product, no GEMM
            G = (U * scale) * Vh
        else:
            G = (U * scale) @ Vh
        return np.moveaxis(G, (-2, -1), self.axes)

    def tangent(self, X_dot: Any, keepdims: bool) -> Any:
        """``Re sum(conj(g) X_dot)`` over the reduced axes (``ZeroTangent()`` for ord 0)."""
        ones = 1.0 if np.size(self.y) == 1 else np.ones(self.kshape, dtype=np.result_type(self.y))
        g = self.cotangent(ones)
        if g is None:
            return ZeroTangent()
        return np.real(np.sum(np.conj(g) * X_dot, axis=self.axes, keepdims=keepdims))


def _case(kind: str, ord: Any) -> str:
    """Which formula of the module docstring a ``(kind, ord)`` uses."""
    if (_is(ord, 2) and kind == "vector") or _is(ord, "fro"):
        return "two"
    if kind == "vector":
        if _is(ord, 1):
            return "one"
        if _is(ord, 0):
            return "zero"
        if _is(ord, _INF) or _is(ord, -_INF):
            return "extreme"
        return "p"
    if any(_is(ord, o) for o in _SVD_ORDS):
        return "svd"
    return "sums"


def _call_primal(name: str, f: Any, x: Any, kwargs: dict[str, Any]) -> Any:
    """``f(x, **kwargs)`` with errors naming the function, the shape and the options."""
    try:
        return f(x, **kwargs)
    except np.linalg.LinAlgError as error:
        raise np.linalg.LinAlgError(
            f"{name}: {error} (input of shape {np.shape(x)}, {kwargs})"
        ) from None
    except ValueError as error:
        raise ValueError(f"{name}: {error} (input of shape {np.shape(x)}, {kwargs})") from None


def _plan_or_raise(name: str, x: Any, ord: Any, axis: Any) -> Any:
    try:
        return _norm_plan(as_array(x), ord, axis)
    except (ValueError, TypeError) as error:
        raise type(error)(
            f"{name}: {error} (input of shape {np.shape(x)}, axis={axis!r})"
        ) from None


def _norm_rrule(name: str, f: Any, x: Any, plan: Any, keepdims: bool, kwargs: Any) -> Any:
    norm = _Norm(name, x, plan, keepdims, lambda: _call_primal(name, f, x, kwargs))
    y = norm.y
    project_x = ProjectTo(x)
    y_shape = np.shape(y)
    one_entry, kshape = y.size == 1, norm.kshape

    def norm_pullback(y_bar: Any) -> tuple[Any, Any]:
        if one_entry and type(y_bar) is float:  # the hot path: a float keeps x's dtype
            w = y_bar
        else:
            y_bar = as_array_cotangent(unthunk(y_bar), f"{name}'s pullback")
            check_shape(f"{name} pullback", "the cotangent", y_bar, y_shape)
            y_bar = np.real(y_bar)
            if one_entry and not is_traced(y_bar):
                w = float(np.reshape(y_bar, ()))
            else:
                w = np.reshape(y_bar, kshape)
        x_bar = norm.cotangent(w)
        return NoTangent(), ZeroTangent() if x_bar is None else project_x(x_bar)

    return y, norm_pullback


def _norm_frule(
    name: str, f: Any, tangent: Any, x: Any, plan: Any, keepdims: bool, kwargs: Any
) -> Any:
    norm = _Norm(name, x, plan, keepdims, lambda: _call_primal(name, f, x, kwargs))
    X_dot = as_array_cotangent(unthunk(tangent), f"{name}'s frule")
    return norm.y, ProjectTo(norm.y)(norm.tangent(X_dot, keepdims))


# --- np.linalg.norm ------------------------------------------------------------------------------


@rrule.register(np.linalg.norm)
def norm_rrule(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Reverse rule for ``np.linalg.norm(x, ord, axis, keepdims)``; see the module docstring."""
    plan = _plan_or_raise("np.linalg.norm", x, ord, axis)
    kwargs = {"ord": ord, "axis": axis, "keepdims": keepdims}
    return _norm_rrule("np.linalg.norm", np.linalg.norm, x, plan, keepdims, kwargs)


@frule.register(np.linalg.norm)
def norm_frule(
    tangents: tuple[Any, ...], x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False
) -> Any:
    r"""Forward rule for ``np.linalg.norm``: :math:`\dot y = \mathrm{Re} \sum \bar g \dot x`."""
    plan = _plan_or_raise("np.linalg.norm", x, ord, axis)
    kwargs = {"ord": ord, "axis": axis, "keepdims": keepdims}
    return _norm_frule("np.linalg.norm", np.linalg.norm, tangents[1], x, plan, keepdims, kwargs)


def _scipy_norm(a: Any, **kwargs: Any) -> Any:
    """``scipy.linalg.norm`` as a numpy scalar or array (it may return a Python float)."""
    return as_array(call(sla.norm, a, **kwargs))[()]


@rrule.register(sla.norm)
def scipy_norm_rrule(
    a: Any, ord: Any = None, axis: Any = None, keepdims: bool = False, check_finite: bool = True
) -> Any:
    """Reverse rule for ``scipy.linalg.norm``: the same plans as ``np.linalg.norm``."""
    plan = _plan_or_raise("scipy.linalg.norm", a, ord, axis)
    kwargs = {"ord": ord, "axis": axis, "keepdims": keepdims, "check_finite": check_finite}
    y = call(sla.norm, a, **kwargs)  # a Python float for some vectors (BLAS nrm2)
    return y, _norm_rrule("scipy.linalg.norm", _scipy_norm, a, plan, keepdims, kwargs)[1]


@frule.register(sla.norm)
def scipy_norm_frule(
    tangents: tuple[Any, ...],
    a: Any,
    ord: Any = None,
    axis: Any = None,
    keepdims: bool = False,
    check_finite: bool = True,
) -> Any:
    """Forward rule for ``scipy.linalg.norm``: the same plans as ``np.linalg.norm``."""
    plan = _plan_or_raise("scipy.linalg.norm", a, ord, axis)
    kwargs = {"ord": ord, "axis": axis, "keepdims": keepdims, "check_finite": check_finite}
    y = call(sla.norm, a, **kwargs)
    _, y_dot = _norm_frule("scipy.linalg.norm", _scipy_norm, tangents[1], a, plan, keepdims, kwargs)
    return y, ProjectTo(y)(y_dot)


# --- np.linalg.vector_norm -----------------------------------------------------------------------


def _vector_plan(name: str, x: Any, ord: Any, axis: Any) -> Any:
    try:  # numpy itself refuses string orders for vectors
        ndim = np.ndim(x)
        if axis is None:
            axes = tuple(range(ndim))
        else:
            axes = normalize_axis_tuple(axis if isinstance(axis, tuple) else int(axis), ndim)
    except (ValueError, TypeError) as error:
        raise type(error)(
            f"{name}: {error} (input of shape {np.shape(x)}, axis={axis!r})"
        ) from None
    return "vector", 2 if ord is None else ord, axes


@rrule.register(np.linalg.vector_norm)
def vector_norm_rrule(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    """Reverse rule for ``np.linalg.vector_norm``: the vector norm over ``axis`` (all, one or several)."""
    plan = _vector_plan("np.linalg.vector_norm", x, ord, axis)
    kwargs = {"ord": ord, "axis": axis, "keepdims": keepdims}
    return _norm_rrule("np.linalg.vector_norm", np.linalg.vector_norm, x, plan, keepdims, kwargs)


@frule.register(np.linalg.vector_norm)
def vector_norm_frule(
    tangents: tuple[Any, ...], x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2
) -> Any:
    """Forward rule for ``np.linalg.vector_norm``."""
    name = "np.linalg.vector_norm"
    plan = _vector_plan(name, x, ord, axis)
    kwargs = {"ord": ord, "axis": axis, "keepdims": keepdims}
    return _norm_frule(name, np.linalg.vector_norm, tangents[1], x, plan, keepdims, kwargs)


# --- np.linalg.matrix_norm -----------------------------------------------------------------------


def _matrix_plan(name: str, x: Any, ord: Any) -> Any:
    ndim = np.ndim(x)
    if ndim < 2:
        raise ValueError(f"{name}: needs at least 2 dimensions, got shape {np.shape(x)}")
    try:
        return "matrix", _matrix_ord(ord), (ndim - 2, ndim - 1)
    except ValueError as error:
        raise ValueError(f"{name}: {error} (input of shape {np.shape(x)})") from None


@rrule.register(np.linalg.matrix_norm)
def matrix_norm_rrule(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    """Reverse rule for ``np.linalg.matrix_norm``: the matrix norm over the last two axes."""
    plan = _matrix_plan("np.linalg.matrix_norm", x, ord)
    kwargs = {"ord": ord, "keepdims": keepdims}
    return _norm_rrule("np.linalg.matrix_norm", np.linalg.matrix_norm, x, plan, keepdims, kwargs)


@frule.register(np.linalg.matrix_norm)
def matrix_norm_frule(
    tangents: tuple[Any, ...], x: Any, /, *, keepdims: bool = False, ord: Any = "fro"
) -> Any:
    """Forward rule for ``np.linalg.matrix_norm``."""
    name = "np.linalg.matrix_norm"
    plan = _matrix_plan(name, x, ord)
    kwargs = {"ord": ord, "keepdims": keepdims}
    return _norm_frule(name, np.linalg.matrix_norm, tangents[1], x, plan, keepdims, kwargs)
