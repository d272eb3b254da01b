r"""Rules for least squares and the pseudo-inverse: ``np.linalg.pinv`` and ``np.linalg.lstsq``.

pinv, ``Y = A^+`` for ``A`` of shape ``(..., m, n)``, at constant rank (Golub & Pereyra 1973,
eq. 4.12; the form ChainRules.jl and JAX use), with the complex convention
``Y_bar = dL/dRe Y + i dL/dIm Y``:

.. math::

    \dot Y &= -Y \dot A Y + Y Y^H \dot A^H (I - A Y) + (I - Y A) \dot A^H Y^H Y, \\
    \bar A &= -Y^H \bar Y Y^H + (I - A Y) \bar Y^H Y Y^H + Y^H Y \bar Y^H (I - Y A).

The forward pass computes ``Y`` from the SVD the way numpy does (same ``rcond``/``rtol``
cutoff), so it knows the rank ``r``: ``I - Y A = 0`` when ``r = n`` (full column rank) and
``I - A Y = 0`` when ``r = m`` (full row rank), and those terms are skipped. A square invertible
matrix costs two products, like ``inv``. The rank is held fixed: where a singular value crosses
the cutoff the pseudo-inverse jumps and has no derivative; the rule returns the derivative of
the pseudo-inverse of rank ``r``. ``hermitian=True`` reads the lower triangle as a Hermitian
matrix (numpy's eigh), so it follows the symmetric-cotangent convention (DESIGN.md section 3).
Only products, sums, ``.mT`` and ``.conj()``: a cotangent of any type with those flows through
unconverted, stacks included when its ``@`` broadcasts.

lstsq, ``x = A^+ b`` for one matrix ``A`` (m, n) and ``b`` of shape (m,) or (m, k), returning
``(x, residuals, rank, s)``. With the SVD ``A = U S V^H`` truncated to the rank ``r`` that
numpy's ``rcond`` gives, the residual ``R = B - A X`` and ``B_0 = A^{+H} \bar X``:

.. math::

    \bar B &= B_0 + 2 R \,\mathrm{diag}(\overline{\mathrm{res}}), \\
    \bar A &= -B_0 X^H + R (A^+ B_0)^H + A^{+H} X (\bar X - A^+ A \bar X)^H
             - 2 R\, \mathrm{diag}(\overline{\mathrm{res}}) X^H + U \mathrm{diag}(\bar s) V^H,

which is the pinv pullback with ``Y_bar = X_bar B^H`` (ChainRules.jl's ``\`` rule), plus the
residuals (``res_j = |r_j|^2``, and ``A^H R = 0`` at the solution, so ``d res_j = 2 Re <r_j,
db_j - dA x_j>``) and the singular values (``ds_i = Re(u_i^H dA v_i)``). ``residuals`` is
differentiable when numpy returns it (``m > n`` and full rank), ``rank`` gets ``NoTangent()``.
The rank is held fixed as for pinv; at full rank that is the ordinary derivative. Below full
rank, the singular values under the cutoff stay zero (a matrix of constant rank ``r``): their
cotangent is not propagated and their tangent is zero. Singular values are an absolute value
there, with no derivative at zero; repeated positive ones are fine (``U diag(s_bar) V^H`` is
invariant under the rotations they allow). numpy computes
in double precision for float32 input, and so does the rule (results and cotangents are float32).
The residual and singular-value terms need elementwise access (weights), so those cotangents
are converted with ``as_array_cotangent``; a cotangent of a matrix ``x`` alone is only products
and sums, so a user's tangent type flows through it unconverted (``B_bar`` and ``A_bar`` come out
of its type). NaN input: the SVD does not converge and both rules raise
``LinAlgError``, as ``pinv`` does (``np.linalg.lstsq`` itself does not return on such input with
numpy 2.4 and OpenBLAS: its ``gelsd`` loops).

References
----------
.. [1] G. H. Golub, V. Pereyra, "The differentiation of pseudo-inverses and nonlinear least
   squares problems whose variables separate", SIAM J. Numer. Anal. 10 (1973), 413-432.
.. [2] M. B. Giles, "An extended collection of matrix derivative results for forward and reverse
   mode algorithmic differentiation", Oxford NA report 08/01, 2008.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from rules.core.cotangents import as_array_cotangent, is_user_tangent
from rules.core.nesting import as_array, call, is_traced
from rules.core.options import refuse
from rules.core.registry import frule, rrule, split_cotangent
from rules.linalg._stacks import adjoint, check_shape, square_matrices
from rules.linalg._systems import cast, linalg_dtypes, read_matrix
from rules.linalg.traced_spectral import inverse_where
from tangents import AbstractZero, NoTangent, ProjectTo, Tangent, ZeroTangent, unthunk

_NO_VALUE = np._NoValue  # numpy's marker for "rtol not given"


def _double(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """numpy.linalg computes in double precision and casts single-precision results back."""
    return np.dtype(np.complex128 if dtype.kind == "c" else np.float64)


def _svd_inverse(s: np.ndarray, cutoff: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(1/s where s > cutoff else 0, rank)``."""
    large = s > cutoff
    if is_traced(s):  # a nested differentiation: no 0 * inf in the derivative
        return inverse_where(s, large.astype(s.dtype)), large.sum(axis=-1)
    return np.divide(1, s, out=np.zeros_like(s), where=large), large.sum(axis=-1)


