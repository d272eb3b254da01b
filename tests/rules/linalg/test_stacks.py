import numpy as np

from rules.linalg._stacks import kernel_operands


def test_kernel_operands_normalise_dtype_and_layout():
    a, b = np.ones((2, 3), np.float32), np.ones((3, 2)).T
    a_k, b_k = kernel_operands(a, b)
    assert a_k.dtype == b_k.dtype == np.float64
    assert b_k.flags.c_contiguous
    assert kernel_operands(a, a)[0] is a  # nothing to do: no copy
    assert kernel_operands(a, b, dtype=np.float32)[1].dtype == np.float32


def test_kernel_operands_refuse_dtypes_without_kernels():
    assert kernel_operands(np.ones(2, np.complex64)) is None
    assert kernel_operands(np.ones(2), dtype=np.complex64) is None  # a forced dtype too


def test_kernel_operands_copy_read_only_arrays():
    view = np.broadcast_to(np.ones((1, 3)), (2, 3))[:1]  # C-contiguous but read-only
    (copy,) = kernel_operands(view)
    assert copy.flags.writeable
    assert copy.flags.c_contiguous
