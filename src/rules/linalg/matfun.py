r"""Rules for primary matrix functions: scipy's ``sqrtm``, ``logm``, ``cosm``, ``sinm``, ``funm``.

Also ``fractional_matrix_power(A, t)`` (block-triangular identity for general ``A``,
Daleckii-Krein for Hermitian ``A``; in ``t``: :math:`\dot Y = A^t \log(A)\, \dot t`).

(``expm`` has its own module, :mod:`rules.linalg.expm`, and reuses the Hermitian rule below.)

The derivative of a primary matrix function ``Y = f(A)`` is its Frechet derivative
``Y_dot = L_f(A, A_dot)``. For the ``Re <., .>`` inner product its adjoint is
:math:`\bar A = \overline{L_f(A^T, \bar{\bar Y})}`, which is :math:`L_f(A^H, \bar Y)` for every
function here (``f(conj z) = conj f(z)`` off the branch cuts) [1, section 3.1].

Hermitian input (a ``Hermitian``, or a real ``Symmetric``, from ``tangents``; see
:func:`is_hermitian`): with
``A = V diag(w) V^H`` the Daleckii-Krein formula [2], [1, Theorem 3.11]

.. math::

    L_f(A, E) = V (\Gamma \circ V^H E V) V^H, \qquad
    \Gamma_{ij} = \frac{f(w_i) - f(w_j)}{w_i - w_j} \ (w_i \ne w_j), \qquad \Gamma_{ii} = f'(w_i),

is exact at repeated eigenvalues: a pair with ``|w_i - w_j| <= eps^(1/3) max(|w_i|, |w_j|)`` (in
double precision) uses ``f'((w_i + w_j)/2)``, whose error ``|f'''| (w_i - w_j)^2 / 24`` is below the
cancellation error of the quotient it replaces (so ``Gamma_ij = f'(w_i)`` exactly at a tie). The
pullback is ``V (conj(Gamma) o V^H Y_bar V) V^H``, made Hermitian (of the input's structured type)
by ``ProjectTo``; forward tangents are symmetrised first. ChainRules.jl's rules for functions of
``Hermitian`` matrices work the same way.

General (dense, structured non-Hermitian) input:

* ``sqrtm``: ``X = sqrtm(A)`` gives ``X X_dot + X_dot X = A_dot`` (a Sylvester equation, one
  complex or real Schur form of ``X``); the pullback solves ``X^H Z + Z X^H = Y_bar`` [1, (6.48)].
* ``logm``, ``cosm``, ``sinm``: the block-triangular identity [1, Theorem 3.6], [3]

  .. math:: f\left(\begin{bmatrix} A & E \\ 0 & A \end{bmatrix}\right)
            = \begin{bmatrix} f(A) & L_f(A, E) \\ 0 & f(A) \end{bmatrix},

  evaluated by the same scipy function on the ``2n x 2n`` matrix; exact for any primary matrix
  function scipy computes, at several times the forward cost (a ``2n`` matrix function). logm's inaccuracy warning for the
  ``2n`` block is silenced (the primal call already warned if the primal was inaccurate).
* ``funm(A, func)``: scipy's Schur-Parlett recurrence fails at the repeated eigenvalues of the
  block matrix, and ``L_f`` needs ``f'`` anyway (``L_f(a, e) = f'(a) e`` for 1x1), which ``func``
  alone does not give. So differentiating ``funm`` requires ``func=MatrixFunction(f, df)`` (a
  ``TypeError`` otherwise, never a silent approximation); the derivative is then the
  eigendecomposition form of the divided-difference formula, ``A = V diag(w) V^{-1}``,
  ``L_f(A, E) = V (Gamma o V^{-1} E V) V^{-1}``, exact for diagonalizable ``A`` (scipy's ``funm``
  itself assumes distinct, well-separated eigenvalues).

Domains: ``sqrtm``/``logm`` of a real matrix with a negative eigenvalue return complex (scipy's
principal branch); the rules then give complex tangents and real cotangents (``ProjectTo``), but
eigenvalues on the closed negative real axis lie on the branch cut, where the derivative does not
exist; a singular ``A`` makes ``sqrtm``/``logm`` derivatives inf/nan (``f'(0)`` is infinite). NaN in
follows scipy: ``cosm`` and ``sinm`` give NaN out; ``sqrtm`` gives NaN out for a triangular ``A``
but passes on scipy's ``LinAlgError`` ("Internal error ...") for any other ``A`` holding a NaN
(scipy 1.17's Schur step fails); ``logm``/``funm`` raise scipy's ``ValueError``. Cotangents must be
arrays (the formulas need elementwise products or LAPACK); user tangent types raise ``TypeError``.
Stacks ``(..., n, n)`` and float32 (kept, computed in double) are supported.

References
----------
.. [1] N. J. Higham, "Functions of Matrices: Theory and Computation", SIAM 2008.
.. [2] Yu. L. Daleckii, S. G. Krein, "Integration and differentiation of functions of Hermitian
   operators and applications to the theory of perturbations", AMS Translations (2) 47 (1965).
.. [3] R. Mathias, "A chain rule for matrix functions and applications", SIAM J. Matrix Anal.
   Appl. 17(3) (1996) 610-620.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import scipy.linalg as sla

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array, call
from rules.core.registry import frule, rrule, split_cotangent
from rules.linalg._stacks import adjoint, check_shape, square_matrices
from tangents import AbstractZero, Hermitian, NoTangent, ProjectTo, Symmetric, Tangent, unthunk

__all__ = [
    "EXP",
    "MatrixFunction",
    "ScalarFunction",
    "hermitian_frule",
    "hermitian_rrule",
    "is_hermitian",
]

_TIE_RTOL = float(np.finfo(np.float64).eps ** (1 / 3))
"""Eigenvalue pairs closer than this (relative) use ``f'`` at their midpoint (module docstring)."""


