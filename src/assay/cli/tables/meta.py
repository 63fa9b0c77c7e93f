"""The tables of ``assay meta-eval``, ``assay discrimination`` and ``assay coverage``.

Undefined figures print as "—"; their reasons are in the ``--json`` output.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.cli.tables.cells import fmt, fmt_test, new_table
from assay.metrics.coverage_gold import CoverageSummary
from assay.metrics.healthbench_meta import MetaEvalReport, MetaEvalRow
from assay.metrics.pairs import DiscriminationSummary


def meta_eval_tables(rows: Sequence[MetaEvalRow], reports: Mapping[str, MetaEvalReport]) -> list[Any]:
    """Per judge: the pairwise F1s overall and per category next to the physicians' baseline,
    then the grader's overall precision / recall / F1 per class."""
    per_category = Counter(r.category for r in rows)
    tables = []
    for judge, report in reports.items():
        title = (f"HealthBench meta-eval: {judge} vs physicians ({report.n_rows} rows, "
                 f"{report.n_rows_without_verdict} without a verdict)")
        table = new_table(title, ["scope", "rows", "grader F1 balanced", "F1 pos", "F1 neg",
                               "physicians F1 balanced (mean)", "(median)"])
        scopes = [("overall", "", report.n_rows)]
        scopes += [(c, f"{c}: ", per_category[c]) for c in sorted(per_category)]
        for name, prefix, n in scopes:
            model = f"{prefix}pairwise_model_f1_"
            doctor = f"{prefix}pairwise_physician_f1_balanced"
            table.add_row(name, str(n), fmt(report.model.get(model + "balanced")),
                          fmt(report.model.get(model + "pos")), fmt(report.model.get(model + "neg")),
                          fmt(report.physician_mean.get(doctor)),
                          fmt(report.physician_median.get(doctor)))
        tables.append(table)
        classes = new_table(f"{judge}: pairwise precision / recall / F1 (overall)",
                            ["metric", "pos", "neg", "balanced"])
        for metric in ("precision", "recall", "f1"):
            classes.add_row(metric, *(fmt(report.model.get(f"pairwise_model_{metric}_{cls}"))
                                      for cls in ("pos", "neg", "balanced")))
        tables.append(classes)
    return tables


def discrimination_tables(summary: DiscriminationSummary, max_rows: int = 20) -> list[Any]:
    """The headline figures, then the first ``max_rows`` pairs with their deltas and outcomes."""
    r, s = summary.report, summary.stress
    judges = f"; judges: {', '.join(summary.judges)}" if summary.judges else ""
    head = new_table(f"Discrimination: {r.n_pairs} pairs{judges}", ["measure", "value"])
    if summary.unpaired:
        head.add_row("items scored on one side only (left out)", str(len(summary.unpaired)))
    head.add_row("win / tie / loss (majority vote)", f"{r.wins} / {r.ties} / {r.losses}")
    head.add_row("win rate (bootstrap 95% CI)", fmt(r.win_rate))
    head.add_row("tie rate (Wilson 95% CI)", fmt(r.tie_rate))
    head.add_row("μΔ mean ref − cand (bootstrap 95% CI)", fmt(r.mu_delta, "+.3f"))
    head.add_row("AUROC, paper: P(Δ > 0), ties ½", fmt(r.auroc_paper))
    head.add_row("AUROC of Δ vs the judge's win vote", fmt(r.auroc_judge_vote))
    true_name = ("AUROC of Δ vs the true pair labels" if summary.true_labels is not None
                 else "AUROC, symmetric (ref ≻ cand by construction)")
    head.add_row(true_name, fmt(r.auroc_true_labels))
    head.add_row("Detection Rate % (Wilson 95% CI)", fmt(s.detection_rate, ".1f"))
    penalty = fmt(s.mean_penalty, "+.1f")
    if s.n_zero_clean:
        penalty += f" ({s.n_zero_clean} pairs with a clean score of 0 left out)"
    head.add_row("Mean Penalty % (per pair)", penalty)
    head.add_row("Mean Penalty % (of the means)", fmt(s.mean_penalty_of_means, "+.1f"))
    pairs = new_table("Per pair", ["pair", "calls", "ref", "cand", "Δ", "outcome"])
    shown = list(zip(summary.pair_ids, summary.n_calls, summary.mean_ref, summary.mean_cand,
                     r.deltas, r.outcomes, strict=True))
    for pair_id, calls, ref, cand, delta, outcome in shown[:max_rows]:
        pairs.add_row(pair_id, str(calls), f"{ref:.3f}", f"{cand:.3f}",
                      f"{delta:+.3f}", outcome)
    if len(shown) > max_rows:
        pairs.caption = f"{len(shown) - max_rows} more pairs in the JSON output (--json)"
    return [head, pairs]


def coverage_tables(summary: CoverageSummary, name: str, against: str | None) -> list[Any]:
    """Each rubric set's CIA and, with two sets, the paired tests."""
    name = Path(name).name
    against = Path(against).name if against is not None else None
    table = new_table("CIA coverage of the gold criteria",
                      ["rubric set", "gold", "covered", "abstained", "missing", "CIA [Wilson CI]"])
    sets = [(name, summary.report, summary.missing)]
    if against is not None and summary.against is not None:
        sets.append((against, summary.against, summary.against_missing))
    for label, report, missing in sets:
        table.add_row(label, str(report.total), str(report.covered), str(report.cannot_assess),
                      str(missing), fmt(report.coverage))
    tables = [table]
    c = summary.comparison
    if c is not None:
        paired = new_table(f"A = {name}, B = {against}: {c.n_paired} paired gold points",
                           ["measure", "value"])
        paired.add_row("difference A − B", fmt(c.difference, "+.3f"))
        details = c.mcnemar.details
        paired.add_row("discordant (A only / B only)", f"{details.get('b', 0)} / {details.get('c', 0)}")
        paired.add_row("McNemar exact", fmt_test(c.mcnemar))
        paired.add_row("two-proportion z-test (pooled)", fmt_test(c.ztest))
        tables.append(paired)
    return tables