# --- pinv --------------------------------------------------------------------------------------


class _Pinv:
    """The forward pass of ``pinv``: ``Y``, the matrix read, and which terms vanish."""

    __slots__ = ("A", "Y", "full_column", "full_row", "hermitian", "y")

    def __init__(self, a: Any, rcond: Any, hermitian: bool, rtol: Any) -> None:
        name = "np.linalg.pinv"
        A0 = a if type(a) is np.ndarray else as_array(a)
        _, result = linalg_dtypes(name, A0.dtype)
        if A0.ndim < 2:
            raise np.linalg.LinAlgError(
                f"{name}: needs matrices (..., m, n), got an input of shape {A0.shape}"
            )
        m, n = A0.shape[-2:]
        if rcond is None:
            if rtol is _NO_VALUE:
                rcond = 1e-15
            elif rtol is None:
                rcond = max(m, n) * np.finfo(result).eps
            else:
                rcond = rtol
        elif rtol is not _NO_VALUE:
            raise ValueError(f"{name}: `rtol` and `rcond` can't be both set")
        self.hermitian = bool(hermitian)
        A = cast(A0, _double(result))
        if self.hermitian:
            square_matrices(f"{name} with hermitian=True", A0)
            A = read_matrix(A, "her" if A.dtype.kind == "c" else "sym", lower=True)
        self.A = A
        if A.size == 0:
            self.Y = np.zeros((*A.shape[:-2], n, m), A.dtype)
            self.full_column = self.full_row = True
        else:
            u, s, vh = np.linalg.svd(A, full_matrices=False, hermitian=self.hermitian)
            cutoff = as_array(rcond)[..., None] * s.max(axis=-1, keepdims=True)
            s_inv, rank = _svd_inverse(s, cutoff)
            self.Y = (adjoint(vh) * s_inv[..., None, :]) @ adjoint(u)  # V S^+ U^H
            self.full_column, self.full_row = bool(np.all(rank == n)), bool(np.all(rank == m))
        self.y = self.Y.astype(result, copy=False)

    def pullback(self, Y_bar: Any) -> Any:
        """The Golub-Pereyra cotangent, with the tangent algebra only."""
        check_shape("np.linalg.pinv pullback", "the cotangent", Y_bar, self.y.shape)
        A, Y = self.A, self.Y
        if type(Y_bar) is np.ndarray:
            Y_bar = cast(Y_bar, Y.dtype)
        Y_h, Y_bar_h = adjoint(Y), adjoint(Y_bar)
        A_bar = -(Y_h @ (Y_bar @ Y_h))
        if not self.full_row:  # (I - A Y) Y_bar^H Y Y^H
            V = Y_bar_h @ (Y @ Y_h)
            A_bar = A_bar + (V - A @ (Y @ V))
        if not self.full_column:  # Y^H Y Y_bar^H (I - Y A)
            W = Y_h @ (Y @ Y_bar_h)
            A_bar = A_bar + (W - (W @ Y) @ A)
        if self.hermitian:
            A_bar = (A_bar + adjoint(A_bar)) * 0.5
        return A_bar

    def pushforward(self, A_dot: Any) -> Any:
        A, Y = self.A, self.Y
        if type(A_dot) is np.ndarray:
            A_dot = cast(A_dot, Y.dtype)
        if self.hermitian:
            A_dot = (A_dot + adjoint(A_dot)) * 0.5
        A_dot_h = adjoint(A_dot)
        Y_dot = -(Y @ (A_dot @ Y))
        if not self.full_row:  # Y Y^H A_dot^H (I - A Y)
            Y_dot = Y_dot + (Y @ adjoint(Y)) @ (A_dot_h - (A_dot_h @ A) @ Y)
        if not self.full_column:  # (I - Y A) A_dot^H Y^H Y
            Y_dot = Y_dot + (A_dot_h - Y @ (A @ A_dot_h)) @ (adjoint(Y) @ Y)
        return Y_dot


