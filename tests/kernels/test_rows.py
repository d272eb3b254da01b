"""``kernels.rows.rows_batched``: row gathers of stacks, against numpy's ``take_along_axis``."""

import numpy as np
import pytest

from kernels.rows import rows_batched


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize(
    ("b", "m", "n", "k"), [(5, 4, 4, 4), (3, 6, 2, 6), (4, 5, 3, 2), (2, 1, 7, 1)]
)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_gathers_rows_as_take_along_axis(dtype, b, m, n, k, index_dtype):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((b, m, n)).astype(dtype)
    if np.dtype(dtype).kind == "c":
        X = X + 1j * rng.standard_normal((b, m, n))
    X[0, 0, 0] = np.nan
    perm = np.stack([rng.permutation(m)[:k] for _ in range(b)]).astype(index_dtype)
    kept = X.copy()
    got = rows_batched(X, perm)
    np.testing.assert_array_equal(got, np.take_along_axis(X, perm[..., None], axis=-2))
    assert got.dtype == dtype
    assert got.flags.c_contiguous
    assert not np.shares_memory(got, X)
    np.testing.assert_array_equal(X, kept)


def test_bad_indices_raise():
    X = np.ones((2, 3, 3))
    with pytest.raises(IndexError, match="rows_batched"):
        rows_batched(X, np.array([[0, 1, 3], [0, 1, 2]], np.int32))
    with pytest.raises(IndexError, match="rows_batched"):
        rows_batched(X, np.array([[0, -1, 2], [0, 1, 2]], np.int32))
    with pytest.raises(ValueError, match="one row of indices per matrix"):
        rows_batched(X, np.zeros((3, 3), np.int32))


def test_empty_stacks():
    assert rows_batched(np.ones((0, 3, 2)), np.zeros((0, 3), np.int32)).shape == (0, 3, 2)
    assert rows_batched(np.ones((2, 3, 0)), np.zeros((2, 3), np.int32)).shape == (2, 3, 0)
