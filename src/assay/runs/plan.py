"""What a run of some options over some items will be, before any call: :func:`plan_run`.

The plan resolves the judges (specs read, the templates' sampling defaults filled in, a judge
named twice numbered ``#2``), the grading config, the few-shot pools, and the config dict whose
hash identifies the run (:mod:`assay.runs.manifest`; no operational setting, no secret). A new
run stores that config; a resumed one must have the same; a dry run counts the calls of the same
plan. :func:`sources_of` is what ``--resume RUN`` alone needs to rebuild the options.

Example::

    from assay.runs import RunOptions, plan_run
    from assay.runs.sources import ItemSource
    plan = plan_run(ItemSource(path="items.jsonl"), RunOptions(judges=["vllm:m"], rubric=rubric))
    plan.config["scoring"], [c.judge_id for c in plan.judge_configs]
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.grading.fewshot import Example, pools_from_labelled_items
from assay.grading.grader import GradingConfig
from assay.runs.options import RunOptions
from assay.runs.sources import ItemSource, file_sha256
from assay.runs.store import rubric_hash


@dataclass(frozen=True)
class RunPlan:
    """The resolved judges, grading config and few-shot pools of a run, and its config."""

    judge_configs: list[Any]  # assay.judges.JudgeConfig, one per judge, ids unique
    grading: GradingConfig
    pools: dict[str, list[Example]]
    config: dict[str, Any]  # what the config hash covers

    @property
    def weights(self) -> list[float]:
        return [j["weight"] for j in self.config["judges"]]


def plan_run(source: ItemSource, options: RunOptions) -> RunPlan:
    """The plan of grading ``source`` with ``options`` (reads the judge config file and the
    few-shot files; calls nothing)."""
    grading = options.grading_config()
    judge_configs = _judge_configs(options, grading)
    pools, pools_digest = _pools(options)
    return RunPlan(judge_configs, grading, pools,
                   run_config(source, options, judge_configs, grading, pools_digest))


def run_config(source: ItemSource, options: RunOptions, judge_configs: list[Any],
               grading: GradingConfig, pools_digest: str | None) -> dict[str, Any]:
    """The config dict whose hash identifies a run: the items and responses (as digests), the
    rubric (as its hash), the judges and their weights, and the config fields of ``options``
    as :meth:`~RunOptions.grading_config` and :meth:`~RunOptions.scoring_config` give them."""
    weights = list(options.weights or [1.0] * len(judge_configs))  # as many (RunOptions checks)
    grading_dict = grading.to_dict()
    if pools_digest:
        grading_dict["few_shot_pool"] = pools_digest
    return {
        "items": {"sha256": source.fingerprint()},
        "responses": ({"ideal": True} if source.ideal else
                      {"sha256": _dict_digest(source.responses)} if source.responses is not None
                      else None),
        "rubric": {"hash": rubric_hash(options.rubric)} if options.rubric is not None else None,
        "judges": [judge_entry(c, w) for c, w in zip(judge_configs, weights)],
        "grading": grading_dict,
        "scoring": options.scoring_config(),
    }


def judge_entry(config: Any, weight: float) -> dict[str, Any]:
    settings = config.public_settings()  # never a key, a secret header or a URL password
    return {"id": config.judge_id, "weight": weight, "spec": settings["spec"], "settings": settings}


def with_later_defaults(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored run config with the judge settings added to Assay since the run was made set to
    their defaults (what such a run used), so that resuming it is not refused as changed.

    >>> old = {"judges": [{"id": "j", "settings": {"spec": "s", "reask": True}}]}
    >>> settings = with_later_defaults(old)["judges"][0]["settings"]
    >>> settings["max_reasks"], settings["timeout_ceiling_s"]
    (2, None)
    """
    from assay.judges.config import JudgeConfig

    defaults = {name: field.default for name, field in JudgeConfig.model_fields.items()
                if name != "api_key"  # never stored
                and (field.default is None or isinstance(field.default, (bool, int, float, str)))}
    judges = stored.get("judges")
    if not isinstance(judges, list):
        return stored
    return {**stored, "judges": [
        {**entry, "settings": {**defaults, **entry["settings"]}}
        if isinstance(entry, dict) and isinstance(entry.get("settings"), dict) else entry
        for entry in judges]}


