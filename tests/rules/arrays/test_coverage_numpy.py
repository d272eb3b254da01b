"""Rules added for issue 19 (numpy): each against finite differences, in each dtype it supports."""

import numpy as np
import pytest

import rules  # noqa: F401  (registers the rules)
from rules import frule, rrule
from rules.testing import check_frule, check_rrule
from tangents import AbstractZero, NoTangent, NotImplementedTangent, Tangent

REAL = [np.float64, np.float32]
ALL = [np.float64, np.float32, np.complex128]


def _id(v):
    if isinstance(v, type):
        return np.dtype(v).name
    return getattr(v, "__name__", "")


def _check(f, *args, **kwargs):
    check_rrule(f, *args, **kwargs)
    check_frule(f, *args, **kwargs)


# --- elementwise ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL, ids=_id)
def test_sinc(make_array, dtype):
    _check(np.sinc, make_array((3, 2), dtype))


def test_sinc_at_zero_has_derivative_zero():
    _, pullback = rrule(np.sinc, np.zeros(2))
    np.testing.assert_array_equal(pullback(np.ones(2))[1], [0.0, 0.0])


@pytest.mark.parametrize("dtype", REAL, ids=_id)
@pytest.mark.parametrize("f", [np.fabs, np.degrees, np.radians], ids=_id)
def test_real_elementwise(make_array, f, dtype):
    _check(f, make_array((3, 2), dtype))


@pytest.mark.parametrize("dtype", REAL, ids=_id)
@pytest.mark.parametrize("f", [np.remainder, np.fmod], ids=_id)
def test_remainders_broadcast(make_array, f, dtype):
    a = make_array((3, 2), dtype) * 5
    b = (np.array([1.3, -0.7]) + 0.01).astype(dtype)
    _check(f, a, b)


@pytest.mark.parametrize("dtype", ALL, ids=_id)
def test_nan_to_num(make_array, dtype):
    x = make_array((2, 3), dtype)
    x[0, 0] = np.nan
    x[1, 2] = np.inf
    if np.dtype(dtype).kind == "c":
        x[1, 0] = complex(1.0, np.nan)
    _check(np.nan_to_num, x, constant=[], nan=0.5)
    y, pullback = rrule(np.nan_to_num, x)
    g = pullback(np.ones_like(y))[1]
    np.testing.assert_array_equal(np.real(g), [[0, 1, 1], [1, 1, 0]])


@pytest.mark.parametrize("dtype", ALL, ids=_id)
def test_real_if_close_keeping_the_type(make_array, dtype):
    _check(np.real_if_close, make_array((3,), dtype))


def test_real_if_close_dropping_the_imaginary_part():
    a = np.array([1.0 + 1e-16j, 2.0 - 1e-17j])
    y, pullback = rrule(np.real_if_close, a)
    assert y.dtype == np.float64
    np.testing.assert_array_equal(pullback(np.array([3.0, 4.0]))[1], [3.0 + 0j, 4.0 + 0j])
    _, y_dot = frule((NoTangent(), np.array([1 + 2j, 3 - 1j])), np.real_if_close, a)
    np.testing.assert_array_equal(y_dot, [1.0, 3.0])


# --- rearranging ---------------------------------------------------------------------------------

REARRANGING = [
    (np.atleast_1d, ()),
    (np.atleast_1d, (3,)),
    (np.atleast_2d, (3,)),
    (np.atleast_2d, (2, 3)),
    (np.atleast_3d, (3,)),
    (np.atleast_3d, (2, 3)),
    (np.fliplr, (2, 3)),
    (np.fliplr, (2, 3, 2)),
    (np.flipud, (3,)),
    (np.flipud, (3, 2)),
    (np.copy, (2, 3)),
    (np.asarray, (2, 3)),
]


@pytest.mark.parametrize("dtype", ALL, ids=_id)
@pytest.mark.parametrize(("f", "shape"), REARRANGING, ids=_id)
def test_rearranging(make_array, f, shape, dtype):
    _check(f, make_array(shape, dtype))


@pytest.mark.parametrize("dtype", ALL, ids=_id)
@pytest.mark.parametrize("f", [np.atleast_1d, np.atleast_2d, np.atleast_3d], ids=_id)
def test_atleast_of_several_arrays(make_array, f, dtype):
    _check(f, make_array((), dtype), make_array((2,), dtype), make_array((2, 2), dtype))


@pytest.mark.parametrize("dtype", ALL, ids=_id)
@pytest.mark.parametrize(("k", "axes"), [(1, (0, 1)), (2, (0, 1)), (-1, (1, 2)), (3, (2, 0))])
def test_rot90(make_array, k, axes, dtype):
    _check(np.rot90, make_array((2, 3, 4), dtype), k, axes)


