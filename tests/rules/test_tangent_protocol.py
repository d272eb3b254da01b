"""The tangent-type protocol (docs/tangent-types.md), proved rule by rule with a recording type.

``rules.testing.RecordingTangent`` wraps an ndarray, supports exactly the operations of the
protocol, logs each one applied to it, and fails the test on any conversion to an ndarray
(``__array__``, the array interfaces, iteration, indexing, ``len``, ``bool``, ``float``, in-place
writes) and on reading ``.dtype`` or ``.ndim``, which the protocol does not promise. Every rule
the docs list under the algebra path must run on it with no conversion, log exactly the documented
operations, and agree with the same rule on the plain array; every rule listed as needing
arrays must raise a ``TypeError`` naming itself. The tables are read from the docs page, and
every rule the library registers must be in one of them (or be non-differentiable), so the page
stays true.
"""

import importlib.util
import operator
import re
from pathlib import Path

import numpy as np
import pytest
import scipy
import scipy.signal
import scipy.sparse as sp
import scipy.special
import scipy.stats

import rules
import rules.signal  # deferred until scipy.signal is in use: registered here for the census
import rules.sparse.linalg
import rules.special  # deferred the same way
import rules.stats
from rules import frule, rrule
from rules.testing import RecordingTangent
from tangents import (
    AbstractTangent,
    AbstractZero,
    Diagonal,
    NoTangent,
    Tangent,
    Thunk,
    ZeroTangent,
)


