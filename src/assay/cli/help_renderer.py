"""typer's help renderer without the two rich modules a help page never uses.

typer renders help pages with ``typer.rich_utils``, which imports ``rich.markdown`` (markdown-it,
pygments through ``rich.syntax``) for the ``markdown`` markup mode and ``rich.traceback`` for
pretty exceptions. Assay uses neither (the ``rich`` markup mode, pretty exceptions off), and the
two were 217 M of ``assay --help``'s 707 M instructions (callgrind). :func:`import_help_renderer`
imports ``typer.rich_utils`` with stand-ins for their ``Markdown`` and ``Traceback`` that import
the real class when first used, so nothing changes if one ever is; the stand-in modules are
taken out of ``sys.modules`` at once, so any other ``import rich.markdown`` gets the real one.

Example:
    >>> import sys
    >>> import_help_renderer()
    >>> markdown = sys.modules["typer.rich_utils"].Markdown("*hi*")  # the real class, imported now
    >>> type(markdown).__module__
    'rich.markdown'
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

# the name typer.rich_utils imports from each module it needs only outside Assay's help pages
_DEFERRED = {"rich.markdown": "Markdown", "rich.traceback": "Traceback"}


class _Deferred(type):
    """A stand-in class: calling it or reading an attribute (``Traceback.from_exception``)
    imports the real class and hands over to it."""

    _where: tuple[str, str]

    def _real(cls) -> Any:
        module, name = cls._where
        return getattr(importlib.import_module(module), name)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls._real()(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(cls._real(), name)


def import_help_renderer() -> None:
    """Import ``typer.rich_utils`` (once) with deferred ``Markdown`` and ``Traceback``."""
    if "typer.rich_utils" in sys.modules:
        return
    placed = []
    for module, name in _DEFERRED.items():
        if module in sys.modules:  # already imported for real: nothing to save
            continue
        stand_in = types.ModuleType(module)
        setattr(stand_in, name, _Deferred(name, (), {"_where": (module, name)}))
        sys.modules[module] = stand_in
        placed.append(module)
    try:
        importlib.import_module("typer.rich_utils")
    finally:
        for module in placed:
            del sys.modules[module]
