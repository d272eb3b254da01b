"""``import rules`` and ``import rules.interop`` import neither torch nor jax (DESIGN.md section 7)."""

import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[3] / "src"


def test_rules_and_interop_import_no_peer():
    code = (
        "import sys; import rules, rules.interop; "
        "print(sorted({'torch', 'jax', 'jaxlib'} & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(SRC), "PATH": ""},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "[]"


def test_no_rule_set_imports_interop():
    offenders = [
        path.relative_to(SRC)
        for path in (SRC / "rules").rglob("*.py")
        if "interop" not in path.parts and "rules.interop" in path.read_text()
    ]
    assert not offenders
