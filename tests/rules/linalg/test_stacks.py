import numpy as np

from rules import rrule
from rules.linalg import _stacks


def test_kernel_operands_casts_a_complex_operand_to_a_real_dtype_by_its_real_part():
    z = np.array([[1.0 + 2.0j, 3.0 - 1.0j]])
    (x,) = _stacks.kernel_operands(z, dtype=np.float64)  # no ComplexWarning (an error in tests)
    np.testing.assert_array_equal(x, [[1.0, 3.0]])
    (w,) = _stacks.kernel_operands(z, dtype=np.complex128)
    assert w is z


def test_a_complex_cotangent_of_a_real_cholesky_input():
    A = np.array([[4.0, 1.0], [1.0, 3.0]])
    _, pullback = rrule(np.linalg.cholesky, A)
    L_bar = np.array([[1.0 + 1.0j, 0.0], [2.0 - 1.0j, 0.5j]])
    np.testing.assert_allclose(pullback(L_bar)[1], pullback(L_bar.real)[1])
