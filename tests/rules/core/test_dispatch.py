import numpy as np
import pytest

from kernels import crossovers
from rules.core.dispatch import kernel_array, kernel_eligible, kernel_operands, kernel_ready, paths
from tangents import Diagonal, Thunk


def recorder(name, calls):
    def path(*args):
        calls.append((name, tuple(np.shape(a) for a in args)))
        return args[0] if name != "batched" else args[0].copy()

    return path


@pytest.fixture
def declared(monkeypatch):
    monkeypatch.setattr(crossovers, "LU_SINGLE_MAX_N", 3)
    monkeypatch.setattr(crossovers, "LU_STACK_MAX_N", 5)
    calls = []
    made = paths(
        algebra=recorder("algebra", calls),
        formula=recorder("formula", calls),
        single=recorder("single", calls),
        batched=recorder("batched", calls),
        large=recorder("large", calls),
        single_max_n="LU_SINGLE_MAX_N",
        stack_max_n="LU_STACK_MAX_N",
    )
    return made, calls


def test_the_gate_is_plain_ndarrays_of_a_kernel_dtype():
    assert kernel_eligible(np.zeros(2))
    assert kernel_eligible(np.zeros(2, np.float32))
    assert kernel_eligible(np.zeros(2, np.complex128))
    assert not kernel_eligible(np.zeros(2, np.complex64))
    assert not kernel_eligible(np.zeros(2, np.int64))
    assert not kernel_eligible(np.zeros(2).view(np.matrix))  # a subclass: not a plain ndarray
    assert not kernel_eligible(Diagonal(np.ones(2)))
    assert not kernel_eligible(Thunk(lambda: np.zeros(2)))
    assert not kernel_eligible([0.0, 1.0])


def test_kernel_ready_also_needs_one_dtype_c_order_and_writable():
    a = np.zeros((2, 2))
    assert kernel_ready(a, a)
    assert not kernel_ready(a, a.astype(np.float32))
    assert not kernel_ready(a, np.asfortranarray(np.ones((2, 2))))
    assert not kernel_ready(a, np.broadcast_to(np.ones(2), (2, 2)))
    assert kernel_operands(Diagonal(np.ones(2)), a) is None


def test_one_small_matrix_takes_the_single_kernel(declared):
    made, calls = declared
    made(np.zeros((3, 3)), np.ones((3, 3)))
    assert calls == [("single", ((3, 3), (3, 3)))]


def test_one_larger_matrix_takes_the_large_kernel_and_the_order_can_be_given(declared):
    made, calls = declared
    made(np.zeros((4, 4)), np.ones((4, 4)))
    made(np.zeros((2, 2)), np.ones((2, 2)), n=4)
    assert [name for name, _ in calls] == ["large", "large"]


def test_stacks_take_the_batched_kernel_flattened_then_large_per_matrix(declared):
    made, calls = declared
    out = made(np.zeros((2, 3, 5, 5)), np.ones((2, 3, 5, 5)))
    assert calls == [("batched", ((6, 5, 5), (6, 5, 5)))]
    assert out.shape == (2, 3, 5, 5)  # the batch axes restored
    calls.clear()
    out = made(np.zeros((2, 6, 6)), np.ones((2, 6, 6)))
    assert calls == [("large", ((6, 6), (6, 6)))] * 2
    assert out.shape == (2, 6, 6)


def test_non_ndarrays_take_the_algebra_path_other_dtypes_the_formula(declared):
    made, calls = declared
    made(np.zeros((2, 2)), Diagonal(np.ones(2)))
    made(np.zeros((2, 2), np.complex64), np.ones((2, 2), np.complex64))
    made(np.zeros((2, 2), np.float16), np.ones((2, 2)))
    assert [name for name, _ in calls] == ["algebra", "formula", "formula"]


def test_operands_are_normalised_before_a_kernel_sees_them():
    seen = []
    made = paths(
        formula=abs,
        single=lambda *args: seen.append(args),
        single_max_n="LU_SINGLE_MAX_N",
        stack_max_n="LU_STACK_MAX_N",
    )
    made(np.zeros((3, 3), np.float32), np.asfortranarray(np.ones((3, 3))))
    ((_, L_bar),) = seen
    assert L_bar.dtype == np.float32  # cast to the first operand's dtype
    assert L_bar.flags.c_contiguous


def test_index_arrays_follow_the_operands_and_the_stack(declared):
    made, calls = declared
    perm = np.zeros((2, 3, 4), np.int32)
    made(np.zeros((2, 3, 4, 4)), np.ones((2, 3, 4, 4)), index=(perm,))
    assert calls == [("batched", ((6, 4, 4), (6, 4, 4), (6, 4)))]


def test_an_unknown_crossover_name_fails_when_the_paths_are_declared():
    with pytest.raises(AttributeError):
        paths(formula=abs, single_max_n="NO_SUCH_MAX_N", stack_max_n="LU_STACK_MAX_N")