@rrule.register(np.linalg.pinv)
def pinv_rrule(
    a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = _NO_VALUE
) -> tuple[np.ndarray, Any]:
    r"""Reverse rule for ``np.linalg.pinv`` at constant rank; see the module docstring.

    :math:`\bar A = -Y^H \bar Y Y^H + (I - A Y) \bar Y^H Y Y^H + Y^H Y \bar Y^H (I - Y A)`,
    the last two terms skipped when they vanish (full row or column rank).
    """
    forward = _Pinv(a, rcond, hermitian, rtol)
    project_a = ProjectTo(a)

    def pinv_pullback(Y_bar: Any) -> tuple[Any, Any]:
        return NoTangent(), project_a(forward.pullback(unthunk(Y_bar)))

    return forward.y, pinv_pullback


@frule.register(np.linalg.pinv)
def pinv_frule(
    tangents: tuple[Any, ...],
    a: Any,
    rcond: Any = None,
    hermitian: bool = False,
    *,
    rtol: Any = _NO_VALUE,
) -> tuple[np.ndarray, Any]:
    r"""Forward rule for ``np.linalg.pinv`` at constant rank; see the module docstring."""
    forward = _Pinv(a, rcond, hermitian, rtol)
    A_dot = unthunk(tangents[1])
    return forward.y, ProjectTo(forward.y)(forward.pushforward(A_dot))


def _scipy_pinv_options(atol: Any, rtol: Any, return_rank: bool) -> dict[str, Any]:
    """Scipy's cutoff ``atol + rtol * max(s)`` as numpy's ``rtol`` (``atol`` must be 0)."""
    refuse("scipy.linalg.pinv", atol=atol or None, return_rank=return_rank)
    return {} if rtol is None else {"rtol": rtol}


@rrule.register(sla.pinv)
def scipy_pinv_rrule(
    a: Any,
    *,
    atol: Any = None,
    rtol: Any = None,
    return_rank: bool = False,
    check_finite: bool = True,
) -> tuple[np.ndarray, Any]:
    """Reverse rule for ``scipy.linalg.pinv``: scipy's value, ``np.linalg.pinv``'s pullback."""
    options = _scipy_pinv_options(atol, rtol, return_rank)
    y = call(sla.pinv, a, rtol=rtol, check_finite=check_finite)
    _, pullback = pinv_rrule(a, **options)
    return y, pullback


@frule.register(sla.pinv)
def scipy_pinv_frule(
    tangents: tuple[Any, ...],
    a: Any,
    *,
    atol: Any = None,
    rtol: Any = None,
    return_rank: bool = False,
    check_finite: bool = True,
) -> tuple[np.ndarray, Any]:
    """Forward rule for ``scipy.linalg.pinv``: ``np.linalg.pinv``'s pushforward."""
    options = _scipy_pinv_options(atol, rtol, return_rank)
    y = call(sla.pinv, a, rtol=rtol, check_finite=check_finite)
    return y, ProjectTo(y)(pinv_frule(tangents[:2], a, **options)[1])


