"""The root ``assay`` Typer application that every command module registers on.

Command modules import only typer at module level and import heavy modules (pandas, scipy,
aiohttp) inside the command functions, so ``assay --help`` stays fast.
"""

from __future__ import annotations

import copy

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
    health_vocabulary: list[str] = typer.Option(
        [], "--health-vocabulary", metavar="FILE", help="A health vocabulary file (names, LOINC codes, units) "
        "added to the shipped one; repeatable. Same as $ASSAY_HEALTH_VOCABULARY."),
) -> None:
    """Rubric-based evaluation of LLM answers, built first for clinical and health AI."""
    import os

    from assay.cli.progress import install

    if health_vocabulary:  # the environment carries it to worker processes too
        from assay.vocabulary import VOCABULARY_ENV

        given = [p for p in os.environ.get(VOCABULARY_ENV, "").split(os.pathsep) if p]
        os.environ[VOCABULARY_ENV] = os.pathsep.join([*given, *health_vocabulary])
        from assay.errors import InputError
        from assay.vocabulary import vocabulary

        try:  # a bad file is reported here, with its lines, not inside some item's validation
            vocabulary()
        except (InputError, OSError) as exc:
            from assay.cli.output import fail

            fail(exc)

    install()  # jobs show rich progress bars unless a command's --quiet says otherwise


def app_for(args: list[str]) -> typer.Typer:
    """The app that runs these command-line arguments: when the first one names a command or a
    group, the root app holding just that one, since typer builds every registered command's
    parameters before it runs any (≈15% of the start of ``assay grade``); for the help page
    (``assay``, ``assay --help``), the app with its commands' parameters left out; otherwise
    the whole app, so that ``--version`` and a mistyped name read as before.

    Example:
        >>> [c.callback.__name__ for c in app_for(["grade", "--help"]).registered_commands]
        ['grade']
        >>> app_for(["--version"]) is app
        True
    """
    if not args or args == ["--help"]:
        return _listing(app)
    name = args[0]
    commands = [c for c in app.registered_commands if command_name(c) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if len(commands) + len(groups) != 1:
        return app
    only = copy.copy(app)  # the root's callback and settings, one command
    only.registered_commands, only.registered_groups = commands, groups
    return only


def _listing(typer_app: typer.Typer) -> typer.Typer:
    """``typer_app`` for its help page alone: every command and group keeps its name, help and
    panel, but each command's function stands in without its parameters (the page lists none,
    and building all 48 commands' parameters was ≈15% of ``assay --help``)."""
    listing = copy.copy(typer_app)
    listing.registered_commands = [_without_parameters(c) for c in typer_app.registered_commands]
    listing.registered_groups = []
    for group in typer_app.registered_groups:
        listed = copy.copy(group)
        if group.typer_instance is not None:
            listed.typer_instance = _listing(group.typer_instance)
        listing.registered_groups.append(listed)
    return listing


def _without_parameters(info: typer.models.CommandInfo) -> typer.models.CommandInfo:
    info = copy.copy(info)
    if info.callback is not None:
        named = info.callback

        def stand_in() -> None:  # never called: help pages only
            raise AssertionError(named.__name__)

        stand_in.__name__, stand_in.__doc__ = named.__name__, named.__doc__
        info.callback = stand_in
    return info


def command_name(command: typer.models.CommandInfo) -> str | None:
    """The name typer gives a registered command (its own, or its function's, dashed)."""
    if command.name:
        return command.name
    return typer.main.get_command_name(command.callback.__name__) if command.callback else None
