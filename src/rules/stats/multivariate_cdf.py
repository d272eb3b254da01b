r"""Rules for ``scipy.stats.multivariate_normal.cdf`` and ``.logcdf`` in ``x``, ``mean`` and ``cov``.

HIPS autograd differentiates only ``logpdf``, ``pdf`` and ``entropy`` of the multivariate normal;
the cdf's derivatives are nevertheless closed forms in lower-dimensional cdfs. With
:math:`r = x - \mu` and :math:`F = P(Y \le r)`, :math:`Y \sim N(0, \Sigma)`:

* the gradient: :math:`g_i = \partial F / \partial r_i = \varphi(r_i; \Sigma_{ii})\,
  P(Y_{-i} \le r_{-i} \mid Y_i = r_i)`, the conditional law being normal with mean
  :math:`\Sigma_{-i,i} r_i / \Sigma_{ii}` and covariance
  :math:`\Sigma_{-i,-i} - \Sigma_{-i,i}\Sigma_{i,-i} / \Sigma_{ii}`; :math:`\bar x = \bar y\, g`,
  :math:`\bar\mu = -\sum \bar y\, g`;
* the covariance, by Plackett's identity (the heat equation of the density):
  :math:`\partial F / \partial \Sigma = \tfrac12 \nabla_r^2 F`, whose off-diagonal entries are
  :math:`\varphi_2(r_i, r_j)\, P(Y_{-ij} \le r_{-ij} \mid Y_i = r_i, Y_j = r_j)`. Its diagonal
  follows from the invariance of ``F`` under rescaling a coordinate (:math:`r_i \to s r_i`,
  :math:`\Sigma \to S \Sigma S`): :math:`(\nabla^2 F\, \Sigma)_{ii} = -r_i g_i`.

So one point costs ``d`` cdfs in ``d - 1`` dimensions and ``d (d - 1) / 2`` in ``d - 2`` (exact
``ndtr`` in one dimension). They are computed by scipy with the call's ``maxpts``, ``abseps``,
``releps`` and ``rng``: pass an integer seed as ``rng`` for derivatives (and primal values) that
are smooth functions of the inputs; with fresh randomness each value carries scipy's
quasi-Monte Carlo error (``abseps``). ``logcdf`` divides by the cdf. The cotangent of ``cov``
is symmetric (for the symmetric covariance); ``cov`` must be a (d, d) matrix, and
``allow_singular=True`` and ``lower_limit`` are refused by name.

References
----------
R. L. Plackett, "A reduction formula for normal multivariate integrals", Biometrika 41 (1954)
351-360 (the covariance derivative); A. Genz, F. Bretz, "Computation of Multivariate Normal and t
Probabilities", Springer 2009, section 2.2 (conditional distributions of the normal).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import scipy.stats as st
from scipy.special import ndtr

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array
from rules.core.options import refuse, rrule_with_options
from rules.core.registry import frule
from tangents import AbstractZero, NoTangent, ProjectTo, unthunk

__all__: list[str] = []

_MVN = st.multivariate_normal


class _Orthant:
    """``F``, its gradient ``g`` and Hessian ``H`` in ``r`` at each point, from scipy's cdfs."""

    def __init__(self, name: str, x: Any, mean: Any, cov: Any, options: dict[str, Any]) -> None:
        refuse(name, allow_singular=options.pop("allow_singular"))
        refuse(name, lower_limit=options.pop("lower_limit"))
        cov = as_array(cov, dtype=np.float64)
        if cov.ndim != 2 or cov.shape[0] != cov.shape[1]:
            raise ValueError(
                f"the rules of {name} need a (d, d) covariance matrix, got shape {cov.shape}"
            )
        d = cov.shape[0]
        if mean is not None and np.shape(mean) != (d,):
            raise ValueError(f"the rules of {name} need a mean of shape ({d},) or None")
        self.d, self.cov, self.options = d, cov, options
        points = _MVN._process_quantiles(as_array(x, dtype=np.float64), d).reshape(-1, d)
        self.r = points - (0.0 if mean is None else as_array(mean, dtype=np.float64))

    def _given(self, S: tuple[int, ...]) -> np.ndarray:
        """``density(r_S) * P(Y_R <= r_R | Y_S = r_S)`` at each point, ``R`` the other indices."""
        cov, r = self.cov, self.r
        R = [k for k in range(self.d) if k not in S]
        S_ = list(S)
        C_SS = cov[np.ix_(S_, S_)]
        density = np.atleast_1d(_MVN.pdf(r[:, S_], None, C_SS)).reshape(-1)
        if not R:
            return density
        W = np.linalg.solve(C_SS, cov[np.ix_(S_, R)]).T  # Sigma_RS Sigma_SS^{-1}
        z = r[:, R] - r[:, S_] @ W.T
        C = cov[np.ix_(R, R)] - W @ cov[np.ix_(S_, R)]
        if len(R) == 1:
            rest = ndtr(z[:, 0] / np.sqrt(C[0, 0]))
        else:  # the call's maxpts, abseps, releps and rng
            rest = np.atleast_1d(_MVN.cdf(z, None, C, False, **self.options)).reshape(-1)
        return density * rest

    def gradient(self) -> np.ndarray:
        """``g``, one row per point."""
        return np.stack([self._given((i,)) for i in range(self.d)], axis=1)

    def hessian(self, g: np.ndarray) -> np.ndarray:
        """``H``, one matrix per point (off-diagonal by Plackett, diagonal by the rescaling)."""
        cov, r = self.cov, self.r
        H = np.zeros((r.shape[0], self.d, self.d))
        for i, j in combinations(range(self.d), 2):
            H[:, i, j] = H[:, j, i] = self._given((i, j))
        off = np.einsum("nik,ik->ni", H, cov)  # sum_{k != i} H_ik Sigma_ik (H_ii is still 0)
        H[:, np.arange(self.d), np.arange(self.d)] = -(r * g + off) / np.diag(cov)
        return H


