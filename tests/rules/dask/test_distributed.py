"""The lifted rules on a dask.distributed cluster of two worker processes, started here."""

import os
import pickle
import signal
import time

import numpy as np
import pytest
import scipy.linalg as sla

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

from rules import rrule
from tangents import ProjectTo, Symmetric

N = 4


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    with cluster, distributed.Client(cluster) as client:
        yield client


def _spd(rng, batch):
    X = rng.standard_normal((*batch, N, N))
    return X @ X.mT + N * np.eye(N)


@pytest.mark.slow
def test_cholesky_and_eigh_on_the_cluster_equal_in_memory(client, rng):
    A = _spd(rng, (40,))
    for f in (np.linalg.cholesky, np.linalg.eigh):
        y_mem, pullback_mem = rrule(f, A)
        y, pullback = rrule(f, da.from_array(A, chunks=(7, N, N)))
        parts = list(y) if isinstance(y, tuple) else [y]
        parts_mem = list(y_mem) if isinstance(y_mem, tuple) else [y_mem]
        y_bar = tuple(rng.standard_normal(p.shape) for p in parts_mem)
        y_bar = y_bar[0] if len(y_bar) == 1 else y_bar
        _, A_bar = pullback(y_bar)
        values = client.compute([*parts, A_bar], sync=True)
        for got, want in zip(values, [*parts_mem, pullback_mem(y_bar)[1]], strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def _slow(block):
    time.sleep(0.1)
    return block


@pytest.mark.slow
def test_a_worker_killed_mid_computation_loses_nothing(client, rng):
    """dask reruns the lost blocks (their forward pairs too) on the surviving worker."""
    A = _spd(rng, (60,))
    slow = da.from_array(A, chunks=(3, N, N)).map_blocks(_slow, dtype=A.dtype)
    L, pullback = rrule(np.linalg.cholesky, slow)
    _, A_bar = pullback(da.ones_like(L))
    pids = client.run(os.getpid)
    future = client.compute(A_bar)
    deadline = time.monotonic() + 30
    while not any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # some blocks done, most not
    assert not future.done()
    os.kill(pids[min(pids)], signal.SIGKILL)
    A_bar_mem = rrule(np.linalg.cholesky, A)[1](np.ones_like(A))[1]
    np.testing.assert_allclose(future.result(timeout=120), A_bar_mem, rtol=1e-10, atol=1e-12)
    client.wait_for_workers(2, timeout=60)
    assert set(client.run(os.getpid).values()) != set(pids.values())  # one was really lost


@pytest.mark.parametrize("f", [np.linalg.cholesky, np.linalg.eigh, np.linalg.qr, sla.lu])
def test_pullback_closures_run_in_another_process(client, f, rng):
    """A pullback, with everything its closure holds, pickles to a worker and gives the same."""
    A = _spd(rng, (3,))
    y, pullback = rrule(f, A)
    parts = list(y) if isinstance(y, tuple | list) else [y]
    y_bar = tuple(
        rng.standard_normal(p.shape) if np.issubdtype(p.dtype, np.inexact) else None for p in parts
    )
    y_bar = y_bar[0] if len(y_bar) == 1 else y_bar
    got = client.submit(pullback, y_bar, pure=False).result()
    np.testing.assert_allclose(got[1], pullback(y_bar)[1], rtol=1e-12, atol=1e-14)


def test_projectors_pickle_and_project_alike(client, rng):
    A = _spd(rng, ())
    for primal in (A.astype(np.float32), Symmetric(A), 1.5, (A, np.float32(2.0))):
        project = ProjectTo(primal)
        dx = (
            (rng.standard_normal((N, N)), 1.0)
            if isinstance(primal, tuple)
            else (rng.standard_normal((N, N)) if not isinstance(primal, float) else 2.0)
        )
        local = project(dx)
        assert repr(pickle.loads(pickle.dumps(project))(dx)) == repr(local)
        assert repr(client.submit(project, dx, pure=False).result()) == repr(local)
