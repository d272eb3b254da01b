"""The dependency direction of DESIGN.md section 2: tangents and kernels import nothing of ours."""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PROJECT = {"tangents", "rules", "kernels"}


def imported_top_level_names(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]


@pytest.mark.parametrize("package", ["tangents", "kernels"])
def test_leaf_packages_import_nothing_else_from_the_project(package):
    offenders = {
        f"{path.relative_to(SRC)} imports {name}"
        for path in (SRC / package).rglob("*.py")
        for name in imported_top_level_names(path)
        if name in PROJECT - {package}
    }
    assert not offenders


def test_every_package_is_typed():
    for package in PROJECT:
        assert (SRC / package / "py.typed").exists()


# DESIGN.md section 7: the consumers (and the dask lifting) sit on top of the rule sets.
CONSUMERS = {"autodiff", "interop", "dask"}
PEERS = {"torch", "jax", "jaxlib", "dask", "distributed"}


def imported_modules(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def test_the_tangent_algebra_depends_one_way():
    # base.py is the root: it imports nothing of tangents, so arithmetic.py (which imports the
    # tangent classes, and through them base.py) is never needed to import base.py.
    base = [m for m in imported_modules(SRC / "tangents" / "base.py") if m.startswith("tangents")]
    assert base == []
    for name in ("zero", "thunk", "structural", "not_implemented", "structured"):
        imports = set(imported_modules(SRC / "tangents" / f"{name}.py"))
        assert "tangents.arithmetic" not in imports, name


def test_kernels_crossovers_is_one_table_that_imports_nothing():
    assert list(imported_modules(SRC / "kernels" / "crossovers.py")) == []
    others = [
        path.name
        for path in (SRC / "kernels").glob("*.py")
        if path.name != "crossovers.py" and "_MAX_N = " in path.read_text()
    ]
    assert others == []


# The checker differentiates pullbacks for check_rrule(order=2) (DESIGN.md section 7: "the rule
# checker (order 1 and 2)"), which takes the driver: it may import rules.autodiff, nothing else.
CHECKER_MAY_USE = {"testing": {"autodiff"}}


def test_rule_sets_and_machinery_import_no_consumer_and_no_peer():
    offenders = set()
    for path in (SRC / "rules").rglob("*.py"):
        parts = path.relative_to(SRC / "rules").parts
        if parts[0] in CONSUMERS:
            continue
        allowed = CHECKER_MAY_USE.get(parts[0], set())
        for module in imported_modules(path):
            top, _, rest = module.partition(".")
            consumer = rest.split(".")[0]
            if top in PEERS or (top == "rules" and consumer in CONSUMERS - allowed):
                offenders.add(f"{path.relative_to(SRC)} imports {module}")
    assert not offenders


def test_import_rules_imports_no_peer():
    import subprocess
    import sys

    code = (
        "import sys; import rules, rules.testing, tangents, kernels; "
        f"print(sorted(m for m in {sorted(PEERS)!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=SRC
    )
    assert out.stdout.strip() == "[]"
