import numpy as np
import pytest

from rules import frule, rrule
from rules.linalg import chains
from rules.testing import check_frule, check_rrule
from tangents import Diagonal, NoTangent, Symmetric, Tangent, UpperTriangular, ZeroTangent

# --- np.linalg.multi_dot -------------------------------------------------------------------------

CHAINS = [
    [(3, 4), (4, 2)],
    [(3, 4), (4, 5), (5, 2)],
    [(5, 2), (2, 6), (6, 3), (3, 4), (4, 1)],  # an order that is not left to right
    [(4,), (4, 3), (3,)],  # vector ends: a scalar
    [(4,), (4, 3), (3, 2)],
    [(2, 4), (4, 3), (3,)],
]


@pytest.mark.parametrize("shapes", CHAINS, ids=str)
def test_multi_dot(randn, dtype, shapes):
    arrays = [randn(dtype, *s) for s in shapes]
    check_rrule(np.linalg.multi_dot, arrays)
    check_frule(np.linalg.multi_dot, arrays)
    y, _ = rrule(np.linalg.multi_dot, arrays)
    np.testing.assert_array_equal(y, np.linalg.multi_dot(arrays))  # numpy's order, bit for bit


def test_multi_dot_uses_numpy_order():
    # A (10x100) B (100x5) C (5x50): (AB)C costs 7500 flops, A(BC) 75000.
    split = chains._chain_split([10, 100, 5, 50])
    assert split[0][2] == 1  # (A B) C
    split = chains._chain_split([50, 5, 100, 10])
    assert split[0][2] == 0  # A (B C)
    assert chains._chain_split([2, 2, 2, 2])[0][2] == 0  # ties: numpy's A (B C)


def test_multi_dot_structured_factors(randn):
    D, X, U = Diagonal(randn(np.float64, 3)), randn(np.float64, 3, 3), randn(np.float64, 3, 3)
    arrays = [D, X, UpperTriangular(U)]
    check_rrule(np.linalg.multi_dot, arrays)
    check_frule(np.linalg.multi_dot, arrays)
    _, pullback = rrule(np.linalg.multi_dot, arrays)
    bars = pullback(np.ones((3, 3)))[1]
    assert type(bars) is Tangent
    assert type(bars[0]) is Diagonal
    assert type(bars[2]) is UpperTriangular


def test_multi_dot_low_rank_cotangent(randn, low_rank):
    arrays = [randn(np.complex128, *s) for s in [(6, 4), (4, 5), (5, 3), (3, 7)]]
    _, pullback = rrule(np.linalg.multi_dot, arrays)
    y_bar = low_rank(randn(np.complex128, 6, 1), randn(np.complex128, 7, 1))
    got, want = pullback(y_bar)[1], pullback(y_bar.dense())[1]
    for g, w in zip(got, want, strict=True):
        assert type(g) is low_rank
        assert g.U.shape[1] == 1  # each factor's cotangent is rank one too
        np.testing.assert_allclose(g.dense(), w, atol=1e-12)


def test_multi_dot_partly_zero_tangents(randn):
    arrays = [randn(np.float64, *s) for s in [(3, 4), (4, 5), (5, 2)]]
    B_dot = randn(np.float64, 4, 5)
    _, y_dot = frule(
        (NoTangent(), [ZeroTangent(), B_dot, ZeroTangent()]), np.linalg.multi_dot, arrays
    )
    np.testing.assert_allclose(y_dot, arrays[0] @ B_dot @ arrays[2], atol=1e-12)


def test_multi_dot_bad_input(randn):
    with pytest.raises(ValueError, match=r"multi_dot.*\(3, 4\).*\(5, 2\)"):
        rrule(np.linalg.multi_dot, [randn(np.float64, 3, 4), randn(np.float64, 5, 2)])
    with pytest.raises(ValueError, match=r"multi_dot.*2-D"):
        rrule(np.linalg.multi_dot, [randn(np.float64, 3, 4), randn(np.float64, 2, 4, 2)])
    with pytest.raises(ValueError, match=r"multi_dot.*at least two"):
        rrule(np.linalg.multi_dot, [randn(np.float64, 3, 4)])
    _, pullback = rrule(np.linalg.multi_dot, [randn(np.float64, 3, 4), randn(np.float64, 4, 2)])
    with pytest.raises(ValueError, match=r"multi_dot pullback.*\(2, 3\).*\(3, 2\)"):
        pullback(np.ones((2, 3)))


# --- np.linalg.matrix_power ----------------------------------------------------------------------

POWERS = [0, 1, 2, 3, 5, 6, -1, -2, -3]


@pytest.mark.parametrize("shape", [(3, 3), (4, 2, 2), (5, 4, 4)], ids=str)
@pytest.mark.parametrize("n", POWERS)
def test_matrix_power(well_conditioned, dtype, shape, n):
    A = well_conditioned(dtype, *shape)
    check_rrule(np.linalg.matrix_power, A, n)
    check_frule(np.linalg.matrix_power, A, n)
    y, _ = rrule(np.linalg.matrix_power, A, n)
    np.testing.assert_array_equal(y, np.linalg.matrix_power(A, n))


