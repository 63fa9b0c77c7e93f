"""Assay in Inspect AI: a scorer, Inspect logs in, Assay runs out (the ``inspect`` extra).

* :func:`rubric_scorer`: grade each sample with Assay's judges (:mod:`.scorer`);
* :func:`healthbench_clipped`: HealthBench's clipped mean per axis and theme (:mod:`.metrics`);
* :func:`read_log_items` / :func:`write_run_log`: an Inspect eval log's samples as Assay items,
  an Assay run as an Inspect eval log (:mod:`.logs`).
"""

from assay.integrations.inspect.logs import read_log_items, write_run_log
from assay.integrations.inspect.metrics import healthbench_clipped
from assay.integrations.inspect.scorer import rubric_scorer

__all__ = ["healthbench_clipped", "read_log_items", "rubric_scorer", "write_run_log"]
