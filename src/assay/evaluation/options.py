"""The options of an evaluation: one typed, validated :class:`EvalOptions`.

``assay eval`` and :func:`assay.evaluate` both build an :class:`EvalOptions`; the eval run
stores its settings in ``RUN/eval.json`` and its stages take theirs from it. Each field has one
Python name in every layer, and its flag (``--judge`` for ``judges``) is declared beside it.

A field is either a *setting* of one stage (``items``: which items are evaluated; ``sample``:
how the model under test is asked; ``grade``: how its answers are graded) or *operational*
(where the eval goes, budget, concurrency, cache, executor: how this session runs; it may change
on a resume). A setting may change on the same run directory only while the stage it belongs to
has made no call that a provider answered (:mod:`assay.evaluation.rundir`).

    >>> options = EvalOptions(model="openai:gpt-4.1-mini", judges=["openai:gpt-4.1"], n=4)
    >>> options.settings()["n"], EvalOptions.stage_of("judges"), EvalOptions.stage_of("budget")
    (4, 'grade', None)
    >>> try:
    ...     EvalOptions(n=0, executor="cluster")
    ... except InputError as exc:
    ...     print(exc)
    <input>: --n: expected a whole number >= 1, got 0
    <input>: --executor: expected local, batch or ray, got 'cluster'
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from assay.errors import InputError, Issue

Stage = Literal["items", "sample", "grade"]
STAGES: tuple[Stage, ...] = ("items", "sample", "grade")  # in the order they run
Protocol = Literal["assay", "simple-evals"]
Executor = Literal["local", "batch", "ray"]


@dataclass(frozen=True)
class Part:
    """A field's flag, and the stage whose setting it is (None: operational)."""

    flag: str
    stage: Stage | None = None


