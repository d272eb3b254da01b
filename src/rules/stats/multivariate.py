r"""Rules for ``scipy.stats.multivariate_normal.logpdf`` and ``.pdf`` in ``x``, ``mean`` and ``cov``.

With :math:`r = x - \mu` for each point (the last axis of ``x``), :math:`\alpha = \Sigma^{-1} r`
and :math:`\log p = -\tfrac12(d \log 2\pi + \log\det\Sigma + r^T\alpha)`:

.. math::

    \bar x = -\bar y\,\alpha, \qquad \bar\mu = \sum \bar y\,\alpha, \qquad
    \bar\Sigma = \tfrac12 \sum \bar y\,(\alpha\alpha^T - \Sigma^{-1}),

summed over the points; the pushforward is :math:`\dot y = \alpha^T(\dot\mu - \dot x) +
\tfrac12(\alpha^T\dot\Sigma\alpha - \operatorname{tr}(\Sigma^{-1}\dot\Sigma))`. ``pdf`` scales
both by ``pdf``. :math:`\bar\Sigma` is symmetric, a cotangent for the symmetric covariance.
``cov`` must be a (d, d) matrix passed positionally to be differentiated (scipy's scalar or
diagonal shorthands are refused by name), and ``allow_singular=True`` is refused: the density of
a singular covariance is not differentiable in it.

References
----------
M. B. Giles, "An extended collection of matrix derivative results for forward and reverse mode
algorithmic differentiation" (2008), sections 2.2.2 and 2.2.4 (inverse, determinant); HIPS
autograd, ``autograd/scipy/stats/multivariate_normal.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.stats as st

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import as_array
from rules.core.registry import frule, rrule
from tangents import AbstractZero, NoTangent, ProjectTo, ZeroTangent, unthunk

__all__: list[str] = []

_MVN = st.multivariate_normal


class _Gaussian:
    """The solves a rule needs, from one Cholesky factorization of the covariance."""

    def __init__(self, name: str, x: Any, mean: Any, cov: Any, allow_singular: bool) -> None:
        if allow_singular:
            raise ValueError(f"the rules of {name} do not support allow_singular=True")
        cov = as_array(cov)
        if cov.ndim != 2 or cov.shape[0] != cov.shape[1]:
            raise ValueError(
                f"the rules of {name} need a (d, d) covariance matrix, got shape {cov.shape}"
            )
        d = cov.shape[0]
        x = as_array(x)
        self.points = x.reshape(-1, d)
        residual = self.points - (0.0 if mean is None else as_array(mean))
        self.factor = sla.cho_factor(cov, lower=True)
        self.alpha = sla.cho_solve(self.factor, residual.T).T  # Sigma^{-1} r, one row per point
        self.d = d

    def inverse(self) -> np.ndarray:
        return sla.cho_solve(self.factor, np.eye(self.d))


def _weights(y_bar: Any, name: str, n: int) -> np.ndarray:
    return as_array(as_array_cotangent(y_bar, f"{name}'s pullback")).reshape(n)


def _register(method: str, scaled: bool) -> None:
    f = getattr(_MVN, method)
    name = f"scipy.stats.multivariate_normal.{method}"

    def mvn_rrule(x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Any:
        gaussian = _Gaussian(name, x, mean, cov, allow_singular)
        y = f(x, mean, cov, allow_singular)
        project_x, project_mean, project_cov = ProjectTo(x), ProjectTo(mean), ProjectTo(cov)
        n = gaussian.points.shape[0]
        per_point = np.reshape(y, n)

        def mvn_pullback(y_bar: Any) -> tuple[Any, ...]:
            w = _weights(unthunk(y_bar), name, n)
            if scaled:
                w = w * per_point  # d pdf = pdf d logpdf
            alpha = gaussian.alpha
            x_bar = -(w[:, None] * alpha).reshape(np.shape(x))
            mean_bar = (
                NoTangent() if mean is None else project_mean(np.sum(w[:, None] * alpha, axis=0))
            )
            cov_bar = 0.5 * ((alpha.T * w) @ alpha - np.sum(w) * gaussian.inverse())
            return NoTangent(), project_x(x_bar), mean_bar, project_cov(cov_bar)

        mvn_pullback.__qualname__ = f"{method}_pullback"
        return y, mvn_pullback

    def mvn_frule(
        tangents: tuple[Any, ...],
        x: Any,
        mean: Any = None,
        cov: Any = 1,
        allow_singular: bool = False,
    ) -> Any:
        gaussian = _Gaussian(name, x, mean, cov, allow_singular)
        y = f(x, mean, cov, allow_singular)
        n, d = gaussian.points.shape
        alpha = gaussian.alpha
        dots = [unthunk(t) for t in tangents[1:4]] + [ZeroTangent()] * (4 - len(tangents))
        x_dot, mean_dot, cov_dot = dots[:3]
        y_dot = np.zeros(n, dtype=np.result_type(alpha.dtype, np.float64))
        operation = f"{name}'s frule"
        if not isinstance(x_dot, AbstractZero):
            y_dot -= np.sum(alpha * np.reshape(as_array_cotangent(x_dot, operation), (n, d)), 1)
        if mean is not None and not isinstance(mean_dot, AbstractZero):
            y_dot += alpha @ as_array(as_array_cotangent(mean_dot, operation))
        if not isinstance(cov_dot, AbstractZero):
            S_dot = as_array(as_array_cotangent(cov_dot, operation))
            quadratic = np.einsum("ni,ij,nj->n", alpha, S_dot, alpha)
            y_dot += 0.5 * (quadratic - np.sum(gaussian.inverse() * S_dot.T))
        if scaled:
            y_dot = y_dot * np.reshape(y, n)
        return y, ProjectTo(y)(np.reshape(y_dot, np.shape(y)))

    mvn_rrule.__qualname__ = f"multivariate_normal.{method}_rrule"
    mvn_frule.__qualname__ = f"multivariate_normal.{method}_frule"
    rrule.register(f)(mvn_rrule)
    frule.register(f)(mvn_frule)


_register("logpdf", scaled=False)
_register("pdf", scaled=True)
