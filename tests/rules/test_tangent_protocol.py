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

import operator
import re
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
import scipy
import scipy.linalg as sla
import scipy.signal
import scipy.sparse as sp
import scipy.sparse.linalg as spl
import scipy.special
import scipy.stats

import rules
import rules.signal  # deferred until scipy.signal is in use: registered here for the census
import rules.sparse.linalg
import rules.special  # deferred the same way
import rules.stats
from rules import frule, rrule
from rules.linalg.matfun import MatrixFunction
from rules.testing import RecordingTangent
from tangents import (
    AbstractTangent,
    AbstractZero,
    Diagonal,
    NoTangent,
    Symmetric,
    Tangent,
    Thunk,
    ZeroTangent,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "tangent-types.md"


# --- the cases: each rule's primal arguments -----------------------------------------------------

_rng = np.random.default_rng(9)


def _real(*shape):
    return _rng.standard_normal(shape)


def _complex(*shape):
    return _real(*shape) + 1j * _real(*shape)


def _square(n, scale=0.3, complex_=False):
    """``I + scale X``: well conditioned, so inverses and powers stay tame."""
    X = _complex(n, n) if complex_ else _real(n, n)
    return np.eye(n) + scale * X


def _spd(n):
    X = _real(n, n)
    return X @ X.T + n * np.eye(n)


def _hpd(n):
    X = _complex(n, n)
    return X @ X.conj().T + n * np.eye(n)


class Case(NamedTuple):
    """A call ``f(*args, **kwargs)``; ``at = (part, n)``: the cotangent sits at output ``part``."""

    args: tuple
    kwargs: dict
    at: tuple | None = None


def case(*args, at=None, **kwargs):
    return Case(args, kwargs, at)


def _as_case(c):
    return c if isinstance(c, Case) else Case(c, {})


# function -> argument tuples (or case(...)) on which its pullback (and, where the docs say so,
# its pushforward) runs the algebra path

GENERIC_CASES = {
    np.matmul: [(_real(3, 4), _real(4, 2)), (_complex(3, 4), _complex(4, 2))],
    operator.matmul: [(_real(2, 3), _real(3, 3))],
    np.dot: [(_real(3, 4), _real(4, 2)), (_complex(2, 2), _complex(2, 3))],
    np.inner: [(_real(3, 4), _real(2, 4)), (_complex(2, 3), _complex(2, 3))],
    np.outer: [(_real(3), _real(2)), (_complex(2), _complex(3))],
    np.linalg.multi_dot: [([_real(3, 4), _real(4, 2), _real(2, 5)],)],
    np.linalg.matrix_power: [(_square(3), 3), (_square(3), 5), (_square(3), -2), (_square(3), 1)],
    sla.expm: [(_square(3, 0.05),), (_square(3, 2.0),), (_square(3, 0.5, complex_=True),)],
    np.add: [(_real(3, 2), _real(3, 2))],
    operator.add: [(_real(2, 2), _real(2, 2))],
    np.subtract: [(_real(3, 2), _real(3, 2))],
    operator.sub: [(_real(2, 2), _real(2, 2))],
    np.negative: [(_real(3, 2),)],
    operator.neg: [(_real(2, 2),)],
    np.positive: [(_real(3, 2),)],
    operator.pos: [(_real(2, 2),)],
    np.conjugate: [(_complex(3, 2),), (_real(2, 2),)],
    np.real: [(_complex(3, 2),), (_real(2, 2),)],
    np.imag: [(_complex(3, 2),)],
    np.transpose: [(_real(3, 2),), (_real(2, 3, 4), (0, 2, 1))],
    np.swapaxes: [(_real(3, 2), 0, 1), (_real(2, 3, 4), -1, -2)],
    np.moveaxis: [(_real(3, 2), 0, 1), (_real(2, 3, 4), 2, 1)],
    np.linalg.inv: [(_square(3),), (_square(3, complex_=True),), (np.stack([_square(3)] * 2),)],
    sla.inv: [(_square(3),), case(_spd(3), assume_a="sym"), case(_hpd(3), assume_a="her")],
    np.linalg.solve: [(_square(3), _real(3, 2)), (_square(3, complex_=True), _complex(3, 2))],
    sla.solve: [
        (_square(3), _real(3, 2)),
        case(_spd(3), _real(3, 2), assume_a="sym"),
        case(_hpd(3), _complex(3, 2), assume_a="pos"),
        case(_square(3), _real(3, 2), transposed=True),
    ],
    np.linalg.pinv: [
        (_real(3, 2),),
        (_square(3),),
        (_complex(2, 3),),
        case(_spd(3), hermitian=True),
    ],
    np.linalg.lstsq: [
        case(_real(4, 2), _real(4, 3), at=(0, 4)),
        case(_complex(2, 4), _complex(2, 3), at=(0, 4)),
        case(np.outer(_real(4), _real(3)), _real(4, 2), at=(0, 4)),  # rank 1
    ],
}


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


# --- pullbacks that need an ndarray: a TypeError naming the rule, never a conversion ------------


# function -> cases (argument tuples, or case(...) with options or several outputs)
REFUSAL_CASES = {
    np.matmul: [(_real(3, 4), _real(4)), (_real(2, 3, 4), _real(4, 2))],
    operator.matmul: [(_real(4), _real(4, 2)), (sp.csr_array(_square(3)), _real(3, 2))],
    np.dot: [(_real(3, 4), _real(4)), (_real(2), _real(2))],
    np.inner: [(_real(3), _real(3))],
    np.outer: [(_real(2, 2), _real(3))],
    np.vdot: [(_real(3), _real(3))],
    np.kron: [(_real(2, 2), _real(2, 2))],
    np.linalg.multi_dot: [([_real(4), _real(4, 2)],)],
    np.einsum: [("ij,jk->ik", _real(3, 4), _real(4, 2))],
    np.linalg.cholesky: [(_spd(3),)],
    sla.cholesky: [(_spd(3),)],
    sla.cho_factor: [case(_spd(3), at=(0, 2))],
    sla.cho_solve: [(sla.cho_factor(_spd(3)), _real(3, 2))],
    np.linalg.eigh: [case(_spd(3), at=(1, 2)), case(_spd(3), at=(0, 2))],
    np.linalg.eigvalsh: [(_spd(3),)],
    sla.eigh: [case(_spd(3), at=(1, 2))],
    sla.eigvalsh: [(_spd(3),)],
    np.linalg.eig: [case(_square(3), at=(1, 2))],
    np.linalg.eigvals: [(_square(3),)],
    np.linalg.svd: [case(_real(3, 3), at=(0, 3))],
    np.linalg.svdvals: [(_real(3, 3),)],
    sla.svd: [case(_real(3, 3), at=(1, 3))],
    sla.svdvals: [(_real(3, 3),)],
    np.linalg.qr: [case(_real(3, 3), at=(0, 2))],
    sla.qr: [case(_real(3, 3), at=(1, 2))],
    sla.lu: [case(_square(3), at=(1, 3))],
    sla.lu_factor: [case(_square(3), at=(0, 2))],
    sla.lu_solve: [(sla.lu_factor(_square(3)), _real(3, 2))],
    sla.solve_sylvester: [(_square(3), _square(3), _real(3, 3))],
    sla.sqrtm: [(_spd(3),)],
    sla.logm: [(_spd(3),)],
    sla.cosm: [(_square(3),)],
    sla.sinm: [(_square(3),)],
    sla.funm: [(_square(3), MatrixFunction(np.exp, np.exp))],
    sla.expm: [(np.stack([_square(3), _square(3)]),), (Symmetric(_spd(3)),)],
    np.linalg.norm: [(_real(3, 3),)],
    np.linalg.matrix_norm: [(_real(3, 3),)],
    np.linalg.vector_norm: [(_real(3),)],
    np.add: [(_real(3, 2), _real(2))],
    operator.add: [(_real(2), _real(3, 2))],
    np.subtract: [(_real(3, 2), _real(2))],
    operator.sub: [(_real(3, 2), _real(2))],
    np.absolute: [(_complex(3),)],
    np.angle: [(_complex(3),)],
    np.sign: [(_complex(3),)],
    np.transpose: [(_real(2, 3, 4),)],
    np.swapaxes: [(_real(2, 3, 4), 0, 1)],
    np.moveaxis: [(_real(2, 3, 4), 0, -1)],
    np.reshape: [(_real(3, 2), (2, 3))],
    np.ravel: [(_real(3, 2),)],
    np.squeeze: [(_real(3, 1),)],
    np.expand_dims: [(_real(3), 0)],
    np.flip: [(_real(3, 2),)],
    np.roll: [(_real(3, 2), 1)],
    np.broadcast_to: [(_real(2), (3, 2))],
    np.tile: [(_real(2), 2)],
    np.repeat: [(_real(2), 2)],
    np.pad: [(_real(2), 1)],
    np.sum: [(_real(3, 2), 0)],
    np.mean: [(_real(3, 2), 0)],
    np.prod: [(_real(3, 2), 0)],
    np.max: [(_real(3, 2), 0)],
    np.amax: [(_real(3, 2), 0)],
    np.min: [(_real(3, 2), 0)],
    np.amin: [(_real(3, 2), 0)],
    np.std: [(_real(3, 2), 0)],
    np.var: [(_real(3, 2), 0)],
    np.average: [(_real(3, 2), 0)],
    np.cumsum: [(_real(3, 2), 0)],
    np.cumprod: [(_real(3, 2), 0)],
    np.trace: [(_real(2, 2, 3),)],
    np.diag: [(_real(3),)],
    np.diagonal: [(_real(3, 3),)],
    np.triu: [(_real(3, 3),)],
    np.tril: [(_real(3, 3),)],
    operator.getitem: [(_real(3, 2), 1)],
    np.take: [(_real(3, 2), [0, 2])],
    np.take_along_axis: [(_real(3, 2), np.zeros((3, 1), dtype=int), 1)],
    np.sort: [(_real(3, 2),)],
    np.concatenate: [([_real(3), _real(2)],)],
    np.hstack: [([_real(3), _real(2)],)],
    np.vstack: [([_real(3), _real(3)],)],
    np.stack: [([_real(3), _real(3)],)],
    np.split: [case(_real(4), 2, at=(0, 2))],
    np.array_split: [case(_real(4), 2, at=(1, 2))],
    np.clip: [(_real(3, 2), -0.5, 0.5)],
    np.where: [(_real(3, 2) > 0, _real(3, 2), _real(3, 2))],
    scipy.special.logsumexp: [(_real(3, 2),)],
    scipy.special.softmax: [(_real(3, 2),)],
    scipy.special.log_softmax: [(_real(3, 2),)],
    scipy.stats.multivariate_normal.logpdf: [(_real(4, 3), _real(3), _spd(3))],
    scipy.stats.multivariate_normal.pdf: [(_real(3), _real(3), _spd(3))],
    spl.spsolve: [(sp.csc_array(_square(3)), _real(3))],
    spl.splu: [(sp.csc_array(_square(3)),)],
    spl.expm_multiply: [(sp.csr_array(0.3 * _real(3, 3)), _real(3))],
    scipy.signal.convolve: [(_real(5), _real(3))],
    scipy.signal.correlate: [(_real(5), _real(3))],
    scipy.signal.fftconvolve: [(_real(5), _real(3))],
    scipy.signal.convolve2d: [(_real(3, 3), _real(2, 2))],
    scipy.signal.correlate2d: [(_real(3, 3), _real(2, 2))],
    scipy.signal.lfilter: [(_real(2), np.array([1.0, 0.5]), _real(5))],
    sla.inv: [case(np.triu(_square(3)), assume_a="upper triangular")],
    np.linalg.solve: [(_square(3), _real(3)), (np.stack([_square(3)] * 2), _real(2, 3, 2))],
    sla.solve: [case(_square(3), _real(3, 2), assume_a="diagonal"), (_square(3), _real(3))],
    sla.solve_triangular: [case(np.tril(_square(3)), _real(3, 2), lower=True)],
    np.linalg.det: [(_square(3),)],
    np.linalg.slogdet: [case(_square(3), at=(1, 2))],
    np.linalg.lstsq: [
        case(_real(4, 2), _real(4), at=(0, 4)),
        case(_real(4, 2), _real(4, 3), at=(3, 4)),
    ],
}
# Issue 19 (rule coverage), numpy: np.fft
REFUSAL_CASES.update(
    {
        np.fft.fft: [(_complex(4),)],
        np.fft.ifft: [(_complex(4),)],
        np.fft.fft2: [(_complex(2, 3),)],
        np.fft.ifft2: [(_complex(2, 3),)],
        np.fft.fftn: [(_complex(2, 3),)],
        np.fft.ifftn: [(_complex(2, 3),)],
        np.fft.rfft: [(_real(4),)],
        np.fft.irfft: [(_complex(3),)],
        np.fft.rfft2: [(_real(2, 4),)],
        np.fft.irfft2: [(_complex(2, 3),)],
        np.fft.rfftn: [(_real(2, 4),)],
        np.fft.irfftn: [(_complex(2, 3),)],
        np.fft.hfft: [(_complex(3),)],
        np.fft.ihfft: [(_real(4),)],
        np.fft.fftshift: [(_real(4),)],
        np.fft.ifftshift: [(_real(4),)],
        np.fft.fftfreq: [(4, np.array(0.3))],
        np.fft.rfftfreq: [(4, np.array(0.3))],
    }
)
# Issue 19, numpy: more array functions
REFUSAL_CASES.update(
    {
        np.nan_to_num: [(_real(3),)],
        np.real_if_close: [(_complex(3),)],
        np.select: [([_real(3) > 0], [_real(3)], _real(3))],
        np.atleast_1d: [(_real(3),)],
        np.atleast_2d: [(_real(3),)],
        np.atleast_3d: [(_real(3),)],
        np.fliplr: [(_real(2, 3),)],
        np.flipud: [(_real(2, 3),)],
        np.rot90: [(_real(2, 3),)],
        np.rollaxis: [(_real(2, 3, 4), 2)],
        np.copy: [(_real(3),)],
        np.asarray: [(_real(3),)],
        np.astype: [(_real(3), np.float32)],
        np.hsplit: [case(_real(4), 2, at=(0, 2))],
        np.vsplit: [case(_real(4, 2), 2, at=(1, 2))],
        np.dsplit: [case(_real(1, 2, 4), 2, at=(0, 2))],
        np.partition: [(_real(5), 2)],
        np.bincount: [(np.array([0, 1, 1]), _real(3))],
        np.diff: [(_real(4),)],
        np.gradient: [(_real(5),)],
        np.trapezoid: [(_real(4),)],
        np.nansum: [(_real(3, 2), 0)],
        np.nanmean: [(_real(3, 2), 0)],
        np.nanvar: [(_real(3, 2), 0)],
        np.nanstd: [(_real(3, 2), 0)],
        np.nanmax: [(_real(3, 2), 0)],
        np.nanmin: [(_real(3, 2), 0)],
        np.nanprod: [(_real(3, 2), 0)],
        np.nancumsum: [(_real(3, 2), 0)],
        np.nancumprod: [(_real(3, 2), 0)],
        np.ptp: [(_real(3, 2), 0)],
        np.quantile: [(_real(5), np.array(0.3))],
        np.percentile: [(_real(5), np.array(30.0))],
        np.median: [(_real(5),)],
        np.nanquantile: [(_real(5), np.array(0.3))],
        np.nanpercentile: [(_real(5), np.array(30.0))],
        np.nanmedian: [(_real(5),)],
        np.cov: [(_real(2, 4),)],
        np.corrcoef: [(_real(2, 4),)],
        np.convolve: [(_real(4), _real(2))],
        np.correlate: [(_real(4), _real(2))],
        np.interp: [(np.array([0.5, 1.5]), np.arange(3.0), _real(3))],
        np.polyval: [(_real(3), _real(2))],
        np.linspace: [(np.array(0.0), np.array(1.0), 3)],
        np.full: [((2,), np.array(0.5))],
        np.tensordot: [(_real(2, 3), _real(3, 2), 1)],
        np.linalg.tensordot: [case(_real(2, 3), _real(3, 2), axes=1)],
        np.cross: [(_real(3), _real(3))],
        np.linalg.cross: [(_real(3), _real(3))],
        np.vecdot: [(_real(3), _real(3))],
        np.linalg.vecdot: [(_real(3), _real(3))],
        np.linalg.tensorsolve: [(_square(4).reshape(2, 2, 4), _real(2, 2))],
        np.linalg.tensorinv: [(_square(4).reshape(4, 2, 2), 1)],
        np.linalg.cond: [(_square(3),), (_square(3), 1)],
    }
)
GENERIC_CASES.update(
    {
        np.linalg.outer: [(_real(3), _real(2)), (_complex(2), _complex(3))],
        np.matrix_transpose: [(_real(3, 2),), (_complex(2, 3, 2),)],
        np.linalg.matrix_transpose: [(_real(3, 2),)],
        sla.pinv: [(_real(3, 2),), (_square(3),), (_complex(2, 3),)],
        sla.lstsq: [
            case(_real(4, 2), _real(4, 3), at=(0, 4)),
            case(_complex(2, 4), _complex(2, 3), at=(0, 4)),
        ],
    }
)
REFUSAL_CASES.update(
    {
        sla.det: [(_square(3),)],
        sla.eig: [case(_square(3), at=(1, 2))],
        sla.eigvals: [(_square(3),)],
        sla.norm: [(_real(3, 3),)],
        sla.lstsq: [case(_real(4, 2), _real(4), at=(0, 4))],
        sla.block_diag: [(_real(2, 2), _real(1, 2))],
        sla.toeplitz: [(_real(3), _real(3))],
        sla.circulant: [(_real(3),)],
        sla.solve_continuous_lyapunov: [(_square(3) - 2 * np.eye(3), _real(3, 3))],
        sla.solve_discrete_lyapunov: [(0.3 * _square(3), _real(3, 3))],
        sla.solve_continuous_are: [(_square(2), _real(2, 1), _spd(2), _spd(1))],
        sla.solve_banded: [((1, 1), _real(3, 4) + np.array([[0], [3], [0]]), _real(4))],
        sla.expm_frechet: [case(_square(2), _real(2, 2), at=(1, 2))],
        sla.fractional_matrix_power: [(_spd(2), 0.5)],
        sla.polar: [case(_square(3), at=(0, 2))],
        sla.rq: [case(_square(3) + 2 * np.eye(3), at=(1, 2))],
        sla.schur: [case(_spd(3), at=(0, 2))],
    }
)
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
