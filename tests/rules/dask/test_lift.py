"""rrule and frule over dask arrays equal the in-memory rules, lazily, chunk by chunk."""

import numpy as np
import pytest
import scipy.linalg as sla

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from rules import frule, rrule, split_cotangent
from tangents import AbstractZero, NoTangent, Tangent, ZeroTangent, unthunk

# Batch chunkings: several chunks with an uneven last one, and chunks holding one matrix.
CHUNKS = [(3, 3, 1), (1,) * 4]
N = 3


def _spd(rng, batch, n=N, dtype=np.float64):
    X = rng.standard_normal((*batch, n, n))
    return (X @ X.mT + n * np.eye(n)).astype(dtype)


def _dominant(rng, batch, m=N, n=N, dtype=np.float64):
    return (rng.standard_normal((*batch, m, n)) / 2 + 3 * np.eye(m, n)).astype(dtype)


def _upper(rng, batch):
    return np.triu(_dominant(rng, batch))


# Each case: the function, a builder of its positional arguments for a batch, and keywords.
CASES = {
    "matmul": (np.matmul, lambda r, b: (_dominant(r, b), _dominant(r, b, N, 2)), {}),
    "solve": (np.linalg.solve, lambda r, b: (_dominant(r, b), _dominant(r, b, N, 2)), {}),
    "solve_triangular": (
        sla.solve_triangular,
        lambda r, b: (_upper(r, b), _dominant(r, b, N, 2)),
        {},
    ),
    "inv": (np.linalg.inv, lambda r, b: (_dominant(r, b),), {}),
    "det": (np.linalg.det, lambda r, b: (_dominant(r, b),), {}),
    "slogdet": (np.linalg.slogdet, lambda r, b: (_dominant(r, b),), {}),
    "cholesky": (np.linalg.cholesky, lambda r, b: (_spd(r, b),), {}),
    "scipy_cholesky": (sla.cholesky, lambda r, b: (_spd(r, b),), {"lower": True}),
    "eigh": (np.linalg.eigh, lambda r, b: (_spd(r, b),), {}),
    "eigvalsh": (np.linalg.eigvalsh, lambda r, b: (_spd(r, b),), {}),
    "svd": (np.linalg.svd, lambda r, b: (_dominant(r, b, 4, N),), {"full_matrices": False}),
    "svdvals": (np.linalg.svdvals, lambda r, b: (_dominant(r, b, 4, N),), {}),
    "qr": (np.linalg.qr, lambda r, b: (_dominant(r, b, 4, N),), {}),
    "lu": (sla.lu, lambda r, b: (_dominant(r, b),), {}),
    "expm": (sla.expm, lambda r, b: (_dominant(r, b) / 4,), {}),
}


def _components(y):
    return list(y) if isinstance(y, tuple | list) else [y]


def _random_like(rng, y):
    y = np.asarray(y)
    if not np.issubdtype(y.dtype, np.inexact):
        return ZeroTangent()
    return rng.standard_normal(y.shape).astype(y.dtype)


def _lazy(args, chunks):
    return tuple(
        da.from_array(a, chunks=(chunks,) + (-1,) * (a.ndim - 1))
        if isinstance(a, np.ndarray)
        else a
        for a in args
    )


