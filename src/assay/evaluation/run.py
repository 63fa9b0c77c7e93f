"""``assay eval``: sample the model under test, grade its answers, score, report: one run.

An eval run is one directory (``--run-dir``)::

    RUN/eval.json         the eval's settings and the status of its last stage
    RUN/items.jsonl       the items evaluated (the input's lines, or the --examples subset)
    RUN/sample/           the sampling job (assay sample): every model call, resumable
    RUN/responses.jsonl   the model's answers (HealthBench {prompt_id, response} lines)
    RUN/grade/            the grading run (assay grade): every judge call, resumable
    RUN/metrics.json      simple-evals' metrics, and the worst-at-k curve with n > 1
    RUN/report.html       the report (assay report)

``--resume RUN`` (``aeval(resume=RUN)``) reads ``eval.json`` and continues whichever stage
stopped: no finished model or judge call is made again. A stage that ends incomplete stops
the eval there (fail closed: no metrics over the answers that happened to arrive).

Two conditions (``condition=["none", "health-score"]``, ``--condition`` twice) make two evals
of the same items, ``RUN/none/`` and ``RUN/health-score/``, compared with the paired tests of
``assay compare`` on per-prompt scores (a prompt's mean over its samples):
``RUN/comparison.json``.

``--examples N --seed S`` evaluates N items drawn as simple-evals draws them
(``random.Random(S).sample(examples, N)``; S = 0 by default, simple-evals' own), so the same
N gives the same prompts in both.

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

import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.datasets.registry import DATASETS
from assay.errors import ConfigError, InputError, Issue

SETTINGS = ("items", "healthbench", "rubric", "model", "judges", "n", "examples", "seed",
            "temperature", "max_tokens", "sampling_seed", "reasoning_effort", "system",
            "condition", "bank", "selection", "taxonomy", "config_file", "protocol")


@dataclass
class EvalResult:
    """An eval run's outcome: its status, the stage it reached, metrics and the curve."""

    run_dir: Path
    status: str  # complete | incomplete | budget | interrupted | error
    stage: str  # sample | grade | done
    metrics: dict[str, Any] = field(default_factory=dict)
    worst_at_k: dict[int, float] | None = None
    sampled: Any = None
    graded: Any = None
    report_path: Path | None = None
    wall_s: float = 0.0
    conditions: dict[str, EvalResult] = field(default_factory=dict)
    comparison: Any = None  # a ScoreComparison of the two conditions (first minus second)


