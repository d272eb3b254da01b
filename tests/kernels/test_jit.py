"""The kernels' Numba cache never breaks the library (issue 14, items 5 and 6).

Real subprocesses: a cache written by one process and then corrupted, and a tree in which no
directory can hold a cache. Running as root, permission bits do not stop writes, so the tests
make caching impossible in a way that holds for root too: every ``__pycache__`` is a regular
file (``os.makedirs`` fails) and ``$HOME/.cache`` is a regular file (Numba's user-wide locator
fails the same way). The corrupted-cache test uses a copied tree with only ``kernels/_jit.py``
and six one-line kernels, so it compiles in a second.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numba
import pytest

from kernels._alloc import empty_pair_like
from kernels._jit import _FallbackCache, _package_stamp

SRC = Path(__file__).parents[2] / "src"

pytestmark = pytest.mark.skipif(numba.config.DISABLE_JIT, reason="no cache without compilation")

KERNELS = "\n".join(
    f"@jit\ndef k{i}(x):\n    return x + {i}\n\n" for i in range(6)
)  # one kernel per corruption below


def _run(code, cwd, env_extra=None):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update({"PYTHONPATH": str(cwd), "PYTHONDONTWRITEBYTECODE": "1", **(env_extra or {})})
    return subprocess.run(
        [sys.executable, "-W", "always", "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _tiny_package(root):
    """A package ``tiny`` under ``root`` holding a copy of ``kernels/_jit.py``; its directory."""
    package = root / "tiny"
    package.mkdir()
    (package / "__init__.py").write_text("")
    shutil.copy(SRC / "kernels" / "_jit.py", package / "_jit.py")
    return package


def test_kernels_use_the_fallback_cache():
    assert isinstance(empty_pair_like._cache, _FallbackCache)


@pytest.mark.slow
def test_a_corrupted_cache_falls_back_to_compiling_with_one_warning(tmp_path):
    package = _tiny_package(tmp_path)
    (package / "ops.py").write_text("from tiny._jit import jit\n\n\n" + KERNELS)
    code = "import tiny.ops as o; print([getattr(o, f'k{i}')(1.0) for i in range(6)])"
    first = _run(code, tmp_path)
    assert first.returncode == 0, first.stderr
    assert "KernelCacheWarning" not in first.stderr
    cache = package / "__pycache__"

    def one(pattern):
        (path,) = cache.glob(pattern)
        return path

    garbage = b"\x80\x05garbage, not a pickle" * 3
    one("ops.k0-*.nbi").write_bytes(garbage)
    path = one("ops.k1-*.nbi")
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    one("ops.k2-*.nbi").write_bytes(b"")
    one("ops.k3-*.nbc").write_bytes(garbage)
    path = one("ops.k4-*.nbc")
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    one("ops.k5-*.nbc").write_bytes(b"")

    second = _run(code, tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == str([1.0 + i for i in range(6)])
    assert second.stderr.count("KernelCacheWarning") == 1, second.stderr
    assert str(cache) in second.stderr
    assert "*.nbi" in second.stderr


@pytest.mark.slow
def test_an_unwritable_install_imports_and_runs_with_one_warning(tmp_path):
    tree = tmp_path / "src"
    for package in ("kernels", "rules", "tangents"):
        shutil.copytree(
            SRC / package, tree / package, ignore=shutil.ignore_patterns("__pycache__", "*.nb?")
        )
    for directory in [tree, *(p for p in tree.rglob("*") if p.is_dir())]:
        (directory / "__pycache__").write_text("a file where a cache directory would go\n")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".cache").write_text("not a directory\n")
    code = (
        "import numpy as np, rules\n"
        "from kernels._alloc import empty_pair_like\n"
        "x, y = empty_pair_like(np.ones(2), np.ones(3))\n"
        "print(x.shape, y.shape)\n"
    )
    result = _run(code, tree, {"HOME": str(home)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(2,) (3,)"
    assert result.stderr.count("KernelCacheWarning") == 1, result.stderr
    assert "NUMBA_CACHE_DIR" in result.stderr


@pytest.mark.slow
def test_a_cache_entry_with_another_signatures_code_is_compiled_again(tmp_path):
    # Two processes that compile different signatures of one kernel on a cold cache can both
    # write <kernel>-1.nbc, leaving the index pointing one signature at the other's code. The
    # deterministic equivalent: swap the data files of two cached signatures.
    package = _tiny_package(tmp_path)
    (package / "ops.py").write_text(
        "from tiny._jit import jit\n\n\n@jit\ndef k(x):\n    return x * 2 + 1\n"
    )
    code = "import tiny.ops as o; print(repr(o.k(3)), repr(o.k(3.5)))"
    first = _run(code, tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "7 8.0"
    int_code, float_code = sorted((package / "__pycache__").glob("ops.k-*.nbc"))
    swapped = int_code.read_bytes()
    int_code.write_bytes(float_code.read_bytes())
    float_code.write_bytes(swapped)

    second = _run(code, tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "7 8.0"  # without the check: 7.0 (the float64 code ran)
    assert second.stderr.count("KernelCacheWarning") == 1, second.stderr
    assert "was asked for" in second.stderr
    third = _run(code, tmp_path)  # the entries were saved again: no warning now
    assert third.stdout.strip() == "7 8.0"
    assert "KernelCacheWarning" not in third.stderr, third.stderr


@pytest.mark.slow
def test_two_processes_saving_one_kernel_keep_each_overload_in_its_own_file(tmp_path):
    # The race itself, interleaved by hand: process A compiles k(int64) and saves; process B,
    # which read the index before A's save (hidden here), compiles k(float64) and saves; A's
    # index lands last. With Numba's numbering both wrote <k>.1.nbc and A's index entry then
    # pointed at B's float64 code; with the data files named after their keys, A's entry still
    # points at A's code, and B's entry is merely lost (compiled again).
    package = _tiny_package(tmp_path)
    (package / "ops.py").write_text(
        "from tiny._jit import jit\n\n\n@jit\ndef k(x):\n    return x * 2 + 1\n"
    )
    cache = package / "__pycache__"
    assert _run("import tiny.ops as o; o.k(3)", tmp_path).returncode == 0
    (index,) = cache.glob("ops.k-*.nbi")
    index_of_a = index.read_bytes()
    index.unlink()
    assert _run("import tiny.ops as o; o.k(3.5)", tmp_path).returncode == 0
    index.write_bytes(index_of_a)
    assert len(list(cache.glob("ops.k-*.nbc"))) == 2  # one file per overload
    code = (
        "import tiny.ops as o\n"
        "print(repr(o.k(3)), repr(o.k(3.5)))\n"
        "print(sorted(str(s) for s in o.k.stats.cache_hits))\n"
    )
    result = _run(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["7 8.0", "['(int64,)']"]  # A's entry was loaded
    assert "KernelCacheWarning" not in result.stderr, result.stderr


@pytest.mark.slow
def test_an_edit_to_a_called_module_recompiles_its_callers(tmp_path):
    # Numba checks a cached kernel against its own source file only; a kernel compiled with a
    # helper from another module kept the old helper's code after that module changed.
    package = _tiny_package(tmp_path)
    helper = "from tiny._jit import jit\n\n\n@jit\ndef h(x):\n    return x + {}\n"
    (package / "helper.py").write_text(helper.format(1))
    (package / "ops.py").write_text(
        "from tiny._jit import jit\nfrom tiny.helper import h\n\n\n@jit\ndef k(x):\n"
        "    return h(x) * 2\n"
    )
    code = "import tiny.ops as o; print(o.k(3))"
    first = _run(code, tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "8"
    assert list((package / "__pycache__").glob("ops.k-*.nbc"))  # cached
    (package / "helper.py").write_text(helper.format(20))  # another size: another stamp
    second = _run(code, tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "46"  # the stale cache gave 8
    assert "KernelCacheWarning" not in second.stderr, second.stderr


def test_the_package_stamp_follows_every_module(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    (tmp_path / "notes.txt").write_text("not a module\n")
    before = _package_stamp(str(tmp_path))
    assert _package_stamp(str(tmp_path)) == before
    (tmp_path / "notes.txt").write_text("still not a module, longer\n")
    assert _package_stamp(str(tmp_path)) == before
    (tmp_path / "b.py").write_text("y = 22\n")
    changed = _package_stamp(str(tmp_path))
    assert changed != before
    os.utime(tmp_path / "a.py", ns=(1, 1))
    assert _package_stamp(str(tmp_path)) not in (before, changed)
    (tmp_path / "c.py").write_text("")
    assert _package_stamp(str(tmp_path)) != changed
