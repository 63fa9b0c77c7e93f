"""Shared helpers for command modules: rich consoles, error exits, shared option values.

The consoles treat every string as data: no rich markup is read from it (a tag such as
``theme:[/]evil`` prints as it is) and control characters, ANSI escapes included, are replaced
before they reach the terminal (model text and input files are not trusted).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, NoReturn

import typer

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab and newline


def strip_control(text: str) -> str:
    r"""``text`` with control characters (ESC of ANSI sequences, CR, BEL, ...) shown as U+FFFD.

    >>> strip_control("red\x1b[31m!\r")
    'red\ufffd[31m!\ufffd'
    """
    return _CONTROL.sub("\ufffd", text)


@cache
def _safe_console_class() -> type:
    from rich.console import Console

    class SafeConsole(Console):
        """A rich console that never lets a string's control characters through."""

        def render_str(self, text: str, **kwargs: Any):
            return super().render_str(strip_control(text), **kwargs)

    return SafeConsole


def console(**kwargs: Any):
    """A :class:`rich.console.Console` for data (markup off unless asked for; see module doc)."""
    kwargs.setdefault("markup", False)
    return _safe_console_class()(**kwargs)


def stdout():
    return console()


def stderr():
    return console(stderr=True)


def fail(error: Exception, code: int = 1) -> NoReturn:
    """Print an Assay error (every issue of an InputError, one per line) and exit."""
    from assay.errors import InputError

    print_issues(error.issues if isinstance(error, InputError) else [error])
    raise typer.Exit(code)


EXIT_BUDGET = 3  # exit codes: docs/run-safety.md
EXIT_INCOMPLETE = 4


def exit_for_status(status: str) -> None:
    """Exit for a run's status (docs/run-safety.md): nothing when ``complete``, 3 at the
    budget, 4 incomplete, 1 for any other status."""
    if status == "complete":
        return
    raise typer.Exit(EXIT_BUDGET if status == "budget" else EXIT_INCOMPLETE
                     if status == "incomplete" else 1)


def exit_for_failed_items(failed: dict[str, str], status: str, *, incomplete_exit: int,
                          incomplete_note: str | None = None) -> None:
    """A job's failed items, one ``error`` line each, then its exit: 3 at the budget (run again
    with a larger one), else ``incomplete_exit``; nothing when no item failed."""
    if not failed:
        return
    print_issues([f"item {key}: {reason}" if not reason.startswith("item ") else reason
                  for key, reason in failed.items()])
    if status == "budget":
        stderr().print("budget reached: run again with a larger --budget to resume",
                       highlight=False)
        raise typer.Exit(EXIT_BUDGET)
    if incomplete_note:
        stderr().print(incomplete_note, highlight=False)
    raise typer.Exit(incomplete_exit)


def print_issues(issues) -> None:
    """One ``error <issue>`` line per issue on stderr."""
    from rich.text import Text

    console = stderr()
    for issue in issues:  # Text, not markup: messages hold user data such as "item[q2]"
        console.print(Text.assemble(("error ", "red"), strip_control(str(issue))),
                      highlight=False, soft_wrap=True)


def abstention_option(text: str):
    """``--abstain TEXT`` as an :class:`~assay.scoring.Abstention`; a bad value is an InputError
    naming the option."""
    from assay.errors import InputError, Issue
    from assay.scoring import Abstention

    try:
        return Abstention.parse(text)
    except ValueError as exc:
        raise InputError(Issue(None, None, "--abstain", str(exc))) from None