def _load_cases():
    """The argument cases, from ``protocol_cases.py`` beside this file (loaded by path)."""
    spec = importlib.util.spec_from_file_location(
        "_tangent_protocol_cases", Path(__file__).with_name("protocol_cases.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_cases = _load_cases()
Case, case, _as_case = _cases.Case, _cases.case, _cases._as_case
_real, _complex, _square, _spd, _hpd = (
    _cases._real,
    _cases._complex,
    _cases._square,
    _cases._spd,
    _cases._hpd,
)
GENERIC_CASES, REFUSAL_CASES = _cases.GENERIC_CASES, _cases.REFUSAL_CASES

DOCS = Path(__file__).resolve().parents[2] / "docs" / "tangent-types.md"


# --- the docs page: its tables, and the functions they name --------------------------------------

_ROOTS = {"np": np, "operator": operator, "scipy": scipy}


def resolve(name):
    """The function a docs name such as ``np.linalg.multi_dot`` or ``scipy.special.erf`` means."""
    root, *path = name.split(".")
    obj = _ROOTS[root]
    for attr in path:
        obj = getattr(obj, attr)
    return obj


def docs_table(heading):
    """The rows of the table under ``### heading``: (function names, other cells) per row."""
    lines = DOCS.read_text().splitlines()
    start = lines.index(f"### {heading}")
    rows = []
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "rule" or cells[0] == "rules":
            continue  # the header
        rows.append((re.findall(r"`([^`]+)`", cells[0]), cells[1:]))
    assert rows, f"no table under '### {heading}' in {DOCS.name}"
    return rows


def documented_operations(heading):
    """``{function: set of operations}`` from a table whose last column lists them."""
    table = {}
    for names, cells in docs_table(heading):
        operations = set(re.findall(r"`([^`]+)`", cells[-1]))
        for name in names:
            table.setdefault(resolve(name), set()).update(operations)
    return table


def documented_functions(heading):
    return {resolve(name) for names, _ in docs_table(heading) for name in names}


# --- algebra-path pullbacks: no conversion, the documented operations, the dense result -------


def _leaves(x):
    """The components of a pullback's output: tuples and structural tangents flattened."""
    if isinstance(x, tuple):
        return [leaf for part in x for leaf in _leaves(part)]
    if isinstance(x, Tangent):
        backing = x.backing
        return _leaves(tuple(backing.values() if isinstance(backing, dict) else backing))
    return [x]


def _assert_same(got, expected):
    got, expected = _leaves(got), _leaves(expected)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        if isinstance(e, AbstractZero):
            assert type(g) is type(e)
            continue
        g = g.data if isinstance(g, RecordingTangent) else g
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def _cotangent_like(y):
    y = np.asarray(y)
    values = _real(*y.shape) + (1j * _real(*y.shape) if y.dtype.kind == "c" else 0)
    return np.asarray(values, dtype=y.dtype)


def _cotangent(y, at, log):
    """A RecordingTangent like ``y`` (or like its output ``part``, zeros elsewhere) and its data."""
    if at is None:
        data = _cotangent_like(y)
        return Thunk(lambda: RecordingTangent(data, log)), data  # rules unwrap thunks
    part, n = at
    data = _cotangent_like(y[part])
    parts = [NoTangent() if i == 2 and n == 4 else ZeroTangent() for i in range(n)]  # lstsq's rank
    recorded, plain = list(parts), list(parts)
    recorded[part], plain[part] = RecordingTangent(data, log), data
    return tuple(recorded), tuple(plain)


def recorded_pullback(f, c):
    """Run ``f``'s pullback on a RecordingTangent cotangent; check it against the plain array's."""
    y, pullback = rrule(f, *c.args, **c.kwargs)
    log = []
    y_bar, plain = _cotangent(y, c.at, log)
    got = pullback(y_bar)
    _assert_same(got, pullback(plain))
    outputs = [leaf for leaf in _leaves(got) if not isinstance(leaf, AbstractZero)]
    assert any(isinstance(leaf, RecordingTangent) for leaf in outputs) or not outputs
    return set(log)


ALGEBRA_PULLBACKS = documented_operations("Algebra-path pullbacks")
ALGEBRA_PUSHFORWARDS = documented_operations("Algebra-path pushforwards")


@pytest.mark.parametrize("f", list(GENERIC_CASES), ids=lambda f: f.__name__)
def test_algebra_path_pullback(f):
    operations = set()
    for c in GENERIC_CASES[f]:
        operations |= recorded_pullback(f, _as_case(c))
    assert operations == ALGEBRA_PULLBACKS[f], "the docs table lists other operations"


def test_every_documented_algebra_path_pullback_has_cases():
    assert set(ALGEBRA_PULLBACKS) == set(GENERIC_CASES)


def test_a_structured_primal_meets_the_type_s_own_matmul():
    # M is then the structured matrix: a type whose @ does not know it returns NotImplemented
    # and the product is Python's TypeError; neither side converts the other.
    _, pullback = rrule(np.matmul, Diagonal(_real(3)), _real(3, 2))
    with pytest.raises(TypeError, match=r"unsupported operand type.*Diagonal.*RecordingTangent"):
        pullback(RecordingTangent(_real(3, 2)))


NAMED_AS = {
    np.amax: "max",
    np.amin: "min",
    operator.sub: "subtract",
}  # how a rule's error message names its function


def _registered_rules():
    """``{function: rule}`` for every rrule the library itself registers (not tests or examples).

    That is a rule of the ``rules`` package for a function of numpy, scipy or ``operator``:
    the README and other tests register rules of their own with ``scalar_rule`` too.
    """
    return {
        f: rule
        for f, rule in rrule._by_function.items()
        if (rule.__module__ or "").startswith("rules.") and _is_library_function(f)
    }


def _is_library_function(f):
    module = (getattr(f, "__module__", None) or "").split(".")[0]
    return isinstance(f, np.ufunc) or module in ("numpy", "scipy", "operator", "_operator")


def _defined_by(rule, name):
    return rule.__code__.co_name == name


SPECIAL_ARGUMENTS = {
    scipy.special.polygamma: (1, _real(3, 2) ** 2 + 0.5),
    scipy.special.multigammaln: (_real(3, 2) ** 2 + 2.0, 2),
    scipy.special.zeta: (_real(3, 2) ** 2 + 2.0, _real(3, 2) ** 2 + 0.5),
    scipy.special.expn: (1, _real(3, 2) ** 2 + 0.5),  # a float order: scipy warns
    **{
        getattr(getattr(scipy.stats, dist), method): (np.full((3, 2), 0.6), *shapes)
        for dist, shapes in {"norm": (), "t": (3.0,), "gamma": (2.0,), "beta": (2.0, 3.0)}.items()
        for method in ("pdf", "logpdf", "cdf", "logcdf")
    },
    **{
        getattr(scipy.stats.poisson, method): (np.full((3, 2), 2), np.full((3, 2), 2.5))
        for method in ("pmf", "logpmf", "cdf", "logcdf")
    },
}


def _elementwise_cases():
    """A case for each rule made by ``scalar_rule`` (and the operators routed to one)."""
    cases = {}
    for f, rule in _registered_rules().items():
        if _defined_by(rule, "operator_rrule"):
            f_ufunc = rules.arrays.elementwise._OPERATORS[f]
        elif _defined_by(rule, "elementwise_rrule"):
            f_ufunc = f
        else:
            continue
        x = np.full((3, 2), 1.6 if f_ufunc is np.arccosh else 0.6)
        if f in SPECIAL_ARGUMENTS:  # not ufuncs, or integer arguments
            cases[f] = (f.__name__, Case(SPECIAL_ARGUMENTS[f], {}))
        elif _defined_by(rrule.lookup(f_ufunc)[0], "elementwise_rrule"):
            nout = getattr(f_ufunc, "nout", 1)  # np.sinc is no ufunc
            at = (0, nout) if nout > 1 else None  # np.modf, np.frexp
            cases[f] = (f_ufunc.__name__, Case((x,) * getattr(f_ufunc, "nin", 1), {}, at))
    return cases


ELEMENTWISE_CASES = _elementwise_cases()


def _refusal_cases():
    for f, cases in REFUSAL_CASES.items():
        for c in cases:
            yield f, NAMED_AS.get(f, f.__name__), _as_case(c)
    for f, (name, c) in ELEMENTWISE_CASES.items():
        yield f, name, c


def _ids(v):
    return v.__name__ if callable(v) and hasattr(v, "__name__") else ""


@pytest.mark.parametrize(("f", "name", "c"), list(_refusal_cases()), ids=_ids)
def test_pullback_refuses_a_tangent_type_by_name(f, name, c):
    y, pullback = rrule(f, *c.args, **c.kwargs)
    y_bar, _ = _cotangent(y, c.at, [])
    with pytest.raises(TypeError, match=rf"\b{name}('s)? (pullback|rules)"):
        pullback(y_bar)


# --- pushforwards: the same protocol for tangents -------------------------------------------------


def _tangent_of(x, log):
    """A RecordingTangent for each float or complex array argument, ``NoTangent()`` for others."""
    if isinstance(x, np.ndarray) and x.dtype.kind in "fc":
        return RecordingTangent(_cotangent_like(x), log)
    if sp.issparse(x):  # a dense recording tangent: the sparse rules refuse it by name
        return RecordingTangent(_cotangent_like(x.toarray()), log)
    if isinstance(x, list) and all(isinstance(v, np.ndarray) for v in x):
        return Tangent(tuple, *(_tangent_of(v, log) for v in x))
    return NoTangent()


def _all_cases():
    for f, cases in GENERIC_CASES.items():
        for c in cases:
            yield f, NAMED_AS.get(f, f.__name__), _as_case(c)
    yield from _refusal_cases()


def recorded_pushforward(f, c):
    """Run ``f``'s frule on RecordingTangents; check it against the plain arrays'."""
    logs = []
    tangents = (NoTangent(), *(_tangent_of(x, logs) for x in c.args))
    _, y_dot = frule(tangents, f, *c.args, **c.kwargs)
    dense = tuple(_dense(t) for t in tangents)
    _assert_same(y_dot, frule(dense, f, *c.args, **c.kwargs)[1])
    return set(logs)


def _dense(t):
    if isinstance(t, RecordingTangent):
        return t.data
    if isinstance(t, Tangent):
        return Tangent(tuple, *(_dense(v) for v in t.backing))
    return t


@pytest.mark.parametrize("f", list(ALGEBRA_PUSHFORWARDS), ids=lambda f: f.__name__)
def test_algebra_path_pushforward(f):
    operations = set()
    for c in map(_as_case, GENERIC_CASES[f]):
        if c.at is None:  # a cotangent of one output of several: no pushforward case
            operations |= recorded_pushforward(f, c)
    assert operations == ALGEBRA_PUSHFORWARDS[f], "the docs table lists other operations"


@pytest.mark.parametrize(("f", "name", "c"), list(_all_cases()), ids=_ids)
def test_every_other_pushforward_refuses_a_tangent_type_by_name(f, name, c):
    tangents = (NoTangent(), *(_tangent_of(x, []) for x in c.args))
    pattern = rf"(?i)\b{name}('s)? (frule|pushforward|rules)"
    if f in ALGEBRA_PUSHFORWARDS:
        try:
            frule(tangents, f, *c.args, **c.kwargs)
        except TypeError as error:  # a case outside the documented condition
            assert re.search(pattern, str(error))  # noqa: PT017
        return
    with pytest.raises(TypeError, match=pattern):
        frule(tangents, f, *c.args, **c.kwargs)


# --- the census: every rule of the library is in the docs, every name there is a rule ----------


def _non_differentiable(f):
    return _defined_by(_registered_rules()[f], "non_differentiable_rrule")


def test_every_rule_of_the_library_is_in_the_docs():
    documented = documented_functions("Algebra-path pullbacks") | documented_functions(
        "Pullbacks that need an ndarray"
    )
    missing = [
        getattr(f, "__name__", f)
        for f in _registered_rules()
        if f not in documented and not _non_differentiable(f)
    ]
    assert not missing, f"rules missing from {DOCS.name}: {missing}"


@pytest.mark.parametrize(
    "heading",
    ["Algebra-path pullbacks", "Algebra-path pushforwards", "Pullbacks that need an ndarray"],
)
def test_every_name_in_the_docs_is_a_rule(heading):
    assert documented_functions(heading) <= set(_registered_rules())


def test_every_documented_refusal_is_tested():
    tested = set(REFUSAL_CASES) | set(ELEMENTWISE_CASES)
    assert documented_functions("Pullbacks that need an ndarray") == tested


def test_the_abstract_tangent_docstring_states_the_same_operations():
    lines = DOCS.read_text().split("## The operations")[1].split("\n## ")[0].splitlines()
    rows = [line for line in lines if line.startswith("| `")]
    operations = {op for row in rows for op in re.findall(r"`([^`]+)`", row.split("|")[1])}
    documented = set().union(*ALGEBRA_PULLBACKS.values(), *ALGEBRA_PUSHFORWARDS.values())
    assert documented <= operations  # the rule tables use only the protocol's operations
    docstring = " ".join(AbstractTangent.__doc__.split())
    for op in operations - {"t.shape"}:
        assert f"``{op}``" in docstring or f"``{op.replace('t.', '')}``" in docstring, op
    assert "shape" in docstring
