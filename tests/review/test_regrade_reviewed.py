"""Closing the loop: a run regraded with the rubrics its reviewers curated
(``assay grade --rubric RUN/reviewed-rubrics``)."""

from __future__ import annotations

import json

from tests.report.conftest import AGREE
from typer.testing import CliRunner

from assay.cli import app as cli
from assay.review.rubrics import RubricDecision, save_reviewed_rubric
from assay.rubric import Criterion, Rubric
from assay.runs.sources import ItemSource
from assay.testing import FakeJudgeServer


async def test_a_run_is_regraded_with_its_reviewed_rubric(run_dir, serve_app, reviewer):
    client = reviewer(await serve_app(run_dir, reviewer="dr_a"))
    status, _ = await client.post("/rubrics/q0", {"action:tweezers": "reject"})
    assert status == 303
    items = run_dir.parent / "items.jsonl"
    async with FakeJudgeServer(policy=AGREE) as server:
        result = await _grade(items, run_dir / "reviewed-rubrics", server, run_dir.parent / "again")
    assert result.exit_code == 0, result.output
    verdicts = [json.loads(line) for line in
                (run_dir.parent / "again" / "verdicts.jsonl").read_text().splitlines()]
    assert {v["criterion_id"] for v in verdicts} == {"stinger", "pain", "tone"}  # no tweezers
    assert len({v["item_id"] for v in verdicts}) == 4


async def _grade(items, rubric, server, out):
    import asyncio

    return await asyncio.to_thread(CliRunner().invoke, cli, [
        "grade", str(items), "--rubric", str(rubric), "--judge",
        f"openai-compatible:fake@{server.base_url}", "--run-dir", str(out), "--quiet",
        "--export", str(out / "verdicts.jsonl")])


def test_an_item_keeps_its_own_rubric_unless_a_reviewed_version_of_it_exists(tmp_path):
    own = {f"q{i}": Rubric(id=f"r{i}", criteria=[Criterion(id="a", text="Says A."),
                                                  Criterion(id="b", text="Says B.")])
           for i in range(2)}
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": key, "prompt": "Q?", "response": "A.",
                                         "rubric": rubric.model_dump(mode="json")}) + "\n"
                             for key, rubric in own.items()))
    save_reviewed_rubric(own["q1"], [RubricDecision("b", "reject")], tmp_path / "reviewed",
                         reviewer="dr_a")
    plain = ItemSource(path=items)
    from assay.review.rubrics import latest_reviewed

    curated = ItemSource(path=items, reviewed=latest_reviewed(tmp_path / "reviewed"))
    got = {item.id: [c.id for c in item.rubric.criteria] for item in curated}
    assert got == {"q0": ["a", "b"], "q1": ["a"]}
    assert curated.fingerprint() != plain.fingerprint()  # a run of other rubrics, never resumed as this one
