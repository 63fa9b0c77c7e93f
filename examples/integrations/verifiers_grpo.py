"""Assay's rubric in a verifiers environment: GRPO rollouts rewarded by Health-SCORE criteria,
offline against the fake server (model under test and judge).

Run from the repository root:  .venv/bin/python examples/integrations/verifiers_grpo.py

The environment's dataset is two HealthBench rows; each rollout is rewarded against its row's
own rubric (info["criteria"]), only its final answer graded. With real models, point
ClientConfig at your inference server and build the scorer with
build_scorer("openai:gpt-4.1-mini", bank="health-score", select=True) for adaptive
Health-SCORE rewards.
"""

import asyncio
import os
from pathlib import Path

import verifiers as vf
from verifiers.types import ClientConfig

from assay.integrations.verifiers import AssayRubric, healthbench_dataset
from assay.judges import make_judge
from assay.rewards import RewardScorer
from assay.testing import FakeJudgeServer, ModelScript

ROWS = Path(__file__).parents[1] / "healthbench" / "examples.jsonl"
answers = iter(["<think>allergy?</think>Scrape the stinger out and wash with soap and water.",
                "Put butter on it.", "See a doctor if the swelling spreads."] * 4)
model = ModelScript(default=lambda messages: next(answers))


def verdict(view):  # the fake judge: MET when the answer shares a long word with the criterion
    words = {w.strip(".,").lower() for w in (view.criterion_text or "").split() if len(w) > 5}
    return "MET" if words & set((view.response_text or "").lower().split()) else "UNMET"


async def main():
    with FakeJudgeServer.run_in_thread(policy=verdict, models={"patient-bot": model}) as server:
        os.environ.setdefault("FAKE_KEY", "unused")
        scorer = RewardScorer(make_judge(f"openai-compatible:fake@{server.base_url}"))
        env = vf.SingleTurnEnv(dataset=healthbench_dataset(ROWS).select(range(2)),
                               rubric=AssayRubric(scorer))
        results = await env.evaluate(
            client=ClientConfig(api_base_url=server.base_url, api_key_var="FAKE_KEY"),
            model="patient-bot", rollouts_per_example=3)
        await scorer.aclose()
    for output in results["outputs"]:
        text = output["completion"][-1]["content"]
        print(f"example {output['example_id']}  reward {output['reward']:.3f}  "
              f"withheld {output['metrics']['assay_reward_withheld']:.0f}  {text[:50]!r}")


asyncio.run(main())
