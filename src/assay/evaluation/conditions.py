"""Two sampling conditions compared: an eval per condition, then paired tests between them.

``assay eval ... --condition A --condition B`` runs :func:`~assay.evaluation.run.aevaluate_one`
once per condition, in ``RUN/A/`` and ``RUN/B/`` on the same items, and compares them with
``assay compare``'s paired tests on per-prompt scores (a prompt's mean over its samples);
``RUN/comparison.json`` holds the conditions, each one's metrics and the comparison. A resume
of ``RUN`` resumes both.

Example:
    >>> per_prompt({"q1#0": 1.0, "q1#1": 0.5, "q2": 0.25})
    {'q1': 0.75, 'q2': 0.25}
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from assay.errors import ConfigError
from assay.evaluation.options import EvalOptions
from assay.evaluation.run import EvalResult, aevaluate_one

COMPARISON = "comparison.json"


def is_comparison(run: str | Path) -> bool:
    """Whether ``run`` holds two conditions' evals (``RUN/comparison.json``)."""
    return (Path(run) / COMPARISON).exists()


async def two_conditions(items: str | Path | None, options: EvalOptions,
                         resume: str | Path | None = None) -> EvalResult:
    """An eval per condition in ``RUN/CONDITION/``, then paired tests between the two."""
    from assay.metrics.compare import compare_scores

    started = time.perf_counter()
    if resume is not None:
        root = Path(resume)
        conditions = json.loads((root / COMPARISON).read_text())["conditions"]
        runs = {c: await aevaluate_one(None, options, resume=root / c) for c in conditions}
    else:
        conditions = list(options.condition or [])
        if len(conditions) != 2 or len(set(conditions)) != 2:
            raise ConfigError(f"--condition: give one, or two different ones to compare "
                              f"({', '.join(conditions)})")
        if options.run_dir is None:
            raise ConfigError("give --run-dir DIR (the eval's directory)")
        root = Path(options.run_dir)
        root.mkdir(parents=True, exist_ok=True)
        marker = root / COMPARISON
        if not marker.exists():
            marker.write_text(json.dumps({"conditions": conditions}) + "\n", encoding="utf-8")
        runs = {c: await aevaluate_one(items, options.replace(run_dir=str(root / c), condition=c))
                for c in conditions}
    first, second = (runs[c] for c in conditions)
    unfinished = next((r for r in runs.values() if r.stage != "done"), None)
    result = EvalResult(root, "complete" if unfinished is None else unfinished.status,
                        "done" if unfinished is None else unfinished.stage, conditions=runs)
    if unfinished is None:
        result.comparison = compare_scores(per_prompt(first.scores.scores),
                                           per_prompt(second.scores.scores))
        result.metrics = {c: r.metrics for c, r in runs.items()}
        (root / COMPARISON).write_text(json.dumps({
            "conditions": conditions, "metrics": result.metrics,
            "comparison": result.comparison.model_dump(mode="json")}, indent=2) + "\n",
            encoding="utf-8")
    result.wall_s = time.perf_counter() - started
    return result


def per_prompt(scores: dict[str, float | None]) -> dict[str, float | None]:
    """Each prompt's mean score over its samples (``PROMPT#K`` ids), for paired tests."""
    from assay.runs.sources import split_sample_id

    grouped: dict[str, list[float | None]] = {}
    for item_id, score in scores.items():
        grouped.setdefault(split_sample_id(item_id)[0], []).append(score)
    return {k: None if any(v is None for v in vs) else sum(v for v in vs if v is not None)
            / len(vs) for k, vs in grouped.items()}
