import numpy as np
import pytest
import scipy.linalg as sla

from rules import frule, rrule
from rules.linalg import _stacks
from rules.linalg._stacks import kernel_operands
from rules.testing.reverse import rand_output
from tangents import NoTangent, ZeroTangent


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


def test_kernel_operands_casts_a_complex_operand_to_a_real_dtype_by_its_real_part():
    z = np.array([[1.0 + 2.0j, 3.0 - 1.0j]])
    (x,) = _stacks.kernel_operands(z, dtype=np.float64)  # no ComplexWarning (an error in tests)
    np.testing.assert_array_equal(x, [[1.0, 3.0]])
    (w,) = _stacks.kernel_operands(z, dtype=np.complex128)
    assert w is z


def test_a_complex_cotangent_of_a_real_cholesky_input():
    # The loss Re <L_bar, cholesky(A)> (complex L_bar, real A): its gradient, by central
    # differences along symmetric directions, against the pullback (a real, symmetric A_bar).
    A = np.array([[4.0, 1.0], [1.0, 3.0]])
    _, pullback = rrule(np.linalg.cholesky, A)
    L_bar = np.array([[1.0 + 1.0j, 0.0], [2.0 - 1.0j, 0.5j]])
    A_bar = pullback(L_bar)[1]
    assert A_bar.dtype == np.float64

    def loss(X):
        return np.vdot(L_bar, np.linalg.cholesky(X)).real

    h = 1e-5
    for E in (np.diag([1.0, 0.0]), np.diag([0.0, 1.0]), np.array([[0.0, 1.0], [1.0, 0.0]])):
        slope = (loss(A + h * E) - loss(A - h * E)) / (2 * h)
        np.testing.assert_allclose(np.sum(A_bar * E), slope, rtol=1e-7, atol=1e-9)


def test_as_stack_and_flat_batch_of_zero_size_arrays():
    assert _stacks.as_stack(np.zeros((3, 0, 0))).shape == (3, 0, 0)
    assert _stacks.as_stack(np.zeros((2, 0, 4, 0))).shape == (0, 4, 0)
    assert _stacks.flat_batch(np.zeros((2, 3, 0)), 1).shape == (6, 0)
    assert _stacks.flat_batch(np.zeros((0, 3)), 1).shape == (0, 3)


@pytest.mark.parametrize(
    ("f", "extra"),
    [
        (np.linalg.inv, ()),
        (np.linalg.cholesky, ()),
        (np.linalg.det, ()),
        (np.linalg.slogdet, ()),
        (np.linalg.eig, ()),
        (np.linalg.eigvals, ()),
        (np.linalg.eigh, ()),
        (np.linalg.eigvalsh, ()),
        (np.linalg.svd, ()),
        (np.linalg.svdvals, ()),
        (sla.eigh, ()),
        (sla.svd, ()),
        (np.linalg.matrix_power, (2,)),
        (np.linalg.matrix_power, (-1,)),
        (np.linalg.qr, ()),
        (np.linalg.pinv, ()),
        (sla.expm, ()),
        (sla.sqrtm, ()),
        (sla.lu, ()),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
@pytest.mark.parametrize("shape", [(0, 0), (3, 0, 0), (0, 3, 3)])
def test_zero_size_inputs_work_where_numpy_does(rng, f, extra, shape):
    # reshape(-1, *core) cannot infer -1 from a zero-size core: the stacks flatten by the product
    a = np.zeros(shape) + np.eye(shape[-1])
    try:
        expected = f(a, *extra)
    except (ValueError, np.linalg.LinAlgError):  # where numpy/scipy refuse, so may the rule
        return
    y, pullback = rrule(f, a, *extra)
    for got, want in zip(_leaves(y), _leaves(expected), strict=True):
        assert np.shape(got) == np.shape(want)
    a_bar = pullback(rand_output(y, rng))[1]
    assert a_bar == ZeroTangent() or np.shape(a_bar) == shape
    tangents = (NoTangent(), np.ones(shape)) + (NoTangent(),) * len(extra)
    y, _ = frule(tangents, f, a, *extra)
    for got, want in zip(_leaves(y), _leaves(expected), strict=True):
        assert np.shape(got) == np.shape(want)


def _leaves(y):
    return list(y) if isinstance(y, tuple | list) else [y]


@pytest.mark.parametrize(
    ("f", "extra", "name"),
    [
        (np.linalg.inv, (), "np.linalg.inv"),
        (np.linalg.det, (), "np.linalg.det"),
        (np.linalg.solve, (np.ones(2),), "np.linalg.solve"),
        (np.linalg.cholesky, (), "np.linalg.cholesky"),
        (sla.cho_factor, (), "scipy.linalg.cho_factor"),
        (np.linalg.eigh, (), "np.linalg.eigh"),
        (np.linalg.eig, (), "np.linalg.eig"),
        (np.linalg.matrix_power, (2,), "np.linalg.matrix_power"),
        (sla.expm, (), "scipy.linalg.expm"),
        (sla.sqrtm, (), "scipy.linalg.sqrtm"),
        (sla.solve_triangular, (np.ones(2),), "scipy.linalg.solve_triangular"),
    ],
    ids=lambda v: getattr(v, "__name__", None) if callable(v) else None,
)
def test_one_square_check_one_message(f, extra, name):
    message = rf"^{name}: needs square matrices \(\.\.\., n, n\), got an input of shape \(2, 3\)$"
    with pytest.raises(np.linalg.LinAlgError, match=message):
        rrule(f, np.ones((2, 3)), *extra)
    with pytest.raises(np.linalg.LinAlgError, match=message):
        _stacks.square_matrices(name, np.ones((2, 3)))


def _read_only(x):
    x = np.array(x)
    x.flags.writeable = False
    return x


def _compiled_for_read_only(*dispatchers):
    from numba import types

    return [
        s
        for d in dispatchers
        for s in d.signatures
        if any(isinstance(t, types.Array) and not t.mutable for t in s)
    ]


def test_read_only_inputs_and_cotangents_reach_no_kernel():
    # Numba compiles a kernel again for read-only arrays (seconds, per dtype): the rules copy them
    from kernels import cholesky as kcholesky
    from kernels import eigh as keigh
    from kernels import products as kproducts
    from kernels import solve as ksolve

    rng = np.random.default_rng(0)
    A = _read_only(rng.standard_normal((3, 4, 4)) + 4 * np.eye(4))
    for n in (3, -2, -1):
        Y, pullback = rrule(np.linalg.matrix_power, A, n)
        expected = pullback(np.array(np.ones_like(Y)))
        np.testing.assert_allclose(pullback(_read_only(np.ones_like(Y)))[1], expected[1])
        frule((NoTangent(), _read_only(np.ones_like(A)), NoTangent()), np.linalg.matrix_power, A, n)
    S = _read_only(A + A.mT)
    (w, V), pullback = rrule(np.linalg.eigh, S)
    pullback((_read_only(np.ones_like(w)), ZeroTangent()))
    pullback((ZeroTangent(), _read_only(V @ np.diag([1.0, 2.0, 3.0, 4.0]))))
    for B in (S[0] + 8 * np.eye(4), S + 8 * np.eye(4)):  # one matrix and a stack
        L, pullback = rrule(np.linalg.cholesky, B)
        pullback(_read_only(np.tril(np.ones_like(L))))
    modules = (kproducts, ksolve, keigh, kcholesky)
    kernels = [getattr(m, name) for m in modules for name in dir(m)]
    assert _compiled_for_read_only(*(k for k in kernels if hasattr(k, "signatures"))) == []
