"""How far per-item grading (one call per conversation for all its rubric items, Autorubric's
per-item mode) agrees with per-criterion grading (simple-evals' grader prompt, one call per
rubric item), on the HealthBench development set, with one judge.

    .venv/bin/python benchmarks/per_item_agreement.py --judge openai:gpt-4.1-mini
    .venv/bin/python benchmarks/per_item_agreement.py --judge llamacpp:gemma-3-270m@http://127.0.0.1:18080/v1 --items 5

Both runs grade the ideal completions of the first --items conversations that have one (49 at
most) with the same judge; the table compares their verdicts on each (conversation, rubric
item) that both graded MET or UNMET: raw agreement, Cohen's kappa (scikit-learn), each mode's
MET rate, with each run's calls and cost. Without --judge it runs
against the fake judge, whose verdicts are scripted per criterion whatever the prompt: the
agreement is then 1 by construction and says nothing about a model.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "tests" / "data" / "healthbench" / "dev.jsonl"
VERDICTS = "SELECT item_id, criterion_id, verdict FROM verdicts"


def verdicts(run_dir: Path) -> dict[tuple[str, str], str]:
    db = sqlite3.connect(run_dir / "run.sqlite")
    try:
        return {(item, criterion): verdict for item, criterion, verdict in db.execute(VERDICTS)
                if verdict in ("MET", "UNMET")}
    finally:
        db.close()


def grade(items: Path, judge: str, run_dir: Path, per_item: bool):
    import assay

    kwargs = {"mode": "per-item"} if per_item else {"healthbench": True}
    return assay.grade(items, judges=[judge], ideal=True, run_dir=run_dir, **kwargs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--judge", help="judge spec (default: the fake judge)")
    parser.add_argument("--items", type=int, default=49, help="conversations graded (1-49)")
    args = parser.parse_args()
    from sklearn.metrics import cohen_kappa_score

    rows = [json.loads(line) for line in DEV.read_text().splitlines() if line.strip()]
    graded = [r for r in rows if r.get("ideal_completions_data")][:args.items]
    tmp = Path(tempfile.mkdtemp(prefix="assay-agreement-"))
    items = tmp / "dev.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in graded))
    server = None
    judge = args.judge
    if judge is None:
        from assay.testing import FakeJudgeServer

        server = FakeJudgeServer.run_in_thread(keep_log=False)
        judge = f"openai-compatible:fake@{server.base_url}"
    try:
        criterion = grade(items, judge, tmp / "per-criterion", per_item=False)
        item = grade(items, judge, tmp / "per-item", per_item=True)
    finally:
        if server is not None:
            server.close()
    a, b = verdicts(tmp / "per-criterion"), verdicts(tmp / "per-item")
    both = sorted(set(a) & set(b))
    if not both:
        raise SystemExit("no rubric item has a MET/UNMET verdict in both runs")
    x = [a[k] == "MET" for k in both]
    y = [b[k] == "MET" for k in both]
    agree = sum(i == j for i, j in zip(x, y)) / len(both)
    kappa = cohen_kappa_score(x, y) if len(set(x) | set(y)) > 1 else float("nan")
    print(f"judge {judge}: {len(graded)} conversations, {len(both)} rubric items graded "
          f"MET/UNMET in both runs (per-criterion: {len(a)}, per-item: {len(b)} of "
          f"{sum(len(r['rubrics']) for r in graded)}); load {os.getloadavg()[0]:.1f}")
    print(f"{'mode':<36}{'calls':>7}{'MET rate':>10}{'USD':>10}")
    for name, run, labels in (("per-criterion (simple-evals' prompt)", criterion, x),
                              ("per-item (Assay's per_item template)", item, y)):
        totals = run.report.totals
        print(f"{name:<36}{totals.calls:>7,}{sum(labels) / len(labels):>10.3f}"
              f"{totals.cost_usd:>10.4f}")
    print(f"agreement {agree:.3f}, Cohen's kappa {kappa:.3f}"
          + (" (the fake judge: 1 by construction)" if server is not None else ""))


if __name__ == "__main__":
    main()
