"""GRPO for real: TRL's ``GRPOTrainer.train()`` runs two optimiser steps on a tiny causal LM
built on the spot (random weights, a word-level tokenizer; nothing downloaded), rewarded by
Assay's TRL adapter, whose judge is the fake OpenAI-compatible server over loopback HTTP.

Run from the repository root (about 5 s after the imports, on two CPU cores)::

    .venv/bin/python examples/health-score/grpo_train.py --seed 0
    .venv/bin/python examples/health-score/grpo_train.py --flaky    # one prompt's judge fails

``--flaky`` makes the penalty's judge call ("unsafe advice") on the chest-pain prompt answer
HTTP 500: under the default failure policy (``no-reward``) those completions get no reward, TRL
masks them (NaN, left out of the group's mean, advantage 0) and ``assay/withheld_sample_rate``
is logged; ``--on-failure penalty-met`` counts the failed penalty as met instead.

With a real judge, the same run (the tiny model still writes random words)::

    OPENAI_API_KEY=... .venv/bin/python examples/health-score/grpo_train.py \
        --judge openai:gpt-4.1-mini

For a real policy, pass ``model="Qwen/Qwen3-0.6B"`` (or any causal LM) to ``GRPOTrainer`` and
``build_scorer(judge, bank="health-score", select=True)`` as the scorer.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers is imported: never download

from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

from assay.judges import make_judge, run_sync
from assay.rewards import RewardScorer, trl_reward_function
from assay.rubric import Criterion
from assay.testing import FakeJudgeServer
from assay.testing.tiny_lm import tiny_causal_lm

CRITERIA = [
    Criterion(id="doc", text="Suggests consulting a doctor."),
    Criterion(id="rest", text="Recommends rest and fluids."),
    Criterion(id="harm", text="Includes unsafe advice such as doubling a dose.", weight=-1),
]
COLD = "I have had a cold for three days what should I do ?"
CHEST = "my chest hurts when I climb stairs what should I do ?"


def keyword_verdict(view) -> str:
    """The fake judge: MET when the answer says the criterion's keyword."""
    answer, criterion = (view.response_text or "").lower(), view.criterion_text or ""
    keyword = "doctor" if "doctor" in criterion else "rest" if "rest" in criterion else "double"
    return "MET" if keyword in answer else "UNMET"


def flaky_verdict(view) -> str:
    """:func:`keyword_verdict`, except that the penalty's call on the chest-pain prompt fails
    (HTTP 500)."""
    if CHEST in view.prompt and "unsafe" in (view.criterion_text or ""):
        raise RuntimeError("the judge breaks on this prompt")
    return keyword_verdict(view)


@dataclass
class Run:
    """What a training run leaves: the trainer and each reward batch the trainer received."""

    trainer: Any
    batches: list[dict[str, list]] = field(default_factory=list)


def recording(reward: Callable[..., list[float | None]],
              batches: list[dict[str, list]]) -> Callable[..., list[float | None]]:
    """``reward``, keeping each batch's completions and rewards in ``batches``."""
    def recorded(prompts, completions, **kwargs):
        rewards = reward(prompts=prompts, completions=completions, **kwargs)
        batches.append({"prompts": list(prompts), "completions": list(completions),
                        "rewards": list(rewards)})
        return rewards

    recorded.__name__ = reward.__name__
    return recorded


def train(judge: str, output_dir: str, *, seed: int = 0, on_failure: str | None = None,
          steps: int = 2) -> Run:
    """``steps`` GRPO optimiser steps on the tiny model, rewarded through ``judge`` (a spec)."""
    scorer = RewardScorer(make_judge(judge, retry={"max_retries": 0}), criteria=CRITERIA,
                          template="assay")
    batches: list[dict[str, list]] = []
    reward = recording(trl_reward_function(scorer, on_failure=on_failure), batches)
    model, tokenizer = tiny_causal_lm(seed=seed)
    args = GRPOConfig(
        output_dir=output_dir, seed=seed, max_steps=steps, learning_rate=1e-2,
        per_device_train_batch_size=8, num_generations=4,   # 2 prompts x 4 rollouts per step
        max_completion_length=8, temperature=1.0,
        use_cpu=True, bf16=False, gradient_checkpointing=False,
        report_to="none", save_strategy="no", logging_steps=1, disable_tqdm=True)
    dataset = Dataset.from_list([{"prompt": COLD}, {"prompt": CHEST}])
    trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=args, train_dataset=dataset,
                          processing_class=tokenizer)
    try:
        trainer.train()
    finally:
        run_sync(scorer.aclose())
    return Run(trainer, batches)


@contextmanager
def fake_judge(policy) -> Iterator[str]:
    """A judge spec for the fake server under ``policy``, served on loopback meanwhile."""
    with FakeJudgeServer.run_in_thread(policy=policy) as server:
        yield f"openai-compatible:fake@{server.base_url}"


def main(argv: list[str] | None = None) -> Run:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--judge", help="a judge spec; default: the fake judge on loopback")
    parser.add_argument("--flaky", action="store_true", help="the fake judge fails on one prompt")
    parser.add_argument("--on-failure", help="the reward failure policy (default no-reward)")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as output_dir:
        if options.judge:
            run = train(options.judge, output_dir, seed=options.seed, on_failure=options.on_failure)
        else:
            with fake_judge(flaky_verdict if options.flaky else keyword_verdict) as judge:
                run = train(judge, output_dir, seed=options.seed, on_failure=options.on_failure)
    steps = [log for log in run.trainer.state.log_history if "reward" in log]
    for log, batch in zip(steps, run.batches, strict=True):
        shown = ["-" if r is None else f"{r:.2f}" for r in batch["rewards"]]
        print(f"step {log['step']}: rewards {' '.join(shown)}  mean {log['reward']:.3f}  "
              f"withheld {log['assay/withheld_sample_rate']:.2f}  loss {log['loss']:.4f}")
    return run


if __name__ == "__main__":
    main()
