"""The prompts and reply schemas of rubric evaluation (seed 000 §3, §5.3, §7), one per stage.

The pairwise judge is the paper's Table 16, filled in with the header and item rule of the
authors' code; the CIA verifier, the gold atomiser, the critique and the rewrite prompts are the
authors' released ones (the paper does not print them; ``[R]`` in the spec). The near-miss
perturbation prompt exists only in Chinese there; this is its English rendering. The rewrite
prompt's last line asks for JSON (``{"revised_response": ...}``) instead of bare text, because
every stage call returns a schema-checked object.

Stage names (= schema names, what the fake judge scripts by): :data:`STAGES`.

Example:
    >>> from assay.rubric_eval.released import RubricEntry
    >>> print(rubric_text([RubricEntry(criterion="Says X", axis="accuracy", points=5)]))
    Apply each rule independently. Add points when the behavior is present; subtract points when undesirable behavior is present.
    1. (+5.0 points, axis=accuracy) Says X
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from assay.rubric_eval.released import RubricEntry

ATOMIZE, VERIFY = "cia_atomize", "cia_verify"
PERTURB, PAIR_JUDGE = "nearmiss_perturb", "pair_judge"
CRITIQUE, REWRITE = "refine_critique", "refine_rewrite"
STAGES = (ATOMIZE, VERIFY, PERTURB, PAIR_JUDGE, CRITIQUE, REWRITE)
VERSION = "seed000-v1"  # part of every call's cache key: bump when a prompt changes

_STR = {"type": "string"}
MAX_ITEMS = 100  # the bound of every list a reply holds: atomic points, rubric items, edits


def _object(properties: dict[str, Any], required: Sequence[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


# --- Clinical Intent Alignment ---------------------------------------------------------------

# Loose on the fields cia.sanitize_points coerces one by one (an index as "3", a polarity
# outside the two): one bad field never discards the other points of the reply.
ATOMIZE_SCHEMA = _object({"gold_atomic_points": {"type": "array", "maxItems": MAX_ITEMS,
                                                  "items": _object({
    "text": _STR, "source_criterion_index": {"type": ["integer", "string", "null"]},
    "axis": {"type": ["string", "null"]}, "polarity": {"type": ["string", "null"]}},
    ["text"])}}, ["gold_atomic_points"])

VERIFY_SCHEMA = _object({
    "decision": {"enum": ["YES", "NO"]},
    "support_index": {"type": ["integer", "null"]},
    "reason": _STR}, ["decision"])


def _points(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def atomize_prompt(index: str, gold: Sequence[RubricEntry]) -> str:
    """Physician criteria → atomic keypoints (the authors' gold atomisation prompt)."""
    block = "\n".join(f"{i}. [axis={e.axis or 'unknown'}, points={_points(e.points)}] {e.criterion}"
                      for i, e in enumerate(gold, start=1))
    return f"""
You are converting physician-authored reference rubrics into atomic keypoints.

Atomicity definition:
1) Indivisible: each point has exactly one checkable action, medical fact, or interaction requirement.
2) Self-contained: Must be fully understandable in isolation. You must RESOLVE all pronouns (e.g., replace "it", "they", "their", "those", "above", "the patient", "the drug") with specific nouns based on context.
3) Binary-verifiable: evaluator can answer YES/NO without ambiguity.

Decomposition rules:
1) Split compound instructions into separate atomic points.
2) Preserve conditional logic as one unit (do NOT split condition from action).
3) Keep explicit negative constraints/prohibitions as independent atomic points.

Input Rubrics (Conversation ID: {index}):
{block}

Return strict JSON only:
{{
  "gold_atomic_points": [
    {{
      "text": "atomic point text",
      "source_criterion_index": 1,
      "axis": "accuracy|completeness|context_awareness|communication_quality|instruction_following|other",
      "polarity": "positive_requirement|negative_constraint"
    }}
  ]
}}
"""


def verify_prompt(criteria: Sequence[str], hypothesis: str) -> str:
    """Is one gold atomic point explicitly entailed by any candidate criterion? (Asymmetric
    Verification, the authors' CIA verifier.)"""
    premise = "\n".join(f"{i}. {c}" for i, c in enumerate(criteria, start=1))
    return f"""
You are doing Asymmetric Verification.

Premise (Generated Rubric criteria list, knowledge source):
{premise}

Hypothesis (single Gold Atomic Point):
{hypothesis}

Task:
Determine if Hypothesis is EXPLICITLY entailed by ANY of the criteria in Premise.

STRICT ADHERENCE REQUIRED:
- Strict Intent Alignment: a Premise criterion MUST explicitly require the exact specific action, fact, or behavior described in the Hypothesis.
- Granularity Rule: broad or generic instructions do NOT entail a specific atomic point unless the specific core intent is explicitly stated.
- No Implicit Assumptions: do not assume the model/doctor would "naturally know" to include a specific detail from a broad category.
- If the core specific intent is missing, output NO.
- When in doubt, choose NO.

If YES, you MUST cite one supporting criterion index from the Premise. 
If no criterion explicitly meets this strict standard, output NO.

Return strict JSON only:
{{
  "decision": "YES" or "NO",
  "support_index": 1,
  "reason": "short justification"
}}

Rules:
- Use only Premise content.
- No partial labels; only YES/NO.
- If decision is NO, set support_index to null.
- Keep reason concise and state why coverage is explicit (YES) or missing (NO).
"""


# --- Near-miss pairs -------------------------------------------------------------------------

ERROR_TYPES = ("numeric_threshold", "modality_flip", "exception_scope", "fact_swap", "other")

PERTURB_SCHEMA = _object({
    "edit_span_before": _STR, "edit_span_after": _STR, "perturbed_response": _STR,
    "error_type": _STR}, ["edit_span_before", "edit_span_after", "perturbed_response"])


def perturb_prompt(target: str, question: str, reference: str) -> str:
    """A minimal, single-span, medically meaningful error that violates ``target``."""
    return f"""
You are a medical text editor. Produce a "minimal perturbation" of the reference answer.

Goals:
1) Introduce exactly one subtle but medically meaningful error (one that violates the target keypoint).
2) Apart from this one error, keep everything else as unchanged as possible.

Hard requirements:
- Change only one contiguous span.
- Do not rewrite the style of whole paragraphs.
- Do not add any extra explanatory text.
- Output JSON only.

Input:
[Target keypoint]
{target}

[Question]
{question}

[Reference answer]
{reference}

Output JSON:
{{
  "edit_span_before": "...",
  "edit_span_after": "...",
  "perturbed_response": "...",
  "error_type": "numeric_threshold|modality_flip|exception_scope|fact_swap|other"
}}
""".strip()


PAIR_JUDGE_SCHEMA = _object({
    "decision": {"enum": ["A", "B", "SAME"]},
    "total": _object({"A": {"type": "number"}, "B": {"type": "number"},
                      "delta": {"type": "number"}}, ["A", "B"]),
    "items": {"type": "array", "maxItems": MAX_ITEMS, "items": _object({
        "id": {"type": "integer"}, "axis": _STR, "points": {"type": ["number", "string", "null"]},
        "hit_A": {"type": "boolean"}, "hit_B": {"type": "boolean"}}, ["id", "hit_A", "hit_B"])},
}, ["decision", "total", "items"])


_PREAMBLE = ("Apply each rule independently. Add points when the behavior is present; subtract "
             "points when undesirable behavior is present.")


def rubric_text(entries: Sequence[RubricEntry]) -> str:
    """A rubric as the pairwise judge reads it: the preamble, then ``i. (+w points, axis=a) c``."""
    lines = [_PREAMBLE]
    for i, e in enumerate(entries, start=1):
        sign = "+" if e.points >= 0 else ""
        lines.append(f"{i}. ({sign}{float(e.points)} points, axis={e.axis or 'overall'}) "
                     f"{e.criterion}")
    return "\n".join(lines)


def pair_judge_prompt(question: str, a: str, b: str, rubric: Sequence[RubricEntry] | None) -> str:
    """Table 16: compare responses A and B with a rubric, or (``rubric=None``) without one."""
    if rubric:
        header = ("Compare Response A vs Response B using the provided rubric.\n\n[RUBRIC]\n"
                  + rubric_text(rubric))
        item_rule = "items[].id must match rubric numbering (1..N)"
    else:
        header = ("Compare Response A vs Response B based on overall clinical accuracy, safety, "
                  "and communication quality.")
        item_rule = "Provide a single item in 'items' summarizing the overall comparison."
    return f"""
You are a strict clinical evaluator. {header}

You MUST explicitly check the quality of each response against the required clinical standards.

[QUESTION]
{question}

[RESPONSE A]
{a}

[RESPONSE B]
{b}

Return JSON ONLY in the following schema:
{{
  "decision": "A|B|SAME",
  "total": {{ "A": <number>, "B": <number>, "delta": <number> }},
  "items": [
    {{ "id": <int>, "axis": "<string>", "points": <number>, "hit_A": <true/false>, "hit_B": <true/false> }}
  ]
}}

Rules:
- {item_rule}
- Sum item points to compute totals.
- decision: choose A if delta > 0, B if delta < 0, SAME if the scores are very close.
- Do not output any additional text.
""".strip()


# --- Refinement ------------------------------------------------------------------------------

CRITIQUE_SCHEMA = _object({
    "rubric_scores": {"type": "array", "maxItems": MAX_ITEMS, "items": _object({
        "criterion": _STR, "status": _STR, "reason": _STR}, ["criterion", "status"])},
    "edit_plan": {"type": "array", "maxItems": MAX_ITEMS, "items": _object({
        "priority": _STR, "action": _STR, "instruction": _STR}, ["action", "instruction"])},
    "constraints": {"type": "array", "maxItems": MAX_ITEMS, "items": _STR},
}, ["edit_plan"])

REWRITE_SCHEMA = _object({"revised_response": _STR}, ["revised_response"])

CRITIQUE_SYSTEM = """You are a medical response evaluator.

You are given:
1) A user question or conversation
2) A draft response
3) An evaluation rubric

Your task:
- Evaluate the response strictly according to the rubric.
- Identify missing, weak, or incorrect elements.
- Produce a minimal, actionable edit plan.

Output MUST be valid JSON with the following schema:

{
  "rubric_scores": [
    {
      "criterion": "...",
      "status": "PASS | PARTIAL | FAIL",
      "reason": "short explanation"
    }
  ],
  "edit_plan": [
    {
      "priority": "HIGH | MEDIUM | LOW",
      "action": "ADD | REMOVE | MODIFY",
      "instruction": "clear, concrete editing instruction"
    }
  ],
  "constraints": [
    "constraint 1",
    "constraint 2"
  ]
}

Do not include any text outside the JSON.
"""


def critique_user(question: str, draft: str, rubric: Sequence[RubricEntry] | None) -> str:
    """The critique's user message: with a rubric, or the Self-Critique request without one."""
    if rubric is None:
        return f"""
User question:
{question}

Draft response:
{draft}

Please carefully review the draft response above.
Identify its main weaknesses, missing or incorrect information,
and propose concrete, actionable suggestions for improvement.
""".strip()
    payload = {"rubrics": [{"criterion": e.criterion, "axis": e.axis,
                            "points": int(e.points) if e.points.is_integer() else e.points}
                           for e in rubric]}
    return f"""
User question:
{question}

Draft response:
{draft}

Rubric:
{json.dumps(payload, ensure_ascii=False, indent=2)}
""".strip()


def rewrite_prompt(question: str, response: str, plan: list[dict[str, str]],
                   constraints: list[str]) -> str:
    """Constraint-guided rewrite: apply ONLY the edit plan (the editor's prompt)."""
    return f"""You are refining a medical response.

Original question:
{question}

Original response:
{response}

Edit plan:
{json.dumps(plan, ensure_ascii=False, indent=2)}

Constraints:
{json.dumps(constraints, ensure_ascii=False, indent=2)}

Task:
Revise the response by applying ONLY the instructions in the edit plan.
- Do NOT add new medical facts beyond what is required.
- Do NOT introduce a definitive diagnosis.
- Keep tone neutral and non-alarmist.
- Leave unrelated parts unchanged.

Return JSON only: {{"revised_response": "<the revised response text>"}}
"""
