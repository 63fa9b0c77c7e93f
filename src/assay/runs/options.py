"""The options of a grading run: one typed, validated :class:`RunOptions`.

``assay grade`` and :func:`assay.grade` both build a :class:`RunOptions` (through
:meth:`RunOptions.build`, which also reads a template name or a rubric file), the runner takes
it, and the run's config (the part whose hash identifies the run, see
:mod:`assay.runs.manifest`) is derived from it. Each field has one Python name in every layer;
its command-line flag (``--abstain`` for ``abstention``, ``--budget`` for ``budget_usd``) is
declared beside it and names the field in errors.

The fields are of two kinds. *Config* fields define the run: they change a judge call or a
score, are stored with the run (``--resume RUN`` alone restores them) and must not change on a
resume. *Operational* fields (:meth:`RunOptions.operational_fields`: where the run goes, budget,
concurrency, cache, executor) only say how this session runs and may change on a resume.

A bad value is an :class:`~assay.errors.InputError` (a ``ValueError``) naming the flag, with
every bad field listed at once:

    >>> RunOptions(abstention="partial:0.3", budget_usd=2).scoring_config()["abstention"]
    'partial:0.3'
    >>> try:
    ...     RunOptions(formula="bogus", seed=-1)
    ... except InputError as exc:
    ...     print(exc)
    <input>: --seed: expected a whole number >= 0, got -1
    <input>: --formula: unknown formula 'bogus' (known: autorubric, raw, healthbench, pass-rate, reward)
    >>> sorted(RunOptions.operational_fields())[:3]
    ['batch_poll_s', 'batch_retry', 'budget_usd']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from assay.errors import AssayError, InputError, Issue
from assay.grading.fewshot import FewShot
from assay.grading.grader import GradingConfig, Mode
from assay.judges.config import MAX_REASKS, JudgeConfig
from assay.rubric import Rubric
from assay.scoring import Abstention, Formula

Executor = Literal["local", "ray", "batch"]
MAX_FINAL_PASSES = 10  # the most final passes a run may be set to make


@dataclass(frozen=True)
class Flag:
    """A field's command-line flag, and whether the field is operational (not part of the run)."""

    name: str
    operational: bool = False


def _operational(flag: str) -> Flag:
    return Flag(flag, operational=True)


