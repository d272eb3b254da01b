"""Rules for ``scipy.linalg.eigh`` and ``scipy.linalg.eigvalsh`` (the standard problem).

The derivatives are those of ``np.linalg.eigh`` (:mod:`rules.linalg.eigh`, whose docstring
gives the formulas, the gauge and tie policy and the paths); this module maps scipy's options
(``lower``, ``eigvals_only``, ``subset_by_index``, ``driver``, ``check_finite``) onto them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from rules.core.nesting import call, contiguous
from rules.core.registry import frule, rrule, split_cotangent
from rules.linalg._spectral import (
    optional_cotangent,
    square_input,
)
from rules.linalg._stacks import adjoint, scipy_outputs
from rules.linalg.eigh import (
    _stack_eigh,
    _tangent_of_input,
    _values_pullback_array,
    _values_pushforward,
    _values_rule,
    _vectors_rule,
    eigh_pullback_array,
    eigh_pushforward_array,
)
from tangents import NoTangent, ProjectTo, Tangent

# --- scipy.linalg.eigh / eigvalsh ------------------------------------------------------------------

_SCIPY_OPTIONS = {"overwrite_a", "overwrite_b", "type", "check_finite", "driver", "subset_by_index"}


class _ScipyEigh:
    """One call of ``scipy.linalg.eigh`` (standard problem) and what its rules need."""

    def __init__(self, name: str, a: Any, b: Any, lower: bool, options: dict[str, Any]) -> None:
        if b is not None:
            raise NotImplementedError(
                f"{name}: the generalized problem (b given) has no rule; only the standard "
                "problem A v = w v is differentiable here"
            )
        unknown = set(options) - _SCIPY_OPTIONS
        if "subset_by_value" in unknown:
            raise NotImplementedError(
                f"{name}: subset_by_value has no rule (subset_by_index has one)"
            )
        if unknown:
            raise TypeError(f"{name} got unexpected keyword argument(s) {sorted(unknown)}")
        if options.get("overwrite_a") or options.get("overwrite_b"):
            raise ValueError(
                f"{name}: overwrite_a/overwrite_b=True is not differentiable (it mutates the input)"
            )
        self.name, self.lower = name, lower
        self.dense = dense = square_input(name, a)
        n = dense.shape[-1]
        subset = options.get("subset_by_index")
        self.lo, self.hi = (0, n - 1) if subset is None else (int(subset[0]), int(subset[1]))
        check_finite = options.get("check_finite", True)
        if not check_finite and not np.isfinite(dense).all():
            # LAPACK's ?syevr (scipy's default driver) can loop forever on NaN; numpy's driver
            # returns NaN, which is what a rule promises for NaN input.
            w, V = np.linalg.eigh(dense, "L" if lower else "U")
            self.w, self.V = w[..., self.lo : self.hi + 1], V[..., self.lo : self.hi + 1]
            return
        plain = subset is None and options.get("driver") is None and options.get("type", 1) == 1
        # a non-finite input with check_finite goes to scipy, which raises its error
        pair = None
        if plain and (not check_finite or np.isfinite(dense).all()):
            pair = _stack_eigh(dense, lower)
        if pair is not None:
            self.w, self.V = pair
            return
        self.w, V = call(
            sla.eigh,
            dense,
            lower=lower,
            check_finite=check_finite,
            driver=options.get("driver"),
            type=options.get("type", 1),
            subset_by_index=subset,
        )
        self.V = contiguous(V)  # scipy's V is Fortran-ordered

    @property
    def partial(self) -> bool:
        """Whether only some of the eigenpairs were computed (``subset_by_index``)."""
        return self.hi - self.lo + 1 < self.dense.shape[-1]

    def complete(self) -> tuple[np.ndarray, np.ndarray]:
        """A full eigendecomposition ``(w_all, V_all)`` whose columns ``lo..hi`` are ``(w, V)``.

        The other eigenvectors come from ``np.linalg.eigh``, projected off ``V`` and
        re-orthonormalised, so the basis stays orthonormal even when a repeated eigenvalue
        straddles the subset's edge (a tie the gauge check then sees).
        """
        w_all, Q = np.linalg.eigh(self.dense, "L" if self.lower else "U")
        n, selected = w_all.shape[-1], slice(self.lo, self.hi + 1)
        rest = np.r_[0 : self.lo, self.hi + 1 : n]
        Q_rest = Q[..., rest]
        Q_rest, _ = np.linalg.qr(Q_rest - self.V @ (adjoint(self.V) @ Q_rest))
        V_all = np.empty_like(Q)
        V_all[..., selected], V_all[..., rest] = self.V, Q_rest
        w_all[..., selected] = self.w
        return w_all, V_all

    def vectors_pullback(self, A: Any) -> Any:
        """The pullback of ``(w, V)``; a partial decomposition is completed first (in the pullback)."""
        if not self.partial:
            return _vectors_rule(self.name, A, (self.w, self.V))[1]
        name, w, V = self.name, self.w, self.V
        project_A = ProjectTo(A)

        def eigh_subset_pullback(y_bar: Any) -> tuple[Any, Any]:
            w_bar, V_bar = split_cotangent(y_bar, 2)
            w_bar = optional_cotangent(w_bar, name, "the eigenvalues", w.shape, w.dtype)
            V_bar = optional_cotangent(V_bar, name, "the eigenvectors", V.shape, V.dtype)
            if V_bar is None:
                return NoTangent(), project_A(_values_pullback_array(V, w_bar))
            w_all, V_all = self.complete()
            selected = slice(self.lo, self.hi + 1)
            V_bar_all = np.zeros_like(V_all)
            V_bar_all[..., selected] = V_bar
            w_bar_all = None
            if w_bar is not None:
                w_bar_all = np.zeros_like(w_all)
                w_bar_all[..., selected] = w_bar
            return NoTangent(), project_A(
                eigh_pullback_array(name, w_all, V_all, w_bar_all, V_bar_all)
            )

        return eigh_subset_pullback

    def vectors_pushforward(self, A_dot: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(w_dot, V_dot)`` of the computed eigenpairs."""
        A_dot = _tangent_of_input(self.name, A_dot, self.dense.shape, self.V.dtype)
        if not self.partial:
            return eigh_pushforward_array(self.w, self.V, A_dot)
        w_all, V_all = self.complete()
        w_dot, V_dot = eigh_pushforward_array(w_all, V_all, A_dot)
        selected = slice(self.lo, self.hi + 1)
        return w_dot[..., selected], V_dot[..., selected]

    def values_pushforward(self, A_dot: Any) -> np.ndarray:
        A_dot = _tangent_of_input(self.name, A_dot, self.dense.shape, self.V.dtype)
        return _values_pushforward(self.V, A_dot, self.w.dtype)


