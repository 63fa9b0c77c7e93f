"""The work behind ``assay taxonomy`` (imported only when a command runs)."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.output import fail, print_issues, stdout
from assay.errors import InputError, Issue


def run_lint(file: Path, leaf_depth: str) -> None:
    from assay.io.taxonomy_check import lint_taxonomy
    from assay.routing.data import resolve_taxonomy

    path = resolve_taxonomy(file)
    issues = lint_taxonomy(path, leaf_depths=_depths(leaf_depth))
    if issues:
        print_issues(issues)
        stdout().print(f"{len(issues)} problem{'s' if len(issues) != 1 else ''} in {path}",
                       highlight=False)
        raise typer.Exit(1)
    stdout().print(f"ok  {path}", highlight=False)


def run_diff(before: Path, after: Path) -> None:
    from assay.io import read_taxonomy
    from assay.routing.data import resolve_taxonomy
    from assay.rubric.taxonomy_diff import diff_taxonomies

    trees, issues = [], []
    for path in (resolve_taxonomy(before), resolve_taxonomy(after)):
        try:
            trees.append(read_taxonomy(path))
        except InputError as exc:
            issues += exc.issues
        except OSError as exc:
            issues.append(Issue(str(path), None, None, str(exc)))
    if issues:
        fail(InputError(issues))
    diff = diff_taxonomies(*trees)
    out = stdout()
    out.print(f"version {diff.version[0]} -> {diff.version[1]}", highlight=False)
    for title, ids in (("added leaf", diff.added), ("removed leaf", diff.removed),
                       ("added group", diff.groups_added),
                       ("removed group", diff.groups_removed)):
        for node_id in ids:
            out.print(f"{title} {node_id}", highlight=False)
    for change in diff.changed:
        out.print(f"changed {change.id} {change.field}: {change.before!r} -> {change.after!r}",
                  highlight=False, soft_wrap=True)
    if diff.same_content:
        out.print("no leaf or group changed", highlight=False)
    if diff.problems:
        print_issues([Issue(str(after), None, "version", p) for p in diff.problems])
        raise typer.Exit(1)


def _depths(value: str) -> tuple[int, ...]:
    if value.strip() == "any":
        return ()
    try:
        depths = tuple(int(part) for part in value.split(","))
    except ValueError:
        depths = ()
    if not depths or min(depths) < 1:
        fail(InputError(Issue(None, None, "--leaf-depth", f"expected depths such as 3,4 or "
                              f"'any', got {value!r}")))
    return depths
