import numpy as np
import pytest

from tangents import InplaceableThunk, NoTangent, Tangent, Thunk, ZeroTangent, add_inplace


def test_writes_into_a_writable_float_array():
    acc = np.zeros(3)
    assert add_inplace(acc, np.ones(3)) is acc
    np.testing.assert_array_equal(acc, np.ones(3))


def test_broadcasting_dx_is_accumulated_in_place():
    acc = np.zeros((2, 3), dtype=np.float32)
    assert add_inplace(acc, np.arange(3.0)) is acc  # float64 into float32: same kind
    np.testing.assert_array_equal(acc, [[0, 1, 2], [0, 1, 2]])
    assert acc.dtype == np.float32


def test_thunk_is_evaluated_and_added_in_place():
    acc = np.zeros(2)
    assert add_inplace(acc, Thunk(lambda: np.ones(2))) is acc
    np.testing.assert_array_equal(acc, np.ones(2))


def test_inplaceable_thunk_uses_its_add_fn_not_its_value():
    def never():
        raise AssertionError("the value form must not be built")

    def scatter(acc):
        acc[1] += 5.0
        return acc

    acc = np.zeros(3)
    assert add_inplace(acc, InplaceableThunk(scatter, never)) is acc
    np.testing.assert_array_equal(acc, [0, 5, 0])


def test_add_fn_must_return_the_accumulator():
    with pytest.raises(RuntimeError, match="must return"):
        add_inplace(np.zeros(2), InplaceableThunk(lambda acc: acc.copy(), lambda: np.ones(2)))


def read_only_zeros(n):
    acc = np.zeros(n)
    acc.flags.writeable = False
    return acc


@pytest.mark.parametrize(
    "make_acc",
    [
        pytest.param(lambda n: np.zeros(n, dtype=np.int64), id="integer"),
        pytest.param(lambda n: np.broadcast_to(np.zeros(1), (n,)), id="broadcast"),
        pytest.param(read_only_zeros, id="read-only"),
    ],
)
def test_never_writes_into_unsafe_accumulators(make_acc):
    acc = make_acc(3)
    result = add_inplace(acc, np.ones(3))
    assert result is not acc
    np.testing.assert_array_equal(result, np.ones(3))
    np.testing.assert_array_equal(acc, np.zeros(3))


def test_stride_zero_view_is_not_written():
    base = np.zeros((1, 3))
    acc = np.lib.stride_tricks.as_strided(base, shape=(2, 3), strides=(0, 8))
    result = add_inplace(acc, np.ones((2, 3)))
    assert result is not acc
    np.testing.assert_array_equal(base, 0)


def test_aliasing_dx_is_not_accumulated_in_place():
    acc = np.arange(4.0)
    dx = acc[::-1]
    result = add_inplace(acc, dx)
    assert result is not acc
    np.testing.assert_array_equal(result, [3, 3, 3, 3])
    np.testing.assert_array_equal(acc, np.arange(4.0))


def test_dx_that_would_change_shape_or_dtype_gives_a_new_value():
    acc = np.zeros(3)
    bigger = add_inplace(acc, np.ones((2, 3)))
    assert bigger.shape == (2, 3)
    complex_sum = add_inplace(acc, np.ones(3) * 1j)
    assert complex_sum.dtype == np.complex128
    np.testing.assert_array_equal(acc, 0)


def test_zeros_and_non_arrays():
    acc = np.zeros(2)
    assert add_inplace(acc, ZeroTangent()) is acc
    assert add_inplace(acc, NoTangent()) is acc
    dx = np.ones(2)
    assert add_inplace(ZeroTangent(), dx) is dx
    t = Thunk(lambda: dx)
    assert add_inplace(ZeroTangent(), t) is t
    assert add_inplace(2.0, 3.0) == 5.0
    pair = add_inplace(Tangent(tuple, 1.0), Tangent(tuple, 2.0))
    assert pair == Tangent(tuple, 3.0)
