"""``rules.core.broadcasting.unbroadcast``: summing a cotangent back to a broadcast input's shape."""

import numpy as np
import pytest

from rules.core.broadcasting import unbroadcast
from tangents import NotImplementedTangent, ZeroTangent


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
@pytest.mark.parametrize(
    ("g_shape", "shape"),
    [
        ((10000, 4, 1), (4, 1)),  # a solve's vector cotangent over a stack
        ((3, 5, 4, 4), (4, 4)),  # two leading axes
        ((7, 4, 3), (1, 3)),  # a leading axis and a stretched one
        ((1, 6), (6,)),  # one leading axis of length 1
        ((0, 3), (3,)),  # an empty leading axis: zeros
        ((2, 0), (0,)),  # empty rows
    ],
)
def test_leading_axes_are_summed_as_numpy_sums_them(dtype, g_shape, shape):
    rng = np.random.default_rng(3)
    g = rng.standard_normal(g_shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        g = g + 1j * rng.standard_normal(g_shape).astype(dtype)
    extra = len(g_shape) - len(shape)
    want = g.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and want.shape[i] != 1)
    want = want.sum(axis=stretched, keepdims=True) if stretched else want
    kept = g.copy()
    got = unbroadcast(g, shape)
    assert got.shape == shape
    assert got.dtype == dtype
    # two summation orders: each within (terms) * eps * sum |g| of the exact sum
    eps = np.finfo(dtype).eps
    bound = 2 * g_shape[0] * eps * np.abs(g).sum() + 1e-30
    assert np.abs(got - want).max(initial=0) <= bound
    np.testing.assert_array_equal(g, kept)  # the cotangent is not modified


def test_other_layouts_and_dtypes_sum_as_numpy_does():
    rng = np.random.default_rng(4)
    g = rng.standard_normal((5, 4, 6))[:, :, ::2]  # not C-contiguous
    np.testing.assert_array_equal(unbroadcast(g, (4, 3)), g.sum(axis=0))
    ints = np.arange(24).reshape(2, 3, 4)
    got = unbroadcast(ints, (3, 4))
    assert got.dtype == ints.dtype
    np.testing.assert_array_equal(got, ints.sum(axis=0))


def test_nan_and_inf_propagate_to_their_entries_only():
    g = np.ones((100, 3))
    g[17, 0] = np.nan
    g[40, 1] = np.inf
    got = unbroadcast(g, (3,))
    assert np.isnan(got[0])
    assert got[1] == np.inf
    assert got[2] == 100.0


def test_zeros_and_matching_shapes_pass_through():
    g = np.ones((2, 3))
    assert unbroadcast(g, (2, 3)) is g
    assert isinstance(unbroadcast(ZeroTangent(), (3,)), ZeroTangent)
    nit = NotImplementedTangent("the test's")
    assert unbroadcast(nit, (3,)) is nit
    with pytest.raises(ValueError, match=r"cannot come from an input of shape \(4,\)"):
        unbroadcast(np.ones((2, 3)), (4,))
