"""``--dry-run`` for generation: calls, tokens and dollars, without calling a model.

Prompts that can be built before any reply (routing, the one-step rubric, and the evidence
synthesis over what the raw query retrieves) are rendered and counted (about 4 characters a
token); later stages add their template to an assumed size of what earlier stages return
(:data:`ASSUMED_INPUT_TOKENS`). Completion tokens are assumed per stage
(:data:`ASSUMED_REPLY_TOKENS`). The audit is counted once (refinement rounds run only when a
red flag stays uncited).

Example:
    >>> from assay.generate.queries import Query
    >>> est = estimate_generation([Query.plain("Bee sting?")], method="one-step",
    ...                           model="gpt-4.1-mini")
    >>> est.n_calls, est.prompt_tokens > 100, est.priced
    (1, True, True)
"""

from __future__ import annotations

from typing import Any

from assay.generate import retrieval
from assay.generate.pipeline import GenerateConfig
from assay.generate.schemas import SCHEMAS
from assay.generate.templates import load_templates
from assay.judges.pricing import CostEstimate, estimate_cost, estimate_tokens

ASSUMED_REPLY_TOKENS = {"route": 80, "rerank": 20, "synthesize_evidence": 700,
                        "extract_facts": 500, "interaction_intent": 150, "filter_facts": 400,
                        "draft_rubric": 900, "audit_rubric": 1100, "one_step_rubric": 600}
ASSUMED_INPUT_TOKENS = {"extract_facts": 600, "interaction_intent": 650, "filter_facts": 550,
                        "draft_rubric": 700, "audit_rubric": 1600}


def estimate_generation(queries: list[Any], *, method: str, model: str, kb: Any = None,
                        config: GenerateConfig | None = None, templates: Any = None
                        ) -> CostEstimate:
    """The calls, tokens and dollars of generating for ``queries`` with ``model``."""
    config = config or GenerateConfig(method=method)
    stage_templates = templates or load_templates()
    calls = prompt = completion = 0

    def add(stage: str, text_tokens: int) -> None:
        nonlocal calls, prompt, completion
        calls += 1
        prompt += text_tokens
        completion += ASSUMED_REPLY_TOKENS[stage]

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
            add(stage, tokens_of(stage, query=query.text, user_query=query.text) + assumed)
    total = estimate_cost(model, prompt, completion, 1)
    return CostEstimate(total.model, calls, total.prompt_tokens, total.completion_tokens,
                        total.usd, total.priced)
