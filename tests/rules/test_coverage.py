"""Rule coverage (issue 19): every function the issue names has its rules, checked by name.

One list per library; a function is covered when both an rrule and an frule are registered for
it (a non-differentiable one counts: ``rules.non_differentiable`` registers both). A name in
``NOT_YET`` is a known gap: its test is a strict xfail, so the gap stays visible and the test
fails once the rule lands (then remove the name from ``NOT_YET``). To cover another library,
add its list to ``LIBRARIES``.
"""

import operator

import numpy as np
import pytest
import scipy
import scipy.linalg  # resolve() reads attributes of the scipy package

import rules  # noqa: F401  (registers the rules)
from rules import frule, rrule

NUMPY = [
    # np.fft
    "np.fft.fft",
    "np.fft.ifft",
    "np.fft.fft2",
    "np.fft.ifft2",
    "np.fft.fftn",
    "np.fft.ifftn",
    "np.fft.rfft",
    "np.fft.irfft",
    "np.fft.rfft2",
    "np.fft.irfft2",
    "np.fft.rfftn",
    "np.fft.irfftn",
    "np.fft.hfft",
    "np.fft.ihfft",
    "np.fft.fftshift",
    "np.fft.ifftshift",
    "np.fft.fftfreq",
    "np.fft.rfftfreq",
    # products, differences, signals
    "np.tensordot",
    "np.cross",
    "np.diff",
    "np.gradient",
    "np.convolve",
    "np.correlate",
    "np.interp",
    "np.trapezoid",
    "np.polyval",
    # elementwise
    "np.sinc",
    "np.fabs",
    "np.remainder",
    "np.mod",
    "np.fmod",
    "np.degrees",
    "np.radians",
    "np.nan_to_num",
    "np.real_if_close",
    "np.select",
    # shapes, copies, constructors
    "np.atleast_1d",
    "np.atleast_2d",
    "np.atleast_3d",
    "np.fliplr",
    "np.flipud",
    "np.rot90",
    "np.rollaxis",
    "np.hsplit",
    "np.vsplit",
    "np.dsplit",
    "np.partition",
    "np.linspace",
    "np.full",
    "np.copy",
    "np.asarray",
    "np.astype",
    # reductions and statistics
    "np.nansum",
    "np.nanmean",
    "np.nanvar",
    "np.nanstd",
    "np.nanmax",
    "np.nanmin",
    "np.nanprod",
    "np.nancumsum",
    "np.nancumprod",
    "np.nanmedian",
    "np.nanpercentile",
    "np.nanquantile",
    "np.median",
    "np.percentile",
    "np.quantile",
    "np.ptp",
    "np.cov",
    "np.corrcoef",
    # unique's values and histogram's edges; the rest not differentiable (registered with
    # rules.non_differentiable), and bincount's weights
    "np.unique",
    "np.isin",
    "np.histogram",
    "np.bincount",
    "np.eye",
    "np.arange",
    "np.nanargmax",
    "np.nanargmin",
]

NUMPY_LINALG = [
    "np.linalg.tensordot",
    "np.linalg.tensorsolve",
    "np.linalg.tensorinv",
    "np.linalg.cond",
    "np.linalg.vecdot",
    "np.vecdot",
    "np.linalg.matrix_transpose",
    "np.matrix_transpose",
    "np.linalg.outer",
    "np.linalg.cross",
    "np.linalg.norm",
    "np.linalg.matrix_rank",
]

SCIPY_LINALG = [
    # aliases of numpy rules
    "scipy.linalg.det",
    "scipy.linalg.pinv",
    "scipy.linalg.eig",
    "scipy.linalg.eigvals",
    "scipy.linalg.lstsq",
    "scipy.linalg.norm",
    # structured constructors and solvers
    "scipy.linalg.block_diag",
    "scipy.linalg.toeplitz",
    "scipy.linalg.circulant",
    "scipy.linalg.solve_banded",
    "scipy.linalg.expm_frechet",
    "scipy.linalg.solve_continuous_lyapunov",
    "scipy.linalg.solve_discrete_lyapunov",
    "scipy.linalg.solve_continuous_are",
    # factorizations
    "scipy.linalg.schur",
    "scipy.linalg.polar",
    "scipy.linalg.rq",
    "scipy.linalg.ldl",
    # general (non-Hermitian) matrix functions
    "scipy.linalg.sqrtm",
    "scipy.linalg.logm",
    "scipy.linalg.fractional_matrix_power",
]

LIBRARIES = {"numpy": NUMPY, "numpy.linalg": NUMPY_LINALG, "scipy.linalg": SCIPY_LINALG}

NOT_YET: set[str] = set()
"""Functions of the lists above without rules yet (issue 19 left open for them)."""

_ROOTS = {"np": np, "scipy": scipy, "operator": operator}


def resolve(name):
    """The function a name such as ``np.fft.fft`` or ``scipy.linalg.schur`` means."""
    root, *path = name.split(".")
    obj = _ROOTS[root]
    for attr in path:
        obj = getattr(obj, attr)
    return obj


def _cases():
    for library, names in LIBRARIES.items():
        for name in names:
            marks = (
                [pytest.mark.xfail(strict=True, reason="no rule yet")] if name in NOT_YET else []
            )
            yield pytest.param(name, id=f"{library}:{name}", marks=marks)


@pytest.mark.parametrize("name", list(_cases()))
def test_function_has_rules(name):
    f = resolve(name)
    assert f in rrule, f"{name} has no rrule"
    assert f in frule, f"{name} has no frule"


def test_not_yet_names_are_in_the_lists():
    listed = {name for names in LIBRARIES.values() for name in names}
    assert set(NOT_YET) <= listed, sorted(set(NOT_YET) - listed)


def test_lists_have_no_duplicates():
    for library, names in LIBRARIES.items():
        assert len(names) == len(set(names)), library
