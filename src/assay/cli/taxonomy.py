"""``assay taxonomy lint FILE`` / ``assay taxonomy diff A B``: checks for taxonomy curators.

Both exit 0 when clean and 1 when they found an error, after listing every one of them with
file, line and field.
"""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app

taxonomy_app = typer.Typer(help="Check a criterion tree; compare two versions of it.",
                           no_args_is_help=True)
app.add_typer(taxonomy_app, name="taxonomy")


@taxonomy_app.command("lint")
def taxonomy_lint(
    file: Path = typer.Argument(..., help="Taxonomy YAML/JSON ('starter': the shipped one)."),
    leaf_depth: str = typer.Option("3,4", "--leaf-depth", help="Depths at which leaves may "
                                   "sit (RubricsTree: 3 or 4); 'any' drops the rule."),
) -> None:
    """List every problem of a taxonomy with file:line:field; exit 1 if any.

    Duplicate ids, missing triggers, leaf depth, nodes mixing leaves and subgroups, node and
    criterion ids that differ, authored weights, requirements of the wrong type or unknown to
    the health vocabulary.
    """
    from assay.cli.taxonomy_command import run_lint

    run_lint(file, leaf_depth)


@taxonomy_app.command("diff")
def taxonomy_diff(
    before: Path = typer.Argument(..., help="The taxonomy before ('starter': the shipped one)."),
    after: Path = typer.Argument(..., help="The taxonomy after."),
) -> None:
    """Leaves added, removed, moved, reworded and reweighted; exit 1 on errors.

    Errors: either file fails to load, or the content changed under the same version.
    """
    from assay.cli.taxonomy_command import run_diff

    run_diff(before, after)
