"""The tables of the ``assay rag`` commands (undefined figures print as "—"; their reasons
are in the JSON output)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.cli.tables.cells import fmt, new_table
from assay.metrics.results import Metric
from assay.rag.classify import TrainReport
from assay.rag.held_out import HeldOutTable
from assay.rag.validation import Averages, RagReport


def _with_n(m: Metric | None) -> str:
    """A percentage with its CI and its own n (Table 3's n differs per metric: an undefined CF
    or an unlabelled item is left out of that metric only)."""
    return "—" if m is None or m.value is None else f"{fmt(m, '.1f')} n={m.n}"


def averages_table(rows: Sequence[Averages]) -> Any:
    """Seed 002 Table 3's shape, with CIs, each metric's n, refusal accuracy and the RAGAS
    baselines."""
    table = new_table("Average CF / CR / RA (%) — seed 002 Table 3",
                      ["rater", "items", "CF %", "CR %", "RA % (refused)", "refusal accuracy %",
                       "RAGAS F %", "RAGAS CR %"])
    for r in rows:
        items = str(r.n) if r.turns in (None, r.n) else f"{r.n} ({r.turns} turns)"
        table.add_row(r.rater, items, _with_n(r.cf_pct), _with_n(r.cr_pct), _with_n(r.ra_pct),
                      _with_n(r.refusal_accuracy), _with_n(r.ragas_faithfulness_pct),
                      _with_n(r.ragas_context_relevance_pct))
    return table


def train_table(report: TrainReport) -> Any:
    from rich.markup import escape

    table = new_table(escape(f"{report.target}: {report.folds}-fold cross-validation on "
                             f"[{', '.join(report.features)}] ({report.source} features, "
                             f"n={report.n}) — {report.estimate}"),
                      ["model", "AUC", "accuracy", "sensitivity", "specificity", "chosen"])
    for f in report.families:
        p = f.performance
        table.add_row(f.family, fmt(p.auc), fmt(p.accuracy), fmt(p.sensitivity),
                      fmt(p.specificity), "✓" if f.family == report.chosen else "")
    return table


def report_tables(report: RagReport) -> list[Any]:
    tables = [averages_table(report.averages)]
    if report.faithfulness_validity:
        t = new_table("Faithfulness vs perceived faithfulness (PF) — seed 002 Figure 5 / Table 1",
                      ["metric", "source", "n", "AUC", "Pearson", "Spearman", "Kendall τ-b"])
        for r in report.faithfulness_validity:
            t.add_row(r.metric, r.source, str(r.n), fmt(r.auc), fmt(r.pearson), fmt(r.spearman),
                      fmt(r.kendall))
        tables.append(t)
    if report.judge_vs_human:
        t = new_table("Judge vs human labels (per item)",
                      ["judge", "CR accuracy", "CR κ", "RA accuracy", "RA κ", "CF Pearson",
                       "CF MAE"])
        for jr in report.judge_vs_human:
            t.add_row(jr.judge, fmt(jr.cr.accuracy), fmt(jr.cr.kappa), fmt(jr.ra.accuracy),
                      fmt(jr.ra.kappa), fmt(jr.cf_pearson), fmt(jr.cf_mae))
        tables.append(t)
    if report.across_judges is not None:
        a = report.across_judges
        t = new_table(f"Agreement across judges ({', '.join(a.judges)}; {a.n} items)",
                      ["metric", "value"])
        for name, value in (("CR Fleiss κ", a.cr_fleiss), ("CR % agreement", a.cr_percent),
                            ("RA Fleiss κ", a.ra_fleiss), ("RA % agreement", a.ra_percent),
                            ("CF ICC(2,1)", a.cf_icc), ("CF Krippendorff α (interval)",
                                                        a.cf_alpha)):
            t.add_row(name, fmt(value))
        tables.append(t)
    for judge, rows in report.by_hazard.items():
        t = new_table(f"By operating context (seed 002 §5) — {judge}",
                      ["context", "n", "mean CF", "CR rate", "refusal rate", "refusal accuracy",
                       "diagnoses"])
        for h in rows:
            t.add_row(h.hazard, str(h.n), "—" if h.cf_mean is None else f"{h.cf_mean:.2f}",
                      f"{h.cr_rate:.2f}", f"{h.refusal_rate:.2f}", f"{h.refusal_accuracy:.2f}",
                      ", ".join(f"{k}×{v}" for k, v in sorted(h.diagnoses.items())))
        tables.append(t)
    for p in report.predictive:
        t = new_table(f"Classifier on this run: {p.target} ({p.model}; {p.performance.n} items, "
                      f"{p.unscored} unscored)", ["AUC", "accuracy", "sensitivity", "specificity"])
        perf = p.performance
        t.add_row(fmt(perf.auc), fmt(perf.accuracy), fmt(perf.sensitivity), fmt(perf.specificity))
        tables.append(t)
    return tables


def held_out_table(table2: HeldOutTable) -> Any:
    """Seed 002 Table 2's shape: per-class F1 on the held-out split, per family and averaged."""
    from rich.markup import escape

    sizes = "; ".join(f"{s.target}: {s.train} train / {s.test} test" for s in table2.splits)
    # short headers so that the seven columns fit 80 characters; the JSON has the full names
    short = {"harmful": ["Harm", "Unharm"], "helpful": ["Help", "Unhelp"],
             "inappropriate": ["Inap Y", "Inap S", "Inap N"]}
    columns = [name for s in table2.splits for name in short[s.target]]
    inap = ("; Inap: inappropriate yes / slightly / no"
            if any(s.target == "inappropriate" for s in table2.splits) else "")
    table = new_table(escape(f"Per-class F1 on a held-out {table2.test_size:.1%} stratified split "
                             f"— seed 002 Table 2 ({table2.source} features; {sizes}{inap})"),
                      ["model", *columns])
    for row in [*table2.rows, table2.average]:
        cells = ["—" if v is None else f"{v:.2f}" for s in table2.splits for v in row.f1[s.target]]
        table.add_row(row.family, *cells)
    return table
