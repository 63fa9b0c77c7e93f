"""``assay data fetch|list``: the official benchmark files, downloaded on request and checked."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app

data_app = typer.Typer(help="Official benchmark files: fetch them once, checked, their SHA-256 "
                       "locked on first use.",
                       no_args_is_help=True)
app.add_typer(data_app, name="data")


@data_app.command("fetch")
def data_fetch(
    dataset: str = typer.Argument(..., help="healthbench"),
    subset: str | None = typer.Option(None, "--subset", help="all | hard | consensus | "
                                      "meta-eval (default: all, hard and consensus: the files "
                                      "assay eval reads)."),
    sha256: str | None = typer.Option(None, "--sha256", help="The SHA-256 you expect (e.g. of "
                                      "your own copy), with --subset."),
    url: str | None = typer.Option(None, "--url", help="A mirror of the official URL, with "
                                   "--subset."),
    mirror: str | None = typer.Option(None, "--mirror", help="A base URL holding the files under "
                                      "their official names (a mirror of simple-evals' blob)."),
    source: Path | None = typer.Option(None, "--from", help="Import a local copy instead of "
                                       "downloading, with --subset."),
    data_root: Path | None = typer.Option(None, "--data-dir", help="Default: $ASSAY_DATA, else "
                                          "~/.local/share/assay."),
    lock: Path | None = typer.Option(None, "--lock", help="The lock file of trusted hashes "
                                     "(default: ./assay-data.lock, or $ASSAY_DATA_LOCK)."),
    update_lock: bool = typer.Option(False, "--update-lock", help="Trust a file whose SHA-256 "
                                     "differs from the lock's (it changed on purpose)."),
) -> None:
    """Download the official files (simple-evals' URLs), check what they hold, record their
    SHA-256 in the lock file on first use, and store them for assay eval."""
    from assay.cli.output import fail
    from assay.datasets import EVAL_SUBSETS, DataLock, data_file, fetch, lock_path
    from assay.errors import AssayError, ConfigError

    try:
        if subset is None and (sha256 or url or source):
            raise ConfigError("--sha256, --url and --from name one file: give --subset too")
        subsets = [subset] if subset is not None else list(EVAL_SUBSETS.get(dataset, ["all"]))
        for name in subsets:
            trusted = None if update_lock else DataLock(lock_path(lock)).trusted(
                f"{dataset}/{name}")
            where = url or (f"{mirror.rstrip('/')}/{data_file(dataset, name).name}" if mirror
                            else None)
            path = fetch(dataset, name, sha256=sha256, url=where, source=source,
                         data_root=data_root, lock=lock, update_lock=update_lock)
            rows = data_file(dataset, name).rows
            trust = (f"SHA-256 as {lock_path(lock)} trusts it" if trusted is not None else
                     f"SHA-256 recorded in {lock_path(lock)}: trusted on first use, commit it")
            typer.echo(f"{dataset} ({name}): {path} ({rows:,} rows checked; {trust})")
    except (AssayError, OSError, ValueError) as exc:
        fail(exc)


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
            pin = "pinned" if entry.sha256 else f"{entry.rows:,} rows, trusted on first use"
            typer.echo(f"{dataset} --subset {subset}: {entry.url} ({pin})"
                       + (f"  stored: {root / dataset / entry.name}" if stored else ""))
