"""scipy.stats.multivariate_normal.cdf and .logcdf in x, mean and cov (Plackett's identity).

An integer ``rng`` makes scipy's quasi-Monte Carlo integral a smooth function of the inputs, so
finite differences of it are meaningful. In one and two dimensions the lower-dimensional cdfs
are exact (``ndtr``, or none); in three the rule's two-dimensional cdfs and the primal carry
scipy's integration error (``abseps``), so those checks use tolerances above it.
"""

import numpy as np
import pytest
import scipy.stats as st

import rules  # noqa: F401  (registers the rules)
from rules import rrule
from rules.testing import check_frule, check_rrule

SEEDED = {"rng": 0}


def _spd(rng, d):
    a = rng.standard_normal((d, d))
    return a @ a.T / d + np.eye(d)


@pytest.mark.parametrize("method", ["cdf", "logcdf"])
@pytest.mark.parametrize(
    ("d", "x_shape"), [(1, (3,)), (2, (2,)), (2, (3, 2)), (3, (3,)), (3, (2, 3))], ids=str
)
def test_in_x_mean_and_cov(rng, method, d, x_shape):
    f = getattr(st.multivariate_normal, method)
    x = 0.5 * rng.standard_normal(x_shape)
    mean, cov = 0.3 * rng.standard_normal(d), _spd(rng, d)
    tol = {"rtol": 1e-3, "atol": 1e-5} if d == 3 else {}  # scipy's abseps is 1e-5
    check_rrule(f, x, mean, cov, symmetric=[2], fkwargs=SEEDED, **tol)
    check_frule(f, x, mean, cov, symmetric=[2], fkwargs=SEEDED, **tol)


def test_float32_and_default_mean(rng):
    f = st.multivariate_normal.cdf
    x = rng.standard_normal((4, 2)).astype(np.float32)
    cov = _spd(rng, 2).astype(np.float32)
    check_rrule(f, x, None, cov, symmetric=[2], fkwargs=SEEDED)
    check_frule(f, x, None, cov, symmetric=[2], fkwargs=SEEDED)


def test_unsupported_options_are_refused_by_name(rng):
    f = st.multivariate_normal.cdf
    with pytest.raises(ValueError, match=r"multivariate_normal.cdf need a \(d, d\)"):
        rrule(f, np.ones(2), np.zeros(2), 2.0)
    with pytest.raises(ValueError, match="allow_singular"):
        rrule(f, np.ones(2), np.zeros(2), np.eye(2), True)
    with pytest.raises(ValueError, match="lower_limit"):
        rrule(f, np.ones(2), np.zeros(2), np.eye(2), lower_limit=np.zeros(2))
