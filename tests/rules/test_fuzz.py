"""Random shapes, dtypes, layouts and cotangent kinds through every registered rrule (issue 14).

Each case ends in one of two outcomes: ``rules.testing.check_rrule`` passes (the result agrees
with finite differences, and the rule's whole contract holds), or an exception is raised whose
message names the rule. A crash inside Numba, an object array, a changed dtype or a silent
``NoTangent()`` for a differentiable input is a failure (``check_rrule`` catches the last one
against finite differences). After the random cotangent, the pullback also gets the other
cotangent kinds a caller may pass (a zero, a thunk, a wrong shape, a number, a list, a complex
cotangent of a real output), with the same two outcomes allowed.

Values are standard normal (through a seed that hypothesis draws), shifted where a function
needs it (positive definite, away from branch cuts), so that finite differences are valid: the
fuzzing is over structure, not over ill-conditioned values. Bounded for CI: a few examples per
rule, derandomized, no shrinking, no deadline (the first call of a kernel compiles it).
"""

from __future__ import annotations

import operator
import warnings

import numba
import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spl
import scipy.special
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from rules import rrule
from rules.core.registry import function_name
from rules.testing import RuleCheckError, check_rrule, rand_tangent
from tangents import NoTangent, Tangent, Thunk, ZeroTangent, unthunk

rrule.lookup(scipy.special.expit)  # load the deferred scipy.special rules