async def aevaluate(
    items: str | Path | None = None,
    *,
    model: str | None = None,
    judges: list[str] | None = None,
    rubric: str | Path | None = None,
    healthbench: bool = False,
    run_dir: str | Path | None = None,
    resume: str | Path | None = None,
    n: int = 1,
    examples: int | None = None,
    seed: int = 0,
    temperature: float | None = None,
    max_tokens: int | None = None,
    sampling_seed: int | None = None,
    reasoning_effort: str | None = None,
    system: str | Path | None = None,
    condition: str | list[str] | None = None,
    bank: str | Path | None = None,
    selection: str | Path | None = None,
    taxonomy: str | Path | None = None,
    config_file: str | Path | None = None,
    budget: float | None = None,
    concurrency: int | None = None,
    cache: str | Path | None = None,
    report: bool = True,
    progress: bool = False,
    subset: str = "all",
    data_root: str | Path | None = None,
    protocol: str = "assay",
) -> EvalResult:
    """Sample, grade, score and report (see the module docstring); ``resume=RUN`` continues.

    ``items``: HealthBench JSONL (``healthbench=True``: its rubrics, simple-evals' grader),
    Assay items with ``rubric`` (or their own), or ``"healthbench"``: the official file of
    ``subset`` (``all``, ``hard``, ``consensus``) fetched by ``assay data fetch``. ``model``:
    the model under test (a judge spec); ``judges``: the grader(s). Sampling settings are :func:`assay.sample`'s (``sampling_seed``
    is its ``seed``; ``seed`` draws the ``examples`` subset).
    """
    from assay.api import agrade
    from assay.sampling import asample

    started = time.perf_counter()
    if isinstance(condition, (list, tuple)):
        if len(condition) == 1:
            condition = condition[0]
        else:
            from assay.evaluation.conditions import EVAL_ARGS, two_conditions

            args = {k: v for k, v in locals().items() if k in EVAL_ARGS}
            return await two_conditions(list(condition), args, started)
    if resume is not None and (Path(resume) / "comparison.json").exists():
        from assay.evaluation.conditions import two_conditions

        return await two_conditions([], {"resume": resume}, started)
    if resume is not None:
        root = Path(resume)
        settings = _read_settings(root)
    else:
        if items is not None and str(items) in DATASETS and not Path(items).exists():
            from assay.datasets import local_copy

            items, healthbench = local_copy(str(items), subset, data_root=data_root), True
        if items is None or model is None or not judges:
            raise ConfigError("give the items, --model (the model under test) and --judge")
        if run_dir is None:
            raise ConfigError("give --run-dir DIR (the eval's directory)")
        root = Path(run_dir)
        settings = {"items": str(Path(items).resolve()), "healthbench": healthbench,
                    "rubric": _rubric_setting(rubric),
                    "model": model, "judges": list(judges), "n": n, "examples": examples,
                    "seed": seed, "temperature": temperature, "max_tokens": max_tokens,
                    "sampling_seed": sampling_seed, "reasoning_effort": reasoning_effort,
                    "system": str(Path(system).resolve()) if system is not None else None,
                    "condition": condition, "bank": _path_or_name(bank),
                    "selection": _path_or_name(selection), "taxonomy": _path_or_name(taxonomy),
                    "config_file": str(config_file) if config_file is not None else None,
                    "protocol": protocol}
        _start(root, settings)
    s = settings
    sampled = await asample(
        root / "items.jsonl", model=s["model"], out=root / "responses.jsonl",
        job_dir=root / "sample", n=s["n"], temperature=s["temperature"],
        max_tokens=s["max_tokens"], seed=s["sampling_seed"],
        reasoning_effort=s["reasoning_effort"], system=s["system"], condition=s["condition"],
        bank=s["bank"], selection=s["selection"], taxonomy=s["taxonomy"],
        output_format="healthbench" if s["healthbench"] else "items",
        budget=budget, concurrency=concurrency, cache=cache, config_file=s["config_file"],
        progress=progress)
    result = EvalResult(root, sampled.status, "sample", sampled=sampled)
    if sampled.status != "complete":
        return _finish(result, started)
    grade_dir = root / "grade"
    operational: dict[str, Any] = {"budget_usd": budget, "concurrency": concurrency,
                                   "cache_path": cache, "progress": progress}
    if (grade_dir / "manifest.json").exists():
        graded = await agrade(resume=grade_dir, **operational)
    elif s["healthbench"]:
        graded = await agrade(root / "items.jsonl", judges=s["judges"], healthbench=True,
                              responses=root / "responses.jsonl", run_dir=grade_dir,
                              protocol=s["protocol"], **operational)
    else:
        graded = await agrade(root / "responses.jsonl", judges=s["judges"], rubric=s["rubric"],
                              run_dir=grade_dir, **operational)
    result.graded, result.stage, result.status = graded, "grade", graded.status
    if graded.status != "complete":
        return _finish(result, started)
    result.metrics = _metrics(graded)
    if s["n"] > 1:
        result.worst_at_k = _worst_at_k(graded)
        result.metrics["worst_at_k"] = {str(k): v for k, v in result.worst_at_k.items()}
    (root / "metrics.json").write_text(json.dumps(result.metrics, indent=2, sort_keys=True)
                                       + "\n", encoding="utf-8")
    if report:
        from assay.report.html import write_report

        result.report_path = write_report([grade_dir], root / "report.html")
    result.stage = "done"
    return _finish(result, started)


def evaluate(items: Any = None, **kwargs: Any) -> EvalResult:
    """Blocking :func:`aevaluate` (works in scripts and inside notebooks' running loops)."""
    from assay.judges.sync import run_sync

    return run_sync(aevaluate(items, **kwargs))