@pytest.mark.parametrize("dtype", ALL, ids=_id)
@pytest.mark.parametrize(("axis", "start"), [(2, 0), (0, 3), (1, 1), (-1, 1)])
def test_rollaxis(make_array, axis, start, dtype):
    _check(np.rollaxis, make_array((2, 3, 4), dtype), axis, start)


@pytest.mark.parametrize(("source", "target"), [(np.float32, np.float64), (np.float64, np.float32)])
def test_astype_keeps_the_input_precision(make_array, source, target):
    x = make_array((3,), source)
    check_rrule(np.astype, x, target, rtol=1e-3 if np.float32 in (source, target) else None)
    check_frule(np.astype, x, target, rtol=1e-3 if np.float32 in (source, target) else None)
    assert rrule(np.astype, x, target)[1](np.ones(3, target))[1].dtype == source


def test_astype_to_integers_has_no_derivative(make_array):
    _, pullback = rrule(np.astype, make_array((3,)), np.int64)
    assert isinstance(pullback(np.ones(3))[1], AbstractZero)


# --- joining, selection, indexing -----------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL, ids=_id)
@pytest.mark.parametrize(
    ("f", "shape", "sections"),
    [
        (np.hsplit, (2, 4), 2),
        (np.hsplit, (6,), [1, 4]),
        (np.vsplit, (4, 3), 2),
        (np.dsplit, (2, 2, 4), [1]),
    ],
    ids=_id,
)
def test_splits(make_array, f, shape, sections, dtype):
    _check(f, make_array(shape, dtype), sections)


@pytest.mark.parametrize("dtype", ALL, ids=_id)
def test_select(make_array, dtype, rng):
    x = make_array((3, 4), dtype)
    conditions = [rng.standard_normal((3, 4)) > 0, rng.standard_normal(4) > 0]
    choices = [x, make_array((4,), dtype)]
    _check(np.select, conditions, choices, make_array((3, 1), dtype))
    _check(np.select, conditions, choices)


@pytest.mark.parametrize("dtype", REAL, ids=_id)
@pytest.mark.parametrize(("kth", "axis"), [(2, -1), ([0, 3], -1), (1, 0), (4, None)])
def test_partition(make_array, kth, axis, dtype):
    _check(np.partition, make_array((3, 5), dtype), kth, axis)


def test_partition_matches_argpartition(make_array):
    x = make_array((4, 7))
    for kth in (0, 3, [1, 5]):
        np.testing.assert_array_equal(
            np.partition(x, kth), np.take_along_axis(x, np.argpartition(x, kth), -1)
        )


@pytest.mark.parametrize("dtype", REAL, ids=_id)
def test_bincount_weights(make_array, dtype):
    x = np.array([0, 2, 2, 5, 1])
    _check(np.bincount, x, make_array((5,), dtype), constant=[0])
    _check(np.bincount, x, make_array((5,), dtype), 8, constant=[0])
    assert rrule(np.bincount, x)[1](np.ones(6)) == (NoTangent(), NoTangent())


# --- differences ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL, ids=_id)
@pytest.mark.parametrize(("args", "kwargs"), [((), {}), ((2,), {}), ((1, 0), {}), ((3, -1), {})])
def test_diff(make_array, args, kwargs, dtype):
    _check(np.diff, make_array((4, 5), dtype), *args, **kwargs)


@pytest.mark.parametrize("dtype", ALL, ids=_id)
def test_diff_with_edges(make_array, dtype):
    x = make_array((3, 4), dtype)
    _check(np.diff, x, 1, -1, make_array((), dtype), make_array((3, 2), dtype))
    _check(np.diff, x, 2, 0, make_array((1, 4), dtype))
    _check(np.diff, x, 1, 0, prepend=0.5, append=x[:1])


@pytest.mark.parametrize("dtype", ALL, ids=_id)
@pytest.mark.parametrize(
    ("shape", "args", "kwargs"),
    [
        ((7,), (), {}),
        ((7,), (0.3,), {"edge_order": 2}),
        ((4, 6), (), {}),
        ((4, 6), (0.5, 2.0), {}),
        ((4, 6), (0.7,), {"axis": 1, "edge_order": 2}),
        ((3, 4, 5), (), {"axis": (0, 2)}),
    ],
)
def test_gradient(make_array, shape, args, kwargs, dtype):
    _check(np.gradient, make_array(shape, dtype), *args, **kwargs)


def test_gradient_with_coordinates(make_array):
    f, x = make_array((6,)), np.cumsum(np.linspace(0.5, 1.5, 6))
    check_rrule(np.gradient, f, x, constant=[1])
    _, pullback = rrule(np.gradient, f, x)
    assert isinstance(pullback(np.ones(6))[2], NotImplementedTangent)
    check_rrule(np.gradient, f, x, edge_order=2, constant=[1])


