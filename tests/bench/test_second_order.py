"""``python -m bench.second_order`` runs, checks its results before timing, and reports both rows.

In a subprocess from the repository root, as ``python -m bench`` is tested: the bench sets the
thread counts of its own process (one BLAS and Numba thread), which must not leak into the tests.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("peers", [False, True], ids=["alone", "peers"])
def test_second_order_bench_runs_and_checks(peers):
    if peers:
        pytest.importorskip("jax")
    command = [sys.executable, "-m", "bench.second_order", "--budget", "0.01"]
    result = subprocess.run(
        [*command, *(["--peers"] if peers else [])],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "DISAGREES" not in result.stdout
    assert "hvp/grad" in result.stdout
    assert ("ours/jax" in result.stdout) == peers