class RunOptions(BaseModel):
    """Everything a run needs besides its items (see :func:`assay.grade` for the meaning).

    >>> options = RunOptions(judges=["openai:gpt-4.1-mini"], aggregation="any", concurrency=8)
    >>> options.replace(concurrency=2).concurrency, options.scoring_config()["aggregation"]
    (2, 'binary=any,ordinal=mean,nominal=mode')
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    # config: what the run is (stored with it; hashed as content; fixed on resume)
    judges: Annotated[list[str | JudgeConfig], Flag("--judge")] = []  # specs or JudgeConfigs
    weights: Annotated[list[Annotated[float, Field(ge=0)]] | None, Flag("--weight")] = None
    rubric: Annotated[Rubric | None, Flag("--rubric")] = None
    rubric_path: Annotated[str | None, Flag("--rubric")] = None  # where `rubric` was read from
    mode: Annotated[Mode, Flag("--mode")] = "per-criterion"
    templates: Annotated[dict[str, str], Flag("--template")] = {}  # slot -> name or file
    shuffle: Annotated[bool, Flag("--shuffle")] = True
    seed: Annotated[int, Field(ge=0, strict=True), Flag("--seed")] = 0
    few_shot: Annotated[FewShot | None, Flag("--few-shot")] = None
    few_shot_items: Annotated[str | None, Flag("--few-shot-items")] = None
    few_shot_labels: Annotated[str | None, Flag("--few-shot-labels")] = None
    aggregation: Annotated[str, Flag("--aggregate")] = "majority,ordinal=mean,nominal=mode"
    abstention: Annotated[str, Flag("--abstain")] = "skip"  # skip | zero | partial[:F] | fail
    formula: Annotated[Formula, Flag("--formula")] = "autorubric"
    # assay: Assay's requests (JSON mode, re-asks quoting the error); simple-evals: HealthBench
    # grading with simple-evals' exact request and reply rule (assay.judges.simple_evals)
    protocol: Annotated[Literal["assay", "simple-evals"], Flag("--protocol")] = "assay"
    # re-asks of a reply that does not parse, for every judge (None: each judge's own, 2)
    max_reasks: Annotated[int | None, Field(ge=0, le=MAX_REASKS, strict=True),
                          Flag("--max-reasks")] = None
    # which repeat of `assay grade --repeats R` this run is (0 to R-1; see assay.runs.repeats)
    repeat: Annotated[int, Field(ge=0, strict=True), Flag("--repeats")] = 0
    # an evaluator role header, sent as the system message of every judge call (see GradingConfig)
    role: Annotated[str | None, Flag("--role")] = None
    # operational: how this session runs (may change on resume)
    run_dir: Annotated[str | None, _operational("--run-dir")] = None
    budget_usd: Annotated[float | None, Field(ge=0), _operational("--budget")] = None
    concurrency: Annotated[int | None, Field(ge=1, strict=True), _operational("--concurrency")] = None
    cache_path: Annotated[str | None, _operational("--cache")] = None
    quiet: Annotated[bool, _operational("--quiet")] = True
    judge_config_file: Annotated[str | None, _operational("--config")] = None
    executor: Annotated[Executor, _operational("--executor")] = "local"  # see assay.distributed
    ray_address: Annotated[str | None, _operational("--ray-address")] = None  # default: local Ray
    workers: Annotated[int | None, Field(ge=1, strict=True), _operational("--workers")] = None
    # --executor batch (assay.judges.batch_judge): a failed or expired request is asked again
    # in a new batch or live; how often a pending batch is polled
    batch_retry: Annotated[Literal["batch", "live"], _operational("--batch-retry")] = "batch"
    batch_poll_s: Annotated[float, Field(gt=0), _operational("--batch-poll-s")] = 30.0
    # failed calls asked again once every call has been sent, before the status is decided
    # (assay.runs.engine: transient faults and unparsed replies only); 0: none
    final_passes: Annotated[int, Field(ge=0, le=MAX_FINAL_PASSES, strict=True),
                            _operational("--final-passes")] = 1

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise InputError(_issues(exc)) from None

    @classmethod
    def build(cls, *, template: str | Mapping[str, str] | Sequence[str] | None = None,
              healthbench: bool = False, rubric: str | Path | Rubric | Mapping[str, Any] | None
              = None, few_shot: int | FewShot | None = None, formula: str | None = None,
              **fields: Any) -> RunOptions:
        """Options from what a user gives (``assay grade`` and :func:`assay.grade`): a template
        name, file, ``SLOT=FILE`` list or slot mapping (:func:`templates_for`), HealthBench mode
        (its template and formula unless others are given), a rubric file, object or dict, a
        few-shot count; every other field as itself."""
        loaded, path = load_rubric(rubric)
        if isinstance(few_shot, int) and not isinstance(few_shot, bool):
            few_shot = FewShot(n=few_shot) if few_shot else None
        return cls(templates=templates_for(template, healthbench, fields.get("mode", "per-criterion")),
                   rubric=loaded, rubric_path=path, few_shot=few_shot,
                   formula=formula or ("healthbench" if healthbench else "autorubric"), **fields)

    @classmethod
    def operational_fields(cls) -> tuple[str, ...]:
        """The fields that may change on a resume (not part of the run's identity)."""
        return tuple(name for name, flag in _flags(cls).items() if flag.operational)

    @classmethod
    def config_fields(cls) -> tuple[str, ...]:
        """The fields that define the run (stored with it, fixed on resume)."""
        return tuple(name for name, flag in _flags(cls).items() if not flag.operational)

    @classmethod
    def flag(cls, name: str) -> str:
        """The command-line flag of field ``name``: ``RunOptions.flag("budget_usd") == "--budget"``."""
        return _flags(cls)[name].name

    def operational(self) -> dict[str, Any]:
        """This session's operational settings, to carry over to restored options."""
        return {name: getattr(self, name) for name in self.operational_fields()}

    def replace(self, **changes: Any) -> RunOptions:
        """A validated copy with ``changes``."""
        return type(self)(**{**{name: getattr(self, name) for name in type(self).model_fields},
                             **changes})

    def grading_config(self) -> GradingConfig:
        """What shapes the judge calls (the ``grading`` part of the run's config)."""
        return GradingConfig(mode=self.mode, templates=self.templates, shuffle=self.shuffle,
                             seed=self.seed, few_shot=self.few_shot, repeat=self.repeat,
                             role=self.role)

    def scoring_config(self) -> dict[str, str]:
        """How votes become scores (the ``scoring`` part of the run's config)."""
        from assay.grading.aggregate import Aggregation

        return {"aggregation": str(Aggregation.parse(self.aggregation)),
                "abstention": self.abstention, "formula": self.formula}

    @field_validator("mode", "formula", "executor", "batch_retry", mode="before")
    @classmethod
    def _one_of(cls, value: Any, info: Any) -> Any:
        choices = get_args(cls.model_fields[info.field_name].annotation)
        if value not in choices:
            raise ValueError(_UNKNOWN[info.field_name].format(value=value, known=", ".join(choices)))
        return value

    @field_validator("aggregation")
    @classmethod
    def _aggregation(cls, value: str) -> str:
        from assay.grading.aggregate import Aggregation

        try:
            Aggregation.parse(value)
        except AssayError as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("abstention")
    @classmethod
    def _abstention(cls, value: str) -> str:
        Abstention.parse(value)  # a ValueError names the strategies
        return value

    @field_validator("weights", mode="before")
    @classmethod
    def _no_weights(cls, value: Any) -> Any:
        return None if value is not None and len(value) == 0 else value

    @field_validator("rubric_path", "few_shot_items", "few_shot_labels", "run_dir", "cache_path",
                     "judge_config_file", mode="before")
    @classmethod
    def _path_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, Path) else value

    @model_validator(mode="after")
    def _consistent(self) -> RunOptions:
        if self.weights is not None and self.judges and len(self.weights) != len(self.judges):
            raise InputError(Issue(None, None, "--weight", f"{len(self.weights)} weights for "
                                                          f"{len(self.judges)} judges"))
        if self.executor != "ray" and (self.workers is not None or self.ray_address):
            raise InputError(Issue(None, None, "--executor",
                                   "--workers and --ray-address need --executor ray"))
        if self.executor == "batch" and self.budget_usd is not None:
            raise InputError(Issue(None, None, "--budget", "not supported with --executor batch "
                                   "(a batch is paid when it ends; --dry-run shows its price)"))
        return self


