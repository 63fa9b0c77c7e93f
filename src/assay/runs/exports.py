"""Exports of a run: verdict JSONL (what ``assay score`` reads), CSV, Parquet, DataFrame.

CSV cells that a spreadsheet would run as a formula are neutralised (:func:`csv_safe`).

Two granularities: the final verdicts (one row per item × criterion, after aggregating the
judges) and the votes (one row per item × criterion × judge). The JSONL lines are
:class:`~assay.verdict.Verdict` objects, so an exported file scores the same with
``assay score VERDICTS.jsonl --rubric ...``.

Example (see tests/runs)::

    frame = verdict_frame("runs/my-run")           # pandas DataFrame of final verdicts
    export("runs/my-run", "verdicts.parquet")
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay.runs.results import Scoring, iter_final_verdicts
from assay.runs.store import RunStore
from assay.verdict import Verdict

FORMATS = ("jsonl", "csv", "parquet")


def iter_verdicts(store: RunStore, scoring: Scoring, *, votes: bool = False) -> Iterator[Verdict]:
    """Final verdicts (or every judge's vote with ``votes=True``) of the finished items."""
    for _, rubric, finals in iter_final_verdicts(store, scoring):
        for criterion in rubric.criteria:
            result = finals[criterion.id]
            if votes:
                yield from (v.verdict for v in result.votes)
            elif result.verdict is not None:
                yield result.verdict


def iter_rows(store: RunStore, scoring: Scoring, *, votes: bool = False) -> Iterator[dict[str, Any]]:
    from assay.scoring import criterion_value

    for item, rubric, finals in iter_final_verdicts(store, scoring):
        for criterion in rubric.criteria:
            result = finals[criterion.id]
            base = {"item_id": item.id, "criterion_id": criterion.id, "criterion": criterion.text,
                    "kind": criterion.kind.value, "weight": criterion.weight, "axis": criterion.axis}
            chosen = [v.verdict for v in result.votes] if votes else [result.verdict]
            for verdict in chosen:
                yield {
                    **base,
                    "judge": verdict.judge if verdict else None,
                    "verdict": verdict.decision.value if verdict and verdict.decision else None,
                    "option": verdict.option if verdict else None,
                    "value": criterion_value(criterion, verdict, scoring.abstention),
                    "agreement": result.agreement,
                    "n_votes": len(result.votes),
                    "explanation": verdict.explanation if verdict else None,
                }


def verdict_frame(run: str | Path | RunStore, scoring: Scoring | None = None, *, votes: bool = False):
    """A pandas DataFrame of the run's final verdicts (or votes)."""
    import pandas as pd

    store = run if isinstance(run, RunStore) else RunStore.open(run)
    try:
        scoring = scoring or Scoring.from_config(store.config())
        columns = ["item_id", "criterion_id", "criterion", "kind", "weight", "axis", "judge",
                   "verdict", "option", "value", "agreement", "n_votes", "explanation"]
        return pd.DataFrame(list(iter_rows(store, scoring, votes=votes)), columns=columns)
    finally:
        if not isinstance(run, RunStore):
            store.close()


FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(frame):
    r"""A copy of ``frame`` whose text cells cannot run as spreadsheet formulas: a cell starting
    with ``= + - @``, tab or CR gets a leading ``'`` (OWASP's advice against CSV injection).
    Numbers are left alone, so a weight of -3 stays a number.

    >>> import pandas as pd
    >>> csv_safe(pd.DataFrame({"t": ['=HYPERLINK("http://x")', "fine"], "w": [-3, 1]})).t.tolist()
    ['\'=HYPERLINK("http://x")', 'fine']
    """
    import pandas as pd

    out = frame.copy()
    for column in out.columns:
        if not pd.api.types.is_numeric_dtype(out[column]):
            out[column] = out[column].map(
                lambda v: "'" + v if isinstance(v, str) and v.startswith(FORMULA_PREFIXES) else v)
    return out


def export(run: str | Path | RunStore, path: str | Path, *, votes: bool = False,
           scoring: Scoring | None = None) -> int:
    """Write the run's verdicts to ``path``; the format comes from the extension. Returns rows."""
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        from assay.errors import ConfigError

        raise ConfigError(f"{path}: cannot export to .{fmt}; use one of {', '.join(FORMATS)}")
    store = run if isinstance(run, RunStore) else RunStore.open(run)
    try:
        scoring = scoring or Scoring.from_config(store.config())
        path.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "jsonl":
            n = 0
            with path.open("w", encoding="utf-8") as out:
                for verdict in iter_verdicts(store, scoring, votes=votes):
                    out.write(verdict.model_dump_json(exclude_none=True) + "\n")
                    n += 1
            return n
        frame = verdict_frame(store, scoring, votes=votes)
        if fmt == "csv":
            csv_safe(frame).to_csv(path, index=False)
        else:
            frame.to_parquet(path, index=False)
        return len(frame)
    finally:
        if not isinstance(run, RunStore):
            store.close()