def test_gradient_stencil_is_sparse_and_exact(make_array):
    from rules.arrays.differences import _stencil

    n = 12
    for spacing, order in (((), 1), ((0.4,), 2), ((np.cumsum(np.arange(1.0, n + 1)),), 2)):
        dense = np.gradient(np.eye(n), *spacing, axis=0, edge_order=order)
        D = _stencil(n, spacing, order)
        np.testing.assert_allclose(D.toarray(), dense, rtol=1e-14, atol=1e-14)
        assert D.nnz <= 3 * n + 2


@pytest.mark.parametrize("dtype", ALL, ids=_id)
def test_trapezoid(make_array, dtype):
    y = make_array((3, 5), dtype)
    _check(np.trapezoid, y)
    _check(np.trapezoid, y, None, 0.3)
    _check(np.trapezoid, y, None, 0.3, 0)
    _check(np.trapezoid, y, np.cumsum(np.abs(make_array((5,)))) + 0.1)
    _check(np.trapezoid, y, np.cumsum(np.abs(make_array((3, 5))), axis=1))
    _check(np.trapezoid, y, np.cumsum(np.abs(make_array((3,)))), axis=0)


# --- the registry's view ----------------------------------------------------------------------------


def test_split_frule_is_a_tuple_tangent(make_array):
    x = make_array((2, 4))
    _, y_dot = frule((NoTangent(), x, NoTangent()), np.hsplit, x, 2)
    assert isinstance(y_dot, Tangent)


# --- NaN-ignoring reductions and ptp ------------------------------------------------------------


def _with_nans(make_array, shape, dtype):
    x = make_array(shape, dtype)
    x.reshape(-1)[[1, 4]] = np.nan
    return x


NAN_REDUCTIONS = [np.nansum, np.nanmean, np.nanprod, np.nanmax, np.nanmin, np.nanvar, np.nanstd]
NAN_OPTIONS = [((), {}), ((0,), {}), ((), {"axis": 1, "keepdims": True}), ((), {"axis": (0, 1)})]


@pytest.mark.parametrize("dtype", ALL, ids=_id)
@pytest.mark.parametrize(("args", "kwargs"), NAN_OPTIONS)
@pytest.mark.parametrize("f", NAN_REDUCTIONS, ids=_id)
def test_nan_reductions(make_array, f, args, kwargs, dtype):
    if f in (np.nanmax, np.nanmin) and np.dtype(dtype).kind == "c":
        pytest.skip("nanmax/nanmin of complex numbers compare lexicographically: real only here")
    x = _with_nans(make_array, (3, 4), dtype)
    _check(f, x, *args, **kwargs)


@pytest.mark.parametrize("f", [np.nanvar, np.nanstd], ids=_id)
def test_nan_spread_with_ddof(make_array, f):
    x = _with_nans(make_array, (3, 4), np.float64)
    _check(f, x, 1, None, None, 1)
    _check(f, x, axis=1, ddof=1)


@pytest.mark.parametrize("dtype", ALL, ids=_id)
@pytest.mark.parametrize("f", [np.nancumsum, np.nancumprod], ids=_id)
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nan_scans(make_array, f, axis, dtype):
    _check(f, _with_nans(make_array, (3, 4), dtype), axis)


def test_nan_entries_get_zero(make_array):
    x = _with_nans(make_array, (3, 4), np.float64)
    for f in NAN_REDUCTIONS + [np.nancumsum, np.nancumprod]:
        y, pullback = rrule(f, x)
        g = pullback(np.ones_like(y))[1]
        assert np.all(g.reshape(-1)[[1, 4]] == 0), f.__name__
        assert np.all(np.isfinite(g)), f.__name__


@pytest.mark.parametrize("dtype", REAL, ids=_id)
@pytest.mark.parametrize(
    ("args", "kwargs"), [((), {}), ((0,), {}), ((), {"axis": 1, "keepdims": True})]
)
def test_ptp(make_array, args, kwargs, dtype):
    _check(np.ptp, make_array((3, 4), dtype), *args, **kwargs)


# --- quantiles, cov, corrcoef ---------------------------------------------------------------------

QUANTILE_CALLS = [
    ((0.3,), {}),
    ((np.array([0.1, 0.45, 0.85]),), {"axis": 1}),
    ((np.array(0.7),), {"axis": 0, "keepdims": True}),
    ((0.3,), {"axis": (0, 2)}),
]


@pytest.mark.parametrize("dtype", REAL, ids=_id)
@pytest.mark.parametrize(("args", "kwargs"), QUANTILE_CALLS)
@pytest.mark.parametrize(
    "f", [np.quantile, np.percentile, np.nanquantile, np.nanpercentile], ids=_id
)
def test_quantiles(make_array, f, args, kwargs, dtype):
    x = make_array((3, 4, 2), dtype)
    if f in (np.nanquantile, np.nanpercentile):
        x.reshape(-1)[[2, 9]] = np.nan
    q = args[0]
    if f in (np.percentile, np.nanpercentile):
        q = np.asarray(q) * 100 if not isinstance(q, float) else q * 100
    _check(f, x, q, **kwargs)