def test_matrix_power_program_is_binary_powering():
    for n in range(1, 40):
        steps, result = chains._power_program(n)
        powers = [1]
        for left, right in steps:
            powers.append(powers[left] + powers[right])
        assert powers[result] == n
        assert len(steps) <= 2 * n.bit_length()


@pytest.mark.parametrize("n", [3, 6, -2])
def test_matrix_power_kernel_path_agrees_with_the_formula(well_conditioned, randn, dtype, n):
    A, Y_bar = well_conditioned(dtype, 6, 3, 3), randn(dtype, 6, 3, 3)
    _, pullback = rrule(np.linalg.matrix_power, A, n)
    A_bar = pullback(Y_bar)[1]
    assert A_bar.dtype == dtype
    B = np.linalg.inv(A) if n < 0 else A
    B_h = B.conj().swapaxes(-1, -2)
    powers = [np.linalg.matrix_power(B_h, k) for k in range(abs(n))]
    want = sum(powers[k] @ Y_bar @ powers[abs(n) - 1 - k] for k in range(abs(n)))
    if n < 0:
        want = -B_h @ want @ B_h
    tol = 1e-4 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(A_bar, want, rtol=tol, atol=tol)
    _, Y_dot = frule((NoTangent(), Y_bar, NoTangent()), np.linalg.matrix_power, A, n)
    assert Y_dot.dtype == dtype


def test_matrix_power_structured_and_low_rank(randn, well_conditioned, low_rank):
    S = Symmetric(well_conditioned(np.float64, 3, 3))
    check_rrule(np.linalg.matrix_power, S, 3)
    check_frule(np.linalg.matrix_power, S, 3)
    assert type(rrule(np.linalg.matrix_power, S, 3)[1](np.ones((3, 3)))[1]) is Symmetric
    A = well_conditioned(np.float64, 5, 5)
    for n in (4, -2):
        _, pullback = rrule(np.linalg.matrix_power, A, n)
        Y_bar = low_rank(randn(np.float64, 5, 1), randn(np.float64, 5, 1))
        A_bar = pullback(Y_bar)[1]
        assert type(A_bar) is low_rank
        np.testing.assert_allclose(A_bar.dense(), pullback(Y_bar.dense())[1], atol=1e-12)
        A_dot = low_rank(randn(np.float64, 5, 1), randn(np.float64, 5, 1))
        _, Y_dot = frule((NoTangent(), A_dot, NoTangent()), np.linalg.matrix_power, A, n)
        assert type(Y_dot) is low_rank  # the pushforward's algebra path keeps it too
        dense_dot = frule((NoTangent(), A_dot.dense(), NoTangent()), np.linalg.matrix_power, A, n)
        np.testing.assert_allclose(Y_dot.dense(), dense_dot[1], atol=1e-12)


def test_matrix_power_bad_input(randn):
    with pytest.raises(np.linalg.LinAlgError, match=r"matrix_power.*square.*\(2, 3\)"):
        rrule(np.linalg.matrix_power, randn(np.float64, 2, 3), 2)
    singular = np.ones((3, 3))
    with pytest.raises(np.linalg.LinAlgError, match=r"matrix_power.*singular.*\(3, 3\)"):
        rrule(np.linalg.matrix_power, singular, -1)
    with pytest.raises(TypeError):
        rrule(np.linalg.matrix_power, singular, 1.5)
    _, pullback = rrule(np.linalg.matrix_power, singular, 2)
    with pytest.raises(ValueError, match=r"matrix_power pullback.*\(2, 2\).*\(3, 3\)"):
        pullback(np.ones((2, 2)))


def test_matrix_power_nan_in_nan_out(randn):
    A = randn(np.float64, 3, 2, 2)
    A[0, 0, 0] = np.nan
    for n in (3, 2):
        _, pullback = rrule(np.linalg.matrix_power, A, n)
        A_bar = pullback(np.ones((3, 2, 2)))[1]
        assert np.isnan(A_bar[0]).any()
        assert np.isfinite(A_bar[1:]).all()


def test_matrix_power_keeps_the_primal_dtype(well_conditioned, randn):
    A = well_conditioned(np.float32, 4, 3, 3)
    _, pullback = rrule(np.linalg.matrix_power, A, 3)
    assert pullback(randn(np.float64, 4, 3, 3))[1].dtype == np.float32
    A = well_conditioned(np.float64, 3, 3)
    _, pullback = rrule(np.linalg.matrix_power, A, -2)
    Y_bar = randn(np.complex128, 3, 3)  # a real matrix takes the real part, without a warning
    np.testing.assert_allclose(pullback(Y_bar)[1], pullback(Y_bar.real)[1], atol=1e-14)