def _register(method: str, log: bool) -> None:
    f = getattr(_MVN, method)
    name = f"scipy.stats.multivariate_normal.{method}"

    def _call(x: Any, mean: Any, cov: Any, allow_singular: bool, rest: tuple, kw: dict) -> Any:
        options = dict(zip(("maxpts", "abseps", "releps"), rest, strict=False))
        options.update(kw)
        options.setdefault("lower_limit", None)
        plan = _Orthant(name, x, mean, cov, {**options, "allow_singular": allow_singular})
        y = f(x, mean, cov, allow_singular, **options)
        n = plan.r.shape[0]
        # d log F = dF / F
        scale = 1.0 / np.exp(np.reshape(y, n)) if log else np.ones(n)
        return y, plan, scale

    def mvn_cdf_rrule(
        x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False, *rest: Any, **kw: Any
    ) -> Any:
        y, plan, scale = _call(x, mean, cov, allow_singular, rest, kw)
        project_x, project_mean, project_cov = ProjectTo(x), ProjectTo(mean), ProjectTo(cov)
        n = plan.r.shape[0]

        def mvn_cdf_pullback(y_bar: Any) -> tuple[Any, ...]:
            w = as_array(as_array_cotangent(unthunk(y_bar), f"{name}'s pullback"))
            w = w.reshape(n) * scale
            g = plan.gradient()
            x_bar = project_x((w[:, None] * g).reshape(np.shape(x)))
            mean_bar = NoTangent() if mean is None else project_mean(-(w @ g))
            cov_bar = project_cov(0.5 * np.einsum("n,nij->ij", w, plan.hessian(g)))
            return NoTangent(), x_bar, mean_bar, cov_bar

        mvn_cdf_pullback.__qualname__ = f"{method}_pullback"
        return y, mvn_cdf_pullback

    def mvn_cdf_frule(
        tangents: tuple[Any, ...],
        x: Any,
        mean: Any = None,
        cov: Any = 1,
        allow_singular: bool = False,
        *rest: Any,
        **kw: Any,
    ) -> Any:
        y, plan, scale = _call(x, mean, cov, allow_singular, rest, kw)
        n, d = plan.r.shape
        dots = [unthunk(t) for t in tangents[1:4]]
        dots += [NoTangent()] * (3 - len(dots))
        x_dot, mean_dot, cov_dot = dots
        operation = f"{name}'s frule"
        g = plan.gradient()
        y_dot = np.zeros(n)
        if not isinstance(x_dot, AbstractZero):
            y_dot += np.sum(g * np.reshape(as_array_cotangent(x_dot, operation), (n, d)), 1)
        if mean is not None and not isinstance(mean_dot, AbstractZero):
            y_dot -= g @ as_array(as_array_cotangent(mean_dot, operation))
        if not isinstance(cov_dot, AbstractZero):
            S_dot = as_array(as_array_cotangent(cov_dot, operation))
            y_dot += 0.5 * np.einsum("nij,ij->n", plan.hessian(g), S_dot)
        return y, ProjectTo(y)(np.reshape(y_dot * scale, np.shape(y)))

    mvn_cdf_rrule.__qualname__ = f"multivariate_normal.{method}_rrule"
    mvn_cdf_frule.__qualname__ = f"multivariate_normal.{method}_frule"
    rrule_with_options(f)(mvn_cdf_rrule)
    frule.register(f)(mvn_cdf_frule)


_register("cdf", log=False)
_register("logcdf", log=True)
