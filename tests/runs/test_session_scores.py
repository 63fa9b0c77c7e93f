"""A run's own summary is scored from the items as they finish: exactly the figures of
rescoring the stored run, whatever order the items finish in and however many sessions it took."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from tests.runs.conftest import POLICY, rows, spec, write_items

import assay
from assay.judges import ModelPrice, parse_spec
from assay.runs import rescore_run
from assay.runs.engine import MIN_WINDOW
from assay.runs.results import RunScores, Scoring, score_run
from assay.runs.session_scores import SessionScores
from assay.runs.store import RunStore
from assay.testing import FakeJudgeServer
from assay.testing.faults import Latency

EXAMPLES = Path(__file__).parents[2] / "examples" / "healthbench" / "examples.jsonl"
DEV = Path(__file__).parents[2] / "tests" / "data" / "healthbench" / "dev.jsonl"


def scripted(view) -> str:
    """MET when the criterion text has an even length: HealthBench figures that vary."""
    return "MET" if len(view.criterion_text) % 2 == 0 else "UNMET"


def first_requests_slow(n: int = 3, seconds: float = 0.3) -> Latency:
    """The first ``n`` requests take ``seconds``, the rest none: the first item finishes last."""
    counter = itertools.count()
    return Latency(lambda rng: seconds if next(counter) < n else 0.0)


def assert_same_scores(summary: RunScores, rescored: RunScores) -> None:
    assert summary.table == rescored.table  # every item in the same order, the same floats
    assert summary.table.to_dict() == rescored.table.to_dict()
    assert summary.healthbench == rescored.healthbench  # the bootstrap draws: order-dependent
    assert summary.by_axis == rescored.by_axis and summary.by_theme == rescored.by_theme
    assert summary.mean_agreement == rescored.mean_agreement
    assert (summary.overall, summary.ci) == (rescored.overall, rescored.ci)


def finished_out_of_order(run_dir: Path) -> bool:
    by_position = [i for (i,) in rows(run_dir, "SELECT id FROM items ORDER BY idx")]
    by_time = [i for (i,) in rows(run_dir, "SELECT id FROM items ORDER BY finished_at, idx")]
    return by_position != by_time


async def test_a_healthbench_runs_summary_is_its_rescoring_exactly(tmp_path):
    async with FakeJudgeServer(policy=scripted, latency=first_requests_slow()) as server:
        result = await assay.agrade(EXAMPLES, healthbench=True, ideal=True, judges=[spec(server)],
                                    run_dir=tmp_path / "run")
    assert finished_out_of_order(result.run_dir)  # placed by position, not by finishing time
    assert result.healthbench is not None and result.healthbench.n == 5
    assert_same_scores(result.report.scores, rescore_run(result.run_dir))


async def test_a_two_judge_runs_summary_is_its_rescoring_exactly(tmp_path, items_file,
                                                                 rubric_file):
    async with FakeJudgeServer(policy={**POLICY, "stinger": "MET"},
                               latency=first_requests_slow()) as a, \
            FakeJudgeServer(policy={**POLICY, "stinger": "UNMET", "pain": "well"}) as b:
        result = await assay.agrade(items_file, rubric=rubric_file, judges=[spec(a), spec(b)],
                                    run_dir=tmp_path / "run")
    assert finished_out_of_order(result.run_dir)
    scores = result.report.scores
    assert scores.mean_agreement is not None and scores.mean_agreement < 1  # the judges differ
    assert set(scores.by_axis) == {"accuracy", "completeness"}
    assert set(scores.by_theme) == {"emergency", "hedging"}
    assert_same_scores(scores, rescore_run(result.run_dir))


def healthbench_rows(path: Path, min_calls: int) -> Path:
    """Real HealthBench rows with ideal completions, the smallest rubrics first, enough for
    ``min_calls`` calls."""
    rows = [json.loads(line) for line in DEV.read_text().splitlines()]
    rows = sorted((r for r in rows if r.get("ideal_completions_data")), key=lambda r: len(r["rubrics"]))
    chosen: list[dict] = []
    while sum(len(r["rubrics"]) for r in chosen) < min_calls:
        chosen.append(rows[len(chosen)])
    path.write_text("".join(json.dumps(r) + "\n" for r in chosen))
    return path


@pytest.mark.parametrize("mode", ["healthbench", "two judges"])
async def test_a_resumed_runs_summary_puts_the_earlier_sessions_items_first(
        tmp_path, rubric_file, mode):
    # Over MIN_WINDOW calls: the budget stops the first session before it registers every item,
    # so the second has items of both sessions (and one the first session left half done).
    price = ModelPrice(input=1000.0, output=0.0)  # $1 per call
    usage = {"prompt_tokens": 1000, "completion_tokens": 0}
    async with FakeJudgeServer(policy=scripted, usage=usage) as a, \
            FakeJudgeServer(policy={**POLICY, "stinger": "UNMET"}, usage=usage) as b:
        if mode == "healthbench":
            setup = {"items": healthbench_rows(tmp_path / "hb.jsonl", MIN_WINDOW + 80),
                     "healthbench": True, "ideal": True, "budget_usd": 20,
                     "judges": [parse_spec(spec(a), price=price)]}
        else:
            setup = {"items": write_items(tmp_path / "items.jsonl", 40), "rubric": rubric_file,
                     "budget_usd": 11, "judges": [parse_spec(spec(s), price=price) for s in (a, b)]}
        first = await assay.agrade(**setup, concurrency=1, run_dir=tmp_path / "run")
        done_first, registered_first = first.totals.items_done, first.totals.items
        assert first.status == "budget" and done_first >= 1
        assert_same_scores(first.report.scores, rescore_run(first.run_dir))
        again = await assay.agrade(resume=first.run_dir, budget_usd=1000)
    assert again.status == "complete"
    assert done_first < registered_first < again.totals.items_done
    assert_same_scores(again.report.scores, rescore_run(again.run_dir))


async def test_items_handed_on_in_any_order_are_kept_in_the_stores_order(tmp_path):
    async with FakeJudgeServer(policy=scripted) as server:
        result = await assay.agrade(EXAMPLES, healthbench=True, ideal=True, judges=[spec(server)],
                                    run_dir=tmp_path / "run")
    store = RunStore.open(result.run_dir)
    try:
        scoring = Scoring.from_config(store.config())
        votes = dict(store.iter_votes())
        finished = [(item, store.rubric(digest), votes[idx])
                    for idx, item, digest in store.iter_items(done_only=True)]
        session = SessionScores(scoring, after=-1)
        for position in (3, 0, 4, 2, 1):  # as they might finish, votes in any order
            item, rubric, item_votes = finished[position]
            session.add(position, item, rubric, list(reversed(item_votes)))
        assert_same_scores(session.scores(store), score_run(store, scoring))
        # an item the store has finished but the session was not given: the store decides
        partial = SessionScores(scoring, after=-1)
        partial.add(0, *finished[0])
        assert_same_scores(partial.scores(store), score_run(store, scoring))
    finally:
        store.close()
