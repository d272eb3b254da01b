"""scipy.stats norm, t, gamma, beta and poisson: pdf/logpdf/cdf/logcdf in every argument."""

import numpy as np
import pytest
import scipy.stats as st

import rules  # noqa: F401  (registers the rules)
from rules import rrule
from rules.testing import check_frule, check_rrule
from tangents import NotImplementedTangent

FLOATS = [np.float64, np.float32]
CONTINUOUS = ["pdf", "logpdf", "cdf", "logcdf"]


def draw(rng, interval, shape, dtype=np.float64):
    return rng.uniform(*interval, shape).astype(dtype)


# distribution -> (interval of x, intervals of the shape parameters)
DISTRIBUTIONS = {
    "norm": ((-2, 2), []),
    "t": ((-2, 2), [(2, 6)]),
    "gamma": ((0.5, 3), [(1.5, 4)]),
    "beta": ((0.2, 0.8), [(1.5, 4), (1.5, 4)]),
}


def _arguments(rng, dist, dtype):
    x_interval, shape_intervals = DISTRIBUTIONS[dist]
    x = draw(rng, x_interval, (2, 3), dtype)
    shapes = [draw(rng, i, (3,), dtype) for i in shape_intervals]
    return x, shapes


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("method", CONTINUOUS)
@pytest.mark.parametrize("dist", list(DISTRIBUTIONS))
def test_continuous_in_x_and_shapes(rng, dist, method, dtype):
    f = getattr(getattr(st, dist), method)
    x, shapes = _arguments(rng, dist, dtype)
    cdf_like = method in ("cdf", "logcdf")
    constant = list(range(1, 1 + len(shapes))) if cdf_like else []
    report = check_rrule(f, x, *shapes)
    assert len(report.not_implemented) == (len(shapes) if cdf_like else 0)
    check_frule(f, x, *shapes, constant=constant)


@pytest.mark.parametrize("method", CONTINUOUS)
@pytest.mark.parametrize("dist", list(DISTRIBUTIONS))
def test_continuous_with_positional_loc_and_scale(rng, dist, method):
    f = getattr(getattr(st, dist), method)
    x, shapes = _arguments(rng, dist, np.float64)
    loc, scale = draw(rng, (-0.1, 0.1), (3,)), draw(rng, (0.9, 1.2), (2, 1))
    cdf_like = method in ("cdf", "logcdf")
    constant = list(range(1, 1 + len(shapes))) if cdf_like else []
    check_rrule(f, x, *shapes, loc, scale)
    check_frule(f, x, *shapes, loc, scale, constant=constant)
    check_rrule(f, float(x[0, 0]), *[float(s[0]) for s in shapes], 0.05, 1.1)


@pytest.mark.parametrize("method", CONTINUOUS)
def test_keyword_loc_and_scale_enter_the_partials_but_are_not_differentiated(rng, method):
    f = getattr(st.norm, method)
    x = draw(rng, (-2, 2), (2, 3))
    check_rrule(f, x, loc=0.3, scale=1.7)
    check_frule(f, x, loc=0.3, scale=1.7)
    assert len(rrule(f, x, loc=0.3, scale=1.7)[1](np.ones((2, 3)))) == 2
    check_rrule(st.t.logpdf, x, df=3.0, scale=2.0)


def test_the_cdf_shape_partials_say_what_is_missing(rng):
    x = draw(rng, (0.5, 3), (3,))
    _, pullback = rrule(st.gamma.cdf, x, 2.0)
    a_bar = pullback(np.ones(3))[2]
    assert isinstance(a_bar, NotImplementedTangent)
    assert "scipy.stats.gamma.cdf" in a_bar.info


@pytest.mark.parametrize("method", ["pmf", "logpmf", "cdf", "logcdf"])
def test_poisson_in_mu(rng, method):
    f = getattr(st.poisson, method)
    k = np.array([[0, 1, 3], [2, 5, 4]])
    mu = draw(rng, (1, 4), (3,))
    check_rrule(f, k, mu, constant=[0])
    check_frule(f, k, mu, constant=[0])
    check_rrule(f, k.astype(float), 2.5, constant=[0])
    check_rrule(f, k, mu.astype(np.float32), constant=[0])
    check_rrule(f, k + 1, mu, 1, constant=[0])