FUZZ = settings(
    max_examples=3,
    derandomize=True,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure shows its first example
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

FLOATS = [np.float64, np.float32, np.complex128]
ELEMENTWISE_DTYPES = [*FLOATS, np.int64, np.bool_]


class Draw:
    """Arrays from a hypothesis-drawn seed, dtype and layout."""

    def __init__(self, data, dtypes):
        self.data = data
        self.rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
        self.dtype = np.dtype(data.draw(st.sampled_from(dtypes), label="dtype"))
        self.layout = data.draw(st.sampled_from(["C", "F", "strided"]), label="layout")

    def laid_out(self, x):
        if self.layout == "F":
            return np.asfortranarray(x)
        if self.layout == "strided" and x.ndim:
            wide = np.zeros((*x.shape[:-1], 2 * x.shape[-1]), x.dtype)
            wide[..., ::2] = x
            return wide[..., ::2]
        return x

    def normal(self, *shape, low=None, high=None):
        if low is not None:
            x = self.rng.uniform(low, high, shape)
        else:
            x = self.rng.standard_normal(shape)
        if self.dtype.kind == "c":
            x = x + 1j * (0.1 if low is not None else 1.0) * self.rng.standard_normal(shape)
        if self.dtype.kind == "b":
            return self.laid_out(np.asarray(x > 0.5 if low is not None else x > 0))
        if self.dtype.kind == "i":
            return self.laid_out(np.round(3 * x).astype(self.dtype))
        return self.laid_out(np.asarray(x).astype(self.dtype))

    def square(self, n):
        return self.laid_out(self._dense(n, n) / 2 + 3 * np.eye(n, dtype=self.dtype))

    def _dense(self, *shape):
        x = self.rng.standard_normal(shape)
        if self.dtype.kind == "c":
            x = x + 1j * self.rng.standard_normal(shape)
        return x.astype(self.dtype)

    def hermitian(self, n):
        X = self._dense(n, n)
        return self.laid_out(0.5 * (X + X.conj().T))

    def spd(self, n):
        X = self._dense(n, n)
        return self.laid_out((X @ X.conj().T + n * np.eye(n)).astype(self.dtype))

    def rect(self, m, n):
        return self.laid_out(self._dense(m, n))


def _n(data, f):
    # Matrix functions difference a 2n x 2n block form per direction (a complex 2 x 2 cosm
    # takes seconds to check): the fuzz gives them n = 1, their own tests the larger orders.
    # scipy's solvers cost milliseconds per call at any size (a finite-difference check makes
    # hundreds): n <= 2 for them.
    high = 1 if f in MATRIX_FUNCTIONS else 2 if f in SCIPY_SOLVERS else 3
    return data.draw(st.integers(1, high), label="n")


MATRIX_FUNCTIONS = {
    sla.expm,
    sla.sinm,
    sla.cosm,
    sla.logm,
    sla.sqrtm,
    sla.funm,
    sla.fractional_matrix_power,
    sla.expm_frechet,
}
SCIPY_SOLVERS = {
    sla.lu_solve,
    sla.cho_solve,
    sla.solve,
    sla.solve_triangular,
    sla.solve_continuous_lyapunov,
    sla.solve_discrete_lyapunov,
    sla.solve_continuous_are,
}


# Linear algebra: each builder returns (args, kwargs, check_rrule options).
LINALG = {
    np.linalg.cholesky: lambda d, n: ((d.spd(n),), {}, {"symmetric": [0]}),
    np.linalg.det: lambda d, n: ((d.square(n),), {}, {}),
    np.linalg.slogdet: lambda d, n: ((d.square(n),), {}, {}),
    np.linalg.inv: lambda d, n: ((d.square(n),), {}, {}),
    np.linalg.eig: lambda d, n: ((d.square(n),), {}, {}),
    np.linalg.eigvals: lambda d, n: ((d.square(n),), {}, {}),
    np.linalg.eigh: lambda d, n: ((d.hermitian(n),), {}, {"symmetric": [0]}),
    np.linalg.eigvalsh: lambda d, n: ((d.hermitian(n),), {}, {"symmetric": [0]}),
    np.linalg.qr: lambda d, n: ((d.square(n),), {}, {}),
    np.linalg.pinv: lambda d, n: ((d.rect(n + 1, n),), {}, {}),
    np.linalg.svd: lambda d, n: ((d.rect(n + 1, n),), {"full_matrices": False}, {}),
    np.linalg.svdvals: lambda d, n: ((d.rect(n, n + 1),), {}, {}),
    np.linalg.matrix_norm: lambda d, n: ((d.rect(n, n + 1),), {}, {}),
    np.linalg.norm: lambda d, n: ((d.rect(n, n + 1),), {}, {}),
    np.linalg.vector_norm: lambda d, n: ((d.rect(1, n + 1)[0],), {}, {}),
    np.linalg.matrix_power: lambda d, n: ((d.square(n), 3), {}, {}),
    np.linalg.multi_dot: lambda d, n: (([d.rect(2, n), d.square(n), d.rect(n, 2)],), {}, {}),
    np.linalg.lstsq: lambda d, n: ((d.rect(n + 2, n), d.rect(n + 2, 1)[:, 0]), {"rcond": None}, {}),
    np.linalg.solve: lambda d, n: ((d.square(n), d.rect(n, 2)), {}, {}),
    sla.cho_factor: lambda d, n: ((d.spd(n),), {}, {"symmetric": [0]}),
    sla.cho_solve: lambda d, n: (
        (sla.cho_factor(d.spd(n)), d.rect(n, 1)[:, 0]),
        {},
        {"constant": [(0, 1)]},
    ),
    sla.cholesky: lambda d, n: ((d.spd(n),), {}, {"symmetric": [0]}),
    sla.cosm: lambda d, n: ((d.square(n),), {}, {}),
    sla.sinm: lambda d, n: ((d.square(n),), {}, {}),
    sla.expm: lambda d, n: ((d.square(n),), {}, {}),
    sla.sqrtm: lambda d, n: ((d.square(n),), {}, {}),
    sla.logm: lambda d, n: ((d.square(n),), {}, {}),
    sla.funm: lambda d, n: ((d.square(n), np.exp), {}, {"constant": [1]}),
    sla.eigh: lambda d, n: ((d.hermitian(n),), {}, {"symmetric": [0]}),
    sla.eigvalsh: lambda d, n: ((d.hermitian(n),), {}, {"symmetric": [0]}),
    sla.inv: lambda d, n: ((d.square(n),), {}, {}),
    sla.lu: lambda d, n: ((d.square(n),), {}, {}),
    sla.lu_factor: lambda d, n: ((d.square(n),), {}, {}),
    sla.lu_solve: lambda d, n: (
        (sla.lu_factor(d.square(n)), d.rect(n, 1)[:, 0]),
        {},
        {"constant": [(0, 1)]},
    ),
    sla.qr: lambda d, n: ((d.square(n),), {}, {}),
    sla.solve: lambda d, n: ((d.square(n), d.rect(n, 1)[:, 0]), {}, {}),
    sla.solve_sylvester: lambda d, n: ((d.square(n), -d.square(2), d.rect(n, 2)), {}, {}),
    sla.solve_triangular: lambda d, n: ((np.triu(d.square(n)), d.rect(n, 1)[:, 0]), {}, {}),
    sla.svd: lambda d, n: ((d.rect(n, n + 1),), {"full_matrices": False}, {}),
    sla.svdvals: lambda d, n: ((d.rect(n + 1, n),), {}, {}),
    # scipy's aliases of numpy rules (issue 19) take the numpy builders' inputs.
    sla.det: lambda d, n: ((d.square(n),), {}, {}),
    sla.eig: lambda d, n: ((d.square(n),), {}, {}),
    sla.eigvals: lambda d, n: ((d.square(n),), {}, {}),
    sla.pinv: lambda d, n: ((d.rect(n + 1, n),), {}, {}),
    sla.norm: lambda d, n: ((d.rect(n, n + 1),), {}, {}),
    np.linalg.matrix_rank: lambda d, n: ((d.square(n),), {}, {}),
    np.linalg.matrix_transpose: lambda d, n: ((d.rect(n, n + 1),), {}, {}),
    np.linalg.outer: lambda d, n: ((d.rect(1, n)[0], d.rect(1, n + 1)[0]), {}, {}),
    # issue 19's linear algebra
    sla.hessenberg: lambda d, n: ((d.rect(n + 1, n + 1),), {"calc_q": True}, {}),
    # complex symmetric: a Hermitian ldl warns (and ignores) the imaginary parts finite
    # differences give the diagonal
    sla.ldl: lambda d, n: ((d.square(n),), {"hermitian": False}, {}),
    sla.solve_banded: lambda d, n: (
        ((1, 1), d.rect(3, n) / 4 + np.array([[0], [3], [0]], d.dtype), d.rect(n, 1)[:, 0]),
        {},
        {},
    ),
    sla.fractional_matrix_power: lambda d, n: ((d.spd(n), 0.5), {}, {}),
    sla.expm_frechet: lambda d, n: ((d.square(n) - 3 * np.eye(n), d.rect(n, n)), {}, {}),
    sla.lstsq: lambda d, n: ((d.rect(n + 2, n), d.rect(n + 2, 1)[:, 0]), {}, {}),
    sla.solve_continuous_lyapunov: lambda d, n: ((-d.square(n), d.rect(n, n)), {}, {}),
    sla.solve_discrete_lyapunov: lambda d, n: ((d.rect(n, n) / 4, d.rect(n, n)), {}, {}),
    sla.solve_continuous_are: lambda d, n: (
        (d.square(n), d.rect(n, 1), d.spd(n), d.spd(1)),
        {},
        {"symmetric": [2, 3]},
    ),
    sla.polar: lambda d, n: ((d.square(n),), {}, {}),
    sla.rq: lambda d, n: ((d.square(n),), {}, {}),
    sla.schur: lambda d, n: _schur_case(d, n),
    sla.block_diag: lambda d, n: ((d.rect(2, 2), d.rect(1, n)), {}, {}),
    sla.toeplitz: lambda d, n: ((d.rect(1, n)[0], d.rect(1, n + 1)[0]), {}, {}),
    sla.circulant: lambda d, n: ((d.rect(1, n)[0],), {}, {}),
    np.linalg.tensorsolve: lambda d, n: ((_tensor(d, n), d.rect(n, 2)), {}, {}),
    np.linalg.tensorinv: lambda d, n: ((_tensor(d, n),), {"ind": 2}, {}),
    np.linalg.cond: lambda d, n: ((d.square(n),), {}, {}),
    np.linalg.tensordot: lambda d, n: ((d.rect(n, 2), d.rect(2, n)), {"axes": 1}, {}),
    np.linalg.cross: lambda d, n: ((d.rect(n, 3), d.rect(n, 3)), {}, {}),
    np.linalg.vecdot: lambda d, n: ((d.rect(n, 3), d.rect(n, 3)), {}, {}),
    spl.spsolve: lambda d, n: ((sp.csc_array(d.square(n)), d.rect(n, 1)[:, 0]), {}, {}),
    spl.expm_multiply: lambda d, n: ((sp.csr_array(d.rect(n, n) / 2), d.rect(n, 1)[:, 0]), {}, {}),
}


def _tensor(d, n):
    """An invertible (n, 2, n, 2) tensor: a well-conditioned 2n x 2n matrix."""
    return np.ascontiguousarray(d.square(2 * n)).reshape(n, 2, n, 2)


def _schur_case(d, n):
    """A matrix with a real spectrum (a triangular real Schur form); for complex input, whose Schur
    vectors have free phases, a cotangent on the diagonal of ``T`` only (phase-invariant)."""
    V = d.square(n) / 3
    A = d.laid_out(V @ np.diag(np.arange(1.0, n + 1)).astype(d.dtype) @ np.linalg.inv(V))
    if d.dtype.kind != "c":
        return (A,), {}, {}
    T, Z = sla.schur(A)
    T_bar = np.diag(np.diag(rand_tangent(T, 0)))
    return (A,), {}, {"output_tangent": (T_bar, np.zeros_like(Z))}


# Linear-algebra rules without a fuzz builder, by name and with the reason, so that a new rule
# still fails test_every_linalg_rule_has_a_builder.
NOT_YET_FUZZED = {
    # its output is a factorization object, not an array finite differences can move; its
    # rules are checked composed with SuperLU.solve in tests/rules/sparse/test_linalg.py
    "scipy.sparse.linalg.linsolve.splu",
}


def _shape(data):
    return tuple(data.draw(st.lists(st.integers(0, 3), max_size=2), label="shape"))


def _array(d, shape, domain):
    low, high = domain
    return d.normal(*shape, low=low, high=high)


# Array functions: arguments by calling convention. ``None``: found by calling the numpy
# function with one, two or three arrays of the same shape (the first that numpy accepts).
ARRAY_CALLS = {
    np.argpartition: lambda d, s, x: ((x.ravel(), 0), {}) if x.size else None,
    np.array_split: lambda d, s, x: ((x, 2), {}),
    np.broadcast_to: lambda d, s, x: ((x, (2, *x.shape)), {}),
    np.digitize: lambda d, s, x: ((x, np.array([0.3, 0.6])), {}),
    np.einsum: lambda d, s, x: (("...->", x), {}),
    np.expand_dims: lambda d, s, x: ((x, 0), {}),
    # piecewise constant: x / y halfway between integers, so no finite-difference step
    # crosses a jump (an x / y near an integer made the reference a jump, not a derivative)
    np.floor_divide: lambda d, s, x: ((x, x / 1.5), {}),
    np.moveaxis: lambda d, s, x: ((x, 0, -1), {}) if x.ndim else None,
    np.pad: lambda d, s, x: ((x, 1), {}),
    np.repeat: lambda d, s, x: ((x, 2), {}),
    np.reshape: lambda d, s, x: ((x, (-1,)), {}),
    np.roll: lambda d, s, x: ((x, 1), {}),
    np.searchsorted: lambda d, s, x: ((np.array([0.2, 0.5, 0.8]), x), {}),
    np.split: lambda d, s, x: ((x, 1), {}) if x.ndim else None,
    np.swapaxes: lambda d, s, x: ((x, 0, -1), {}) if x.ndim else None,
    np.take: lambda d, s, x: ((x, [0]), {}) if x.size else None,
    np.take_along_axis: lambda d, s, x: (
        ((x, np.zeros_like(x, dtype=np.intp), -1), {}) if x.size and x.ndim else None
    ),
    np.tile: lambda d, s, x: ((x, 2), {}),
    operator.getitem: lambda d, s, x: ((x, 0), {}) if x.ndim and x.shape[0] else None,
}
NONDETERMINISTIC = {np.empty_like}  # its values are whatever memory held
BITWISE = {operator.and_, operator.or_, operator.xor, operator.invert, operator.not_}
DOMAINS = {np.arccosh: (1.2, 2.0)}
DEFAULT_DOMAIN = (0.1, 0.9)


def _find_call(f, x, y, z):
    for args in ((x,), (x, y), (x, y, z)):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                f(*args)
        except Exception:  # noqa: BLE001, S112  (this convention is not the function's)
            continue
        return args
    return None


def _names_the_rule(f, error):
    name = function_name(f)
    assert not isinstance(error, numba.core.errors.NumbaError), f"{name}: Numba error: {error}"
    assert not isinstance(error, RuleCheckError), str(error)
    message = "\n".join([str(error), *getattr(error, "__notes__", ())])
    assert name in message, f"{name}: {type(error).__name__} without the rule's name: {error}"


def _differentiable(args, y):
    """Whether finite differences apply: float inputs and a finite, deterministic output."""
    numeric = (np.ndarray, np.generic, float)
    arrays = [np.asarray(a) for a in args if isinstance(a, numeric)]
    leaves = y if isinstance(y, tuple) else (y,)
    return all(a.dtype.kind in "fc" for a in arrays) and all(
        np.all(np.isfinite(v)) for v in leaves if isinstance(v, numeric)
    )


def _check_cotangents(f, args, cotangents):
    name = function_name(f)
    assert isinstance(cotangents, tuple), f"{name}: pullback returned {type(cotangents)}"
    for arg, c in zip(args, cotangents[1:], strict=False):
        c = unthunk(c)
        if isinstance(c, np.ndarray):
            assert c.dtype != object, f"{name}: an object array cotangent"
            if isinstance(arg, np.ndarray) and arg.dtype.kind in "fc":
                assert c.dtype == arg.dtype, f"{name}: cotangent dtype {c.dtype} for {arg.dtype}"


def _odd_cotangents(y):
    """Cotangent kinds besides the random one: zeros, thunks, wrong shapes, numbers, lists."""
    kinds = [ZeroTangent(), NoTangent()]
    if isinstance(y, np.ndarray):
        ones = np.ones(y.shape, dtype=y.dtype if y.dtype.kind in "fc" else float)
        kinds += [Thunk(lambda: ones), np.ones((*y.shape, 2)), 1.0, ones.tolist()]
        if ones.dtype.kind == "f":
            kinds.append(ones + 1j * ones)
    elif isinstance(y, tuple):
        kinds += [(ZeroTangent(),) * len(y), 1.0, Tangent(dict, {"nonsense": 1.0})]
    return kinds


def _run(f, args, kwargs, options):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            y_plain = f(*args, **kwargs)
        except Exception:  # noqa: BLE001  (numpy refuses it: the rule must refuse, naming itself)
            with pytest.raises(Exception) as info:  # noqa: PT011
                rrule(f, *args, **kwargs)
            _names_the_rule(f, info.value)
            return
        try:
            if f not in NONDETERMINISTIC and _differentiable(args, y_plain):
                check_rrule(f, *args, rng=0, **options, **kwargs)
            y, pullback = rrule(f, *args, **kwargs)
            kinds = [rand_tangent(y, 0), *_odd_cotangents(y)]
        except RuleCheckError:
            raise
        except Exception as error:  # noqa: BLE001
            _names_the_rule(f, error)
            return
        for y_bar in kinds:
            try:
                cotangents = pullback(y_bar)
            except Exception as error:  # noqa: BLE001
                _names_the_rule(f, error)
            else:
                _check_cotangents(f, args, cotangents)


@pytest.mark.slow
@pytest.mark.parametrize("f", list(LINALG), ids=function_name)
@FUZZ
@given(data=st.data())
def test_linalg_rules(f, data):
    d = Draw(data, FLOATS)
    args, kwargs, options = LINALG[f](d, _n(data, f))
    _run(f, args, kwargs, options)


# Rules the fuzz finds wrong against finite differences (strict xfail: fix the rule, then drop it
# here). By name, since some come from rule sets merged later.
KNOWN_FAILURES: dict[str, str] = {}

# Inputs at which a function has no derivative for a reason the harness cannot see, by dtype:
# those dtypes are not drawn for it.
NO_DERIVATIVE = {
    # numpy returns complex unique values in hash order, which jumps under any perturbation
    np.unique_values: {np.complex128},
}


def _array_functions():
    functions = sorted(
        (f for f in rrule._by_function if "linalg" not in function_name(f)),
        key=function_name,
    )
    return [
        pytest.param(f, marks=pytest.mark.xfail(reason=KNOWN_FAILURES[name], strict=True))
        if (name := function_name(f)) in KNOWN_FAILURES
        else f
        for f in functions
    ]


@pytest.mark.slow
@pytest.mark.parametrize("f", _array_functions(), ids=function_name)
@FUZZ
@given(data=st.data())
def test_array_rules(f, data):
    dtypes = [np.bool_, np.int64] if f in BITWISE else ELEMENTWISE_DTYPES
    d = Draw(data, [t for t in dtypes if t not in NO_DERIVATIVE.get(f, ())])
    shape = _shape(data)
    domain = DOMAINS.get(f, DEFAULT_DOMAIN)
    x, y, z = (_array(d, shape, domain) for _ in range(3))
    if f in ARRAY_CALLS:
        built = ARRAY_CALLS[f](d, shape, x)
        if built is None:
            return
        args, kwargs = built
    else:
        args, kwargs = _find_call(f, x, y, z), {}
        if args is None:
            return  # no convention numpy accepts at this shape and dtype
    _run(f, args, kwargs, {})


def test_every_linalg_rule_has_a_builder():
    """A new linalg rule needs a LINALG entry (the generic array calls cannot build matrices)."""
    assert all(f in rrule for f in LINALG)
    linalg = [f for f in rrule._by_function if "linalg" in function_name(f)]
    missing = [function_name(f) for f in linalg if f not in LINALG]
    assert [name for name in missing if name not in NOT_YET_FUZZED] == []
