"""Smoke tests of ``python -m bench``: the shape of its table and JSON, not its timings.

Each runs the command in a subprocess from the repository root (where ``bench/`` lives) on the
smallest size of one operation whose path compiles no kernel, with a tiny timing budget.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEADER = ["operation", "size", "ours", "numpy", "speed-up", "forward", "ours/fwd", "first call"]


def run_bench(*args, code=None):
    command = (
        [sys.executable, "-m", "bench", *args] if code is None else [sys.executable, "-c", code]
    )
    return subprocess.run(
        command, check=False, cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_one_operation_at_the_smallest_size_prints_the_table_and_writes_json(tmp_path):
    out = tmp_path / "results.json"
    result = run_bench(
        "--ops", "matmul.pullback", "--sizes", "4", "--budget", "0.01", "--json", str(out)
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.startswith("operation"))
    assert header.split()[:6] == HEADER[:6]
    assert "first call" in header
    rows = [line for line in lines if line.startswith("matmul.pullback")]
    assert len(rows) == 1
    assert rows[0].split()[1] == "4"
    assert re.search(r" \d[\d.]* [mun]?s +\d[\d.]*x ", rows[0])  # numpy time, speed-up
    assert "CPU:" in result.stdout
    assert "Numba threads: 1" in result.stdout or "JIT disabled" in result.stdout
    assert "Wall time:" in result.stdout

    document = json.loads(out.read_text())
    assert document["schema"] == "tangent-algebra-bench/1"
    assert document["settings"]["threads"] == 1
    assert document["settings"]["sizes"] == ["4"]
    assert {"cpu", "versions", "threads", "numba_cache", "peers"} <= set(document["environment"])
    (row,) = document["rows"]
    assert row["case"] == "matmul.pullback"
    assert (row["operation"], row["kind"], row["size"], row["n"], row["batch"]) == (
        "matmul",
        "pullback",
        "4",
        4,
        None,
    )
    assert row["status"] == "ok"
    assert row["max_error"] < row["tolerance"]["rtol"]
    assert set(row["times"]) == {"ours", "total", "numpy", "forward"}
    for timing in row["times"].values():
        assert timing["best"] > 0
        assert timing["median"] >= timing["best"]
        assert timing["rounds"] >= 3
    assert row["speedup"] > 0
    assert row["ours_over_forward"] > 0
    assert row["first_call"] >= 0


def test_an_unknown_operation_is_refused_with_the_valid_names():
    result = run_bench("--ops", "nosuchop")
    assert result.returncode == 2
    assert "unknown operation(s) nosuchop" in result.stderr
    assert "cholesky.pullback" in result.stderr
    assert "matmul" in result.stderr


def test_peers_that_are_not_installed_are_reported_and_the_run_goes_on():
    code = (
        "import sys; sys.modules['jax'] = sys.modules['torch'] = None; "
        "from bench.__main__ import main; "
        "sys.exit(main(['--peers', '--ops', 'matmul.pullback', '--sizes', '4', '--budget', '0.01']))"
    )
    result = run_bench(code=code)
    assert result.returncode == 0, result.stderr
    assert "jax: not installed" in result.stdout
    assert "torch: not installed" in result.stdout
    assert "No peer is installed" in result.stdout
    header = next(line for line in result.stdout.splitlines() if line.startswith("operation"))
    assert "jax" not in header
    assert "torch" not in header


def test_noise_adds_the_a_a_column_and_its_json_fields(tmp_path):
    out = tmp_path / "results.json"
    result = run_bench(
        "--ops",
        "matmul.pullback",
        "--sizes",
        "4",
        "--budget",
        "0.01",
        "--noise",
        "--json",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    header = next(line for line in result.stdout.splitlines() if line.startswith("operation"))
    assert header.split()[4:6] == ["speed-up", "A/A"]
    assert "Below the formula beyond noise" in result.stdout
    document = json.loads(out.read_text())
    assert document["settings"]["noise"] is True
    (row,) = document["rows"]
    assert "numpy_again" in row["times"]
    ratio = row["times"]["numpy"]["best"] / row["times"]["numpy_again"]["best"]
    assert row["formula_over_formula"] == pytest.approx(ratio)
    assert row["below_beyond_noise"] in (True, False)
