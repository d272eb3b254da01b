"""The cases' reference formulas against central finite differences of the primal function.

The harness checks this project's rules against the references, so a wrong reference would pass
a wrong rule or fail a right one; here each reference is checked on its own, in plain numpy, at
small sizes: a pushforward reference's tangent against ``(f(A + hE) - f(A - hE)) / 2h``, a
pullback reference's ``<A_bar, E>`` against the same difference of ``<y_bar, f(.)>``. ``E`` is the
tangent the case's pushforward builder makes (symmetric where the function reads one triangle).
Eigenvectors and singular vectors are matched in sign to the unperturbed ones before differencing.
"""

import dataclasses

import numpy as np
import pytest
from bench.case import Size
from bench.cases import CASES
from bench.harness import flatten

SIZES = [Size(4), Size(5, batch=3)]
STEP = 1e-6
RTOL = 1e-6


def _align_eigh(y, y0):
    w, V = y
    return w, V * np.sign(np.sum(V * y0[1], axis=-2))[..., None, :]


def _align_svd(y, y0):
    U, s, Vh = y
    d = np.sign(np.sum(U * y0[0], axis=-2))
    return U * d[..., None, :], s, Vh * d[..., :, None]


ALIGN = {"eigh": _align_eigh, "svd": _align_svd}
"""Per operation, ``align(y, y0)``: ``y`` with its vector signs matched to ``y0``'s."""


def _function(case):
    f, kwargs = case.function, case.kwargs
    align = ALIGN.get(case.op)

    def evaluate(args, y0=None):
        y = f(*args, **kwargs)
        if align is not None and y0 is not None:
            y = align(tuple(y), tuple(y0))
        return tuple(np.asarray(a, dtype=float) for a in flatten(y))

    return evaluate


def _directions(case, size):
    """The tangents of the case's pushforward builder at ``size`` (the same op's pushforward)."""
    op = case.op.removesuffix("-adapter")  # bench/cases/adapters.py repeats pullback cases
    pushforward = next(c for c in CASES if c.op == op and c.kind == "pushforward")
    return pushforward.inputs(size, np.random.default_rng(7)).tangents


def _difference(evaluate, args, directions):
    y0 = evaluate(args)
    plus = evaluate([a + STEP * e for a, e in zip(args, directions, strict=True)], y0)
    minus = evaluate([a - STEP * e for a, e in zip(args, directions, strict=True)], y0)
    return [(p - m) / (2 * STEP) for p, m in zip(plus, minus, strict=True)]


def _close(actual, expected):
    scale = max(float(np.max(np.abs(expected), initial=0.0)), 1.0)
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=RTOL * scale)


def _rows(kind):
    return [
        pytest.param(case, size, id=f"{case.name}-{size.label}")
        for case in CASES
        if case.kind == kind
        for size in SIZES
    ]


@pytest.mark.parametrize(("case", "size"), _rows("pushforward"))
def test_pushforward_reference_matches_finite_differences(case, size):
    inputs = case.inputs(size, np.random.default_rng(1))
    reference = flatten(case.reference(inputs))
    evaluate = _function(case)
    primal = evaluate(inputs.args)
    assert len(reference) == 2 * len(primal)
    for ours, expected in zip(reference, primal, strict=False):
        _close(ours, expected)
    slopes = _difference(evaluate, inputs.args, inputs.tangents)
    for ours, expected in zip(reference[len(primal) :], slopes, strict=True):
        _close(ours, expected)


@pytest.mark.parametrize(("case", "size"), _rows("pullback"))
def test_pullback_reference_matches_finite_differences(case, size):
    inputs = case.inputs(size, np.random.default_rng(2))
    inputs = dataclasses.replace(inputs, output=case.forward(inputs))
    args_bar = flatten(case.reference(inputs))
    directions = _directions(case, size)
    slopes = _difference(_function(case), inputs.args, directions)
    expected = sum(np.sum(c * d) for c, d in zip(flatten(inputs.cotangent), slopes, strict=True))
    actual = sum(np.sum(a * e) for a, e in zip(args_bar, directions, strict=True))
    _close(actual, expected)
