"""``check_rrule(order=2)``: every rule family twice differentiable, and broken cases caught.

The second-order check compares the driver's derivative of each pullback with finite differences
of the pullback evaluated at perturbed inputs (``rules.testing.second_order``). The families of
the issue: elementwise, reductions, shape and indexing, products, solve, inv, det, slogdet,
cholesky, eigh, svd, qr, lu and expm, on single matrices and small stacks, in float64 and, where
the function is defined for it, complex128.
"""

import operator

import numpy as np
import pytest
import scipy.linalg as sla

from kernels import crossovers
from rules import rrule
from rules.autodiff import primitive
from rules.core.nesting import innermost_value, is_traced
from rules.testing import RuleCheckError, check_rrule
from tangents import NoTangent

RNG = np.random.default_rng(20261202)


def _matrix(shape, dtype=np.float64):
    A = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        A = A + 1j * RNG.standard_normal(shape)
    return A.astype(dtype)


def _well_conditioned(shape, dtype=np.float64):
    n = shape[-1]
    return _matrix(shape, dtype) + 3 * np.eye(n)


def _spd(shape, dtype=np.float64):
    A = _matrix(shape, dtype)
    return A @ np.conj(np.swapaxes(A, -1, -2)) + shape[-1] * np.eye(shape[-1])


def _hermitian(shape, dtype=np.float64):
    A = _matrix(shape, dtype)
    return A + np.conj(np.swapaxes(A, -1, -2))


def _eigh_cotangent(A):
    """A gauge-invariant cotangent of ``eigh``: the eigenvalues' only (eigenvectors' zero)."""
    w = np.linalg.eigvalsh(A)
    return (RNG.standard_normal(w.shape), np.zeros(A.shape, A.dtype))


def _svd_cotangent(A):
    """A gauge-invariant cotangent of ``svd``: the singular values' only."""
    U, s, Vh = np.linalg.svd(A, full_matrices=False)
    return (np.zeros(U.shape, A.dtype), RNG.standard_normal(s.shape), np.zeros(Vh.shape, A.dtype))


def _cases():
    x = RNG.standard_normal(5)
    for dtype in (np.float64, np.complex128):
        kind = "c" if dtype is np.complex128 else "f"
        z = x.astype(dtype) + (0.3j * RNG.standard_normal(5) if kind == "c" else 0)
        yield f"elementwise-exp-{kind}", np.exp, (z,), {}
        yield f"elementwise-tanh-{kind}", np.tanh, (z * 0.5,), {}
        yield f"elementwise-multiply-{kind}", np.multiply, (z, z[::-1].copy()), {}
        yield f"reduction-sum-{kind}", np.sum, (z.reshape(5, 1) * z,), {"axis": 0}
        yield f"reduction-prod-{kind}", np.prod, (z,), {}
        yield f"shape-reshape-{kind}", np.reshape, (z[:4], (2, 2)), {"constant": [1]}
        yield f"shape-transpose-{kind}", np.transpose, (z[:4].reshape(2, 2),), {}
        yield (
            f"products-matmul-{kind}",
            np.matmul,
            (_matrix((3, 2), dtype), _matrix((2, 4), dtype)),
            {},
        )
        for shape in ((3, 3), (2, 3, 3)):
            tag = f"{kind}-{'stack' if len(shape) == 3 else 'single'}"
            A = _well_conditioned(shape, dtype)
            yield f"solve-{tag}", np.linalg.solve, (A, _matrix(shape[:-1] + (2,), dtype)), {}
            yield f"inv-{tag}", np.linalg.inv, (A,), {}
            yield f"det-{tag}", np.linalg.det, (A,), {}
            yield f"slogdet-{tag}", np.linalg.slogdet, (A,), {}
            yield f"cholesky-{tag}", np.linalg.cholesky, (_spd(shape, dtype),), {"symmetric": [0]}
            H = _hermitian(shape, dtype)
            # complex eigenvectors have a phase gauge: a cotangent of the eigenvalues only
            gauge = {"output_tangent": _eigh_cotangent(H), "vary_cotangent": False}
            yield (
                f"eigh-{tag}",
                np.linalg.eigh,
                (H,),
                {"symmetric": [0], **(gauge if kind == "c" else {})},
            )
            yield f"eigvalsh-{tag}", np.linalg.eigvalsh, (H,), {"symmetric": [0]}
            yield f"qr-{tag}", np.linalg.qr, (A,), {}
            B = _matrix(shape, dtype)
            gauge = {"output_tangent": _svd_cotangent(B), "vary_cotangent": False}
            yield (
                f"svd-{tag}",
                np.linalg.svd,
                (B,),
                {"full_matrices": False, **(gauge if kind == "c" else {})},
            )
            yield f"svdvals-{tag}", np.linalg.svd, (B,), {"compute_uv": False}
            yield f"lu-{tag}", sla.lu, (A,), {}
            yield f"expm-{tag}", sla.expm, (0.3 * B,), {}
        yield (
            f"indexing-getitem-{kind}",
            operator.getitem,
            (z, np.array([0, 2, 2, 4])),
            {"constant": [1]},
        )
        yield (
            f"solve_triangular-{kind}",
            sla.solve_triangular,
            (np.triu(_well_conditioned((3, 3), dtype)), _matrix((3, 2), dtype)),
            {},
        )
        yield (
            f"solve_triangular-lower-T-{kind}",
            sla.solve_triangular,
            (np.tril(_well_conditioned((3, 3), dtype)), _matrix((3,), dtype)),
            {"lower": True, "trans": "T"},
        )


