"""scipy.sparse.linalg: spsolve, splu(...).solve and expm_multiply, cotangents on the pattern."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spl

import rules  # noqa: F401  (registers the rules)
from rules import frule, rrule
from rules.sparse.factored import OuterProducts
from rules.testing import check_frule, check_rrule
from tangents import NoTangent, ZeroTangent


def well_conditioned(rng, n, fmt="csc", dtype=np.float64, density=0.4):
    A = sp.random_array((n, n), density=density, format="coo", rng=rng)
    if np.issubdtype(dtype, np.complexfloating):
        A = A + 0.5j * A
    A = (A + 3 * sp.eye_array(n)).astype(dtype)
    return A.asformat(fmt)


def dense(rng, shape, dtype=np.float64):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("fmt", ["csc", "csr"])
def test_spsolve(rng, fmt, dtype):
    A = well_conditioned(rng, 5, fmt, dtype)
    for b in (dense(rng, (5,), dtype), dense(rng, (5, 2), dtype)):
        check_rrule(spl.spsolve, A, b)
        check_frule(spl.spsolve, A, b)


def solve_by_lu(A, b, trans="N"):
    """``splu(A).solve(b, trans)``: two rules composed as the driver composes them."""
    return spl.splu(A).solve(b, trans)


def _solve_by_lu_rrule(A, b, trans="N"):
    lu, splu_pullback = rrule(spl.splu, A)
    x, solve_pullback = rrule(lu.solve, b, trans)
    assert solve_pullback is not None

    def solve_by_lu_pullback(x_bar):
        lu_bar, b_bar = solve_pullback(x_bar)[:2]
        _, A_bar = splu_pullback(lu_bar)
        return NoTangent(), A_bar, b_bar

    return x, solve_by_lu_pullback


def _solve_by_lu_frule(tangents, A, b, trans="N"):
    lu, lu_dot = frule((NoTangent(), tangents[1]), spl.splu, A)
    return frule((lu_dot, tangents[2], NoTangent()), lu.solve, b, trans)


@pytest.fixture
def composed():
    rrule.register(solve_by_lu)(_solve_by_lu_rrule)
    frule.register(solve_by_lu)(_solve_by_lu_frule)
    yield
    rrule.unregister(solve_by_lu)
    frule.unregister(solve_by_lu)


@pytest.mark.parametrize("trans", ["N", "T", "H"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_splu_solve(rng, composed, dtype, trans):
    A = well_conditioned(rng, 5, "csc", dtype)
    for b in (dense(rng, (5,), dtype), dense(rng, (5, 2), dtype)):
        check_rrule(solve_by_lu, A, b, trans)
        check_frule(solve_by_lu, A, b, trans)


def test_splu_solve_cotangent_is_factored_until_splu_samples_it(rng):
    A = well_conditioned(rng, 6, "csc")
    lu, splu_pullback = rrule(spl.splu, A)
    _, solve_pullback = rrule(lu.solve, np.ones(6))
    lu_bar, _ = solve_pullback(np.ones(6))
    assert isinstance(lu_bar, OuterProducts)
    second = rrule(lu.solve, np.arange(6.0))[1](np.ones(6))[0]
    total = lu_bar + second  # two solves with one factorization add up
    _, A_bar = splu_pullback(total)
    assert type(A_bar) is sp.csc_array
    assert A_bar.nnz == A.nnz
    dense_sum = lu_bar.dense() + second.dense()
    np.testing.assert_allclose(A_bar.toarray(), np.where(A.toarray() != 0, dense_sum, 0))
    assert splu_pullback(ZeroTangent()) == (NoTangent(), ZeroTangent())


@pytest.mark.parametrize(("scale", "B_shape"), [(0.5, (5,)), (3.0, (5, 2))])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_expm_multiply(rng, dtype, scale, B_shape):
    A = (scale * sp.random_array((5, 5), density=0.5, format="csr", rng=rng)).astype(dtype)
    if dtype == np.complex128:
        A = A + 0.5j * A
    B = dense(rng, B_shape, dtype)
    check_rrule(spl.expm_multiply, A, B)
    check_frule(spl.expm_multiply, A, B)


def test_expm_multiply_with_a_dense_matrix(rng):
    A = 0.5 * rng.standard_normal((4, 4))
    check_rrule(spl.expm_multiply, A, rng.standard_normal(4))
    check_frule(spl.expm_multiply, A, rng.standard_normal((4, 2)))


def test_expm_multiply_time_grid_is_refused_by_name():
    with pytest.raises(ValueError, match=r"expm_multiply do not support the option.*start"):
        rrule(spl.expm_multiply, sp.eye_array(2, format="csr"), np.ones(2), 0.0, 1.0, 3)


@pytest.mark.parametrize("f", ["spsolve", "splu", "expm_multiply"])
def test_large_sparse_cotangents_stay_on_the_pattern(rng, f):
    n = 100_000  # a dense n x n cotangent would take 80 GB
    off = 0.1 * rng.standard_normal(n - 1)  # banded: LU without fill-in
    A = sp.diags_array([off, 1.0 + rng.uniform(0, 1, n), off[::-1]], offsets=[-1, 0, 1])
    A = A.tocsc()
    b = rng.standard_normal(n)
    if f == "spsolve":
        _, pullback = rrule(spl.spsolve, A, b)
        A_bar = pullback(np.ones(n))[1]
    elif f == "splu":
        lu, splu_pullback = rrule(spl.splu, A)
        _, solve_pullback = rrule(lu.solve, b)
        A_bar = splu_pullback(solve_pullback(np.ones(n))[0])[1]
    else:
        _, pullback = rrule(spl.expm_multiply, 0.5 * A, b)  # ||A||_1 <= 2: one quadrature piece
        A_bar = pullback(np.ones(n))[1]
    assert type(A_bar) is sp.csc_array
    assert A_bar.nnz == A.nnz
    np.testing.assert_array_equal(A_bar.indices, A.indices)
