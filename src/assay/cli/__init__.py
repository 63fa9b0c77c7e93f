"""The ``assay`` command line. Each module below registers its commands on :data:`app`."""

from __future__ import annotations

from assay.cli.app import app

# Importing a command module registers its commands; keep these imports light.
from assay.cli import files as _files  # noqa: F401  validate, convert, schema
from assay.cli import score as _score  # noqa: F401  score
from assay.cli import judges as _judges  # noqa: F401  cache, fake-judge
from assay.cli import grade as _grade  # noqa: F401  grade
from assay.cli import metrics as _metrics  # noqa: F401  agreement, compare
from assay.cli import meta as _meta  # noqa: F401  meta-eval, discrimination, coverage
from assay.cli import report as _report  # noqa: F401  report
from assay.cli import review as _review  # noqa: F401  review
from assay.cli import generate as _generate  # noqa: F401  kb build|search, generate


def main() -> None:
    app()


__all__ = ["app", "main"]
