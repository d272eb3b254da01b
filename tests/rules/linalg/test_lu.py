import warnings

import numpy as np
import pytest
import scipy.linalg as sla

from kernels import crossovers
from rules import frule, rrule
from rules.linalg import lu
from rules.testing import check_frule, check_rrule
from tangents import Diagonal, NoTangent, Symmetric, Tangent, ZeroTangent

SHAPES = [(4, 4), (5, 3), (3, 5), (2, 4, 4), (1, 1), (2, 1, 1)]
VARIANTS = [{}, {"p_indices": True}, {"permute_l": True}]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("options", VARIANTS, ids=["P", "p_indices", "permute_l"])
def test_lu(pivoted, dtype, shape, options):
    # (1, 1) matters: there scipy's P has the input's dtype (complex too), elsewhere it is real
    A = pivoted(dtype, *shape)
    check_rrule(sla.lu, A, **options)
    check_frule(sla.lu, A, **options)


def test_large_matrices_take_the_blas_path(pivoted):
    assert crossovers.LU_SINGLE_MAX_N < 18
    assert crossovers.LU_STACK_MAX_N < 34
    A = pivoted(np.float64, 18, 18)
    check_rrule(sla.lu, A)
    check_frule(sla.lu, A)
    check_rrule(sla.lu_factor, pivoted(np.float64, 2, 34, 34))


@pytest.mark.parametrize("shape", [(6, 4, 4), (6, 5, 3), (6, 3, 5), (18, 18), (17, 20)])
def test_kernel_path_agrees_with_the_formula(pivoted, randn, dtype, shape):
    perm, L, U = sla.lu(pivoted(dtype, *shape), p_indices=True)
    perm = perm.astype(np.int32)
    L_bar, U_bar, A_dot = randn(dtype, *L.shape), randn(dtype, *U.shape), randn(dtype, *shape)
    tol = 1e-4 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(
        lu.lu_pullback_array(L, U, perm, L_bar, U_bar),
        lu._pullback_formula(L, U, perm, L_bar, U_bar),
        rtol=tol,
        atol=tol,
    )
    for got, want in zip(
        lu.lu_pushforward_array(L, U, perm, A_dot),
        lu._pushforward_formula(L, U, perm, A_dot),
        strict=True,
    ):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_other_dtypes_take_the_generic_path(pivoted):
    A = pivoted(np.complex64, 4, 3)
    check_rrule(sla.lu, A, rtol=1e-3, atol=1e-4)
    check_frule(sla.lu, A, rtol=1e-3, atol=1e-4)


def test_structured_inputs(pivoted):
    D = Diagonal(np.array([3.0, -2.0, 4.0]))
    check_rrule(sla.lu, D)
    _, pullback = rrule(sla.lu, D)
    assert type(pullback((ZeroTangent(), np.ones((3, 3)), np.ones((3, 3))))[1]) is Diagonal
    check_rrule(sla.lu_factor, Symmetric(pivoted(np.float64, 4, 4)))


# --- zero pivots ---------------------------------------------------------------------------------

SINGULAR = {
    "rank 1, 2x2": np.array([[1.0, 2.0], [2.0, 4.0]]),
    "rank 2, 3x3": np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]),
    "wide": np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 7.0]]),
    "zero row": np.zeros((1, 3)),
}


@pytest.mark.parametrize("A", SINGULAR.values(), ids=SINGULAR.keys())
def test_a_zero_last_pivot_is_differentiable(A):
    assert np.diagonal(sla.lu(A)[2])[-1] == 0
    check_rrule(sla.lu, A)
    check_frule(sla.lu, A)
    with warnings.catch_warnings():  # scipy warns that the matrix is singular
        warnings.simplefilter("ignore", sla.LinAlgWarning)
        check_rrule(sla.lu_factor, A)
        check_frule(sla.lu_factor, A)


def test_a_zero_last_pivot_in_a_stack(pivoted):
    A = np.stack([SINGULAR["rank 2, 3x3"], pivoted(np.float64, 3, 3)])
    check_rrule(sla.lu, A)
    check_frule(sla.lu, A, permute_l=True)


