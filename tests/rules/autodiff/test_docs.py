"""docs/autodiff.md's code runs as written."""

import re
from pathlib import Path

import pytest

DOC = (Path(__file__).resolve().parents[3] / "docs" / "autodiff.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", DOC, flags=re.DOTALL)


def test_the_page_has_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_docs_python_block_runs(index):
    from rules import frule, rrule

    namespace = {}
    try:
        exec(compile(BLOCKS[index], f"docs/autodiff.md block {index}", "exec"), namespace)
    finally:  # the page registers rules for its own functions: take them out again
        for value in namespace.values():
            for table in (rrule, frule):
                if callable(value) and value in table:
                    table.unregister(value)