CASES = {name: (f, args, kw) for name, f, args, kw in _cases()}


@pytest.fixture
def lapack_forward(monkeypatch):
    """The forward of eigh and svd by LAPACK for stacks too, as ``f`` itself computes it.

    The batched Jacobi kernels choose another (documented) gauge than LAPACK, so the checker's
    comparison of the rule's primal with ``f(*args)`` needs the LAPACK forward; the pullback's
    paths do not depend on it.
    """
    monkeypatch.setattr(crossovers, "EIGH_FORWARD_STACK_MAX_N", 0)
    monkeypatch.setattr(crossovers, "SVD_FORWARD_STACK_MAX_N", 0)


@pytest.mark.parametrize("name", list(CASES))
def test_rule_is_twice_differentiable(name, lapack_forward):
    f, args, kwargs = CASES[name]
    check_rrule(f, *args, order=2, **kwargs)


# --- deliberately broken second-order cases, which the check must catch -------------------------
# Each rule below is right to first order (check_rrule passes at order 1) and wrong at order 2.


def _cos_wrong(x):
    return np.cos(x)


@rrule.register(_cos_wrong)
def _cos_wrong_rrule(x):
    """The wrong derivative, ``+sin`` instead of ``-sin``: only a derivative of it sees it."""
    y = _cos_wrong(x)
    return y, lambda y_bar: (NoTangent(), y_bar * np.sin(x))


cos_wrong = primitive(_cos_wrong)


def sin_with_wrong_second(x):
    return np.sin(x)


@rrule.register(sin_with_wrong_second)
def _sin_with_wrong_second_rrule(x):
    """First order right: the pullback's values are ``cos(x) y_bar``; its derivative is not."""
    return np.sin(x), lambda y_bar: (NoTangent(), y_bar * cos_wrong(x))


def sin_detached_primal(x):
    return np.sin(x)


@rrule.register(sin_detached_primal)
def _sin_detached_primal_rrule(x):
    """The pullback reads ``x`` through its plain value: its derivative in ``x`` is lost."""
    return np.sin(x), lambda y_bar: (NoTangent(), y_bar * np.cos(innermost_value(x)))


def sin_detached_cotangent(x):
    return np.sin(x)


@rrule.register(sin_detached_cotangent)
def _sin_detached_cotangent_rrule(x):
    """The pullback reads ``y_bar`` through its plain value: linear in it, yet not traced."""
    return np.sin(x), lambda y_bar: (NoTangent(), innermost_value(y_bar) * np.cos(x))


def sin_wrong_with_plain_cotangent(x):
    return np.sin(x)


@rrule.register(sin_wrong_with_plain_cotangent)
def _sin_wrong_with_plain_cotangent_rrule(x):
    """Right when the cotangent is traced, detached when it is plain (as inside ``hessian``)."""

    def pullback(y_bar):
        c = np.cos(x) if is_traced(y_bar) else np.cos(innermost_value(x))
        return NoTangent(), y_bar * c

    return np.sin(x), pullback


BROKEN = {
    "wrong derivative inside the pullback": sin_with_wrong_second,
    "primal detached in the pullback": sin_detached_primal,
    "cotangent detached in the pullback": sin_detached_cotangent,
    "another path for a plain cotangent": sin_wrong_with_plain_cotangent,
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_second_order_is_caught(name):
    f = BROKEN[name]
    x = np.array([0.3, -1.2, 2.0])
    check_rrule(f, x)  # right to first order
    with pytest.raises(RuleCheckError, match="order 2: derivative of the pullback"):
        check_rrule(f, x, order=2)


def test_order_must_be_one_or_two():
    with pytest.raises(ValueError, match="order must be 1 or 2"):
        check_rrule(np.sin, np.ones(2), order=3)