def select_examples(lines: list[str], examples: int | None, seed: int) -> list[str]:
    """The ``examples`` lines simple-evals would draw (``random.Random(seed).sample``), or all.

    >>> select_examples(["a", "b", "c", "d"], 2, 0)
    ['d', 'b']
    """
    if examples is None or examples >= len(lines):
        return lines
    return random.Random(seed).sample(lines, examples)


def _start(root: Path, settings: dict[str, Any]) -> None:
    """Make the run directory with its items (or check a re-run has the same settings)."""
    settings_path = root / "eval.json"
    if settings_path.exists():
        old = _read_settings(root)
        changed = [k for k in SETTINGS if old.get(k) != settings.get(k)]
        if changed:
            raise ConfigError(f"{root}: this eval was made with other settings "
                              f"({', '.join(changed)}); use a new --run-dir or --resume {root}")
        return
    source = Path(settings["items"])
    if not source.is_file():
        raise InputError(Issue(str(source), None, None, "no such file"))
    if source.suffix.lower() != ".jsonl":
        raise InputError(Issue(str(source), None, None, "assay eval reads JSONL items"))
    lines = [line for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not lines:
        raise InputError(Issue(str(source), None, None, "no item in the file"))
    chosen = select_examples(lines, settings["examples"], settings["seed"])
    root.mkdir(parents=True, exist_ok=True)
    (root / "items.jsonl").write_text("".join(line + "\n" for line in chosen), encoding="utf-8")
    settings_path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")


def _path_or_name(value: str | Path | None) -> str | None:
    """A file as its absolute path (a resume may run elsewhere); a built-in name as it is."""
    if value is None:
        return None
    return str(Path(value).resolve()) if Path(value).exists() else str(value)


def _read_settings(root: Path) -> dict[str, Any]:
    path = root / "eval.json"
    if not path.is_file():
        raise ConfigError(f"{root}: not an eval run (no eval.json)")
    return json.loads(path.read_text(encoding="utf-8"))


def _metrics(graded: Any) -> dict[str, Any]:
    """simple-evals' flat metrics for a HealthBench run; else the overall score and its CI."""
    if graded.healthbench is not None:
        return dict(graded.healthbench.metrics)
    out: dict[str, Any] = {"overall_score": graded.overall, "n_items": len(graded.scores)}
    if graded.ci is not None:
        out["ci_low"], out["ci_high"] = graded.ci
    return out


def _worst_at_k(graded: Any) -> dict[int, float]:
    """The worst-at-k curve over the graded samples, grouped by prompt, clipped to [0, 1] as
    HealthBench's overall score is."""
    from assay.evaluation.worst_at_k import worst_at_k
    from assay.runs.sources import split_sample_id

    by_prompt: dict[str, list[float]] = {}
    for item_id, score in graded.scores.items():
        prompt_id, _ = split_sample_id(item_id)
        if score is None:
            raise InputError(Issue(str(graded.run_dir), None, item_id, "no score for this sample"))
        by_prompt.setdefault(prompt_id, []).append(score)
    return {k: min(1.0, max(0.0, v)) for k, v in worst_at_k(by_prompt).items()}


def _finish(result: EvalResult, started: float) -> EvalResult:
    result.wall_s = time.perf_counter() - started
    path = result.run_dir / "eval.json"
    settings = json.loads(path.read_text(encoding="utf-8"))
    settings["last"] = {"status": result.status, "stage": result.stage}
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    return result


def _rubric_setting(rubric: str | Path | None) -> str | None:
    """``--rubric`` as stored in ``eval.json``: a file's absolute path, or a built-in baseline
    rubric's name (``single-axis``, ``multi-axes``: :mod:`assay.bank.baselines`).

    >>> _rubric_setting("multi-axes"), _rubric_setting(None)
    ('multi-axes', None)
    """
    from assay.bank.baselines import BASELINE_BANKS

    if rubric is None:
        return None
    if str(rubric) in BASELINE_BANKS:  # a rubric file always has an extension
        return str(rubric)
    return str(Path(rubric).resolve())