def test_without_a_single_crossover_one_matrix_takes_the_large_kernel(monkeypatch):
    monkeypatch.setattr(crossovers, "LU_STACK_MAX_N", 5)
    calls = []
    made = paths(
        formula=recorder("formula", calls),
        batched=recorder("batched", calls),
        large=recorder("large", calls),
        single_max_n=None,
        stack_max_n="LU_STACK_MAX_N",
    )
    made(np.zeros((2, 2)), np.ones((2, 2)))  # small, but no loop kernel for one matrix
    made.given(np.zeros((2, 2)))(np.ones((2, 2)))
    made(np.zeros((3, 2, 2)), np.ones((3, 2, 2)))
    assert [name for name, _ in calls] == ["large", "large", "batched"]
    with pytest.raises(ValueError, match="single_max_n"):
        paths(formula=abs, single=abs, single_max_n=None, stack_max_n="LU_STACK_MAX_N")


def test_given_binds_the_large_kernel_of_a_larger_matrix(declared):
    made, calls = declared
    pullback = made.given(np.zeros((4, 4)))
    pullback(np.ones((4, 4)))
    pullback(Diagonal(np.ones(4)))  # not kernel-ready: chosen again, the algebra path
    assert [name for name, _ in calls] == ["large", "algebra"]


def test_common_dtype_casts_to_the_promoted_kernel_dtype():
    seen = []
    made = paths(
        formula=abs,
        large=lambda *args: seen.append(args),
        single_max_n=None,
        stack_max_n="LU_STACK_MAX_N",
        common_dtype=True,
    )
    made(np.zeros((3, 3), np.float32), np.ones((3, 3)), np.ones((3, 3), np.float32))
    assert [a.dtype for a in seen[0]] == [np.float64] * 3


def test_given_binds_the_batched_kernel_of_a_ready_stack(monkeypatch):
    monkeypatch.setattr(crossovers, "LU_STACK_MAX_N", 5)
    stack, seen = np.zeros((2, 4, 4)), []
    made = paths(
        formula=abs,
        batched=lambda *args: seen.append(args[0] is stack) or args[0],
        large=lambda *args: seen.append("large") or args[0],
        single_max_n=None,
        stack_max_n="LU_STACK_MAX_N",
    )
    pullback = made.given(stack)
    pullback(np.ones((2, 4, 4)))  # straight to the kernel: the primal itself, not a view
    pullback(np.ones((1, 2, 4, 4)))  # another ndim: chosen again, flattened (a view)
    made.given(np.zeros((2, 6, 6)))(np.ones((2, 6, 6)))  # above the crossover: per matrix
    assert seen == [True, False, "large", "large"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_kernel_array_copies_any_layout_to_c_order(dtype):
    X = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5).astype(dtype)
    rows = np.random.default_rng(0).permuted(np.broadcast_to(np.arange(4), (2, 3, 4)), axis=-1)
    read_only = X.copy()
    read_only.flags.writeable = False
    views = [
        X.transpose(1, 0, 2, 3),  # matrices interleaved, rows contiguous (the row-item copy)
        np.take_along_axis(X, rows[..., None], axis=-2),  # per-matrix row shuffles, as the bench
        X.transpose(0, 1, 3, 2),  # Fortran-ordered matrices
        X[:, ::2],
        X[..., ::2],
        X[..., :1],
        np.broadcast_to(X[0, 0], (3, 4, 5)),
        read_only,
    ]
    for V in views:
        Y = kernel_array(V)
        assert Y.flags.c_contiguous
        assert Y.flags.writeable
        assert Y.dtype == V.dtype
        np.testing.assert_array_equal(Y, V)
        assert not np.shares_memory(Y, V) or (V.flags.c_contiguous and V.flags.writeable)
    assert kernel_array(X) is X


def test_a_stack_of_one_large_matrix_keeps_its_results_without_copying_them(monkeypatch):
    # large per matrix on a (1, n, n) stack: the result comes back as a view of the large
    # kernel's own C-ordered array; a Fortran-ordered one or a 0-d one is stacked as np.stack
    # would, in C order
    monkeypatch.setattr(crossovers, "LU_STACK_MAX_N", 2)
    made = {}

    def large(a):
        made["c"], made["f"] = a * 2, np.asfortranarray(a * 3)
        return made["c"], made["f"], np.float32(a[0, 0])

    chosen = paths(
        formula=lambda a: None, large=large, single_max_n=None, stack_max_n="LU_STACK_MAX_N"
    )
    a = np.arange(16.0).reshape(1, 4, 4)
    c, f, scalar = chosen(a)
    assert np.shares_memory(c, made["c"])
    np.testing.assert_array_equal(c, np.stack([made["c"]]))
    assert f.flags.c_contiguous
    np.testing.assert_array_equal(f, np.stack([made["f"]]))
    assert scalar.shape == (1,)
    assert scalar.dtype == np.float32
    assert scalar[0] == 0.0
    two = chosen(np.arange(32.0).reshape(2, 4, 4))  # two matrices: np.stack, as before
    assert two[0].shape == (2, 4, 4)
    assert two[2].shape == (2,)
