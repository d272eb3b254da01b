"""The README's code runs, and CI runs exactly the README's test command."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def code_blocks(language):
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def test_readme_names_the_two_commands():
    commands = [line for block in code_blocks("bash") for line in block.splitlines()]
    assert any("python -m bench" in c for c in commands)
    assert any("python -m pytest" in c for c in commands)


def test_ci_runs_the_readme_test_command():
    test_command = next(
        line for block in code_blocks("bash") for line in block.splitlines() if "pytest" in line
    )
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_command in ci_lines


@pytest.mark.parametrize("index", range(len(code_blocks("python"))))
def test_readme_python_block_runs(index):
    exec(compile(code_blocks("python")[index], f"README.md block {index}", "exec"), {})