@pytest.mark.parametrize("dtype", REAL, ids=_id)
@pytest.mark.parametrize("f", [np.median, np.nanmedian], ids=_id)
@pytest.mark.parametrize(
    ("args", "kwargs"), [((), {}), ((0,), {}), ((), {"axis": 1, "keepdims": True})]
)
def test_medians(make_array, f, args, kwargs, dtype):
    x = make_array((4, 5), dtype)
    if f is np.nanmedian:
        x[1, 2] = x[3, 0] = np.nan
    _check(f, x, *args, **kwargs)


def test_quantile_list_q_is_constant(make_array):
    x = make_array((4, 3))
    check_rrule(np.quantile, x, [0.3, 0.6], constant=[1])
    assert rrule(np.quantile, x, [0.3, 0.6])[1](np.ones(2))[2] == NoTangent()


def test_quantile_other_methods_are_refused(make_array):
    with pytest.raises(ValueError, match="method"):
        rrule(np.quantile, make_array((4,)), 0.5, method="nearest")


COV_CALLS = [
    ((3, 5), None, {}),
    ((5,), None, {}),
    ((3, 5), (2, 5), {}),
    ((5, 3), None, {"rowvar": False}),
    ((3, 5), None, {"bias": True}),
    ((3, 5), (5,), {"ddof": 2}),
]


@pytest.mark.parametrize("dtype", ALL, ids=_id)
@pytest.mark.parametrize(("shape", "other", "kwargs"), COV_CALLS)
@pytest.mark.parametrize("f", [np.cov, np.corrcoef], ids=_id)
def test_cov_and_corrcoef(make_array, f, shape, other, kwargs, dtype):
    if f is np.corrcoef and (len(shape) == 1 and other is None):
        pytest.skip("the correlation of one variable with itself is the constant 1")
    kwargs = {k: v for k, v in kwargs.items() if f is np.cov or k == "rowvar"}
    m = make_array(shape, dtype)
    args = (m,) if other is None else (m, make_array(other, dtype))
    _check(f, *args, **kwargs)


# --- convolution, interpolation, creation ---------------------------------------------------------

LENGTHS = [(5, 3), (6, 4), (3, 5), (4, 6), (1, 3), (4, 1), (2, 2)]


@pytest.mark.parametrize("dtype", ALL, ids=_id)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("f", [np.convolve, np.correlate], ids=_id)
def test_convolutions(make_array, f, mode, dtype):
    for m, n in LENGTHS:
        _check(f, make_array((m,), dtype), make_array((n,), dtype), mode)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128], ids=_id)
def test_interp(make_array, rng, dtype):
    xp = np.cumsum(rng.uniform(0.5, 1.5, 6))
    fp = make_array((6,), dtype)
    x = rng.uniform(xp[0] - 1, xp[-1] + 1, (3, 4))
    x = x[np.abs(x[..., None] - xp).min(axis=-1) > 1e-2].reshape(-1)  # away from the knots
    x_arg = x.astype(np.float32) if dtype == np.float32 else x
    _check(np.interp, x_arg, xp, fp)
    _check(np.interp, x_arg, xp, fp, left=-2.0, right=3.0)
    _check(np.interp, 0.5 * (xp[1] + xp[2]), xp, fp)


@pytest.mark.parametrize("dtype", ALL, ids=_id)
def test_polyval(make_array, dtype):
    p = make_array((4,), dtype)
    _check(np.polyval, p, make_array((3, 2), dtype))
    _check(np.polyval, p, make_array((), dtype))
    _check(np.polyval, make_array((1,), dtype), make_array((3,), dtype))


@pytest.mark.parametrize("dtype", ALL, ids=_id)
def test_linspace(make_array, dtype):
    start, stop = make_array((), dtype), make_array((), dtype)
    _check(np.linspace, start, stop, 5)
    _check(np.linspace, start, stop, 4, False)
    _check(np.linspace, make_array((2,), dtype), make_array((3, 1), dtype), 4, True, False, None, 1)
    _check(np.linspace, start, stop, 5, True, True)
    _check(np.linspace, start, 2.0, 3, axis=0)


@pytest.mark.parametrize("dtype", ALL, ids=_id)
def test_full(make_array, dtype):
    _check(np.full, (2, 3), make_array((), dtype))
    _check(np.full, (2, 3), make_array((3,), dtype))
    _check(np.full, (4, 2, 3), make_array((2, 1), dtype), dtype)