@rrule.register(sla.eigh)
def scipy_eigh_rrule(
    a: Any, b: Any = None, *, lower: bool = True, eigvals_only: bool = False, **options: Any
) -> tuple[Any, Any]:
    """Reverse rule for ``scipy.linalg.eigh(a, lower=True, eigvals_only=False)``, standard problem.

    Returns ``(w, v)``, or ``w`` with ``eigvals_only=True``. ``driver``, ``check_finite`` and
    ``subset_by_index`` are honoured; ``overwrite_a`` is refused; the generalized problem (``b``)
    and ``subset_by_value`` raise ``NotImplementedError``. With ``subset_by_index`` the
    eigenvectors' pullback needs the other eigenpairs too (the coupling ``F`` runs over the
    whole spectrum): it completes the decomposition with ``np.linalg.eigh`` when called. The
    eigenvalues' pullback ``V diag(w_bar) V^H`` needs only the computed vectors. See the module
    docstring for the degenerate and gauge policy.
    """
    call = _ScipyEigh("scipy.linalg.eigh", a, b, lower, options)
    if eigvals_only:
        return _values_rule(call.name, a, call.w, call.V)
    return scipy_outputs(call.w, call.V, stack=call.V.ndim > 2), call.vectors_pullback(a)


@frule.register(sla.eigh)
def scipy_eigh_frule(
    tangents: tuple[Any, ...],
    a: Any,
    b: Any = None,
    *,
    lower: bool = True,
    eigvals_only: bool = False,
    **options: Any,
) -> tuple[Any, Any]:
    """Forward rule for ``scipy.linalg.eigh`` (standard problem)."""
    call = _ScipyEigh("scipy.linalg.eigh", a, b, lower, options)
    if eigvals_only:
        return call.w, call.values_pushforward(tangents[1])
    return scipy_outputs(call.w, call.V, stack=call.V.ndim > 2), Tangent(
        tuple, *call.vectors_pushforward(tangents[1])
    )


@rrule.register(sla.eigvalsh)
def scipy_eigvalsh_rrule(
    a: Any, b: Any = None, *, lower: bool = True, **options: Any
) -> tuple[np.ndarray, Any]:
    """Reverse rule for ``scipy.linalg.eigvalsh`` (standard problem): ``V diag(w_bar) V^H``."""
    call = _ScipyEigh("scipy.linalg.eigvalsh", a, b, lower, options)
    return _values_rule(call.name, a, call.w, call.V)


@frule.register(sla.eigvalsh)
def scipy_eigvalsh_frule(
    tangents: tuple[Any, ...], a: Any, b: Any = None, *, lower: bool = True, **options: Any
) -> tuple[Any, Any]:
    """Forward rule for ``scipy.linalg.eigvalsh`` (standard problem)."""
    call = _ScipyEigh("scipy.linalg.eigvalsh", a, b, lower, options)
    return call.w, call.values_pushforward(tangents[1])
