"""The argument cases of the tangent-protocol test (``test_tangent_protocol.py``).

Data only: each rule's primal arguments for the algebra-path checks (``GENERIC_CASES``) and for
the refusals (``REFUSAL_CASES``). Loaded by path from the test (test directories are not on
``sys.path`` under ``--import-mode=importlib``).
"""

import operator
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy
import scipy.linalg as sla
import scipy.signal
import scipy.sparse as sp
import scipy.sparse.linalg as spl
import scipy.special
import scipy.stats

from rules.linalg.matfun import MatrixFunction
from tangents import (
    Symmetric,
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
    np.unique: [(_real(5),)],
    np.unique_values: [(_real(5),)],
    np.unique_counts: [case(_real(5), at=(0, 2))],
    np.unique_inverse: [case(_real(5), at=(0, 2))],
    np.unique_all: [case(_real(5), at=(0, 4))],
    np.histogram: [case(_real(6), 3, at=(1, 2))],
    np.histogram_bin_edges: [(_real(6), 3)],
    scipy.stats.multivariate_normal.cdf: [case(_real(2), _real(2), _spd(2), rng=0)],
    scipy.stats.multivariate_normal.logcdf: [case(_real(3, 2), _real(2), _spd(2), rng=0)],
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
        sla.hessenberg: [(_square(4),)],
        sla.ldl: [case(_spd(3), at=(0, 3))],
    }
)