class EvalOptions(BaseModel):
    """Everything an eval needs besides its items (see :func:`assay.evaluate`).

    >>> EvalOptions(model="m", judges=["j"]).replace(concurrency=8).concurrency
    8
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    # items: which items are evaluated
    healthbench: Annotated[bool, Part("--healthbench", "items")] = False
    subset: Annotated[Literal["all", "hard", "consensus"], Part("--subset", "items")] = "all"
    examples: Annotated[int | None, Field(ge=1, strict=True), Part("--examples", "items")] = None
    seed: Annotated[int, Field(strict=True), Part("--seed", "items")] = 0
    # sample: how the model under test is asked
    model: Annotated[str | None, Part("--model", "sample")] = None
    n: Annotated[int, Field(ge=1, strict=True), Part("--n", "sample")] = 1
    temperature: Annotated[float | None, Part("--temperature", "sample")] = None
    max_tokens: Annotated[int | None, Field(ge=1, strict=True), Part("--max-tokens", "sample")] = None
    sampling_seed: Annotated[int | None, Part("--sampling-seed", "sample")] = None
    reasoning_effort: Annotated[str | None, Part("--reasoning-effort", "sample")] = None
    system: Annotated[str | None, Part("--system", "sample")] = None
    # one condition per eval; two (a list) make two evals compared (assay.evaluation.conditions)
    condition: Annotated[str | list[str] | None, Part("--condition", "sample")] = None
    bank: Annotated[str | None, Part("--bank", "sample")] = None
    selection: Annotated[str | None, Part("--selection", "sample")] = None
    taxonomy: Annotated[str | None, Part("--taxonomy", "sample")] = None
    # the judge config file names the model under test and the judges (assay.toml)
    config_file: Annotated[str | None, Part("--config", "sample")] = None
    # assay: Assay's requests; simple-evals: simple-evals' sampler for the model under test and
    # its grader request for the judges, byte for byte (assay.sampling.simple_evals)
    protocol: Annotated[Protocol, Part("--protocol", "sample")] = "assay"
    # grade: how the answers are graded
    judges: Annotated[list[str], Part("--judge", "grade")] = []
    rubric: Annotated[str | None, Part("--rubric", "grade")] = None
    # operational: how this session runs
    run_dir: Annotated[str | None, Part("--run-dir")] = None
    data_root: Annotated[str | None, Part("--data-dir")] = None
    budget: Annotated[float | None, Field(ge=0), Part("--budget")] = None
    concurrency: Annotated[int | None, Field(ge=1, strict=True), Part("--concurrency")] = None
    cache: Annotated[str | None, Part("--cache")] = None
    report: Annotated[bool, Part("--no-report")] = True
    progress: Annotated[bool, Part("--quiet")] = False
    # None: local for a new eval; a resumed one keeps the executor it was started with
    executor: Annotated[Executor | None, Part("--executor")] = None
    workers: Annotated[int | None, Field(ge=1, strict=True), Part("--workers")] = None
    ray_address: Annotated[str | None, Part("--ray-address")] = None
    batch_retry: Annotated[Literal["batch", "live"], Part("--batch-retry")] = "batch"
    batch_poll_s: Annotated[float, Field(gt=0), Part("--batch-poll-s")] = 30.0

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise InputError(_issues(exc)) from None

    @classmethod
    def stage_of(cls, name: str) -> Stage | None:
        """The stage whose setting field ``name`` is (None: an operational field)."""
        return _parts()[name].stage

    @classmethod
    def flag(cls, name: str) -> str:
        return _parts()[name].flag

    @classmethod
    def setting_fields(cls) -> tuple[str, ...]:
        return tuple(name for name, part in _parts().items() if part.stage is not None)

    @classmethod
    def operational_fields(cls) -> tuple[str, ...]:
        return tuple(name for name, part in _parts().items() if part.stage is None)

    def settings(self) -> dict[str, Any]:
        """The settings as stored in ``eval.json`` (files as absolute paths: a resume may run
        from elsewhere; built-in names as they are)."""
        out = {name: getattr(self, name) for name in self.setting_fields()}
        for name in ("system", "bank", "selection", "taxonomy", "rubric", "config_file"):
            out[name] = _path_or_name(out[name])
        out["judges"] = list(self.judges)
        return out

    def operational(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.operational_fields()}

    def replace(self, **changes: Any) -> EvalOptions:
        """A validated copy with ``changes``."""
        return type(self)(**{**{name: getattr(self, name) for name in type(self).model_fields},
                             **changes})

    @field_validator("system", "bank", "selection", "taxonomy", "rubric", "config_file",
                     "run_dir", "data_root", "cache", mode="before")
    @classmethod
    def _path_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, Path) else value

    @field_validator("judges", mode="before")
    @classmethod
    def _judge_list(cls, value: Any) -> Any:
        return [] if value is None else [value] if isinstance(value, str) else list(value)

    @field_validator("condition", mode="before")
    @classmethod
    def _one_condition(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return None if not value else value[0] if len(value) == 1 else list(value)
        return value


_UNKNOWN = {"executor": "expected local, batch or ray", "protocol": "expected assay or "
            "simple-evals", "subset": "expected all, hard or consensus",
            "batch_retry": "expected batch (a new batch) or live"}


def _parts() -> dict[str, Part]:
    return {name: next(m for m in info.metadata if isinstance(m, Part))
            for name, info in EvalOptions.model_fields.items()}


def _issues(exc: ValidationError) -> list[Issue]:
    """Pydantic's errors as issues naming the flag, in words a user reads."""
    issues = []
    for error in exc.errors():
        name = str(error["loc"][0]) if error["loc"] else None
        flag = EvalOptions.flag(name) if name in EvalOptions.model_fields else name
        value, kind = error.get("input"), error["type"]
        if kind == "literal_error" and name in _UNKNOWN:
            message = f"{_UNKNOWN[name]}, got {value!r}"
        elif kind in ("greater_than_equal", "greater_than"):
            bound = error["ctx"].get("ge", error["ctx"].get("gt"))
            sign = ">=" if kind == "greater_than_equal" else ">"
            number = "a whole number" if isinstance(bound, int) else "a number"
            message = f"expected {number} {sign} {bound:g}, got {value!r}"
        elif kind == "extra_forbidden":
            message = "not an eval option"
        else:
            message = f"{error['msg']}, got {value!r}"
        issues.append(Issue(None, None, flag, message))
    return issues


def _path_or_name(value: str | None) -> str | None:
    """A file as its absolute path; a built-in name (``starter``, ``multi-axes``) as it is."""
    if value is None:
        return None
    return str(Path(value).resolve()) if Path(value).exists() else value
