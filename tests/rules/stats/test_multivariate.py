"""scipy.stats.multivariate_normal.logpdf and .pdf in x, mean and cov."""

import numpy as np
import pytest
import scipy.stats as st

import rules  # noqa: F401  (registers the rules)
from rules import rrule
from rules.testing import check_frule, check_rrule


def _spd(rng, d):
    a = rng.standard_normal((d, d))
    return a @ a.T / d + np.eye(d)


@pytest.mark.parametrize("x_shape", [(3,), (4, 3), (2, 2, 3)], ids=str)
@pytest.mark.parametrize("method", ["logpdf", "pdf"])
def test_in_x_mean_and_cov(rng, method, x_shape):
    f = getattr(st.multivariate_normal, method)
    x = 0.5 * rng.standard_normal(x_shape)
    mean, cov = 0.3 * rng.standard_normal(3), _spd(rng, 3)
    check_rrule(f, x, mean, cov, symmetric=[2])
    check_frule(f, x, mean, cov, symmetric=[2])


def test_float32_and_default_mean(rng):
    f = st.multivariate_normal.logpdf
    x = rng.standard_normal((4, 2)).astype(np.float32)
    cov = _spd(rng, 2).astype(np.float32)
    check_rrule(f, x, None, cov, symmetric=[2])
    check_frule(f, x, None, cov, symmetric=[2])


def test_cov_shorthands_and_allow_singular_are_refused_by_name(rng):
    f = st.multivariate_normal.logpdf
    with pytest.raises(ValueError, match=r"multivariate_normal.logpdf need a \(d, d\)"):
        rrule(f, np.ones(2), np.zeros(2), 2.0)
    with pytest.raises(ValueError, match="allow_singular"):
        rrule(f, np.ones(2), np.zeros(2), np.eye(2), True)
