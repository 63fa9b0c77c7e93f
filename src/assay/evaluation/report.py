"""The eval's report: the grading run's report, headed by what a reader of an eval needs first.

``RUN/report.html`` is ``assay report``'s page of the eval's grading run (each sampled answer
with its grading: the conversation, the answer, every criterion's verdict and explanation),
titled for the model under test and preceded by a section on the eval: the model under test
and how it was sampled (temperature, max_tokens, seed, reasoning effort, system prompt, the
protocol), the judges, prompts and samples counted apart, the worst-at-k curve, the prompts
whose worst answer scored lowest, and each stage's calls and cost.

Example (after :func:`assay.evaluate`)::

    write_eval_report(result.run_dir, result, result.run_dir / "report.html")
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

WORST_PROMPTS = 50  # prompts listed by their worst answer
_TEMPLATES = Path(__file__).parent / "templates"


def write_eval_report(root: Path, result: Any, out: Path) -> Path:
    """Write the eval's report to ``out`` (whole or not at all) and return its path."""
    from assay.report.html import write_report

    settings = result.settings
    title = f"Assay eval · {settings.get('model')}"
    return write_report([root / "grade"], out, title=title, preface=_preface(root, result))


def sampling_settings(settings: dict[str, Any], root: Path) -> str:
    """How the model under test was asked, in words: the settings its requests carried (read
    from the sampling job: what was sent), the system prompt and the protocol.

    >>> sampling_settings({"protocol": "assay", "condition": None, "system": None}, Path("/no"))
    "temperature, max_tokens, seed: the endpoint's defaults · no system prompt"
    """
    job = _job_config(root)
    params = job.get("params") or {"temperature": settings.get("temperature"),
                                   "max_tokens": settings.get("max_tokens"),
                                   "seed": settings.get("sampling_seed"),
                                   "reasoning_effort": settings.get("reasoning_effort")}
    extra = params.get("extra_body") or {}
    parts = [f"{key} {params[key]}" for key in ("temperature", "max_tokens", "seed",
                                                "reasoning_effort") if params.get(key) is not None]
    parts += [f"{key} {json.dumps(value)}" for key, value in extra.items()]
    if settings.get("protocol") == "simple-evals":
        entry = job.get("sampler")
        parts.append("simple-evals' sampler: " + (f"its {entry!r} entry" if entry else
                                                   "its usual entry (the model is not in its table)"))
        if job.get("system_message"):
            parts.append(f"system message {json.dumps(job['system_message'])}")
        return " · ".join(parts)
    unset = [k for k in ("temperature", "max_tokens", "seed") if params.get(k) is None]
    if unset:
        parts.append(f"{', '.join(unset)}: the endpoint's defaults")
    if settings.get("condition") not in (None, "none"):
        parts.append(f"system prompt: condition {settings['condition']}")
    elif settings.get("system"):
        parts.append(f"system prompt: {settings['system']}")
    else:
        parts.append("no system prompt")
    return " · ".join(parts)


def _job_config(root: Path) -> dict[str, Any]:
    """The sampling job's config (what its requests carried), or {} before it started."""
    manifest = root / "sample" / "manifest.json"
    if not manifest.is_file():
        return {}
    return dict(json.loads(manifest.read_text(encoding="utf-8")).get("config") or {})


def _preface(root: Path, result: Any) -> str:
    """The eval's own section of the report (HTML; every text escaped by Jinja)."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    settings = result.settings
    n = int(settings.get("n") or 1)
    env = Environment(loader=FileSystemLoader(_TEMPLATES), autoescape=select_autoescape(
        default=True, default_for_string=True))
    return env.get_template("eval_preface.html.j2").render(
        settings=settings, sampling=sampling_settings(settings, root), n=n,
        prompts=result.prompts, executor=result.executor, cost=result.cost,
        metrics=result.metrics, curve=result.worst_at_k,
        curve_svg=worst_at_k_plot(result.worst_at_k) if result.worst_at_k else None,
        worst=_worst_prompts(result.scores.scores, n))


def _worst_prompts(scores: dict[str, float | None], n: int) -> list[dict[str, Any]]:
    """The prompts whose worst answer scored lowest: id, each sample's score, worst, mean."""
    from assay.runs.sources import split_sample_id

    by_prompt: dict[str, list[float]] = {}
    for item_id, score in scores.items():
        if score is not None:
            by_prompt.setdefault(split_sample_id(item_id)[0], []).append(score)
    rows = [{"prompt_id": p, "scores": s, "worst": min(s), "mean": sum(s) / len(s)}
            for p, s in by_prompt.items()]
    return sorted(rows, key=lambda r: (r["worst"], r["mean"]))[:WORST_PROMPTS]


def worst_at_k_plot(curve: dict[int, float]) -> str:
    """The worst-at-k curve as inline SVG: k on x, the expected worst score on y."""
    from assay.report.plots import _pyplot, _svg

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 3.0))
    ks = sorted(curve)
    ax.plot(ks, [curve[k] for k in ks], marker="o", color="#c0392b")
    ax.set_xticks(ks)
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("k (answers drawn per prompt)")
    ax.set_ylabel("expected worst score")
    ax.set_title("Worst-at-k")
    return _svg(fig)
