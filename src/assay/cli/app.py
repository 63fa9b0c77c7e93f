"""The root ``assay`` Typer application that every command module registers on.

Command modules import only typer at module level and import heavy modules (pandas, scipy,
aiohttp) inside the command functions, so ``assay --help`` stays fast.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="assay",
    help="Rubric-based evaluation of LLM answers, built first for clinical and health AI.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        from assay import __version__

        typer.echo(f"assay {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Rubric-based evaluation of LLM answers, built first for clinical and health AI."""
    from assay.cli.progress import install

    install()  # jobs show rich progress bars unless a command's --quiet says otherwise
