"""The tables of ``assay agreement`` and ``assay compare``: agreement summaries, comparisons,
and the items that changed between two verdict sets (``assay compare --items``).

Undefined figures print as "—"; their reasons are in the JSON output.
"""

from __future__ import annotations

from typing import Any

from assay.cli.tables.cells import fmt, fmt_test, new_table
from assay.metrics.agreement_report import AgreementReport, PooledAgreement
from assay.metrics.compare import ComparisonReport
from assay.metrics.item_changes import ItemChange
from assay.metrics.summary import AgreementSummary


def pooled_table(summary: AgreementSummary) -> Any:
    table = new_table(
        "Agreement with human labels (pooled)",
        ["judge", "pairs", "accuracy", "κ binary", "mean κ", "precision", "recall", "F1",
         "N/A h/j", "missing"],
    )
    for r in summary.reports:
        p = r.pooled
        table.add_row(
            r.judge, str(p.n), fmt(p.accuracy), fmt(p.binary.kappa), fmt(p.mean_kappa),
            fmt(p.binary.precision), fmt(p.binary.recall), fmt(p.binary.f1),
            f"{p.na.n_na_true}/{p.na.n_na_pred}", str(r.missing_verdicts),
        )
    return table


def score_table(summary: AgreementSummary) -> Any:
    table = new_table(f"Score-level agreement (formula: {summary.formula})",
                      ["judge", "items", "partly labelled", "Pearson", "Spearman", "Kendall",
                       "RMSE", "MAE", "bias", "bias t-test"])
    partly = 0
    for r in summary.reports:
        s = r.scores
        if s is None:
            continue
        partly = max(partly, s.partly_labelled)
        table.add_row(r.judge, str(s.n), str(s.partly_labelled), fmt(s.pearson), fmt(s.spearman),
                      fmt(s.kendall), fmt(s.rmse), fmt(s.mae), fmt(s.bias, "+.3f"),
                      fmt_test(s.bias_test))
    if partly:
        table.caption = ("partly labelled: items whose labels cover only some of the criteria "
                         "judged; both scores of such an item use only the labelled criteria")
    return table


def axis_table(report: AgreementReport) -> Any:
    table = new_table(f"Per axis — {report.judge}",
                      ["axis", "criteria", "pairs", "accuracy", "mean κ", "κ binary", "F1"])
    rows: dict[str, PooledAgreement] = report.per_axis
    for axis, p in rows.items():
        table.add_row(axis, str(p.n_criteria), str(p.n), fmt(p.accuracy), fmt(p.mean_kappa),
                      fmt(p.binary.kappa), fmt(p.binary.f1))
    return table


def criterion_table(report: AgreementReport, max_rows: int) -> Any:
    table = new_table(
        f"Per criterion — {report.judge}",
        ["criterion", "kind", "axis", "n", "accuracy", "κ", "F1 / adjacent", "ρ / EMD", "N/A"],
    )
    for c in report.per_criterion[:max_rows]:
        if c.ordinal is not None:
            extra = (fmt(c.ordinal.adjacent_accuracy),
                     f"{fmt(c.ordinal.spearman)} / {fmt(c.ordinal.emd)}")
        elif c.binary is not None:
            extra = (fmt(c.binary.f1), "")
        else:
            extra = ("", "")
        table.add_row(c.criterion_id, c.kind.value, c.axis or "", str(c.n), fmt(c.accuracy),
                      fmt(c.kappa), *extra, f"{c.na.n_na_true}/{c.na.n_na_pred}")
    hidden = len(report.per_criterion) - max_rows
    if hidden > 0:
        table.caption = f"{hidden} more criteria in the JSON output (--json)"
    return table


def inter_judge_table(summary: AgreementSummary, *, reviewers: bool = False) -> Any | None:
    r = summary.between_reviewers if reviewers else summary.inter_judge
    if r is None:
        return None
    who = "reviewers" if reviewers else "judges"
    table = new_table(f"Between {who} ({', '.join(r.judges)})", ["measure", "value", "n"])
    table.add_row("percent agreement", fmt(r.percent_agreement), str(r.percent_agreement.n))
    table.add_row("Krippendorff α (nominal)", fmt(r.alpha_nominal), str(r.alpha_nominal.n))
    table.add_row("Fleiss κ", fmt(r.fleiss_kappa), str(r.fleiss_kappa.n))
    table.add_row("Gwet AC1", fmt(r.ac1), str(r.ac1.n))
    if r.score_icc:
        for name, m in r.score_icc.items():
            table.add_row(f"score {name}", fmt(m), str(m.n))
    if r.score_alpha_interval is not None:
        table.add_row("score α (interval)", fmt(r.score_alpha_interval),
                      str(r.score_alpha_interval.n))
    table.caption = (f"{r.n_units} (item, criterion) units; chance agreement over the verdict "
                     f"values (MET/UNMET, options); scores by formula {summary.formula}")
    return table


