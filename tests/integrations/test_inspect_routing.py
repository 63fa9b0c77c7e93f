"""``rubric_scorer(taxonomy=..., router=...)`` inside ``inspect_ai.eval`` (issue 45, the routing
path): each sample is routed over the starter taxonomy by the tree router and graded against
its active leaves, both against Assay's fake judge over HTTP. The per-sample scores and active
leaves equal ``assay grade --taxonomy starter --router tree`` of the same items (the user's
health memory, carried in the sample's metadata, included); a routing call or a leaf's
grading call that failed leaves its sample unscored, never scored."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput
from inspect_ai.solver import Generate, TaskState, solver
from typer.testing import CliRunner

from assay.cli import app
from assay.integrations.inspect import rubric_scorer
from assay.judges import parse_spec
from assay.testing import FakeJudgeServer, Faults

from .inspect_tasks import mock_model

EXAMPLES = Path(__file__).parents[2] / "examples" / "taxonomy"
ITEMS = EXAMPLES / "pha-items.jsonl"
STAGES = EXAMPLES / "fake-stages.yaml"
ROWS = [json.loads(line) for line in ITEMS.read_text().splitlines()]


@solver
def stored_answer():
    """The model under test's answer is the item's stored response (so each sample's output
    is the response ``assay grade`` reads, whatever order Inspect runs the samples in)."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.output = ModelOutput.from_content("mockllm/model", state.metadata["response"])
        return state
    return solve


def routed_eval(server, tmp_path, **scorer_options):
    # fast retries: a failing call gives up at once instead of backing off for seconds
    judge = parse_spec(f"openai-compatible:fake@{server.base_url}",
                       retry={"max_retries": 1, "base_delay_s": 0.0})
    dataset = MemoryDataset([Sample(id=row["id"], input=row["messages"][-1]["content"],
                                    metadata={"conversation": row["messages"],
                                              "health_memory": row.get("health_memory"),
                                              "response": row["response"]})
                             for row in ROWS])
    task = Task(dataset=dataset, solver=stored_answer(), scorer=rubric_scorer(
        [judge], taxonomy="starter", router="tree",
        template="auditor", **scorer_options))
    [log] = inspect_eval(task, model=mock_model([]), log_dir=str(tmp_path / "logs"),
                         display="none")
    return {s.id: s.scores["rubric_scorer"] for s in log.samples}, log


def test_routed_scores_and_leaves_equal_assay_grade_with_the_taxonomy(tmp_path):
    with FakeJudgeServer.run_in_thread(stages=STAGES) as server:
        scores, log = routed_eval(server, tmp_path)
        graded = CliRunner().invoke(app, [
            "grade", str(ITEMS), "--judge", f"openai-compatible:fake@{server.base_url}",
            "--template", "auditor", "--taxonomy", "starter", "--router", "tree",
            "--run-dir", str(tmp_path / "run"), "--quiet", "--json", str(tmp_path / "g.json")])
    assert graded.exit_code == 0, graded.output
    summary = json.loads((tmp_path / "g.json").read_text())
    expected = {i["item_id"]: i["score"] for i in summary["items"]}
    assert expected == {"ldl": 1.0, "chest": 0.0, "sleep": 1.0, "statin": 1.0}
    assert {k: s.value for k, s in scores.items()} == expected
    from assay.runs.store import RunStore

    store = RunStore.open(tmp_path / "run")
    routed = json.loads(store.meta("routing"))["items"]
    store.close()
    for item_id, score in scores.items():  # the leaves graded are the run's active leaves
        assert [c["id"] for c in score.metadata["criteria"]] == [
            s["id"] for s in routed[item_id]["active"]], item_id
    assert "hm.fg.lb.04" in [c["id"] for c in scores["ldl"].metadata["criteria"]]
    [metrics] = log.results.scores
    assert metrics.metrics["mean"].value == pytest.approx(0.75)


def test_a_failed_routing_call_leaves_its_sample_unscored(tmp_path):
    faults = Faults(at={"crushing pressure": ["server_error"] * 50}, retry_after=0)
    with FakeJudgeServer.run_in_thread(stages=STAGES, faults=faults) as server:
        scores, log = routed_eval(server, tmp_path, max_reasks=0, final_passes=0)
    chest = scores.pop("chest")
    assert math.isnan(chest.value) and chest.reason == "grader_failed"
    assert "routing failed" in chest.explanation
    assert {k: s.value for k, s in scores.items()} == {"ldl": 1.0, "sleep": 1.0, "statin": 1.0}
    [metrics] = log.results.scores
    assert (metrics.scored_samples, metrics.unscored_samples) == (3, 1)


def test_a_failed_leaf_call_leaves_its_sample_unscored(tmp_path):
    """The routing of "sleep" succeeds; the grading call of one of its leaves answers 500s
    (its prompt holds the response and the auditor's reply format, the routing prompt
    neither)."""
    sleep = next(r for r in ROWS if r["id"] == "sleep")["response"][:40]
    faults = Faults(at={(sleep, "[1]"): ["server_error"] * 50}, retry_after=0)
    with FakeJudgeServer.run_in_thread(stages=STAGES, faults=faults) as server:
        scores, _ = routed_eval(server, tmp_path, max_reasks=0, final_passes=0)
    failed = scores.pop("sleep")
    assert math.isnan(failed.value) and failed.reason == "grader_failed"
    assert failed.metadata["failed"] and all("server_error" in why
                                             for why in failed.metadata["failed"].values())
    assert {k: s.value for k, s in scores.items()} == {"ldl": 1.0, "chest": 0.0, "statin": 1.0}
