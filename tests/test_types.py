"""The package type-checks: mypy (config in pyproject.toml, pydantic plugin) reports no error.

Running it as a test puts the type check in CI (``bash .ci/run`` runs pytest). A cold run takes
~20 s of CPU; later runs reuse ``.mypy_cache`` in the repository root.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_mypy_reports_no_error() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    output = (result.stdout + result.stderr).strip()
    assert result.returncode == 0, f"mypy found errors (run `python -m mypy`):\n{output}"


def test_lazy_exports_are_declared_for_type_checkers() -> None:
    """Every lazily exported name is also imported under TYPE_CHECKING, from the same module."""
    import ast

    import assay

    tree = ast.parse((ROOT / "src" / "assay" / "__init__.py").read_text(encoding="utf-8"))
    declared: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module:
                    declared.update({alias.name: stmt.module for alias in stmt.names})
    assert declared == assay._LAZY
