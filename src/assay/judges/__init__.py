"""Judges: fast clients for OpenAI-compatible and Anthropic endpoints, with structured replies,
retries, rate limits, a response cache, cost accounting and a budget.

Judge specs
-----------
A judge is named by ``PROVIDER:MODEL`` or ``PROVIDER:MODEL@BASE_URL``:

=====================================  ===========================================  ======================
spec                                   default base URL                             key variable
=====================================  ===========================================  ======================
``openai:gpt-4.1-mini``                https://api.openai.com/v1                    OPENAI_API_KEY
``anthropic:claude-sonnet-4-5``        https://api.anthropic.com/v1 (native API)    ANTHROPIC_API_KEY
``openrouter:openai/gpt-4.1``          https://openrouter.ai/api/v1                 OPENROUTER_API_KEY
``together:MODEL`` / ``groq:MODEL``    their OpenAI-compatible URLs                 TOGETHER_/GROQ_API_KEY
``gemini:gemini-2.5-flash``            Gemini's OpenAI-compatible endpoint          GEMINI_API_KEY
``azure:DEPLOYMENT@https://R.openai.azure.com/openai/v1``  (or $AZURE_OPENAI_ENDPOINT)  AZURE_OPENAI_API_KEY
``vllm:MODEL``                         http://127.0.0.1:8000/v1                     VLLM_API_KEY (optional)
``ollama:llama3.1:8b``                 http://127.0.0.1:11434/v1                    none
``llamacpp:MODEL`` / ``lmstudio:M``    http://127.0.0.1:8080/v1, :1234/v1           none
``openai-compatible:MODEL@URL``        the URL given                                none unless configured
=====================================  ===========================================  ======================

``@URL`` overrides the base URL of any provider (``vllm:Qwen/Qwen3-8B@http://gpu:8000/v1``).
A bare ``NAME`` refers to a ``[judges.NAME]`` table in ``assay.toml`` (see
:func:`load_judge_configs`), which can also set ``api_key_env``, temperature, max_tokens, seed,
reasoning_effort, thinking_budget, timeout_s, timeout_ceiling_s, max_reasks (re-asks of a reply
that does not parse, 2 by default), headers, extra_body, limits, retry and price.
Keys come only from environment variables or the config file; endpoints on loopback need none.
An unknown provider or a missing key raises :class:`assay.errors.ConfigError` in
:func:`make_judge`; an unreachable endpoint in ``await judge.check()``.

Example:
    >>> from assay.testing import FakeJudgeServer
    >>> with FakeJudgeServer.run_in_thread(policy="MET") as server:
    ...     judge = make_judge(f"openai-compatible:fake@{server.base_url}")
    ...     reply = judge.ask_sync(JudgeRequest(
    ...         messages=({"role": "user", "content": '<criterion id="c1">Says hi</criterion>'},),
    ...         schema=VERDICT_SCHEMA))
    ...     run_sync(judge.aclose())
    >>> reply.ok, reply.data["verdict"]
    (True, 'MET')
"""

from __future__ import annotations

from assay.judges.budget import Budget
from assay.judges.cache import CacheStats, ResponseCache
from assay.judges.config import JudgeConfig, Limits, ModelPrice, RetryPolicy
from assay.judges.factory import check_judges, make_judge
from assay.judges.judge import Judge
from assay.judges.pricing import CostEstimate, Pricing, estimate_cost, estimate_tokens
from assay.judges.specs import PRESETS, load_judge_configs, parse_spec
from assay.judges.sync import run_sync
from assay.judges.types import Failure, FailureKind, JudgeReply, JudgeRequest, Usage

VERDICT_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "explanation": {"type": "string"},
        "verdict": {"type": "string", "enum": ["MET", "UNMET", "CANNOT_ASSESS"]},
    },
    "required": ["explanation", "verdict"],
}
"""A ready-made single-criterion verdict schema (the grading engine defines its own)."""

__all__ = [
    "PRESETS",
    "VERDICT_SCHEMA",
    "Budget",
    "CacheStats",
    "CostEstimate",
    "Failure",
    "FailureKind",
    "Judge",
    "JudgeConfig",
    "JudgeReply",
    "JudgeRequest",
    "Limits",
    "ModelPrice",
    "Pricing",
    "ResponseCache",
    "RetryPolicy",
    "Usage",
    "check_judges",
    "estimate_cost",
    "estimate_tokens",
    "load_judge_configs",
    "make_judge",
    "parse_spec",
    "run_sync",
]
