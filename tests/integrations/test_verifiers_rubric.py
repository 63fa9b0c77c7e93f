"""``AssayRubric`` in a verifiers ``SingleTurnEnv``: the environment samples rollouts from the
fake server's model under test and scores them with the rubric against the fake judge; the
rewards equal ``assay score --formula reward`` of the same verdicts, and a failed judge call
withholds the reward the way verifiers marks a failed rollout (its ``error``)."""

from __future__ import annotations

import hashlib
import json

import pytest
import verifiers as vf
from typer.testing import CliRunner
from verifiers.types import ClientConfig

from assay.cli import app
from assay.integrations.verifiers import AssayRubric, RewardWithheld, healthbench_dataset
from assay.io.healthbench import example_to_item
from assay.judges import make_judge
from assay.rewards import RewardScorer, final_answer
from assay.testing import FakeJudgeServer, Faults, ModelScript

from .inspect_tasks import EXAMPLES, healthbench_rows

ROLLOUTS = ["<think>see a doctor?</think>Rest at home.",
            "Please see a doctor today.",
            "Drink water; a doctor can help if it persists."]


def met(criterion: str, answer: str) -> bool:
    """The fake judge's verdict: fixed by the criterion's text, flipped when the answer names
    a doctor (so rollouts of one prompt get different rewards)."""
    return bool(hashlib.sha256(criterion.encode()).digest()[0] % 2) != ("doctor" in answer)


def policy(view) -> str:
    return "MET" if met(view.criterion_text or "", view.response_text or "") else "UNMET"


async def rollouts(server_url: str, dataset, *, monkeypatch) -> list[dict]:
    monkeypatch.setenv("FAKE_KEY", "unused")
    scorer = RewardScorer(make_judge(f"openai-compatible:fake@{server_url}"))
    env = vf.SingleTurnEnv(dataset=dataset, rubric=AssayRubric(scorer))
    results = await env.evaluate(
        client=ClientConfig(api_base_url=server_url, api_key_var="FAKE_KEY", max_retries=0),
        model="patient-bot", rollouts_per_example=3, state_columns=["assay_reward"])
    await scorer.aclose()
    return results["outputs"]


@pytest.fixture
def fake_server():
    turn = iter(range(10_000))
    script = ModelScript(default=lambda messages: ROLLOUTS[next(turn) % len(ROLLOUTS)])

    def run(faults=None):
        return FakeJudgeServer.run_in_thread(policy=policy, faults=faults,
                                             models={"patient-bot": script})
    return run


async def test_rollout_rewards_equal_assay_score_of_the_same_verdicts(fake_server, tmp_path,
                                                                      monkeypatch):
    rows = healthbench_rows(2)
    with fake_server() as server:
        outputs = await rollouts(server.base_url, healthbench_dataset(EXAMPLES).select(range(2)),
                                 monkeypatch=monkeypatch)
    assert len(outputs) == 6 and all(o["error"] is None for o in outputs)
    by_prompt = {r["prompt_id"]: example_to_item(r) for r in rows}
    items, verdicts, rewards = [], [], {}
    for k, output in enumerate(outputs):
        item = by_prompt[output["info"]["prompt_id"]]
        answer = final_answer(output["completion"][-1]["content"])
        item_id = f"rollout-{k}"
        items.append({"id": item_id, "prompt": "unused", "response": answer,
                      "rubric": item.rubric.model_dump(mode="json")})
        verdicts += [{"item_id": item_id, "criterion_id": c.id,
                      "verdict": "MET" if met(c.text, answer) else "UNMET"}
                     for c in item.rubric.criteria]
        rewards[item_id] = output["reward"]
    scored = assay_score_rewards(tmp_path, items, verdicts)
    assert scored == pytest.approx(rewards, abs=1e-12)
    assert len(set(rewards.values())) > 2  # the rollouts of a prompt differ
    assert all(o["metrics"]["assay_reward_withheld"] == 0.0 for o in outputs)


async def test_a_failed_judge_call_marks_the_rollout_failed_and_pays_nothing(
        fake_server, tmp_path, monkeypatch):
    rows = healthbench_rows(2)
    failing = rows[0]["rubrics"][0]["criterion"]
    with fake_server(Faults(at={failing: ["server_error"] * 200}, retry_after=0)) as server:
        outputs = await rollouts(server.base_url, healthbench_dataset(EXAMPLES).select(range(2)),
                                 monkeypatch=monkeypatch)
    failed = [o for o in outputs if o["info"]["prompt_id"] == rows[0]["prompt_id"]]
    fine = [o for o in outputs if o["info"]["prompt_id"] != rows[0]["prompt_id"]]
    assert len(failed) == 3 and len(fine) == 3
    for output in failed:
        assert output["error"] is not None and output["error"]["error"] == RewardWithheld.__name__
        assert output["reward"] == 0.0 and output["metrics"]["assay_reward_withheld"] == 1.0
        assert output["assay_reward"]["reward"] is None
    assert all(o["error"] is None and o["metrics"]["assay_reward_withheld"] == 0.0 for o in fine)
    assert issubclass(RewardWithheld, vf.InfraError)  # what verifiers' maybe_retry retries


def assay_score_rewards(tmp_path, items: list[dict], verdicts: list[dict]) -> dict[str, float]:
    """Each item's score by `assay score --formula reward` of ``verdicts`` on ``items``."""
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    (tmp_path / "verdicts.jsonl").write_text("".join(json.dumps(v) + "\n" for v in verdicts))
    result = CliRunner().invoke(app, ["score", str(tmp_path / "verdicts.jsonl"), "--rubric",
                                      str(tmp_path / "items.jsonl"), "--formula", "reward",
                                      "--json", str(tmp_path / "scores.json")])
    assert result.exit_code == 0, result.output
    rows = json.loads((tmp_path / "scores.json").read_text())["items"]
    return {row["item_id"]: row["score"] for row in rows}
