import os
import subprocess
import sys
from pathlib import Path

import pytest

import kernels
import rules
import tangents

SRC = Path(rules.__file__).resolve().parent.parent


def test_the_project_packages_carry_the_marker():
    assert kernels.__tangent_algebra__ is True
    assert rules.__tangent_algebra__ is True
    assert tangents.__tangent_algebra__ is True


@pytest.mark.parametrize("name", ["kernels", "tangents"])
def test_a_foreign_package_of_the_same_name_is_refused_by_name(tmp_path, name):
    # A namesake earlier on the path (as an installed Hugging Face ``kernels`` would be).
    foreign = tmp_path / name
    foreign.mkdir()
    (foreign / "__init__.py").write_text('"""Not tangent-algebra."""\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(SRC)])}
    result = subprocess.run(
        [sys.executable, "-c", "import rules"],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode != 0
    assert "ImportError" in result.stderr
    assert f"tangent-algebra's own {name!r} package" in result.stderr
    assert str(foreign) in result.stderr


def test_the_project_packages_import_cleanly_in_a_fresh_process():
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    result = subprocess.run(
        [sys.executable, "-c", "import rules; print(rules.__tangent_algebra__)"],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"
