"""Every rule the fuzz can build is twice differentiable, or listed in ``docs/second-order.md``.

For each rule that ``tests/rules/test_fuzz.py`` has a builder for (its linalg builders and its
generic array calls), one float64 case goes through ``check_rrule(order=2)``. A rule passes, or
it is in the documented list of rules that are not twice differentiable, and then the check must
fail with the clear error the driver raises (never a wrong number): so a listed rule that becomes
twice differentiable fails here until it leaves the list, and a new rule that is not fails until
it is listed with its reason.
"""

import importlib.util
import pathlib
import re
import warnings

import numpy as np
import pytest

from rules import rrule
from rules.core.registry import function_name
from rules.testing import RuleCheckError, check_rrule

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _fuzz_module():
    spec = importlib.util.spec_from_file_location(
        "fuzz_builders", ROOT / "tests/rules/test_fuzz.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FUZZ = _fuzz_module()

# The deferred rule sets (scipy.signal, scipy.stats), loaded now: the cases must not depend on
# what other test modules imported first.
import scipy.signal
import scipy.stats

rrule.lookup(scipy.signal.convolve)
rrule.lookup(scipy.stats.norm.logpdf)


def documented_list():
    """``{rule name: reason}`` from the table of ``docs/second-order.md``'s list section."""
    text = (ROOT / "docs/second-order.md").read_text()
    section = text.split("## Not twice differentiable", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| ([^|]+) \|$", section, re.MULTILINE)
    return {name: reason.strip() for name, reason in rows}


NOT_TWICE = documented_list()

# Checked elsewhere or not by this sweep, with the reason.
SKIPPED = {
    **dict.fromkeys(FUZZ.KNOWN_FAILURES, "fails at first order: the fuzz's strict xfail"),
    "np.interp": "the sweep's inputs (unsorted xp) are outside its domain",
    "np.linalg.multi_dot": "takes a list of arrays; its pieces are matmul, checked at order 2",
    "scipy.linalg.funm": "needs a MatrixFunction with f'; sqrtm, logm, sinm, cosm stand for it",
}


class _FixedDraw:
    """A hypothesis ``data`` stand-in: one fixed choice per label."""

    def __init__(self, values):
        self.values = values

    def draw(self, strategy, label=None):
        return self.values[label]


def _draw(dtype):
    data = _FixedDraw({"seed": 1, "dtype": np.dtype(dtype), "layout": "C", "n": 2, "shape": (3,)})
    return FUZZ.Draw(data, [np.dtype(dtype)])


def _linalg_cases():
    for f, builder in FUZZ.LINALG.items():
        args, kwargs, options = builder(_draw(np.float64), 2)
        yield function_name(f), f, args, kwargs, options


def _library_rule(f):
    """A rule of the library (numpy's, scipy's, the operators'), not one a test registered.

    Methods (scipy.stats' distributions, registered with ``register_method``) take their
    instance first, which the generic calls cannot build; their own tests check them.
    """
    module = getattr(f, "__module__", None) or ""
    if module.startswith("tests") or "test_" in module or "conftest" in module:
        return False
    return "." not in getattr(f, "__qualname__", "")


def _array_cases():
    functions = (
        f for f in rrule._by_function if "linalg" not in function_name(f) and _library_rule(f)
    )
    for f in sorted(functions, key=function_name):
        if f in FUZZ.NONDETERMINISTIC:
            continue
        d = _draw(np.float64)
        x, y, z = (FUZZ._array(d, (3,), FUZZ.DOMAINS.get(f, FUZZ.DEFAULT_DOMAIN)) for _ in range(3))
        if f in FUZZ.ARRAY_CALLS:
            built = FUZZ.ARRAY_CALLS[f](d, (3,), x)
            if built is None:
                continue
            args, kwargs = built
        else:
            args, kwargs = FUZZ._find_call(f, x, y, z), {}
            if args is None:
                continue
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                out = f(*args, **kwargs)
        except Exception:  # noqa: BLE001, S112 (a call convention the function does not take)
            continue
        if FUZZ._differentiable(args, out):
            yield function_name(f), f, args, kwargs, {}


CASES = {name: case for name, *case in [*_linalg_cases(), *_array_cases()]}


@pytest.mark.parametrize("name", sorted(set(CASES) - set(SKIPPED)))
def test_twice_differentiable_or_listed(name):
    f, args, kwargs, options = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the functions' own warnings at the sweep's inputs
        if name not in NOT_TWICE:
            check_rrule(f, *args, order=2, **options, **kwargs)
            return
        with pytest.raises(RuleCheckError, match="order 2: differentiating the pullback raised"):
            check_rrule(f, *args, order=2, **options, **kwargs)


def test_the_lists_name_registered_rules_only():
    names = {function_name(f) for f in rrule._by_function if _library_rule(f)}
    assert sorted(set(NOT_TWICE) - names) == []
    assert sorted(set(SKIPPED) - names) == []
    assert all(NOT_TWICE.values())
    assert set(NOT_TWICE).isdisjoint(SKIPPED)