# --- lstsq -------------------------------------------------------------------------------------


class _Lstsq:
    """The forward pass of ``lstsq``: the truncated SVD, the solution and the residual."""

    __slots__ = ("A", "B", "R", "U", "Ur", "V", "Vr", "X", "s_inv", "vector", "y")

    def __init__(self, a: Any, b: Any, rcond: Any) -> None:
        name = "np.linalg.lstsq"
        A0 = a if type(a) is np.ndarray else as_array(a)
        b0 = b if type(b) is np.ndarray else as_array(b)
        _, result = linalg_dtypes(name, A0.dtype, b0.dtype)
        real = np.zeros((), result).real.dtype
        self.vector = b0.ndim == 1
        if A0.ndim != 2 or b0.ndim not in (1, 2):
            raise np.linalg.LinAlgError(
                f"{name}: needs a matrix a (m, n) and b (m,) or (m, k), got shapes "
                f"{A0.shape} and {b0.shape}"
            )
        m, n = A0.shape
        if b0.shape[0] != m:
            raise np.linalg.LinAlgError(
                f"{name}: a of shape {A0.shape} and b of shape {b0.shape} do not match"
            )
        work = _double(result)
        self.A = A = cast(A0, work)
        self.B = B = cast(b0, work).reshape(m, 1 if self.vector else b0.shape[1])  # m may be 0
        if rcond is None or rcond < 0:
            rcond = np.finfo(work).eps * (max(m, n) if rcond is None else 1)
        if A.size:
            u, s, vh = np.linalg.svd(A, full_matrices=False)
            s_inv, rank = _svd_inverse(s, rcond * s[0])
        else:
            u, s, vh = np.zeros((m, 0), work), np.zeros(0, real), np.zeros((0, n), work)
            s_inv, rank = s, 0
        self.U, self.V = u, adjoint(vh)
        r = int(rank)
        self.Ur, self.Vr, self.s_inv = u[:, :r], self.V[:, :r], s_inv[:r]
        self.X = X = self.Vr @ (self.s_inv[:, None] * (adjoint(self.Ur) @ B))  # A^+ B
        self.R = B - A @ X  # the residual
        residuals = np.sum(np.abs(self.R) ** 2, axis=0) if (r == n and m > n) else np.zeros(0, real)
        x = X[:, 0] if self.vector else X
        self.y = (
            x.astype(result),
            residuals.astype(real),
            np.int32(r),
            s.astype(real, copy=False),
        )

    def pinv(self, Z: np.ndarray) -> np.ndarray:
        """``A^+ Z``."""
        return self.Vr @ (self.s_inv[:, None] * (adjoint(self.Ur) @ Z))

    def pinv_h(self, Z: np.ndarray) -> np.ndarray:
        """``A^{+H} Z``."""
        return self.Ur @ (self.s_inv[:, None] * (adjoint(self.Vr) @ Z))

    def pullback(self, y_bar: Any) -> tuple[Any, Any]:
        x_bar, res_bar, _, s_bar = (unthunk(t) for t in split_cotangent(y_bar, 4))
        if (
            is_user_tangent(x_bar)
            and not self.vector
            and all(isinstance(t, AbstractZero) for t in (res_bar, s_bar))
        ):
            return self._x_pullback_generic(x_bar)
        m, n = self.A.shape
        A_bar = np.zeros_like(self.A)
        B_bar = np.zeros_like(self.B)
        X, R = self.X, self.R
        if not isinstance(x_bar, AbstractZero):
            X_bar = self._array(x_bar, self.y[0].shape).reshape(self.X.shape)
            B0 = self.pinv_h(X_bar)
            B_bar += B0
            A_bar -= B0 @ adjoint(X)
            if len(self.s_inv) < m:  # R (A^+ B0)^H, zero at full row rank (R = 0)
                A_bar += R @ adjoint(self.pinv(B0))
            if len(self.s_inv) < n:  # A^{+H} X (X_bar - A^+ A X_bar)^H, zero at full column rank
                A_bar += self.pinv_h(X) @ adjoint(X_bar - self.Vr @ (adjoint(self.Vr) @ X_bar))
        if not isinstance(res_bar, AbstractZero) and self.y[1].size:
            weights = 2 * self._array(res_bar, self.y[1].shape).real
            B_bar += R * weights
            A_bar -= (R * weights) @ adjoint(X)
        if not isinstance(s_bar, AbstractZero) and self.y[3].size:
            # only the singular values kept: at constant rank the others stay zero
            weights = self._array(s_bar, self.y[3].shape).real[: len(self.s_inv)]
            A_bar += (self.Ur * weights) @ adjoint(self.Vr)
        return A_bar, (B_bar[:, 0] if self.vector else B_bar)

    def _x_pullback_generic(self, X_bar: Any) -> tuple[Any, Any]:
        """The pullback of a cotangent of ``x`` alone with the tangent algebra (any type with @).

        The same terms as :meth:`pullback`, with ``A^{+H}`` as one matrix so that ``X_bar``
        meets only products, sums and adjoints.
        """
        check_shape("np.linalg.lstsq pullback", "the cotangent of x", X_bar, self.y[0].shape)
        m, n = self.A.shape
        X, R = self.X, self.R
        pinv_h = (self.Ur * self.s_inv) @ adjoint(self.Vr)  # A^{+H}, m x n
        B0 = pinv_h @ X_bar
        A_bar = -(B0 @ adjoint(X))
        if len(self.s_inv) < m:  # R (A^+ B0)^H = R B0^H A^+^H
            A_bar = A_bar + R @ (adjoint(B0) @ pinv_h)
        if len(self.s_inv) < n:  # A^{+H} X (X_bar - Vr Vr^H X_bar)^H
            Z = X_bar - self.Vr @ (adjoint(self.Vr) @ X_bar)
            A_bar = A_bar + self.pinv_h(X) @ adjoint(Z)
        return A_bar, B0

    def pushforward(self, A_dot: Any, b_dot: Any) -> Any:
        m, n = self.A.shape
        X, R = self.X, self.R
        A_dot = None if isinstance(A_dot, AbstractZero) else self._array(A_dot, self.A.shape)
        b_shape = (m,) if self.vector else self.B.shape
        B_dot = (
            np.zeros_like(self.B)
            if isinstance(b_dot, AbstractZero)
            else self._array(b_dot, b_shape).reshape(self.B.shape)
        )
        X_dot = self.pinv(B_dot)
        if A_dot is not None:
            A_dot_h = adjoint(A_dot)
            X_dot -= self.pinv(A_dot @ X)
            if len(self.s_inv) < m:  # A^+ A^{+H} A_dot^H R
                X_dot += self.pinv(self.pinv_h(A_dot_h @ R))
            if len(self.s_inv) < n:  # (I - A^+ A) A_dot^H A^{+H} X
                Z = A_dot_h @ self.pinv_h(X)
                X_dot += Z - self.Vr @ (adjoint(self.Vr) @ Z)
        res_dot: Any = ZeroTangent()
        if self.y[1].size:
            D = B_dot if A_dot is None else B_dot - A_dot @ X
            res_dot = 2 * np.real(np.sum(R.conj() * D, axis=0))
        s_dot: Any = ZeroTangent()
        if A_dot is not None and self.y[3].size:  # Re(u_i^H A_dot v_i) for the kept ones
            s_dot = np.zeros(self.y[3].size, self.y[3].dtype)
            s_dot[: len(self.s_inv)] = np.real(
                np.einsum("ij,ij->j", self.Ur.conj(), A_dot @ self.Vr)
            )
        x, residuals, _, s = self.y
        return Tangent(
            tuple,
            ProjectTo(x)(X_dot[:, 0] if self.vector else X_dot),
            ProjectTo(residuals)(res_dot),
            NoTangent(),
            ProjectTo(s)(s_dot),
        )

    def _array(self, t: Any, shape: tuple[int, ...]) -> np.ndarray:
        t = as_array(as_array_cotangent(t, "np.linalg.lstsq's rules (elementwise weights)"))
        check_shape("np.linalg.lstsq rule", "a (co)tangent", t, shape)
        if t.dtype.kind == "c" and self.A.dtype.kind != "c":
            t = t.real  # a real primal's (co)tangent is real, as in the other rules
        return t.astype(np.result_type(t.dtype, self.A.dtype), copy=False)


