"""Runs: the async grading engine, the SQLite run store, resume, manifest, rescoring, exports.

A run's options are one :class:`RunOptions`; :func:`plan_run` resolves them (judges, grading
config, the config whose hash identifies the run) before any call.

Example (rescoring a stored run with other settings, no model call)::

    from assay.runs import rescore, run_status
    table = rescore("runs/20250601-120000-ab12cd", aggregation="any", abstention="zero")
    table.mean, table.ci_low, table.ci_high
    run_status("runs/20250601-120000-ab12cd").complete  # False: see .describe() for why
"""

from typing import TYPE_CHECKING, Any

from assay.runs.exports import export, iter_verdicts, verdict_frame
from assay.runs.results import RunScores, Scoring, rescore, rescore_run, score_run
from assay.runs.status import RunStatus, run_status
from assay.runs.store import RunStore

if TYPE_CHECKING:
    from assay.runs.options import RunOptions
    from assay.runs.plan import RunPlan, plan_run

__all__ = ["RunOptions", "RunPlan", "RunScores", "RunStatus", "RunStore", "Scoring", "export",
           "iter_verdicts", "plan_run", "rescore", "rescore_run", "run_status", "score_run",
           "verdict_frame"]

_LAZY = {"RunOptions": "assay.runs.options", "RunPlan": "assay.runs.plan",
         "plan_run": "assay.runs.plan"}  # they load the judges layer: only when asked for


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'assay.runs' has no attribute {name!r}")
