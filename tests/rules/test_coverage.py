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
]

NUMPY_LINALG = []

SCIPY_LINALG = []

LIBRARIES = {"numpy": NUMPY, "numpy.linalg": NUMPY_LINALG, "scipy.linalg": SCIPY_LINALG}

NOT_YET = set()
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
