"""The root ``assay`` Typer application that every command module registers on.

Command modules import only typer at module level and import heavy modules (pandas, scipy,
aiohttp) inside the command functions, so ``assay --help`` stays fast.
"""

from __future__ import annotations

import atexit
import copy
import gc
import os
import sys
import threading

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
    commands = [c for c in app.registered_commands if _command_name(c) == name]
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


def _command_name(command: typer.models.CommandInfo) -> str | None:
    """The name typer gives a registered command (its own, or its function's, dashed)."""
    if command.name:
        return command.name
    return typer.main.get_command_name(command.callback.__name__) if command.callback else None


_OWN_PROCESS = False


def own_process() -> None:
    """Tune the collector for the ``assay`` process (called by its entry point only, never on
    import: a host process that imports the CLI keeps its own settings). A command builds most
    of its objects to keep them until exit, so the young generation is collected every 50,000
    allocations instead of 700: the collector took ≈5% of a warm ``assay grade``'s CPU, ≈1% after."""
    global _OWN_PROCESS
    _OWN_PROCESS = True
    gc.set_threshold(50_000, 10, 10)


def freeze_startup() -> None:
    """Before a command's long phase, in the ``assay`` process only: what start-up built
    (modules, classes, schemas) lives until exit, so the collector stops walking it
    (:func:`gc.freeze`). A no-op in any other process, where frozen garbage would never go."""
    if _OWN_PROCESS:
        gc.freeze()


def exit_at_once(code: object) -> None:
    """End the ``assay`` process with ``code`` (a :class:`SystemExit` code) without freeing its
    objects one by one: after a 6,308-call ``assay grade`` that teardown took 40-60 ms, all of
    it after the last line was printed. Exit handlers run and the standard streams are flushed
    first, as at a normal exit. While another non-daemon thread runs (a server, a worker) it
    exits normally instead, which waits for that thread as Python would."""
    if isinstance(code, str):  # sys.exit("message"): printed, status 1
        print(code, file=sys.stderr)
        code = 1
    status = 0 if code is None else code if isinstance(code, int) else 1
    if any(t.is_alive() and not t.daemon for t in threading.enumerate()
           if t is not threading.main_thread()):
        raise SystemExit(status)
    atexit._run_exitfuncs()  # what Python runs at exit: logging's flush, weakref finalizers
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said
            pass
    os._exit(status)
