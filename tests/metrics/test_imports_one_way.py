"""The modules of ``assay.metrics`` import one way (issue 40): no module imports, even inside
a function or under ``TYPE_CHECKING``, a module that imports it back, directly or through
others. ``agreement`` and ``agreement_ci`` did."""

from __future__ import annotations

import ast
from pathlib import Path

import assay.metrics

PACKAGE = "assay.metrics"
FOLDER = Path(assay.metrics.__file__).parent


def _imports(path: Path) -> set[str]:
    """The ``assay.metrics`` modules that the file at ``path`` imports, wherever it does."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == PACKAGE:
                found |= {alias.name for alias in node.names}
            elif node.module.startswith(PACKAGE + "."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[2] for a in node.names
                      if a.name.startswith(PACKAGE + ".")}
    return found


def _graph() -> dict[str, set[str]]:
    modules = {p.stem: p for p in FOLDER.glob("*.py") if p.stem != "__init__"}
    return {name: _imports(path) & set(modules) - {name} for name, path in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (its modules in order, the first repeated), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for other in sorted(graph[module]):
            if state.get(other) == 1:
                return path[path.index(other):] + [other]
            if other not in state and (found := visit(other)) is not None:
                return found
        state[module] = 2
        path.pop()
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module)) is not None:
            return found
    return None


def test_the_metrics_modules_import_one_way():
    cycle = _cycle(_graph())
    assert cycle is None, "import cycle: " + " → ".join(cycle)

