"""The work behind ``assay score`` (imported only when the command runs)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from assay.cli.command import dump_json, report
from assay.cli.output import abstention_option
from assay.errors import InputError, Issue
from assay.io import load_items, read_rubric_file, read_verdicts
from assay.scoring import FORMULAS, Abstention, ItemRubrics, LengthPenalty, ScoreTable, score_items


def run_score(*, source: Path, rubric: Path | None, formula: str | None, abstain: str | None,
              judge: str | None, reward_normalization: str | None, length_penalty: str | None,
              items: Path | None, aggregate: str | None, seed: int | None,
              json_out: Path | None, export: Sequence[Path] = (), votes: bool = False,
              require_complete: bool = False) -> None:
    """Settings left as None keep a run's own (or take the file defaults); a setting that
    cannot apply is refused, never ignored. A run that is not complete is named first (an
    error with ``require_complete``, before anything is written)."""
    from assay.cli.run_status import statuses_of, warnings, with_status

    statuses: list = []

    def compute() -> tuple[ScoreTable, list[str]]:
        statuses.extend(statuses_of([source], require_complete=require_complete))
        if formula is not None and formula not in FORMULAS:
            raise InputError(Issue(None, None, "--formula",
                                   f"unknown formula {formula!r} (known: {', '.join(FORMULAS)})"))
        abstention = None if abstain is None else abstention_option(abstain)
        penalty = _parse(lambda: _length_penalty(length_penalty), "--length-penalty")
        if source.is_dir():
            _refuse_file_options(source, rubric=rubric, items=items)
            return _rescore_run(
                source, formula=formula, abstention=abstention, aggregate=aggregate, seed=seed,
                reward_normalization=reward_normalization, penalty=penalty, judge=judge,
                export=export, votes=votes)
        _refuse_run_options(source, aggregate=aggregate, export=export, votes=votes)
        return _score_file(source, rubric, formula=formula or "autorubric",
                           abstention=abstention or Abstention(), judge=judge,
                           reward_normalization=reward_normalization, penalty=penalty,
                           items=items, seed=0 if seed is None else seed), []

    def show(result: tuple[ScoreTable, list[str]]):
        from assay.cli.tables.score import score_tables

        table, exported = result
        return [*warnings(statuses), *score_tables(table), *exported]

    report(compute, show, json_out=json_out,
           dump=lambda result: dump_json(with_status(result[0].to_dict(), statuses)))


def _refuse_file_options(run: Path, *, rubric: Path | None, items: Path | None) -> None:
    for option, value in (("--rubric", rubric), ("--items", items)):
        if value is not None:
            raise InputError(Issue(str(run), None, option,
                                   f"{option} is for verdict files: a run scores with the "
                                   "rubrics and responses it stored"))


def _refuse_run_options(source: Path, *, aggregate: str | None, export: Sequence[Path],
                        votes: bool) -> None:
    for option, given in (("--aggregate", aggregate is not None), ("--export", bool(export)),
                          ("--votes", votes)):
        if given:
            raise InputError(Issue(str(source), None, option,
                                   f"{option} is for a run directory; {source.name} is a "
                                   "verdict file"))


def _score_file(source: Path, rubric_path: Path | None, *, formula, abstention, judge,
                reward_normalization, penalty, items, seed) -> ScoreTable:
    if rubric_path is None:
        raise InputError(Issue(None, None, "--rubric", "scoring a verdict file needs --rubric"))
    if reward_normalization is not None and formula != "reward":
        raise InputError(Issue(None, None, "--reward-normalization",
                               f"applies to the reward formula only, not {formula!r} "
                               "(add --formula reward)"))
    verdicts = read_verdicts(source)
    if judge is not None:
        verdicts = [v for v in verdicts if v.judge == judge]
        if not verdicts:
            raise InputError(Issue(str(source), None, "judge", f"no verdicts from judge {judge!r}"))
    found = read_rubric_file(rubric_path)
    responses = found.responses
    if items is not None:
        responses = {i.id: i.response or "" for i in load_items(items)}
    if penalty is not None and not responses:
        raise InputError(Issue(None, None, "--length-penalty",
                               "needs the responses: pass --items (or an items file as --rubric)"))
    rubrics = ItemRubrics(shared=found.shared, per_item=found.per_item)
    return score_items(verdicts, rubrics, formula=formula, abstention=abstention,
                       length_penalty=penalty, responses=responses,
                       reward_normalization=reward_normalization or "minmax",
                       example_tags=found.tags or None,
                       seed=seed)


def _rescore_run(run: Path, *, formula, abstention, aggregate, seed, reward_normalization,
                 penalty, judge, export, votes) -> tuple[ScoreTable, list[str]]:
    try:
        from assay.runs import RunStore, score_run
        from assay.runs.exports import FORMATS
        from assay.runs.exports import export as export_run
        from assay.runs.results import run_scoring
    except ImportError:
        raise InputError(Issue(str(run), None, None, "is a directory, not a verdict file")) from None
    if votes and not export:
        raise InputError(Issue(None, None, "--votes", "goes with --export FILE"))
    for path in export:  # before any work, so a typo costs nothing
        if path.suffix.lower().lstrip(".") not in FORMATS:
            raise InputError(Issue(str(path), None, "--export",
                                   f"cannot export to {path.suffix or 'a file without extension'};"
                                   f" use .{', .'.join(FORMATS)}"))
    store = RunStore.open(run)
    try:
        scoring = run_scoring(store.config(), source=str(run), aggregation=aggregate,
                              abstention=abstention, formula=formula, seed=seed,
                              reward_normalization=reward_normalization, length_penalty=penalty,
                              judge=judge)
        table = score_run(store, scoring).table
        written = [f"exported {export_run(store, path, votes=votes, scoring=scoring)} rows to "
                   f"{path}" for path in export]
    finally:
        store.close()
    return table, written


def _parse(make, option: str):
    try:
        return make()
    except ValueError as exc:
        raise InputError(Issue(None, None, option, str(exc))) from None


def _length_penalty(text: str | None) -> LengthPenalty | None:
    if not text:
        return None
    parts = [p.strip() for p in text.split(",")]
    if not 2 <= len(parts) <= 4:
        raise ValueError("expected FREE,CAP[,PENALTY[,EXPONENT]]")
    free, cap = int(parts[0]), int(parts[1])
    rest = [float(p) for p in parts[2:]]
    return LengthPenalty(free, cap, *rest)
