"""Selections precomputed with ``assay bank select`` are reused by rewards and ``assay serve``."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from assay.cli import app
from assay.judges import run_sync
from assay.rewards import RewardItem, build_scorer
from assay.testing import FakeJudgeServer

RELEVANCE = {"by_prompt": [["consulting healthcare provider", {"score": 5,
                                                               "justification_short": "x"}]],
             "default": {"score": 1, "justification_short": "x"}}
PROMPT = "My cough has lasted three weeks. What should I do?"


def test_selection_precomputed_before_training_costs_no_call_at_reward_time(tmp_path):
    items = tmp_path / "prompts.jsonl"
    items.write_text(json.dumps({"id": "q1", "prompt": PROMPT}) + "\n")
    store = tmp_path / "selection.sqlite"
    with FakeJudgeServer.run_in_thread(policy="MET",
                                       stages={"route_relevance": RELEVANCE}) as server:
        spec = f"openai-compatible:fake@{server.base_url}"
        result = CliRunner().invoke(app, ["bank", "select", str(items), "--judge", spec,
                                          "--out", str(tmp_path / "sel.jsonl"), "--store",
                                          str(store), "--quiet"])
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 29
        scorer = build_scorer(spec, select=True, store=store)
        [reward] = run_sync(scorer.score([RewardItem.of(PROMPT, "See a doctor.")]))
        run_sync(scorer.aclose())
        assert reward.criteria == ["hs-11"] and reward.reward == 1.0
        assert len(server.requests) == 29 + 1          # the one grading call, no relevance call
        grading = server.requests[-1]["body"]
        assert grading["temperature"] == 0.5           # HealthBench's grader sampling
        assert "temperature" not in server.requests[0]["body"]   # the selector's own settings
