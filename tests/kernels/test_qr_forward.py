"""The batched Householder QR against LAPACK (numpy's qr): every mode, the issue's families."""

import numpy as np
import pytest

from kernels.qr_forward import qr_batched

DTYPES = [np.float64, np.float32, np.complex128]
KINDS = ["random", "graded", "ill", "rank"]  # _accuracy.KINDS
SHAPES = [(1, 1), (4, 4), (6, 3), (3, 5)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_accuracy_within_lapack(rng, acc, dtype, kind, shape):
    m, n = shape
    A = acc.general(rng, kind, 37, m, n, dtype)
    A_in = A.copy()
    for mode in ("reduced", "complete"):
        Q, R = qr_batched(A, mode)
        Ql, Rl = np.linalg.qr(A, mode)
        assert (Q.shape, R.shape) == (Ql.shape, Rl.shape)
        assert (Q.dtype, R.dtype) == (dtype, dtype)
        ours, lapack = acc.backward_error(A, Q @ R), acc.backward_error(A, Ql @ Rl)
        assert acc.within_lapack(ours, lapack, max(m, n), dtype), (mode, ours, lapack)
        ours, lapack = acc.orthogonality(Q), acc.orthogonality(Ql)
        assert acc.within_lapack(ours, lapack, max(m, n), dtype), (mode, ours, lapack)
        np.testing.assert_array_equal(np.tril(R, -1), 0)
        np.testing.assert_array_equal(np.diagonal(R, 0, -2, -1).imag, 0)  # real, as LAPACK
    np.testing.assert_array_equal(A, A_in)  # the input is not written


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_modes_match_numpy(rng, acc, dtype, shape):
    """LAPACK's signs, so every mode agrees with numpy's output to rounding (well conditioned)."""
    m, n = shape
    A = acc.general(rng, "random", 37, m, n, dtype)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-11}
    for mode in ("reduced", "complete", "raw"):
        for ours, ref in zip(qr_batched(A, mode), np.linalg.qr(A, mode), strict=True):
            assert ours.shape == ref.shape
            np.testing.assert_allclose(ours, ref, **tol)
    np.testing.assert_allclose(qr_batched(A, "r"), np.linalg.qr(A, "r"), **tol)


def test_exactly_triangular_columns():
    """A column already zero below the diagonal gives tau = 0 and keeps its sign, as LAPACK."""
    A = np.array([[[-2.0, 1.0, 0.5], [0.0, 3.0, 1.0], [0.0, 0.0, -1.0]], np.zeros((3, 3))])
    Q, R = qr_batched(A)
    h, tau = qr_batched(A, "raw")
    np.testing.assert_array_equal(tau, 0)
    np.testing.assert_array_equal(Q, np.broadcast_to(np.eye(3), (2, 3, 3)))
    np.testing.assert_array_equal(R, A)
    np.testing.assert_array_equal(h, A.mT)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_in_nan_out(rng, acc, dtype):
    A = acc.general(rng, "random", 40, 4, 3, dtype)
    A[3, 0, 0] = np.nan
    Q, R = qr_batched(A)
    assert np.isnan(R[3, 0]).all()
    assert np.isnan(Q[3][:, 0]).all()
    mask = np.arange(40) != 3
    assert np.isfinite(Q[mask]).all()
    assert np.isfinite(R[mask]).all()


def test_extreme_scales(rng, acc):
    A = acc.general(rng, "random", 5, 4, 3, np.complex128)
    for scale in (1e-200, 1e200):
        Q, R = qr_batched(A * scale)
        Ql, Rl = np.linalg.qr(A)
        np.testing.assert_allclose(Q, Ql, atol=1e-13)
        np.testing.assert_allclose(R / scale, Rl, atol=1e-13)


def test_bad_input():
    with pytest.raises(ValueError, match="qr_batched: mode"):
        qr_batched(np.zeros((2, 3, 3)), "economic")
    with pytest.raises(ValueError, match="qr_batched"):
        qr_batched(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="qr_batched"):
        qr_batched(np.zeros((2, 3, 3), dtype=np.complex64))


