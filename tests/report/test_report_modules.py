"""The report's modules import one way: no circle, not even through type-checking imports."""

from __future__ import annotations

import ast
from pathlib import Path

import assay.report

PACKAGE = Path(assay.report.__file__).parent


def imports_within_report(path: Path) -> set[str]:
    """The report modules ``path`` imports, wherever in it (function bodies and
    ``if TYPE_CHECKING:`` blocks too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("assay.report."):
                found.add(node.module.split(".")[2])
            elif node.module == "assay.report":
                found |= {alias.name for alias in node.names if (PACKAGE / f"{alias.name}.py").exists()}
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[2] for a in node.names if a.name.startswith("assay.report.")}
    return found


def test_the_report_modules_import_each_other_in_one_direction():
    graph = {p.stem: imports_within_report(p) - {p.stem}
             for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    order: list[str] = []

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, f"import circle: {' → '.join([*path, module])}"
        for imported in sorted(graph.get(module, ())):
            visit(imported, (*path, module))
        if module not in order:
            order.append(module)

    for module in sorted(graph):
        visit(module, ())
    assert {"data", "overview", "payload", "rows", "meaning"} <= set(order)
    # the item rows and the meanings of verdicts are the leaves everything else builds on
    assert graph["rows"] <= {"meaning"} and graph["meaning"] == set()
