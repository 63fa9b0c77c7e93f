"""Reports: ``assay report RUN [RUN ...] -o report.html``, one self-contained HTML file.

Example (see tests/report)::

    from assay.report import write_report
    write_report(["runs/a"], "report.html")
"""

from assay.report.data import RunReport, compare_runs, load_run
from assay.report.html import write_report

__all__ = ["RunReport", "compare_runs", "load_run", "write_report"]
