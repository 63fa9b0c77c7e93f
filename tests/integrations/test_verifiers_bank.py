"""``AssayRubric`` over the Health-SCORE bank (issue 45, the bank path): rows bring no
criteria, so every rollout is graded on the shipped bank's 29 criteria, or on those the
relevance selector keeps for its prompt (``select=True``), against Assay's fake judge over
HTTP. The rewards equal ``assay score --formula reward`` of the same verdicts on the same
criteria; a failed criterion call or a failed selection withholds the reward of exactly the
rollouts it touches (their ``error`` set, reward 0.0, never a maximum)."""

from __future__ import annotations

import hashlib

import pytest
import verifiers as vf
from datasets import Dataset
from verifiers.types import ClientConfig

from assay.bank.shipped import load_bank
from assay.integrations.verifiers import AssayRubric, RewardWithheld
from assay.rewards import build_scorer, final_answer
from assay.testing import FakeJudgeServer, Faults, ModelScript

from .inspect_tasks import healthbench_rows
from .test_verifiers_rubric import ROLLOUTS, assay_score_rewards, met, policy

BANK = load_bank("health-score")
RELEVANCE_MARKER = "how relevant a rubric criterion is"  # in the selector's prompt only


def relevant(criterion_text: str) -> bool:
    return hashlib.sha256(criterion_text.encode()).digest()[1] % 3 == 0


def relevance(request) -> dict:
    """The selector's rating: 5 for about a third of the bank, 1 for the rest."""
    [criterion] = [c for c in BANK.criteria if c.text in request.text]
    return {"score": 5 if relevant(criterion.text) else 1, "justification_short": "fake"}


def dataset(rows):
    return Dataset.from_list([{"prompt": [{"role": m["role"], "content": m["content"]}
                                          for m in row["prompt"]],
                               "info": {"prompt_id": row["prompt_id"]}, "example_id": i}
                              for i, row in enumerate(rows)])


async def bank_rollouts(tmp_path, monkeypatch, *, select=False, faults=None):
    rows = healthbench_rows(2)
    turn = iter(range(10_000))
    script = ModelScript(default=lambda messages: ROLLOUTS[next(turn) % len(ROLLOUTS)])
    monkeypatch.setenv("FAKE_KEY", "unused")
    with FakeJudgeServer.run_in_thread(policy=policy, faults=faults,
                                       models={"patient-bot": script},
                                       stages={"route_relevance": relevance}) as server:
        config = tmp_path / "assay.toml"  # fast retries: a failing call gives up at once
        config.write_text(f'[judges.fake]\nspec = "openai-compatible:fake@{server.base_url}"\n'
                          'retry = { max_retries = 1, base_delay_s = 0.0 }\n')
        scorer = build_scorer("fake", bank="health-score", select=select, config_file=config,
                              store=tmp_path / "selection.sqlite")
        env = vf.SingleTurnEnv(dataset=dataset(rows), rubric=AssayRubric(scorer))
        results = await env.evaluate(
            client=ClientConfig(api_base_url=server.base_url, api_key_var="FAKE_KEY",
                                max_retries=0),
            model="patient-bot", rollouts_per_example=3, state_columns=["assay_reward"])
        await scorer.aclose()
        stages = [r.get("stage") for r in server.requests]
    return rows, results["outputs"], stages


def assay_score_of(outputs, criteria_of, tmp_path) -> dict[str, float]:
    """``assay score --formula reward`` of the fake judge's verdicts on each rollout's
    criteria (``criteria_of(output)``), by rollout."""
    items, verdicts = [], []
    for k, output in enumerate(outputs):
        answer = final_answer(output["completion"][-1]["content"])
        criteria = criteria_of(output)
        items.append({"id": f"rollout-{k}", "prompt": "unused", "response": answer,
                      "rubric": {"id": "bank", "criteria": [c.model_dump(mode="json")
                                                            for c in criteria]}})
        verdicts += [{"item_id": f"rollout-{k}", "criterion_id": c.id,
                      "verdict": "MET" if met(c.text, answer) else "UNMET"} for c in criteria]
    return assay_score_rewards(tmp_path, items, verdicts)


