"""Coverage: every scipy function issue 19 names for scipy.special/.signal/.stats/.sparse has rules.

The lists are the issue's; a function without an rrule or an frule fails by name. (Every
function named there has its rules now; a gap found later goes into the lists and fails.)
"""

import operator

import numpy as np
import pytest
import scipy.signal
import scipy.sparse as sp
import scipy.sparse.linalg as spl
import scipy.special
import scipy.stats

import rules  # noqa: F401  (registers the rules)
from rules import frule, rrule

SPECIAL = [
    "gamma",
    "loggamma",
    "rgamma",
    "gammasgn",
    "beta",
    "betaln",
    "betainc",
    "gammainc",
    "gammaincc",
    "erfinv",
    "erfcinv",
    "polygamma",
    "multigammaln",
    "ndtr",
    "ndtri",
    "log_ndtr",
    "entr",
    "rel_entr",
    "kl_div",
    "xlogy",
    "xlog1py",
    "zeta",
    "expn",
    "j0",
    "j1",
    "jv",
    "y0",
    "y1",
    "yv",
    "i0",
    "i1",
    "iv",
    "i0e",
    "i1e",
    "ive",
    "k0",
    "k1",
    "kv",
    "logsumexp",
    "softmax",
    "log_softmax",
]
SIGNAL = ["convolve", "correlate", "fftconvolve", "convolve2d", "correlate2d", "lfilter"]
STATS = [
    *(
        f"{d}.{m}"
        for d in ("norm", "t", "gamma", "beta")
        for m in ("logpdf", "pdf", "cdf", "logcdf")
    ),
    *(f"poisson.{m}" for m in ("logpmf", "pmf", "cdf", "logcdf")),
    *(f"multivariate_normal.{m}" for m in ("logpdf", "pdf", "cdf", "logcdf")),
]
SPARSE_LINALG = ["spsolve", "splu", "expm_multiply"]


def _resolve(name):
    obj = scipy
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


NAMES = [
    *(f"scipy.special.{n}" for n in SPECIAL),
    *(f"scipy.signal.{n}" for n in SIGNAL),
    *(f"scipy.stats.{n}" for n in STATS),
    *(f"scipy.sparse.linalg.{n}" for n in SPARSE_LINALG),
]


@pytest.mark.parametrize("name", NAMES)
def test_has_an_rrule_and_an_frule(name):
    f = _resolve(name)
    assert f in rrule, f"no rrule for {name}"
    assert f in frule, f"no frule for {name}"


def test_superlu_solve_has_method_rules():
    lu = spl.splu(sp.eye_array(2, format="csc"))
    assert lu.solve in rrule
    assert lu.solve in frule


def test_sparse_times_dense_products_keep_the_pattern_both_ways():
    A = sp.eye_array(3, format="csr")
    for args in ((A, np.ones(3)), (np.ones(3), A)):
        _, pullback = rrule(operator.matmul, *args)
        A_bar = next(c for c in pullback(np.ones(3)) if sp.issparse(c))
        assert A_bar.nnz == A.nnz
        tangents = tuple(
            sp.eye_array(3, format="csr") if sp.issparse(a) else np.ones(3) for a in args
        )
        _, y_dot = frule((None, *tangents), operator.matmul, *args)
        np.testing.assert_allclose(y_dot, 2 * np.ones(3))  # I 1 + I 1