def inter_judge_criteria_table(summary: AgreementSummary, max_rows: int) -> Any | None:
    r = summary.inter_judge
    if r is None:
        return None
    table = new_table("Between judges, per criterion",
                      ["criterion", "units", "α", "α level", "Fleiss κ", "AC1",
                       "percent agreement"])
    rows = list(r.per_criterion.items())
    for criterion_id, c in rows[:max_rows]:
        table.add_row(criterion_id, str(c.n_units), fmt(c.alpha), c.alpha_level,
                      fmt(c.fleiss_kappa), fmt(c.ac1), fmt(c.percent_agreement))
    if len(rows) > max_rows:
        table.caption = f"{len(rows) - max_rows} more criteria in the JSON output (--json)"
    return table


def agreement_tables(summary: AgreementSummary, max_rows: int = 40) -> list[Any]:
    tables = [pooled_table(summary), score_table(summary)] if summary.reports else []
    for report in summary.reports:
        if report.per_axis:
            tables.append(axis_table(report))
        tables.append(criterion_table(report, max_rows))
    for extra in (inter_judge_table(summary), inter_judge_criteria_table(summary, max_rows),
                  inter_judge_table(summary, reviewers=True)):
        if extra is not None:
            tables.append(extra)
    return tables


def comparison_tables(report: ComparisonReport, name_a: str, name_b: str) -> list[Any]:
    s, v = report.scores, report.verdicts
    scores = new_table(f"Scores: A = {name_a}, B = {name_b} ({s.n_items} paired items)",
                       ["measure", "value"])
    scores.caption = f"compared: {report.compared}; formula {report.formula}"
    scores.add_row("mean A", fmt(s.mean_a))
    scores.add_row("mean B", fmt(s.mean_b))
    scores.add_row("mean difference A − B (bootstrap 95% CI)", fmt(s.mean_difference, "+.3f"))
    scores.add_row("Wilcoxon signed-rank", fmt_test(s.wilcoxon))
    scores.add_row("paired permutation", fmt_test(s.permutation))
    scores.add_row("Cohen's d_z", fmt(s.cohens_d, "+.3f"))
    verdicts = new_table(f"Verdicts: McNemar exact on {v.basis} ({v.n_pairs} paired criteria)",
                         ["measure", "value"])
    verdicts.add_row("rate A", fmt(v.rate_a))
    verdicts.add_row("rate B", fmt(v.rate_b))
    details = v.mcnemar.details
    verdicts.add_row("discordant (A only / B only)", f"{details.get('b', 0)} / {details.get('c', 0)}")
    verdicts.add_row("McNemar exact", fmt_test(v.mcnemar))
    return [scores, verdicts]


def item_change_table(changes: list[ItemChange], max_rows: int) -> list[Any]:
    """The items that changed between A and B, the largest fall first, each with the criteria
    whose verdict flipped (a penalty's verdicts as DETECTED / CLEAR, as the report shows them)."""
    from assay.report.meaning import shown_label

    changed = [c for c in changes if c.changed]
    changed.sort(key=lambda c: (c.difference is None, c.difference or 0.0, -c.flipped, c.item_id))
    table = new_table(f"Items: {len(changed):,} of {len(changes):,} changed, the largest fall "
                      "first", ["item", "A", "B", "B − A", "criteria flipped (A → B)"])
    for change in changed[:max_rows]:
        flips = [f"{_short(c.text)}: {shown_label(c.a, c.weight)} → {shown_label(c.b, c.weight)}"
                 for c in change.criteria if c.flipped]
        table.add_row(change.item_id, _score(change.score_a), _score(change.score_b),
                      "—" if change.difference is None else f"{change.difference:+.3f}",
                      "\n".join(flips) or "—")
    lines: list[Any] = [table]
    if len(changed) > max_rows:
        lines.append(f"{len(changed) - max_rows:,} more changed items: raise --max-rows, or see "
                     "--json (every item, each criterion's verdict in A and B)")
    return lines


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"
