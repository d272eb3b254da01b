r"""Rules for the gamma family of scipy.special, made with :func:`rules.scalar_rule`.

One row per function, with :math:`\psi` the digamma function and :math:`\psi^{(n)}` polygamma:

* ``gamma``: :math:`\Gamma' = \Gamma\,\psi`; ``rgamma`` :math:`= 1/\Gamma`: :math:`-\psi/\Gamma`;
  ``loggamma`` (principal branch of :math:`\log\Gamma`): :math:`\psi`. Holomorphic: complex too.
* ``gammasgn``, the sign of :math:`\Gamma`, is locally constant: not differentiable.
* ``beta(a, b)`` :math:`= B`: :math:`(B(\psi(a) - \psi(a+b)),\ B(\psi(b) - \psi(a+b)))`;
  ``betaln``: the same without the factor :math:`B` (real only, as scipy's loops).
* ``betainc(a, b, x)`` :math:`= I_x(a, b)`: :math:`\partial_x = x^{a-1}(1-x)^{b-1}/B(a, b)`;
  the partials in ``a`` and ``b`` (a hypergeometric series) are ``NotImplementedTangent``.
* ``gammainc(a, x)`` :math:`= P(a, x)`: :math:`\partial_x = x^{a-1}e^{-x}/\Gamma(a)`;
  ``gammaincc`` :math:`= 1 - P`: its negative. The partial in ``a`` is ``NotImplementedTangent``.
* ``polygamma(n, x)`` :math:`= \psi^{(n)}(x)`: :math:`\psi^{(n+1)}(x)`; the integer order
  ``n`` has no tangent (a Python int gets ``NoTangent()``, an integer array a zero).
* ``multigammaln(a, d)`` :math:`= \log\Gamma_d(a)`: :math:`\sum_{j=0}^{d-1}\psi(a - j/2)`.
* ``zeta(x, q)`` (Hurwitz; Riemann without ``q``): :math:`\partial_q = -x\,\zeta(x+1, q)`;
  :math:`\partial_x` is ``NotImplementedTangent``.
* ``expn(n, x)`` :math:`= E_n(x)`: :math:`E_n' = -E_{n-1}` for :math:`n \ge 1` and
  :math:`E_0' = -e^{-x}(1 + x)/x^2` (``E_0 = e^{-x}/x``); ``n`` has no tangent. scipy truncates a
  float ``n`` toward zero (``expn(2.9, x) = E_2(x)``), so the rule uses that integer order.

References
----------
DLMF 5.2.2 and 5.15 (gamma, polygamma), 5.12.1 (beta), 8.2.4 and 8.8.13 (incomplete gamma),
8.17.2 (incomplete beta), 25.11.17 (Hurwitz zeta), 8.19.13 (generalized exponential integral);
Muirhead, *Aspects of Multivariate Statistical Theory* (1982), Def. 2.1.10 (multivariate gamma).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special as sc

from rules.core.definition import non_differentiable, scalar_rule
from rules.core.nesting import as_array, call
from tangents import NotImplementedTangent, ZeroTangent

__all__: list[str] = []


def _not_implemented(function: str, argument: str, why: str) -> NotImplementedTangent:
    return NotImplementedTangent(
        f"the derivative of scipy.special.{function} with respect to {argument} is not "
        f"implemented ({why}); differentiate with respect to the other arguments only"
    )


def _real_only(function: str, *args: Any) -> None:
    if any(np.iscomplexobj(a) for a in args):
        raise TypeError(f"the rules of {function} support real input only")


def _beta_partials(a: Any, b: Any, y: Any) -> tuple[Any, Any]:
    _real_only("beta", a, b)
    both = sc.digamma(np.add(a, b))
    return y * (sc.digamma(a) - both), y * (sc.digamma(b) - both)


def _betaln_partials(a: Any, b: Any, y: Any) -> tuple[Any, Any]:
    _real_only("betaln", a, b)
    both = sc.digamma(np.add(a, b))
    return sc.digamma(a) - both, sc.digamma(b) - both


def _betainc_partials(a: Any, b: Any, x: Any, y: Any) -> tuple[Any, Any, Any]:
    _real_only("betainc", a, b, x)
    series = "a hypergeometric series scipy does not provide"
    density = np.exp(sc.xlogy(np.subtract(a, 1), x) + sc.xlog1py(np.subtract(b, 1), -x))
    return (
        _not_implemented("betainc", "a", series),
        _not_implemented("betainc", "b", series),
        density / sc.beta(a, b),
    )


def _gammainc_density(a: Any, x: Any) -> Any:
    r""":math:`x^{a-1} e^{-x} / \Gamma(a)`, computed in logs."""
    return np.exp(sc.xlogy(np.subtract(a, 1), x) - x - sc.gammaln(a))


def _gammainc_partials(a: Any, x: Any, y: Any) -> tuple[Any, Any]:
    _real_only("gammainc", a, x)
    return _not_implemented("gammainc", "a", "no closed form"), _gammainc_density(a, x)


def _gammaincc_partials(a: Any, x: Any, y: Any) -> tuple[Any, Any]:
    _real_only("gammaincc", a, x)
    return _not_implemented("gammaincc", "a", "no closed form"), -_gammainc_density(a, x)


def _polygamma_partials(n: Any, x: Any, y: Any) -> tuple[Any, Any]:
    _real_only("polygamma", x)
    return ZeroTangent(), call(sc.polygamma, np.add(n, 1), x)


def _multigammaln_partials(a: Any, d: Any, y: Any) -> tuple[Any, Any]:
    _real_only("multigammaln", a)
    a = as_array(a)
    return sum(sc.digamma(a - j / 2) for j in range(int(d))) + np.zeros_like(a), ZeroTangent()


def _zeta_partials(x: Any, *q_and_y: Any) -> Any:
    _real_only("zeta", x, *q_and_y)
    x_partial = _not_implemented("zeta", "x", "no closed form")
    if len(q_and_y) == 1:  # zeta(x): Riemann
        return x_partial
    q = q_and_y[0]
    return x_partial, -np.multiply(x, call(sc.zeta, np.add(x, 1), q))


def _expn_partials(n: Any, x: Any, y: Any) -> tuple[Any, Any]:
    _real_only("expn", x)
    m = np.trunc(as_array(n, dtype=np.float64))  # scipy truncates a float order toward 0
    with np.errstate(divide="ignore", invalid="ignore"):
        e0 = -np.exp(-x) * (1 + x) / np.square(x)
        lower = -sc.expn(np.maximum(m - 1, 0), x)
    return ZeroTangent(), np.where(m == 0, e0, np.where(m < 0, np.nan, lower))


scalar_rule(sc.gamma, lambda x, y: y * sc.digamma(x))
scalar_rule(sc.rgamma, lambda x, y: -y * sc.digamma(x))
scalar_rule(sc.loggamma, lambda x, y: sc.digamma(x))
non_differentiable(sc.gammasgn)
scalar_rule(sc.beta, _beta_partials)
scalar_rule(sc.betaln, _betaln_partials)
scalar_rule(sc.betainc, _betainc_partials)
scalar_rule(sc.gammainc, _gammainc_partials)
scalar_rule(sc.gammaincc, _gammaincc_partials)
scalar_rule(sc.polygamma, _polygamma_partials)
scalar_rule(sc.multigammaln, _multigammaln_partials)
scalar_rule(sc.zeta, _zeta_partials)
scalar_rule(sc.expn, _expn_partials)
