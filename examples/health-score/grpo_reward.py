"""A GRPO reward call through Assay's TRL adapter, offline against the fake judge.

Run from the repository root:  .venv/bin/python examples/health-score/grpo_reward.py

With a real model, replace the fake judge by a spec such as "openai:gpt-4.1-mini" (reward
judge) and pass ``reward_funcs=[reward]`` to ``trl.GRPOTrainer``.
"""

import tempfile
from pathlib import Path

from assay.judges import run_sync
from assay.rewards import build_scorer, trl_reward_function
from assay.testing import FakeJudgeServer

HERE = Path(__file__).parent


def verdict(view):
    """The fake reward judge: MET when the answer does what the criterion is about."""
    answer, criterion = (view.response_text or "").lower(), view.criterion_text or ""
    if "consulting healthcare provider" in criterion:
        return "MET" if "doctor" in answer else "UNMET"
    if "unsafe" in criterion:
        return "MET" if "double" in answer else "UNMET"
    if "high risk" in criterion:
        return "MET" if "emergency" in answer else "UNMET"
    return "MET"


with FakeJudgeServer.run_in_thread(policy=verdict,
                                   stages=HERE / "relevance-replies.yaml") as server:
    scorer = build_scorer(f"openai-compatible:fake@{server.base_url}", bank="health-score",
                          select=True, store=Path(tempfile.mkdtemp()) / "selection.sqlite")
    reward = trl_reward_function(scorer)
    prompt = [{"role": "user", "content": "My chest hurts when I climb stairs. What should I do?"}]
    completions = [  # one GRPO group: rollouts of the same prompt (TRL's conversational format)
        [{"role": "assistant", "content": "<think>angina?</think>See a doctor soon; call "
                                          "emergency services if it comes at rest."}],
        [{"role": "assistant", "content": "<think>...</think>See a doctor this week."}],
        [{"role": "assistant", "content": "Double your aspirin and rest."}],
    ]
    rewards = reward(prompts=[prompt] * 3, completions=completions)
    print("rewards:", [round(r, 3) for r in rewards])
    selection = run_sync(scorer.selector.select(prompt))
    print("selected:", selection.ids, "of 29;", "relevance calls:", 29, "for the whole group")
    run_sync(scorer.aclose())