@pytest.mark.parametrize("layout", ["rows taken", "transposed", "every other", "read-only"])
def test_any_layout_gives_the_bits_of_its_c_ordered_copy(rng, layout):
    # the kernel reads strided input as it is (no copy); the input is never written
    base = rng.standard_normal((6, 4, 4))
    A = {
        "rows taken": np.take_along_axis(
            base, rng.permuted(np.broadcast_to(np.arange(4), (6, 4)), axis=-1)[..., None], axis=-2
        ),
        "transposed": base.mT,
        "every other": rng.standard_normal((12, 4, 5))[::2, :, ::-1][..., :4],
        "read-only": np.broadcast_to(base[0], (6, 4, 4)),
    }[layout]
    assert not A.flags.c_contiguous
    before = A.copy()
    for mode in ("reduced", "complete", "r", "raw"):
        ours, copied = qr_batched(A, mode), qr_batched(np.ascontiguousarray(A), mode)
        for x, y in zip(
            ours if isinstance(ours, tuple) else (ours,),
            copied if isinstance(copied, tuple) else (copied,),
            strict=True,
        ):
            np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(A, before)


def test_the_rule_hands_a_strided_stack_to_the_kernel_without_a_copy(rng, monkeypatch):
    from rules import rrule
    from rules.linalg import qr as rqr

    seen = []
    kernel = rqr.qr_batched
    monkeypatch.setattr(rqr, "qr_batched", lambda A, mode: seen.append(A) or kernel(A, mode))
    A = rng.standard_normal((8, 4, 4)).mT
    (Q, R), _ = rrule(np.linalg.qr, A)
    assert seen
    assert np.shares_memory(seen[0], A)
    R_c = np.linalg.qr(A).R
    np.testing.assert_allclose(Q @ R, A, atol=1e-13)
    np.testing.assert_allclose(np.abs(R), np.abs(R_c), atol=1e-13)


@pytest.mark.parametrize(
    ("A", "dtype"),
    [
        ([[3e-162, 1.0], [4e-162, 1.0]], np.float64),  # squares subnormal: Q was off by 0.34
        ([[3e-21, 1.0], [4e-21, 1.0]], np.float32),  # the same in float32 (4e-5)
        ([[1.0, 0.0], [0.0, 1e-170 + 1e-170j]], np.complex128),  # raised ZeroDivisionError
        ([[1.0, 1e-170j], [0.0, 1e-170 + 1e-170j]], np.complex128),
    ],
)
def test_columns_whose_squares_underflow_get_orthogonal_reflectors(acc, A, dtype):
    """A column near the underflow range is scaled before its norm is taken, as larfg does.

    Found by fuzzing graded inputs; each case failed before (see the comments).
    """
    A = np.array(A, dtype=dtype)[None]
    Q, R = qr_batched(A)
    eps = np.finfo(dtype).eps
    assert np.isfinite(Q).all()
    assert np.isfinite(R).all()
    assert acc.orthogonality(Q) < 10 * eps
    np.testing.assert_allclose(Q @ R, A, rtol=0, atol=10 * eps)
    Ql, Rl = np.linalg.qr(A[0].astype(np.complex128 if dtype == np.complex128 else np.float64))
    # LAPACK's signs: the same factors to rounding (the tiny diagonal entry relative to itself)
    np.testing.assert_allclose(np.abs(np.diag(R[0])), np.abs(np.diag(Rl)), rtol=10 * eps)
    np.testing.assert_allclose(Q[0], Ql, atol=10 * eps)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_matrix_is_not_changed_by_tiny_columns_beside_it(rng, acc, dtype):
    """A stack mixing ordinary matrices and ones with a column near underflow: each as alone."""
    A = acc.general(rng, "random", 40, 5, 4, dtype)
    tiny = 1e-21 if dtype == np.float32 else 1e-162
    A[::3, :, 1] *= tiny
    Q, R = qr_batched(A)
    for p in range(40):
        Q_alone, R_alone = qr_batched(A[p : p + 1])
        np.testing.assert_array_equal(Q[p], Q_alone[0])
        np.testing.assert_array_equal(R[p], R_alone[0])
    eps = np.finfo(dtype).eps
    assert acc.orthogonality(Q) < 20 * eps
    np.testing.assert_allclose(Q @ R, A, rtol=0, atol=20 * eps)