class ScalarFunction(NamedTuple):
    """A scalar function and its derivative, both elementwise on arrays."""

    f: Callable[[np.ndarray], np.ndarray]
    df: Callable[[np.ndarray], np.ndarray]


def _half_inverse_sqrt(w: np.ndarray) -> np.ndarray:
    return 0.5 / np.emath.sqrt(w)


def _reciprocal(w: np.ndarray) -> np.ndarray:
    return 1.0 / w


def _minus_sin(w: np.ndarray) -> np.ndarray:
    return -np.sin(w)


EXP = ScalarFunction(np.exp, np.exp)
SQRT = ScalarFunction(np.emath.sqrt, _half_inverse_sqrt)  # complex for negative eigenvalues
LOG = ScalarFunction(np.emath.log, _reciprocal)
COS = ScalarFunction(np.cos, _minus_sin)
SIN = ScalarFunction(np.sin, np.cos)


class MatrixFunction:
    """``func`` for ``scipy.linalg.funm`` with its derivative, so that ``funm`` is differentiable.

    ``scipy.linalg.funm(A, MatrixFunction(np.exp, np.exp))`` computes the same as
    ``funm(A, np.exp)``; the rules read ``df`` (elementwise ``f'``, on complex arguments for
    non-Hermitian ``A``). Example: ``MatrixFunction(np.tanh, lambda x: 1 - np.tanh(x) ** 2)``.
    """

    __slots__ = ("df", "f")

    def __init__(self, f: Callable[[Any], Any], df: Callable[[Any], Any]) -> None:
        self.f = f
        self.df = df

    def __call__(self, x: Any) -> Any:
        """``f(x)``: what ``scipy.linalg.funm`` calls on the diagonal of the Schur form."""
        return self.f(x)

    def __repr__(self) -> str:
        return f"MatrixFunction({self.f!r}, {self.df!r})"


# --- shared helpers -------------------------------------------------------------------------------


def _double(X: np.ndarray) -> np.ndarray:
    return X.astype(np.complex128 if np.iscomplexobj(X) else np.float64, copy=False)


def _primary(Y: Any) -> Any:
    """The matrix of an output that may be ``(F, errest)`` (``disp=False``)."""
    return Y[0] if isinstance(Y, tuple) else Y


def _output_cotangent(Y: Any, y_bar: Any) -> Any:
    return unthunk(split_cotangent(y_bar, 2)[0]) if isinstance(Y, tuple) else unthunk(y_bar)


