"""The modules of ``assay.rewards`` import one way: no cycle among them, counting every import
(at the top, in a function, or for the type checker only)."""

from __future__ import annotations

import ast
from pathlib import Path

import assay.rewards

PACKAGE = Path(assay.rewards.__file__).parent


def imported(path: Path) -> set[str]:
    """The ``assay.rewards`` modules that ``path`` imports anywhere in it."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
    modules = {f"assay.rewards.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    return names & modules


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (module -> modules it imports), or None."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str] | None:
        if module in path:
            return path[path.index(module):] + [module]
        if module in done:
            return None
        for target in sorted(graph.get(module, ())):
            found = visit(target, [*path, module])
            if found:
                return found
        done.add(module)
        return None

    return next((found for m in sorted(graph) if (found := visit(m, []))), None)


def test_the_reward_modules_import_one_way():
    graph = {f"assay.rewards.{p.stem}": imported(p) - {f"assay.rewards.{p.stem}"}
             for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    assert graph["assay.rewards.scorer"] >= {"assay.rewards.failures"}
    assert cycle(graph) is None, " -> ".join(cycle(graph) or [])


def test_the_cycle_finder_finds_one():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None
