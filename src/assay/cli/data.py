"""``assay data fetch|list``: the official benchmark files, downloaded on request and checked."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app

data_app = typer.Typer(help="Official benchmark files: fetch them once, checked by SHA-256.",
                       no_args_is_help=True)
app.add_typer(data_app, name="data")


@data_app.command("fetch")
def data_fetch(
    dataset: str = typer.Argument(..., help="healthbench"),
    subset: str = typer.Option("all", "--subset", help="all | hard | consensus | meta-eval"),
    sha256: str | None = typer.Option(None, "--sha256", help="The expected SHA-256 (needed where "
                                      "Assay has no pin for the file)."),
    url: str | None = typer.Option(None, "--url", help="A mirror of the official URL."),
    source: Path | None = typer.Option(None, "--from", help="Import a local copy instead of "
                                       "downloading."),
    data_root: Path | None = typer.Option(None, "--data-dir", help="Default: $ASSAY_DATA, else "
                                          "~/.local/share/assay."),
) -> None:
    """Download an official file (simple-evals' URLs), check it, and store it for assay eval."""
    from assay.cli.output import fail
    from assay.datasets import fetch
    from assay.errors import AssayError

    try:
        path = fetch(dataset, subset, sha256=sha256, url=url, source=source, data_root=data_root)
    except (AssayError, OSError, ValueError) as exc:
        fail(exc)
    typer.echo(f"{dataset} ({subset}): {path} (SHA-256 checked)")


@data_app.command("list")
def data_list(
    data_root: Path | None = typer.Option(None, "--data-dir", help="Default: $ASSAY_DATA, else "
                                          "~/.local/share/assay."),
) -> None:
    """The files assay data fetch knows, and which are stored here."""
    from assay.datasets import DATASETS, data_dir

    root = data_dir(data_root)
    for dataset, subsets in DATASETS.items():
        for subset, entry in subsets.items():
            stored = (root / dataset / entry.name).is_file()
            pin = "pinned" if entry.sha256 else "needs --sha256"
            typer.echo(f"{dataset} --subset {subset}: {entry.url} ({pin})"
                       + (f"  stored: {root / dataset / entry.name}" if stored else ""))
