"""The ``assay`` command line. Each module below registers its commands on :data:`app`."""

from __future__ import annotations

import os
import sys

# Pydantic looks for plugins in every installed distribution's entry points when the first model
# is defined (≈11 ms of each command's start with 155 distributions, more in a larger
# environment); the CLI uses none. PYDANTIC_DISABLE_PLUGINS= (set, empty) brings them back.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

from assay.cli import agreement as _agreement  # noqa: F401  agreement, compare
from assay.cli import bank as _bank  # noqa: F401  bank build, select, prompt, show

# Importing a command module registers its commands; keep these imports light.
from assay.cli import consistency as _consistency  # noqa: F401  consistency
from assay.cli import data as _data  # noqa: F401  data fetch, data list
from assay.cli import eval as _eval  # noqa: F401  eval
from assay.cli import export as _export  # noqa: F401  export
from assay.cli import files as _files  # noqa: F401  validate, convert, schema
from assay.cli import generate as _generate  # noqa: F401  generate
from assay.cli import grade as _grade  # noqa: F401  grade
from assay.cli import judges as _judges  # noqa: F401  cache, fake-judge
from assay.cli import kb as _kb  # noqa: F401  kb build|search
from assay.cli import meta as _meta  # noqa: F401  meta-eval, discrimination, coverage
from assay.cli import rag as _rag  # noqa: F401  rag grade|train|score|report
from assay.cli import report as _report  # noqa: F401  report
from assay.cli import review as _review  # noqa: F401  review
from assay.cli import route as _route  # noqa: F401  route run, route eval
from assay.cli import rubric_eval as _rubric_eval  # noqa: F401  cia, nearmiss, refine, rubric stats
from assay.cli import sample as _sample  # noqa: F401  sample
from assay.cli import score as _score  # noqa: F401  score
from assay.cli import serve as _serve  # noqa: F401  serve
from assay.cli import stress as _stress  # noqa: F401  stress make, stress run
from assay.cli import taxonomy as _taxonomy  # noqa: F401  taxonomy lint, taxonomy diff
from assay.cli.app import app, app_for
from assay.cli.examples import attach as _attach_examples

_attach_examples(app)  # each command's --help ends with its example
from assay.cli.process import exit_at_once, own_process


def main() -> None:
    own_process()
    args = sys.argv[1:]
    if not args or "--help" in args:  # a help page: typer's renderer without what it never uses
        from assay.cli.help_renderer import import_help_renderer

        import_help_renderer()
    try:
        app_for(args)()
    except SystemExit as done:  # click ends every command so, successful or not
        exit_at_once(done.code)
    except ModuleNotFoundError as missing:  # the quickstart installs only what grading needs
        from assay.cli.process import missing_dependency

        exit_at_once(missing_dependency(missing))


__all__ = ["app", "main"]