def _output_tangent(Y: Any, Y_dot: Any) -> Any:
    return Tangent(tuple, Y_dot, NoTangent()) if isinstance(Y, tuple) else Y_dot


def _divided_differences(spec: ScalarFunction, w: np.ndarray) -> np.ndarray:
    """``Gamma_ij = (f(w_i) - f(w_j)) / (w_i - w_j)``, ``f'`` at the midpoint of (near) ties."""
    with np.errstate(all="ignore"):
        fw = as_array(spec.f(w))
        wi, wj = w[..., :, None], w[..., None, :]
        delta = wi - wj
        near = np.abs(delta) <= _TIE_RTOL * np.maximum(np.abs(wi), np.abs(wj))
        quotient = (fw[..., :, None] - fw[..., None, :]) / np.where(near, 1.0, delta)
        slope = as_array(spec.df(np.where(near, 0.5 * (wi + wj), wi)))
        return np.where(near, slope, quotient)


def _array(name: str, what: str, t: Any, shape: tuple[int, ...]) -> np.ndarray:
    t = as_array(as_array_cotangent(t, f"{name}'s {what} (elementwise products, LAPACK)"))
    check_shape(name, f"the {what}", t, shape)
    return t


# --- Hermitian input: Daleckii-Krein --------------------------------------------------------------


def is_hermitian(A: Any) -> bool:
    """Whether ``A`` is Hermitian by its type: the input of the Daleckii-Krein rules.

    That is a ``Hermitian``, or a ``Symmetric`` of a real dtype. A complex ``Symmetric`` is
    complex symmetric (``A^T = A``), not Hermitian: it has no unitary eigendecomposition and takes
    the general rules (``Hermitian`` subclasses ``Symmetric``, so ``isinstance(A, Symmetric)``
    alone does not tell them apart).
    """
    if isinstance(A, Hermitian):
        return True
    return isinstance(A, Symmetric) and not np.iscomplexobj(A.data)


class _HermitianSpectrum:
    """``A = V diag(w) V^H`` in double precision and the divided differences ``Gamma`` of ``f``."""

    __slots__ = ("Gamma", "V", "VH")

    def __init__(self, spec: ScalarFunction, dense: np.ndarray) -> None:
        try:
            w, V = np.linalg.eigh(_double(dense))
        except np.linalg.LinAlgError:  # NaN input: NaN out
            w = np.full(dense.shape[:-1], np.nan)
            V = np.full(dense.shape, np.nan, dtype=_double(dense).dtype)
        self.V, self.VH = V, adjoint(V)
        self.Gamma = _divided_differences(spec, w)

    def frechet(self, E: np.ndarray, conjugate: bool = False) -> np.ndarray:
        Gamma = np.conj(self.Gamma) if conjugate else self.Gamma
        return self.V @ (Gamma * (self.VH @ E @ self.V)) @ self.VH


def hermitian_rrule(
    name: str, evaluate: Callable[[np.ndarray], Any], spec: ScalarFunction, A: Any
) -> tuple[Any, Any]:
    r"""Reverse rule of ``Y = f(A)`` for a Hermitian ``A`` (:func:`is_hermitian`; Daleckii-Krein).

    ``evaluate`` computes the primal from the dense matrix (scipy's function, so the output is
    exactly scipy's); :math:`\bar A = V (\bar\Gamma \circ V^H \bar Y V) V^H`, Hermitian.
    """
    dense = square_matrices(name, A)
    Y = evaluate(dense)
    spectrum = _HermitianSpectrum(spec, dense)
    project_A, project_Y = ProjectTo(A), ProjectTo(_primary(Y))
    shape = dense.shape

    def hermitian_matfun_pullback(y_bar: Any) -> tuple[Any, Any]:
        Y_bar = _array(f"{name} pullback", "cotangent", _output_cotangent(Y, y_bar), shape)
        Y_bar = project_Y(Y_bar)
        return NoTangent(), project_A(spectrum.frechet(_double(Y_bar), conjugate=True))

    return Y, hermitian_matfun_pullback


