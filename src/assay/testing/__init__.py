"""Testing helpers, public API: a fake judge server speaking the OpenAI chat-completions and
Anthropic messages APIs over real HTTP on loopback, with scriptable verdicts and faults.

Use it to test your own evaluation pipelines without a model or a key::

    from assay.testing import FakeJudgeServer, Faults

    async with FakeJudgeServer(policy={"c1": "MET", "c2": "UNMET"}, latency=0.01,
                               faults=Faults(script=["rate_limit"], retry_after=0.05)) as server:
        judge = make_judge(f"openai-compatible:fake@{server.base_url}")
        ...
        assert server.requests[0]["fault"] == "rate_limit"

Pipelines whose calls are not verdicts (generation stages, routers, RAG metrics) get scripted
replies by schema name: ``FakeJudgeServer(stages={"route": {...}, "facts": callable})``, see
:mod:`assay.testing.stages`.

From the shell: ``assay fake-judge --port 8089 --policy truth:labels.jsonl --error-rate 0.1``
(add ``--stages replies.yaml`` to script the other stages).

It also plays the model under test: ``FakeJudgeServer(models={"patient-bot": ModelScript(...)})``
answers requests for that model name with scripted free text (:mod:`assay.testing.models`).
"""

from assay.testing.batches import BatchScript
from assay.testing.faults import FAULTS, Faults, Latency
from assay.testing.models import ModelAnswer, ModelScript
from assay.testing.policies import (
    CallablePolicy,
    FixedPolicy,
    GroundTruthPolicy,
    PerCriterionPolicy,
    Policy,
    RandomErrorPolicy,
    as_policy,
    policy_from_string,
)
from assay.testing.prompts import CriterionView, parse_prompt
from assay.testing.render import render, render_one
from assay.testing.search import FakeSearchServer
from assay.testing.server import FakeJudgeServer
from assay.testing.stages import StageRequest, StageScript, as_stage_script
from assay.testing.standin_data import standin_rows, write_standin

__all__ = [
    "FAULTS",
    "BatchScript",
    "CallablePolicy",
    "CriterionView",
    "FakeJudgeServer",
    "FakeSearchServer",
    "Faults",
    "FixedPolicy",
    "GroundTruthPolicy",
    "Latency",
    "ModelAnswer",
    "ModelScript",
    "PerCriterionPolicy",
    "Policy",
    "RandomErrorPolicy",
    "StageRequest",
    "StageScript",
    "as_policy",
    "as_stage_script",
    "parse_prompt",
    "policy_from_string",
    "render",
    "render_one",
    "standin_rows",
    "write_standin",
]
