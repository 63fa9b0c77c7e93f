"""``assay.evaluate`` and ``assay.aevaluate``: evaluate a model, from Python.

Example (the shipped HealthBench examples, the fake server as model and judge)::

    import assay
    from assay.testing import FakeJudgeServer

    with FakeJudgeServer.run_in_thread(models={"patient-bot": {}}) as server:
        result = assay.evaluate("examples/healthbench/examples.jsonl", healthbench=True,
                                model=f"openai-compatible:patient-bot@{server.base_url}",
                                judges=[f"openai-compatible:fake@{server.base_url}"],
                                run_dir="runs/eval", n=4)
    result.metrics["overall_score"], result.worst_at_k    # {1: ..., 2: ..., 3: ..., 4: ...}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.evaluation.conditions import is_comparison, two_conditions
from assay.evaluation.options import EvalOptions
from assay.evaluation.run import EvalResult, aevaluate_one


async def aevaluate(items: str | Path | None = None, options: EvalOptions | None = None, *,
                    resume: str | Path | None = None, **fields: Any) -> EvalResult:
    """Sample the model under test on ``items``, grade, score and report (see
    :mod:`assay.evaluation.run`); ``resume=RUN`` continues the eval at ``RUN``.

    ``items``: HealthBench JSONL (``healthbench=True``: its rubrics, simple-evals' grader),
    Assay items with ``rubric`` (or their own), or ``"healthbench"``: the official file of
    ``subset`` (``all``, ``hard``, ``consensus``) stored by ``assay data fetch``. The settings
    are :class:`EvalOptions`' fields, given as ``options`` or as keywords (``model``: the model
    under test, a judge spec; ``judges``: the grader(s); ``n``, ``temperature``, ... as
    :func:`assay.sample` takes them, ``sampling_seed`` being its ``seed`` while ``seed`` draws
    the ``examples`` subset; ``executor``: ``local``, ``batch`` or ``ray`` for every stage).
    Two ``condition`` values make two evals compared (:mod:`assay.evaluation.conditions`).
    """
    if options is None:
        options = EvalOptions(**fields)
    elif fields:
        options = options.replace(**fields)
    if options.progress:  # the command line's rich bar (the library itself never draws)
        from assay.cli.progress import install

        install()
    if resume is not None:
        if is_comparison(resume):
            return await two_conditions(None, options, resume=resume)
        return await aevaluate_one(None, options, resume=resume)
    items, options = _official(items, options)
    if isinstance(options.condition, list):
        return await two_conditions(items, options)
    return await aevaluate_one(items, options)


def evaluate(items: str | Path | None = None, options: EvalOptions | None = None,
             **fields: Any) -> EvalResult:
    """Blocking :func:`aevaluate` (works in scripts and inside notebooks' running loops)."""
    from assay.judges.sync import run_sync

    return run_sync(aevaluate(items, options, **fields))


def _official(items: str | Path | None, options: EvalOptions
              ) -> tuple[str | Path | None, EvalOptions]:
    """``"healthbench"``: the official file of ``options.subset`` that ``assay data fetch``
    stored (checked again here), graded as HealthBench rows."""
    from assay.datasets.registry import DATASETS

    if items is None or str(items) not in DATASETS or Path(items).exists():
        return items, options
    from assay.datasets import local_copy

    path = local_copy(str(items), options.subset, data_root=options.data_root)
    return path, options if options.healthbench else options.replace(healthbench=True)
