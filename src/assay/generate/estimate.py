"""``--dry-run`` for generation: calls, tokens and dollars, without calling a model.

Prompts that can be built before any reply (routing, the one-step rubric, and the evidence
synthesis over what the raw query retrieves) are rendered and counted (about 4 characters a
token); later stages add their template to an assumed size of what earlier stages return
(:data:`ASSUMED_INPUT_TOKENS`). Completion tokens are assumed per stage
(:data:`ASSUMED_REPLY_TOKENS`). The audit is counted ``1 + refine_rounds`` times per query:
a refinement round runs only while a red flag stays uncited, so this is the most the audit can
send (on the shipped example every query takes its round). The calls are counted per stage
(:attr:`GenerationEstimate.stages`), and the judges' preflight requests (one per model, sent
and paid before the first call) apart, their dollars in the total.

Example:
    >>> from assay.generate.queries import Query
    >>> est = estimate_generation([Query.plain("Bee sting?")], method="one-step",
    ...                           model="gpt-4.1-mini")
    >>> est.n_calls, est.stages, est.prompt_tokens > 100, est.priced
    (1, {'one_step_rubric': 1}, True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.generate import retrieval
from assay.generate.pipeline import GenerateConfig
from assay.generate.schemas import SCHEMAS
from assay.generate.templates import load_templates
from assay.judges.preflight import preflight_estimate
from assay.judges.pricing import CostEstimate, estimate_cost, estimate_tokens

ASSUMED_REPLY_TOKENS = {"route": 80, "rerank": 20, "synthesize_evidence": 700,
                        "extract_facts": 500, "interaction_intent": 150, "filter_facts": 400,
                        "draft_rubric": 900, "audit_rubric": 1100, "one_step_rubric": 600}
ASSUMED_INPUT_TOKENS = {"extract_facts": 600, "interaction_intent": 650, "filter_facts": 550,
                        "draft_rubric": 700, "audit_rubric": 1600}


@dataclass(frozen=True)
class GenerationEstimate:
    """A generation's dry run: its stage calls (``stages``: per stage), their tokens, and the
    preflight requests (``preflight_usd``: their dollars); ``usd`` is everything."""

    calls: CostEstimate
    stages: dict[str, int] = field(default_factory=dict)
    preflight_requests: int = 0
    preflight_usd: float = 0.0

    @property
    def n_calls(self) -> int:
        return self.calls.n_calls

    @property
    def prompt_tokens(self) -> int:
        return self.calls.prompt_tokens

    @property
    def completion_tokens(self) -> int:
        return self.calls.completion_tokens

    @property
    def priced(self) -> bool:
        return self.calls.priced

    @property
    def usd(self) -> float:
        return round(self.calls.usd + self.preflight_usd, 6)


def estimate_generation(queries: list[Any], *, method: str, model: str, kb: Any = None,
                        config: GenerateConfig | None = None, templates: Any = None,
                        judges: Sequence[Any] = ()) -> GenerationEstimate:
    """The calls, tokens and dollars of generating for ``queries`` with ``model``; ``judges``:
    the configs of the judges the job would make (the model's, the fast model's), whose
    preflight requests are counted when any call would be sent."""
    config = config or GenerateConfig(method=method)
    stage_templates = templates or load_templates()
    calls = prompt = completion = 0
    stages: dict[str, int] = {}

    def add(stage: str, text_tokens: int, times: int = 1) -> None:
        nonlocal calls, prompt, completion
        calls += times
        stages[stage] = stages.get(stage, 0) + times
        prompt += text_tokens * times
        completion += ASSUMED_REPLY_TOKENS[stage] * times

    def tokens_of(stage: str, **values: Any) -> int:
        return sum(estimate_tokens(m["content"]) for m in stage_templates[stage].render(**values))

    for query in queries if method != "generic" else []:
        if method == "one-step":
            add("one_step_rubric", tokens_of("one_step_rubric", query=query.text))
            continue
        add("route", tokens_of("route", query=query.text))
        chunks = [h.chunk for h in kb.search(query.text, k=config.per_query_hits * 3)] if kb else []
        if config.rerank and len(chunks) > config.top_k:
            add("rerank", tokens_of("rerank", query=query.text, top_k=config.top_k,
                                    candidates=retrieval.candidates_text(chunks)))
        add("synthesize_evidence", tokens_of(
            "synthesize_evidence", query=query.text, raw_text=retrieval.raw_text(
                chunks[:config.top_k], config.evidence_tokens),
            format_instructions=retrieval.format_instructions(SCHEMAS["synthesize_evidence"])))
        for stage, assumed in ASSUMED_INPUT_TOKENS.items():
            rounds = 1 + config.refine_rounds if stage == "audit_rubric" else 1
            add(stage, tokens_of(stage, query=query.text, user_query=query.text) + assumed,
                rounds)
    total = estimate_cost(model, prompt, completion, 1)
    requests, preflight_usd = 0, 0.0
    for judge in judges if calls else ():
        sent, cost = preflight_estimate(judge)
        requests += sent
        preflight_usd += cost.usd
    return GenerationEstimate(CostEstimate(total.model, calls, total.prompt_tokens,
                                           total.completion_tokens, total.usd, total.priced),
                              stages, requests, round(preflight_usd, 6))