@rrule.register(np.linalg.lstsq)
def lstsq_rrule(a: Any, b: Any, rcond: Any = None) -> tuple[Any, Any]:
    """Reverse rule for ``x, residuals, rank, s = np.linalg.lstsq(a, b, rcond)``.

    See the module docstring; ``rank`` gets ``NoTangent()``, ``rcond`` is an option.
    """
    forward = _Lstsq(a, b, rcond)
    project_a, project_b = ProjectTo(a), ProjectTo(b)

    def lstsq_pullback(y_bar: Any) -> tuple[Any, Any, Any]:
        a_bar, b_bar = forward.pullback(y_bar)
        return NoTangent(), project_a(a_bar), project_b(b_bar)

    return forward.y, lstsq_pullback


@frule.register(np.linalg.lstsq)
def lstsq_frule(tangents: tuple[Any, ...], a: Any, b: Any, rcond: Any = None) -> tuple[Any, Any]:
    """Forward rule for ``np.linalg.lstsq``; the tangent is a ``Tangent(tuple, ...)``."""
    forward = _Lstsq(a, b, rcond)
    return forward.y, forward.pushforward(unthunk(tangents[1]), unthunk(tangents[2]))


def _scipy_lstsq_call(a: Any, b: Any, cond: Any, kwargs: dict[str, Any]) -> Any:
    refuse(
        "scipy.linalg.lstsq",
        overwrite_a=kwargs.pop("overwrite_a", False),
        overwrite_b=kwargs.pop("overwrite_b", False),
    )
    return call(sla.lstsq, a, b, cond, **kwargs)


