"""Shape functions: every rule against finite differences; layouts for ravel/reshape orders."""

import numpy as np
import pytest

import rules  # noqa: F401  (registers the rules)
from rules import frule, rrule
from rules.testing import check_frule, check_rrule
from tangents import NoTangent, Thunk

X3 = (2, 3, 2)
CASES = [  # (function, shape of the array argument, other arguments, keyword arguments)
    (np.reshape, X3, ((6, 2),), {}),
    (np.reshape, X3, ((3, -1), "F"), {}),
    (np.reshape, X3, (), {"shape": -1}),
    (np.ravel, X3, (), {}),
    (np.ravel, X3, ("F",), {}),
    (np.transpose, X3, (), {}),
    (np.transpose, X3, ((1, 2, 0),), {}),
    (np.transpose, X3, (), {"axes": (-1, 0, 1)}),
    (np.moveaxis, X3, (0, -1), {}),
    (np.moveaxis, X3, ((0, 1), (2, 0)), {}),
    (np.swapaxes, X3, (0, 2), {}),
    (np.swapaxes, X3, (1, -1), {}),
    (np.swapaxes, X3, (1, 1), {}),
    (np.squeeze, (2, 1, 3), (), {}),
    (np.squeeze, (1, 3, 1), (0,), {}),
    (np.expand_dims, (2, 3), ((0, 2),), {}),
    (np.broadcast_to, (2, 1), ((3, 2, 4),), {}),
    (np.broadcast_to, (), ((2, 2),), {}),
    (np.flip, X3, (), {}),
    (np.flip, X3, (1,), {}),
    (np.flip, X3, ((0, 2),), {}),
    (np.roll, X3, (2,), {}),
    (np.roll, X3, ((1, -1), (0, 2)), {}),
    (np.roll, (2, 3), (1,), {"axis": 1}),
    (np.tile, (2, 3), (2,), {}),
    (np.tile, (3,), ((2, 1, 2),), {}),
    (np.tile, X3, ((2, 1),), {}),
    (np.repeat, (2, 3), (2,), {}),
    (np.repeat, (2, 3), ([1, 0, 2], 1), {}),
    (np.repeat, (2, 3), (3,), {"axis": 0}),
    (np.repeat, (2,), ([2, 3],), {}),
    (np.pad, (2, 3), (1,), {}),
    (np.pad, (2, 3), (((1, 0), (2, 3)),), {}),
    (np.pad, (2, 3), ((0, 2),), {"constant_values": 7.0}),
    (np.pad, X3, ([(1, 1)],), {"mode": "constant"}),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize(
    ("f", "shape", "args", "kwargs"), CASES, ids=lambda v: getattr(v, "__name__", str(v))
)
def test_shape_functions(rng, f, shape, args, kwargs, dtype, make_array):
    x = make_array(shape, dtype)
    check_rrule(f, x, *args, **kwargs)
    check_frule(f, x, *args, **kwargs)


def test_options_get_no_tangent(rng):
    x = rng.standard_normal((2, 3))
    _, pullback = rrule(np.reshape, x, (3, 2), "F")
    assert pullback(np.ones((3, 2)))[2:] == (NoTangent(), NoTangent())


def test_integer_input(rng):
    n = np.arange(6).reshape(2, 3)
    check_rrule(np.transpose, n)
    assert rrule(np.tile, n, 2)[1](np.ones((2, 6)))[1].dtype == np.float64


def test_repeat_with_zero_counts_gives_zero_cotangent():
    _, pullback = rrule(np.repeat, np.array([1.0, 2.0, 3.0]), [2, 0, 1])
    np.testing.assert_array_equal(pullback(np.array([1.0, 2.0, 5.0]))[1], [3.0, 0.0, 5.0])


def test_pad_other_modes_are_refused():
    with pytest.raises(ValueError, match="mode"):
        rrule(np.pad, np.ones(3), 1, "reflect")


# Layout-dependent orders: the finite differences of the checker perturb a C-ordered copy, so
# these are checked directly: the frule equals the function applied to a tangent laid out like
# the input, whatever the tangent's own layout, and the pullback is its adjoint.
LAYOUTS = [
    lambda b: b,
    lambda b: b[:, ::2],
    np.asfortranarray,
    lambda b: b[::-1].transpose(2, 0, 1),
    lambda b: b[:, ::-1, ::2].transpose(1, 0, 2),
    lambda b: np.asfortranarray(b)[::-1],
    lambda b: b[:, :1].transpose(2, 1, 0),
]


@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
@pytest.mark.parametrize(("f", "options"), [(np.ravel, "CFAK"), (np.reshape, "CFA")])
def test_orders_follow_the_input_layout(rng, f, options, layout):
    x_base, t_base = rng.standard_normal((2, 2, 3, 4))
    x, t_laid_out = LAYOUTS[layout](x_base), LAYOUTS[layout](t_base)
    t = np.ascontiguousarray(t_laid_out)
    for order in options:
        args = (order,) if f is np.ravel else ((-1, 2), order)
        y, pullback = rrule(f, x, *args)
        np.testing.assert_array_equal(y, f(x, *args))
        _, y_dot = frule((NoTangent(), t) + (NoTangent(),) * len(args), f, x, *args)
        np.testing.assert_array_equal(y_dot, f(t_laid_out, *args))
        y_bar = rng.standard_normal(y.shape)
        x_bar = pullback(y_bar)[1]
        np.testing.assert_allclose(np.vdot(y_bar, y_dot), np.vdot(x_bar, t))


class MatrixTangent:
    """A user's matrix-like tangent type: a shape and ``.mT``, never an ndarray."""

    __array_ufunc__ = None

    def __init__(self, values):
        self.values = values
        self.shape = values.shape

    @property
    def mT(self):
        return MatrixTangent(self.values.mT)


@pytest.mark.parametrize(
    ("f", "shape", "args"),
    [
        (np.transpose, (2, 3), ()),
        (np.transpose, X3, ((0, 2, 1),)),
        (np.swapaxes, X3, (-1, 1)),
        (np.moveaxis, (2, 3), (0, 1)),
        (np.moveaxis, X3, (2, 1)),
    ],
)
def test_a_matrix_transpose_takes_a_user_tangent_type_through_mT(rng, f, shape, args):
    x = rng.standard_normal(shape)
    y, pullback = rrule(f, x, *args)
    y_bar = rng.standard_normal(y.shape)
    x_bar = pullback(Thunk(lambda: MatrixTangent(y_bar)))[1]
    assert isinstance(x_bar, MatrixTangent)  # the algebra path: never made an ndarray
    np.testing.assert_array_equal(x_bar.values, pullback(y_bar)[1])
    x_dot = rng.standard_normal(shape)
    _, y_dot = frule((NoTangent(), MatrixTangent(x_dot), *(NoTangent(),) * len(args)), f, x, *args)
    assert isinstance(y_dot, MatrixTangent)  # and so is the pushforward
    np.testing.assert_array_equal(y_dot.values, f(x_dot, *args))


@pytest.mark.parametrize(
    ("f", "args"), [(np.transpose, ()), (np.swapaxes, (0, 1)), (np.moveaxis, (0, 2))]
)
def test_other_permutations_refuse_a_user_tangent_type_by_name(rng, f, args):
    x = rng.standard_normal(X3)
    y, pullback = rrule(f, x, *args)
    with pytest.raises(TypeError, match=rf"np\.{f.__name__}'s pullback needs an ndarray"):
        pullback(MatrixTangent(np.ones(y.shape)))
    tangents = (NoTangent(), MatrixTangent(np.ones(X3)), *(NoTangent(),) * len(args))
    with pytest.raises(TypeError, match=rf"np\.{f.__name__}'s frule needs an ndarray"):
        frule(tangents, f, x, *args)


def test_a_sparse_cotangent_of_a_transpose_is_made_dense(rng):
    import scipy.sparse as sp

    _, pullback = rrule(np.transpose, rng.standard_normal((2, 3)))
    y_bar = sp.csr_array(rng.standard_normal((3, 2)))
    np.testing.assert_array_equal(pullback(y_bar)[1], y_bar.toarray().T)


def test_a_cotangent_of_the_wrong_shape_is_refused_by_name():
    _, pullback = rrule(np.reshape, np.ones((2, 3, 3)), (6, 3))
    with pytest.raises(ValueError, match=r"np.reshape pullback.*\(3, 6\).*expected \(6, 3\)"):
        pullback(np.ones((3, 6)))
    _, pullback = rrule(np.transpose, np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"np.transpose pullback.*\(3, 2, 1\).*\(3, 2\)"):
        pullback(np.ones((3, 2, 1)))