def hermitian_frule(
    name: str, evaluate: Callable[[np.ndarray], Any], spec: ScalarFunction, A: Any, A_dot: Any
) -> tuple[Any, Any]:
    r"""Forward rule of ``Y = f(A)`` for Hermitian ``A``: :math:`V (\Gamma \circ V^H \dot A V) V^H`.

    ``A`` as in :func:`hermitian_rrule`.
    """
    dense = square_matrices(name, A)
    Y = evaluate(dense)
    E = _array(f"{name} pushforward", "tangent", A_dot, dense.shape)
    E = 0.5 * (E + adjoint(E))
    Y_dot = _HermitianSpectrum(spec, dense).frechet(_double(E))
    return Y, _output_tangent(Y, ProjectTo(_primary(Y))(Y_dot))


# --- general input: block-triangular and Sylvester forms ------------------------------------------


def _block_frechet(evaluate: Callable[[np.ndarray], Any], A: np.ndarray, E: np.ndarray) -> Any:
    """``L_f(A, E)``: the top right block of ``f([[A, E], [0, A]])`` (Mathias 1996)."""
    n = A.shape[-1]
    batch = np.broadcast_shapes(A.shape[:-2], E.shape[:-2])
    dtype = np.result_type(A, E, np.float64)
    if not np.isfinite(E).all():  # NaN in, NaN out (logm and funm would refuse the block matrix)
        return np.full((*batch, n, n), np.nan, dtype=dtype)
    B = np.zeros((*batch, 2 * n, 2 * n), dtype=dtype)
    B[..., :n, :n] = A
    B[..., n:, n:] = A
    B[..., :n, n:] = E
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "logm result may be inaccurate", RuntimeWarning)
        return _primary(evaluate(B))[..., :n, n:]


def _block_adjoint(evaluate: Callable[[np.ndarray], Any], A: np.ndarray, G: np.ndarray) -> Any:
    """``conj(L_f(A^T, conj G))``: the adjoint of ``E -> L_f(A, E)`` applied to ``G``."""
    return np.conj(_block_frechet(evaluate, A.mT, np.conj(G)))