@rrule.register(sla.lstsq)
def scipy_lstsq_rrule(a: Any, b: Any, cond: Any = None, **kwargs: Any) -> tuple[Any, Any]:
    """Reverse rule for ``scipy.linalg.lstsq``: ``np.linalg.lstsq``'s pullback (``rcond = cond``).

    scipy returns the residues of a vector ``b`` with shape ``()`` where numpy has ``(1,)``; the
    cotangent is reshaped to numpy's before the pullback.
    """
    y = _scipy_lstsq_call(a, b, cond, kwargs)
    (_, residuals, _, _), pullback = lstsq_rrule(a, b, cond)
    shape = np.shape(residuals)

    def scipy_lstsq_pullback(y_bar: Any) -> tuple[Any, Any, Any]:
        x_bar, r_bar, rank_bar, s_bar = split_cotangent(y_bar, 4)
        r_bar = unthunk(r_bar)
        if not isinstance(r_bar, AbstractZero):
            r_bar = np.reshape(as_array_cotangent(r_bar, "scipy.linalg.lstsq's pullback"), shape)
        return pullback((x_bar, r_bar, rank_bar, s_bar))[:3]

    return y, scipy_lstsq_pullback


@frule.register(sla.lstsq)
def scipy_lstsq_frule(
    tangents: tuple[Any, ...], a: Any, b: Any, cond: Any = None, **kwargs: Any
) -> tuple[Any, Any]:
    """Forward rule for ``scipy.linalg.lstsq``: ``np.linalg.lstsq``'s, residues reshaped."""
    y = _scipy_lstsq_call(a, b, cond, kwargs)
    _, y_dot = lstsq_frule(tangents[:3], a, b, cond)
    x_dot, r_dot, rank_dot, s_dot = split_cotangent(y_dot, 4)
    r_dot = unthunk(r_dot)
    if not isinstance(r_dot, AbstractZero):
        r_dot = ProjectTo(y[1])(np.reshape(r_dot, np.shape(y[1])))
    return y, Tangent(tuple, x_dot, r_dot, rank_dot, s_dot)