def sources_of(source: ItemSource, options: RunOptions, judge_configs: list[Any]) -> dict[str, Any]:
    """Where to find the inputs again on ``--resume RUN`` (paths; not part of the hash): the
    source's paths and every config field of ``options``."""
    fields = set(RunOptions.config_fields()) - {"judges"}
    stored = options.model_dump(mode="json", include=fields)
    stored.update(
        rubric_path=str(Path(options.rubric_path).resolve()) if options.rubric_path else None,
        templates={k: (v if "/" not in v and "\\" not in v else str(Path(v).resolve()))
                   for k, v in options.templates.items()},
        judges=[judge_entry(c, 1.0)["settings"] for c in judge_configs])
    return {"items": str(Path(source.path).resolve()) if source.path else None,
            "responses_path": source.responses_path, "ideal": source.ideal, **stored}


def _judge_configs(options: RunOptions, grading: GradingConfig) -> list[Any]:
    from assay.judges.specs import config_from

    configs = [config_from(j, options.judge_config_file) if isinstance(j, str) else j
               for j in options.judges]
    if not configs:
        raise ConfigError("no judge: give at least one --judge SPEC")
    defaults, origins = grading.sampling_defaults(), grading.sampling_origins()
    configs = [_with_sampling_defaults(c, defaults, origins) for c in configs]
    if options.max_reasks is not None:  # --max-reasks: every judge's
        configs = [c.model_copy(update={"max_reasks": options.max_reasks}) for c in configs]
    if options.protocol == "simple-evals":
        configs = [_simple_evals_judge(c, grading) for c in configs]
    seen: dict[str, int] = {}
    unique = []
    for config in configs:  # the same judge twice (a same-model ensemble) gets #2, #3 ...
        n = seen[config.judge_id] = seen.get(config.judge_id, 0) + 1
        unique.append(config if n == 1 else config.model_copy(update={"id": f"{config.judge_id}#{n}"}))
    return unique


def _simple_evals_judge(config: Any, grading: GradingConfig) -> Any:
    """``--protocol simple-evals``: the judge sends simple-evals' exact grader request."""
    if not grading.healthbench:
        raise ConfigError("--protocol simple-evals grades HealthBench (--healthbench): it is "
                          "simple-evals' grader request")
    if config.wire != "openai":
        raise ConfigError(f"--protocol simple-evals: judge {config.judge_id!r} is not an "
                          "OpenAI-compatible endpoint (simple-evals' grader calls chat "
                          "completions)")
    return config.model_copy(update={"structured": "simple-evals"})


def _with_sampling_defaults(config: Any, defaults: dict[str, Any], origins: dict[str, str]) -> Any:
    """The templates' sampling settings (e.g. simple-evals' temperature 0.5 and max_tokens
    2048 for HealthBench) where the judge's own config leaves them unset, each with where it
    came from (a reply cut at that max_tokens names it)."""
    update = {k: v for k, v in defaults.items() if getattr(config, k) is None}
    if not update:
        return config
    return config.with_defaults(update, {k: origins[k] for k in update if k in origins})


def _dict_digest(mapping: dict[str, str] | None) -> str:
    return hashlib.sha256(json.dumps(mapping, sort_keys=True).encode()).hexdigest()


def _pools(options: RunOptions) -> tuple[dict[str, list[Example]], str | None]:
    if not options.few_shot_labels:
        return {}, None
    from assay.io import iter_items
    from assay.io.verdicts import read_verdicts

    items = list(iter_items(options.few_shot_items)) if options.few_shot_items else []
    labels = read_verdicts(options.few_shot_labels)
    digest = file_sha256(options.few_shot_labels) + (
        file_sha256(options.few_shot_items) if options.few_shot_items else "")
    return pools_from_labelled_items(items, labels), digest
