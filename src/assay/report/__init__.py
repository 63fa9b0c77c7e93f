"""Reports: ``assay report RUN [RUN ...] -o report.html``, one self-contained HTML file.

Example (see tests/report)::

    from assay.report import write_report
    write_report(["runs/a"], "report.html")

The names below are imported when first used: the review app reads ``assay.report.rows`` and
``assay.report.meaning`` alone, without the report's statistics (its start-up time).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.report.data import RunReport, compare_runs, load_run
    from assay.report.html import write_report

__all__ = ["RunReport", "compare_runs", "load_run", "write_report"]
_HOMES = {"RunReport": "data", "compare_runs": "data", "load_run": "data", "write_report": "html"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'assay.report' has no attribute {name!r}")
    return getattr(import_module(f"assay.report.{_HOMES[name]}"), name)
