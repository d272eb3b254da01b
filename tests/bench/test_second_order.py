"""``python -m bench.second_order`` runs, checks its results before timing, and reports both rows."""

import pytest

from bench import second_order


@pytest.mark.parametrize("peers", [False, True], ids=["alone", "peers"])
def test_second_order_bench_runs_and_checks(capsys, peers):
    if peers:
        pytest.importorskip("jax")
    argv = ["--budget", "0.01", *(["--peers"] if peers else [])]
    assert second_order.main(argv) == 0
    out = capsys.readouterr().out
    assert "DISAGREES" not in out
    assert "hvp/grad" in out
    assert ("ours/jax" in out) == peers