async def test_bank_rewards_equal_assay_score_on_the_29_criteria(tmp_path, monkeypatch):
    _, outputs, stages = await bank_rollouts(tmp_path, monkeypatch)
    assert len(outputs) == 6 and all(o["error"] is None for o in outputs)
    assert all(o["assay_reward"]["criteria"] == [c.id for c in BANK.criteria] for o in outputs)
    assert "route_relevance" not in stages and len(stages) >= 6 * 29
    expected = assay_score_of(outputs, lambda _: BANK.criteria, tmp_path)
    assert {f"rollout-{k}": o["reward"] for k, o in enumerate(outputs)} == pytest.approx(
        expected, abs=1e-12)
    assert len(set(expected.values())) == 2  # rollouts naming a doctor differ from the rest


async def test_selected_bank_rewards_equal_assay_score_on_the_selected_criteria(
        tmp_path, monkeypatch):
    _, outputs, stages = await bank_rollouts(tmp_path, monkeypatch, select=True)
    kept = [c for c in BANK.criteria if relevant(c.text)]
    assert 3 < len(kept) < 29
    assert stages.count("route_relevance") == 2 * 29  # one selection per prompt, not per rollout
    assert all(o["error"] is None and o["assay_reward"]["criteria"] == [c.id for c in kept]
               for o in outputs)
    expected = assay_score_of(outputs, lambda _: kept, tmp_path)
    assert {f"rollout-{k}": o["reward"] for k, o in enumerate(outputs)} == pytest.approx(
        expected, abs=1e-12)


async def test_a_failed_bank_criterion_call_withholds_the_rewards_of_its_prompt(
        tmp_path, monkeypatch):
    rows = healthbench_rows(2)
    first_prompt = rows[0]["prompt"][-1]["content"][:60]
    failing = (first_prompt, BANK.criteria[0].text)
    _, outputs, _ = await bank_rollouts(
        tmp_path, monkeypatch, faults=Faults(at={failing: ["server_error"] * 200}, retry_after=0))
    withheld = [o for o in outputs if o["info"]["prompt_id"] == rows[0]["prompt_id"]]
    fine = [o for o in outputs if o["info"]["prompt_id"] != rows[0]["prompt_id"]]
    assert len(withheld) == 3 and len(fine) == 3
    for output in withheld:
        assert output["error"]["error"] == RewardWithheld.__name__
        assert output["reward"] == 0.0 and output["assay_reward"]["reward"] is None
        assert output["metrics"]["assay_reward_withheld"] == 1.0
        assert "hs-01" in output["assay_reward"]["failed"]
    assert all(o["error"] is None and o["assay_reward"]["reward"] is not None for o in fine)


async def test_a_failed_selection_withholds_the_rewards_of_its_prompt(tmp_path, monkeypatch):
    rows = healthbench_rows(2)
    first_prompt = rows[0]["prompt"][-1]["content"][:60]
    failing = (first_prompt, RELEVANCE_MARKER, BANK.criteria[3].text)
    _, outputs, stages = await bank_rollouts(
        tmp_path, monkeypatch, select=True,
        faults=Faults(at={failing: ["server_error"] * 200}, retry_after=0))
    withheld = [o for o in outputs if o["info"]["prompt_id"] == rows[0]["prompt_id"]]
    fine = [o for o in outputs if o["info"]["prompt_id"] != rows[0]["prompt_id"]]
    assert len(withheld) == 3 and len(fine) == 3
    assert stages.count("route_relevance") > 2 * 29  # the failed rating was asked again
    for output in withheld:  # one rating failed: no selection, so no criteria and no reward
        assert output["error"]["error"] == RewardWithheld.__name__
        assert output["reward"] == 0.0 and output["assay_reward"]["reward"] is None
        assert "selection" in output["assay_reward"]["failed"]
    assert all(o["error"] is None and o["assay_reward"]["reward"] is not None for o in fine)