_UNKNOWN = {
    "mode": "unknown call mode {value!r}; use per-criterion or per-item",
    "formula": "unknown formula {value!r} (known: {known})",
    "executor": "expected local, ray or batch, got {value!r}",
    "batch_retry": "expected batch (a new batch) or live, got {value!r}",
}


def _flags(cls: type[RunOptions]) -> dict[str, Flag]:
    return {name: next(m for m in info.metadata if isinstance(m, Flag))
            for name, info in cls.model_fields.items()}


def _issues(exc: ValidationError) -> list[Issue]:
    """Pydantic's errors as issues naming the flag, in words a user reads."""
    issues: list[Issue] = []
    for error in exc.errors():
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, InputError):
            issues.extend(cause.issues)
            continue
        name = str(error["loc"][0]) if error["loc"] else None
        flag = RunOptions.flag(name) if name in RunOptions.model_fields else name
        issues.append(Issue(None, None, flag, _message(error, cause, name)))
    return issues


def _message(error: Any, cause: Any, name: str | None) -> str:
    value, kind = error.get("input"), error["type"]
    annotation = RunOptions.model_fields[name].annotation if name in RunOptions.model_fields else None
    if cause is not None:
        return str(cause)
    if kind in ("greater_than_equal", "greater_than", "less_than_equal"):
        bound = error["ctx"].get("ge", error["ctx"].get("gt", error["ctx"].get("le")))
        sign = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<="}[kind]
        number = "a whole number" if int in (annotation, *get_args(annotation)) else "a number"
        return f"expected {number} {sign} {bound:g}, got {value!r}"
    if kind.startswith("int_"):
        return f"expected a whole number, got {value!r}"
    if kind.startswith("float_"):
        return f"expected a number, got {value!r}"
    if kind == "extra_forbidden":
        return "not a run option"
    return f"{error['msg']}, got {value!r}"


def load_rubric(rubric: str | Path | Rubric | Mapping[str, Any] | None
                ) -> tuple[Rubric | None, str | None]:
    """A run-wide rubric and the file it came from: a file is read (its problems are an
    InputError naming file, line and field), a dict validated, a Rubric kept; ``single-axis``
    and ``multi-axes`` are Health-SCORE's baseline rubrics (:mod:`assay.bank.baselines`)."""
    if rubric is None or isinstance(rubric, Rubric):
        return rubric, None
    from assay.bank.baselines import BASELINE_BANKS, baseline_rubric

    if str(rubric) in BASELINE_BANKS:  # a rubric file always has an extension
        return baseline_rubric(str(rubric)), str(rubric)
    if isinstance(rubric, (str, Path)):
        from assay.io import read_rubric

        return read_rubric(rubric), str(rubric)
    return Rubric.model_validate(rubric), None


def templates_for(template: str | Mapping[str, str] | Sequence[str] | None, healthbench: bool,
                  mode: str) -> dict[str, str]:
    """A template argument as slots: ``healthbench``, ``auditor``, a file (it serves binary
    criteria, or per-item calls), ``{slot: file}``, or a list of those and ``SLOT=FILE``
    (``--template`` repeated). HealthBench mode defaults to its own template.

    >>> templates_for(None, True, "per-criterion"), templates_for("auditor", False, "per-item")
    ({'all': 'healthbench'}, {'binary': 'auditor'})
    """
    if template is None:
        return {"all": "healthbench"} if healthbench else {}
    if isinstance(template, Mapping):
        return {k: str(Path(v).resolve()) if Path(v).suffix else str(v) for k, v in template.items()}
    if not isinstance(template, str):  # --template repeated
        templates: dict[str, str] = {}
        for value in template:
            if "=" in value:
                slot, file = value.split("=", 1)
                templates[slot.strip()] = str(Path(file).resolve())
            else:
                templates.update(templates_for(value, healthbench, mode))
        return templates or templates_for(None, healthbench, mode)
    if template == "healthbench":
        return {"all": "healthbench"}
    if template == "auditor" or template.startswith("auditor:"):
        # RubricsTree's auditor (auditor:ROLE: one of its evaluator roles): one binary
        # criterion per call
        return {"binary": template}
    from assay.grading.templates import load_template

    path = str(Path(template).resolve())
    if healthbench or load_template(path).style == "healthbench":
        return {"all": path}
    return {"per_item" if mode == "per-item" else "binary": path}