@pytest.mark.parametrize(
    "A",
    [np.ones((3, 3)), np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]), np.zeros((2, 2))],
    ids=["earlier pivot", "last pivot of a tall matrix", "zero matrix"],
)
def test_other_zero_pivots_raise(A):
    y, pullback = rrule(sla.lu, A)
    with pytest.raises(
        np.linalg.LinAlgError, match=r"scipy.linalg.lu pullback: U\[\d, \d\] is a zero pivot"
    ):
        pullback((ZeroTangent(), np.ones_like(y[1]), np.ones_like(y[2])))
    with pytest.raises(np.linalg.LinAlgError, match="pushforward"):
        frule((NoTangent(), np.ones_like(A)), sla.lu, A)


def test_zero_pivot_error_names_the_matrix_of_the_stack():
    A = np.stack([np.eye(3), np.ones((3, 3))])
    _, pullback = rrule(sla.lu, A, p_indices=True)
    with pytest.raises(np.linalg.LinAlgError, match=r"U\[1, 1\].*matrix \(1,\).*\(2, 3, 3\)"):
        pullback((ZeroTangent(), np.ones((2, 3, 3)), ZeroTangent()))


# --- bad input -----------------------------------------------------------------------------------


def test_bad_input(pivoted):
    with pytest.raises(ValueError, match="overwrite_a"):
        rrule(sla.lu, np.eye(2), overwrite_a=True)
    with pytest.raises(ValueError, match=r"scipy.linalg.lu: needs a matrix.*\(3,\)"):
        rrule(sla.lu, np.ones(3))
    _, pullback = rrule(sla.lu, pivoted(np.float64, 3, 3))
    with pytest.raises(
        ValueError, match=r"the cotangent of (L|output 1) has shape \(2, 2\), expected \(3, 3\)"
    ):
        pullback((ZeroTangent(), np.ones((2, 2)), ZeroTangent()))
    with pytest.raises(TypeError, match=r"scipy.linalg.lu pullback needs an ndarray"):
        pullback((ZeroTangent(), object(), ZeroTangent()))


def test_nan_in_nan_out():
    A = np.eye(3) + 1.0
    A[0, 1] = np.nan
    _, pullback = rrule(sla.lu, A, check_finite=False)
    assert np.isnan(pullback((ZeroTangent(), np.ones((3, 3)), np.ones((3, 3))))[1]).any()


def test_cotangent_of_the_permutation_is_ignored(pivoted):
    A = pivoted(np.float64, 4, 4)
    _, pullback = rrule(sla.lu, A)
    L_bar = np.tril(np.ones((4, 4)), -1)
    np.testing.assert_array_equal(
        pullback((np.ones((4, 4)), L_bar, ZeroTangent()))[1],
        pullback(Tangent(tuple, ZeroTangent(), L_bar, ZeroTangent()))[1],
    )


@pytest.mark.parametrize("shape", [(0, 0), (3, 0), (0, 3), (2, 0, 0)])
def test_empty_matrices(shape):
    A = np.zeros(shape)
    y, pullback = rrule(sla.lu, A)
    assert pullback((ZeroTangent(), np.ones_like(y[1]), np.ones_like(y[2])))[1].shape == shape
    _, y_dot = frule((NoTangent(), A), sla.lu, A)
    assert y_dot[2].shape == y[2].shape


def test_row_permutations_of_every_operand_agree_with_take_along_axis(monkeypatch):
    from kernels import rows as krows
    from rules.linalg import lu as lu_rules

    calls = []
    gather = krows.rows_batched
    monkeypatch.setattr(krows, "rows_batched", lambda X, i: calls.append(X.dtype) or gather(X, i))
    rng = np.random.default_rng(6)
    perm = np.stack([rng.permutation(5) for _ in range(3)]).astype(np.int32)
    X = rng.standard_normal((3, 5, 4))
    for operand, compiled in [
        (X, True),
        (X.astype(np.float32), True),
        (X + 1j * X, True),
        (X[:, :, ::2], False),  # not C-ordered
        (X.astype(np.int64), False),  # not a kernel dtype
    ]:
        calls.clear()
        got = lu_rules._rows(operand, perm)
        np.testing.assert_array_equal(got, np.take_along_axis(operand, perm[..., None], axis=-2))
        assert bool(calls) is compiled