def _sylvester_same(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """``Y`` with ``X Y + Y X = C`` for each matrix of a stack (one Schur form of ``X`` each)."""
    dtype = np.result_type(X, C, np.float64)
    X, C = X.astype(dtype, copy=False), C.astype(dtype, copy=False)
    output = "complex" if dtype.kind == "c" else "real"
    out = np.empty(np.broadcast_shapes(X.shape, C.shape), dtype=dtype)
    if out.size == 0:  # LAPACK's trsyl rejects 0 x 0 matrices
        return out
    Xs, Cs = np.broadcast_to(X, out.shape), np.broadcast_to(C, out.shape)
    for index in np.ndindex(out.shape[:-2]):
        T, Z = call(sla.schur, Xs[index], output=output, check_finite=False)
        (trsyl,) = sla.get_lapack_funcs(("trsyl",), (T,))
        Y, scale, _ = trsyl(T, T, adjoint(Z) @ Cs[index] @ Z)
        out[index] = Z @ (Y / scale) @ adjoint(Z)
    return out


def _general_rule(
    name: str,
    evaluate: Callable[[np.ndarray], Any],
    spec: ScalarFunction,
    A: Any,
    adjoint_frechet: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
) -> tuple[Any, Any]:
    """The rrule of ``Y = f(A)``: Daleckii-Krein for Hermitian ``A``, else ``adjoint_frechet``."""
    if is_hermitian(A):
        return hermitian_rrule(name, evaluate, spec, A)
    dense = square_matrices(name, A)
    Y = evaluate(dense)
    F = _primary(Y)
    project_A, project_Y = ProjectTo(A), ProjectTo(F)
    A_double = _double(dense)

    def matfun_pullback(y_bar: Any) -> tuple[Any, Any]:
        Y_bar = _array(f"{name} pullback", "cotangent", _output_cotangent(Y, y_bar), F.shape)
        G = _double(as_array(project_Y(Y_bar)))
        return NoTangent(), project_A(adjoint_frechet(A_double, F, G))

    return Y, matfun_pullback


def _general_frule(
    name: str,
    evaluate: Callable[[np.ndarray], Any],
    spec: ScalarFunction,
    A: Any,
    A_dot: Any,
    frechet: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
) -> tuple[Any, Any]:
    """The frule of ``Y = f(A)``: Daleckii-Krein for Hermitian ``A``, else ``frechet``."""
    if is_hermitian(A):
        return hermitian_frule(name, evaluate, spec, A, A_dot)
    dense = square_matrices(name, A)
    Y = evaluate(dense)
    F = _primary(Y)
    E = _double(_array(f"{name} pushforward", "tangent", A_dot, dense.shape))
    Y_dot = frechet(_double(dense), F, E)
    return Y, _output_tangent(Y, ProjectTo(F)(Y_dot))


def _block_rules(evaluate: Callable[[np.ndarray], Any]) -> tuple[Any, Any]:
    """``(frechet, adjoint_frechet)`` by the block-triangular identity for scipy's ``evaluate``."""

    def frechet(A: np.ndarray, F: np.ndarray, E: np.ndarray) -> np.ndarray:
        return _block_frechet(evaluate, A, E)

    def adjoint_frechet(A: np.ndarray, F: np.ndarray, G: np.ndarray) -> np.ndarray:
        return _block_adjoint(evaluate, A, G)

    return frechet, adjoint_frechet


def _sqrtm_frechet(A: np.ndarray, X: np.ndarray, E: np.ndarray) -> np.ndarray:
    return _sylvester_same(X, E)  # X X_dot + X_dot X = A_dot


def _sqrtm_adjoint(A: np.ndarray, X: np.ndarray, G: np.ndarray) -> np.ndarray:
    return _sylvester_same(adjoint(X), G)  # X^H Z + Z X^H = Y_bar


# --- scipy.linalg.sqrtm, logm, cosm, sinm ---------------------------------------------------------


def _scipy(function: Callable[..., Any], **kwargs: Any) -> Callable[[np.ndarray], Any]:
    def evaluate(M: np.ndarray) -> Any:
        return function(M, **kwargs)

    return evaluate


@rrule.register(sla.sqrtm)
def sqrtm_rrule(A: Any, **kwargs: Any) -> tuple[Any, Any]:
    r"""Reverse rule for ``X = scipy.linalg.sqrtm(A)``: :math:`X^H \bar A + \bar A X^H = \bar X`.

    Daleckii-Krein for Hermitian input (:func:`is_hermitian`; module docstring).
    """
    evaluate = _scipy(sla.sqrtm, **kwargs)
    return _general_rule("scipy.linalg.sqrtm", evaluate, SQRT, A, _sqrtm_adjoint)


@frule.register(sla.sqrtm)
def sqrtm_frule(tangents: tuple[Any, Any], A: Any, **kwargs: Any) -> tuple[Any, Any]:
    r"""Forward rule for ``X = scipy.linalg.sqrtm(A)``: :math:`X \dot X + \dot X X = \dot A`."""
    evaluate = _scipy(sla.sqrtm, **kwargs)
    return _general_frule(
        "scipy.linalg.sqrtm", evaluate, SQRT, A, unthunk(tangents[1]), _sqrtm_frechet
    )


@rrule.register(sla.logm)
def logm_rrule(A: Any, **kwargs: Any) -> tuple[Any, Any]:
    r"""Reverse rule for ``scipy.linalg.logm(A)``: :math:`\bar A = L_{\log}(A^H, \bar Y)`."""
    evaluate = _scipy(sla.logm, **kwargs)
    return _general_rule("scipy.linalg.logm", evaluate, LOG, A, _block_rules(evaluate)[1])


@frule.register(sla.logm)
def logm_frule(tangents: tuple[Any, Any], A: Any, **kwargs: Any) -> tuple[Any, Any]:
    r"""Forward rule for ``scipy.linalg.logm(A)``: :math:`\dot Y = L_{\log}(A, \dot A)`."""
    evaluate = _scipy(sla.logm, **kwargs)
    frechet, _ = _block_rules(evaluate)
    return _general_frule("scipy.linalg.logm", evaluate, LOG, A, unthunk(tangents[1]), frechet)


@rrule.register(sla.cosm)
def cosm_rrule(A: Any) -> tuple[Any, Any]:
    r"""Reverse rule for ``scipy.linalg.cosm(A)``: :math:`\bar A = L_{\cos}(A^H, \bar Y)`."""
    return _general_rule("scipy.linalg.cosm", sla.cosm, COS, A, _block_rules(sla.cosm)[1])


@frule.register(sla.cosm)
def cosm_frule(tangents: tuple[Any, Any], A: Any) -> tuple[Any, Any]:
    r"""Forward rule for ``scipy.linalg.cosm(A)``: :math:`\dot Y = L_{\cos}(A, \dot A)`."""
    frechet, _ = _block_rules(sla.cosm)
    return _general_frule("scipy.linalg.cosm", sla.cosm, COS, A, unthunk(tangents[1]), frechet)


@rrule.register(sla.sinm)
def sinm_rrule(A: Any) -> tuple[Any, Any]:
    r"""Reverse rule for ``scipy.linalg.sinm(A)``: :math:`\bar A = L_{\sin}(A^H, \bar Y)`."""
    return _general_rule("scipy.linalg.sinm", sla.sinm, SIN, A, _block_rules(sla.sinm)[1])


@frule.register(sla.sinm)
def sinm_frule(tangents: tuple[Any, Any], A: Any) -> tuple[Any, Any]:
    r"""Forward rule for ``scipy.linalg.sinm(A)``: :math:`\dot Y = L_{\sin}(A, \dot A)`."""
    frechet, _ = _block_rules(sla.sinm)
    return _general_frule("scipy.linalg.sinm", sla.sinm, SIN, A, unthunk(tangents[1]), frechet)


# --- scipy.linalg.funm ----------------------------------------------------------------------------


class _Eigen:
    """``A = V diag(w) V^{-1}`` (complex, double precision) and the divided differences of ``f``."""

    __slots__ = ("Gamma", "V", "V_inv")

    def __init__(self, spec: ScalarFunction, A: np.ndarray) -> None:
        w, V = np.linalg.eig(A)
        self.V, self.V_inv = V, np.linalg.inv(V)
        self.Gamma = _divided_differences(spec, w)

    def frechet(self, E: np.ndarray) -> np.ndarray:
        return self.V @ (self.Gamma * (self.V_inv @ E @ self.V)) @ self.V_inv

    def adjoint_frechet(self, G: np.ndarray) -> np.ndarray:
        Vh, V_invh = adjoint(self.V), adjoint(self.V_inv)
        return V_invh @ (np.conj(self.Gamma) * (Vh @ G @ V_invh)) @ Vh


def _funm_spec(func: Any) -> ScalarFunction:
    if not isinstance(func, MatrixFunction):
        raise TypeError(
            "scipy.linalg.funm: its derivative needs f' as well as f; pass "
            "func=rules.linalg.matfun.MatrixFunction(f, df) (got a "
            f"{type(func).__name__}, and f' is never approximated silently)"
        )
    return ScalarFunction(func.f, func.df)


@rrule.register(sla.funm)
def funm_rrule(A: Any, func: Any, disp: bool = True) -> tuple[Any, Any]:
    r"""Reverse rule for ``scipy.linalg.funm(A, func, disp=True)``, ``func`` a MatrixFunction.

    :math:`\bar A = V^{-H} (\bar\Gamma \circ V^H \bar Y V^{-H}) V^H` with ``A = V diag(w) V^{-1}``;
    Daleckii-Krein for Hermitian input (:func:`is_hermitian`). ``func`` gets ``NoTangent()``; with
    ``disp=False`` the error estimate of ``(F, errest)`` is not differentiated.
    """
    spec = _funm_spec(func)
    evaluate = _scipy(sla.funm, func=func, disp=disp)

    def funm_adjoint(A: np.ndarray, F: np.ndarray, G: np.ndarray) -> np.ndarray:
        return _Eigen(spec, A).adjoint_frechet(G)

    return _general_rule("scipy.linalg.funm", evaluate, spec, A, funm_adjoint)


@frule.register(sla.funm)
def funm_frule(tangents: tuple[Any, ...], A: Any, func: Any, disp: bool = True) -> tuple[Any, Any]:
    r"""Forward rule for ``scipy.linalg.funm``.

    :math:`\dot Y = V (\Gamma \circ V^{-1} \dot A V) V^{-1}`.
    """
    spec = _funm_spec(func)
    evaluate = _scipy(sla.funm, func=func, disp=disp)

    def funm_frechet(A: np.ndarray, F: np.ndarray, E: np.ndarray) -> np.ndarray:
        return _Eigen(spec, A).frechet(E)

    return _general_frule(
        "scipy.linalg.funm", evaluate, spec, A, unthunk(tangents[1]), funm_frechet
    )


# --- scipy.linalg.fractional_matrix_power ---------------------------------------------------------


def _power_spec(t: float) -> ScalarFunction:
    def power(w: np.ndarray) -> np.ndarray:
        return np.power(w.astype(complex), t) if np.any(w < 0) else np.power(w, t)

    def dpower(w: np.ndarray) -> np.ndarray:
        return t * np.power(w.astype(complex) if np.any(w < 0) else w, t - 1)

    return ScalarFunction(power, dpower)


def _t_rate(A: np.ndarray, F: np.ndarray) -> np.ndarray:
    """``d A^t / dt = A^t log(A)`` (they commute)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "logm result may be inaccurate", RuntimeWarning)
        return F @ call(sla.logm, A)


@rrule.register(sla.fractional_matrix_power)
def fractional_matrix_power_rrule(A: Any, t: Any) -> tuple[Any, Any]:
    r"""Reverse rule for ``Y = fractional_matrix_power(A, t)``: :math:`\bar A = L_{x^t}(A^H, \bar Y)`.

    Daleckii-Krein for Hermitian ``A``, the block-triangular identity otherwise; a float ``t``
    gets :math:`\bar t = \mathrm{Re} \sum \overline{A^t \log A} \odot \bar Y`.
    """
    name = "scipy.linalg.fractional_matrix_power"
    evaluate = _scipy(sla.fractional_matrix_power, t=t)
    Y, pullback = _general_rule(name, evaluate, _power_spec(t), A, _block_rules(evaluate)[1])
    project_t = None if isinstance(t, int) else ProjectTo(t)
    dense = square_matrices(name, A)

    def fractional_matrix_power_pullback(y_bar: Any) -> tuple[Any, Any, Any]:
        A_bar = pullback(y_bar)[1]
        if project_t is None:
            return NoTangent(), A_bar, NoTangent()
        G = _array(f"{name} pullback", "cotangent", unthunk(y_bar), np.shape(Y))
        rate = _t_rate(_double(dense), _double(as_array(Y)))
        return NoTangent(), A_bar, project_t(np.sum(np.real(np.conj(rate) * G)))

    return Y, fractional_matrix_power_pullback


@frule.register(sla.fractional_matrix_power)
def fractional_matrix_power_frule(tangents: tuple[Any, ...], A: Any, t: Any) -> tuple[Any, Any]:
    r"""Forward rule: :math:`\dot Y = L_{x^t}(A, \dot A) + A^t \log(A)\, \dot t`."""
    name = "scipy.linalg.fractional_matrix_power"
    evaluate = _scipy(sla.fractional_matrix_power, t=t)
    A_dot, t_dot = unthunk(tangents[1]), unthunk(tangents[2])
    dense = square_matrices(name, A)
    if isinstance(A_dot, AbstractZero):
        Y = evaluate(dense)
        Y_dot: Any = np.zeros(np.shape(Y), dtype=np.result_type(Y))
    else:
        frechet, _ = _block_rules(evaluate)
        Y, Y_dot = _general_frule(name, evaluate, _power_spec(t), A, A_dot, frechet)
    if not isinstance(t_dot, AbstractZero) and not isinstance(t, int):
        t_dot = as_array_cotangent(t_dot, f"{name}'s frule")
        Y_dot = Y_dot + _t_rate(_double(dense), _double(as_array(Y))) * t_dot
    return Y, ProjectTo(Y)(Y_dot)
