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

if TYPE_CHECKING:
    from assay.runs.exports import export, iter_verdicts, verdict_frame
    from assay.runs.options import RunOptions
    from assay.runs.plan import RunPlan, plan_run
    from assay.runs.results import RunScores, Scoring, rescore, rescore_run, score_run
    from assay.runs.status import RunStatus, run_status
    from assay.runs.store import RunStore

__all__ = ["RunOptions", "RunPlan", "RunScores", "RunStatus", "RunStore", "Scoring", "export",
           "iter_verdicts", "plan_run", "rescore", "rescore_run", "run_status", "score_run",
           "verdict_frame"]

# Each name is imported when first asked for: a module that needs one part of the package (a
# job's lock and manifest, a sample's id) does not load the exports, the scoring and the judges
# layer with it (61 M instructions of a one-item `assay sample`, callgrind).
_LAZY = {"RunOptions": "assay.runs.options", "RunPlan": "assay.runs.plan",
         "plan_run": "assay.runs.plan", "export": "assay.runs.exports",
         "iter_verdicts": "assay.runs.exports", "verdict_frame": "assay.runs.exports",
         "RunScores": "assay.runs.results", "Scoring": "assay.runs.results",
         "rescore": "assay.runs.results", "rescore_run": "assay.runs.results",
         "score_run": "assay.runs.results", "RunStatus": "assay.runs.status",
         "run_status": "assay.runs.status", "RunStore": "assay.runs.store"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'assay.runs' has no attribute {name!r}")