def _assert_same(got, want, rtol=1e-10):
    got, want = unthunk(got), unthunk(want)
    if isinstance(want, AbstractZero):
        assert isinstance(got, AbstractZero), type(got)
        return
    assert isinstance(got, da.Array), type(got)
    value = got.compute()
    assert value.dtype == np.asarray(want).dtype
    np.testing.assert_allclose(value, want, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("chunks", CHUNKS, ids=["uneven", "one-matrix"])
@pytest.mark.parametrize("case", CASES)
def test_rrule_equals_in_memory(case, chunks, rng):
    f, make, kwargs = CASES[case]
    args = make(rng, (sum(chunks),))
    y_mem, pullback_mem = rrule(f, *args, **kwargs)
    y, pullback = rrule(f, *_lazy(args, chunks), **kwargs)
    assert type(y) is (type(y_mem) if isinstance(y_mem, tuple | list) else da.Array)
    for got, want in zip(_components(y), _components(y_mem), strict=True):
        assert got.chunks[0] == chunks
        _assert_same(got, want)
    y_bar = [_random_like(rng, c) for c in _components(y_mem)]
    y_bar = y_bar[0] if len(y_bar) == 1 else tuple(y_bar)
    parts = [y_bar] if len(_components(y)) == 1 else split_cotangent(y_bar, len(_components(y)))
    lazy_bar = tuple(_lazy((c,), chunks)[0] for c in parts)
    cotangents = pullback(lazy_bar[0] if len(lazy_bar) == 1 else lazy_bar)
    expected = pullback_mem(y_bar)
    assert cotangents[0] is NoTangent()
    for got, want, a in zip(cotangents[1:], expected[1:], args, strict=True):
        _assert_same(got, want)
        assert got.chunks[0] == chunks
        assert got.shape == a.shape


@pytest.mark.parametrize("case", ["cholesky", "solve", "eigh", "qr"])
def test_frule_equals_in_memory(case, rng):
    f, make, kwargs = CASES[case]
    args = make(rng, (7,))
    dots = tuple(rng.standard_normal(a.shape) for a in args)
    y_mem, y_dot_mem = frule((NoTangent(), *dots), f, *args, **kwargs)
    y, y_dot = frule((NoTangent(), *dots), f, *_lazy(args, (3, 3, 1)), **kwargs)
    for got, want in zip(_components(y), _components(y_mem), strict=True):
        _assert_same(got, want)
    parts = _components(y)
    want_dots = split_cotangent(y_dot_mem, len(parts)) if len(parts) > 1 else [y_dot_mem]
    got_dots = list(y_dot) if len(parts) > 1 else [y_dot]
    for got, want in zip(got_dots, want_dots, strict=True):
        _assert_same(got, want)


def test_a_broadcast_operand_is_reduced_by_dask(rng):
    """solve(stack, one matrix): the one matrix's cotangent is the sum over the stack's blocks."""
    A, B = _dominant(rng, (7,)), rng.standard_normal((N, 2))
    x_mem, pullback_mem = rrule(np.linalg.solve, A, B)
    _, pullback = rrule(np.linalg.solve, da.from_array(A, chunks=(3, N, N)), B)
    x_bar = rng.standard_normal(x_mem.shape)
    _, A_bar, B_bar = pullback(da.from_array(x_bar, chunks=(2, N, 2)))
    _, A_want, B_want = pullback_mem(x_bar)
    _assert_same(A_bar, A_want)
    _assert_same(B_bar, B_want)
    assert B_bar.shape == B.shape


def test_elementwise_with_broadcasting(rng):
    x, w = rng.standard_normal((7, 5)), rng.standard_normal(5)
    y, pullback = rrule(np.multiply, da.from_array(x, chunks=(3, 2)), w)
    _assert_same(y, x * w)
    y_bar = rng.standard_normal((7, 5))
    _, x_bar, w_bar = pullback(y_bar)
    _assert_same(x_bar, y_bar * w)
    _assert_same(w_bar, (y_bar * x).sum(axis=0))
    y, pullback = rrule(np.sin, da.from_array(x, chunks=(3, 2)))
    _assert_same(pullback(y_bar)[1], y_bar * np.cos(x))


def test_multi_output_cotangent_with_zero_component(rng):
    A = _spd(rng, (5,))
    (w, _), pullback = rrule(np.linalg.eigh, da.from_array(A, chunks=(2, N, N)))
    w_bar = rng.standard_normal(w.shape)
    _, A_bar = pullback(Tangent(type(rrule(np.linalg.eigh, A)[0]), w_bar, ZeroTangent()))
    _, A_want = rrule(np.linalg.eigh, A)[1]((w_bar, ZeroTangent()))
    _assert_same(A_bar, A_want)
    assert pullback(ZeroTangent())[1] is ZeroTangent()


def test_nothing_is_computed_until_the_user_computes(rng):
    def refuse(*args, **kwargs):
        raise AssertionError("a graph was computed")

    A = da.from_array(_spd(rng, (6,)), chunks=(2, N, N))
    with dask.config.set(scheduler=refuse):
        L, pullback = rrule(np.linalg.cholesky, A)
        _, A_bar = pullback(da.ones_like(L))
        frule((NoTangent(), A), np.linalg.cholesky, A)
    assert A_bar.chunks == A.chunks
    assert np.isfinite(A_bar.compute(scheduler="threads")).all()


def test_output_and_cotangent_computed_together_share_the_forward(monkeypatch, rng):
    """One compute of (L, A_bar) runs the forward rule once per block, not once per use."""
    from rules.dask import lift

    calls = []

    def counting(*blocks, **kwargs):
        calls.append(lift._unnest(blocks, kwargs["depths"])[0].shape)
        return block_rrule(*blocks, **kwargs)

    block_rrule = lift._block_rrule
    monkeypatch.setattr(lift, "_block_rrule", counting)
    A = _spd(rng, (6,))
    L, pullback = rrule(np.linalg.cholesky, da.from_array(A, chunks=(2, N, N)))
    _, A_bar = pullback(da.ones_like(L))
    dask.compute(L, A_bar, scheduler="synchronous")
    assert calls == [(2, N, N)] * 3
    calls.clear()
    A_bar.compute(scheduler="synchronous")  # computed apart, the forward runs again
    assert len(calls) == 3


def _views_of(X):
    """A dask array of 2-matrix chunks whose blocks are views of ``X`` (from_array copies)."""

    def view(block_info=None):
        (start, stop), *_ = block_info[None]["array-location"]
        return X[start:stop]

    return da.map_blocks(view, chunks=((2,) * (len(X) // 2), (N,), (N,)), dtype=X.dtype)


def test_each_rule_call_gets_its_block_uncopied(monkeypatch, rng):
    """The forward and the pullback tasks hand the rule the chunks themselves, not copies."""
    from rules.dask import lift

    A = _spd(rng, (6,))
    L_bar = rng.standard_normal(A.shape)
    seen = {"forward": [], "pullback": []}

    def forward(*blocks, **kwargs):
        seen["forward"].append(np.shares_memory(lift._unnest(blocks, kwargs["depths"])[0], A))
        return block_rrule(*blocks, **kwargs)

    def pullback(saved, *blocks, depths):
        seen["pullback"].append(np.shares_memory(lift._unnest(blocks, depths[1:])[0], L_bar))
        return block_pullback(saved, *blocks, depths=depths)

    block_rrule, block_pullback = lift._block_rrule, lift._block_pullback
    monkeypatch.setattr(lift, "_block_rrule", forward)
    monkeypatch.setattr(lift, "_block_pullback", pullback)
    L, pullback_ = rrule(np.linalg.cholesky, _views_of(A))
    _, A_bar = pullback_(_views_of(L_bar))
    dask.compute(L, A_bar, scheduler="synchronous")
    assert seen == {"forward": [True] * 3, "pullback": [True] * 3}


def test_a_blocks_saved_forward_counts_its_factors_for_dask(rng):
    """dask's memory accounting of a block's saved forward counts what the pullback keeps.

    A determinant's output is one number per matrix; the pullback keeps a factor of each
    matrix, which a worker holds (and may spill) until the pullback's task runs.
    """
    from dask.sizeof import sizeof

    from rules.dask import lift

    A = _dominant(rng, (50,))
    saved = lift._block_rrule(A, f=np.linalg.det, kwargs={}, depths=(0,))
    assert sizeof(saved) >= A.nbytes


def test_matrix_axes_split_across_chunks_is_refused_before_compute(rng):
    A = da.from_array(_spd(rng, (4,)), chunks=(2, 2, N))
    with pytest.raises(ValueError, match=r"np\.linalg\.cholesky.*rechunk\(\{-2: -1\}\)"):
        rrule(np.linalg.cholesky, A)


def test_a_chunk_above_the_limit_is_refused(monkeypatch, rng):
    from rules.dask import blocks

    monkeypatch.setattr(blocks, "MAX_CHUNK_BYTES", 100)
    A = da.from_array(_spd(rng, (4,)), chunks=(2, N, N))
    with pytest.raises(ValueError, match=r"np\.linalg\.inv: argument 0 has blocks of up to 144"):
        rrule(np.linalg.inv, A)


def test_a_rule_that_is_not_lifted_names_its_function(rng):
    x = da.from_array(rng.standard_normal((4, 3)), chunks=(2, 3))
    with pytest.raises(TypeError, match=r"rrule of np\.cumsum does not take dask arrays"):
        rrule(np.cumsum, x)


def test_threaded_scheduler_matches_synchronous(rng):
    A = _spd(rng, (9,))
    L, pullback = rrule(np.linalg.cholesky, da.from_array(A, chunks=(2, N, N)))
    _, A_bar = pullback(da.ones_like(L))
    threaded = dask.compute(L, A_bar, scheduler="threads")
    synchronous = dask.compute(L, A_bar, scheduler="synchronous")
    for got, want in zip(threaded, synchronous, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("f", [np.sum, np.mean])
@pytest.mark.parametrize(
    ("args", "kwargs"), [((), {}), ((1,), {}), ((), {"axis": (0, 2), "keepdims": True})]
)
def test_reductions_take_dask_reductions_as_forward(f, args, kwargs, rng):
    x = rng.standard_normal((5, 4, 3))
    y_mem, pullback_mem = rrule(f, x, *args, **kwargs)
    y, pullback = rrule(f, da.from_array(x, chunks=(2, 4, 2)), *args, **kwargs)
    np.testing.assert_allclose(np.asarray(y.compute()), y_mem, rtol=1e-12)
    y_bar = rng.standard_normal(np.shape(y_mem))
    got, want = pullback(y_bar), pullback_mem(y_bar)
    assert got[1].chunks == ((2, 2, 1), (4,), (2, 1))
    np.testing.assert_allclose(got[1].compute(), want[1], rtol=1e-12)
    assert got[2:] == want[2:]
    x_dot = rng.standard_normal(x.shape)
    _, y_dot = frule(
        (NoTangent(), x_dot, *(NoTangent(),) * len(args)), f, da.from_array(x), *args, **kwargs
    )
    np.testing.assert_allclose(
        np.asarray(y_dot.compute()),
        frule((NoTangent(), x_dot, *(NoTangent(),) * len(args)), f, x, *args, **kwargs)[1],
    )


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
@pytest.mark.parametrize("f", [np.linalg.cholesky, np.linalg.inv])
def test_dtype_is_kept(f, dtype, rng):
    X = rng.standard_normal((5, N, N)) + (
        1j * rng.standard_normal((5, N, N)) if dtype == np.complex128 else 0
    )
    A = (X @ X.conj().mT + N * np.eye(N)).astype(dtype)
    y, pullback = rrule(f, da.from_array(A, chunks=(2, N, N)))
    y_mem, pullback_mem = rrule(f, A)
    assert y.dtype == y_mem.dtype == dtype
    y_bar = np.ones_like(y_mem)
    _assert_same(y, y_mem, rtol=1e-5)
    _assert_same(pullback(y_bar)[1], pullback_mem(y_bar)[1], rtol=1e-5)
