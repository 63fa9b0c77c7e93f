"""openai/simple-evals' HealthBench grader request and reply rule, exactly.

simple-evals grades each rubric item with ``ChatCompletionSampler`` (``healthbench_eval.py``,
``sampler/chat_completion_sampler.py``): its system message, then the grader prompt as
``dict(content=..., role="user")``, sent by the openai SDK's ``chat.completions.create(model=,
messages=, temperature=, max_tokens=)``. The SDK writes the body with the keys in its own
order (``messages``, ``model``, then the optional ones as its ``create`` lists them:
``max_tokens`` before ``temperature``) as compact JSON (``openapi_dumps``: ``json.dumps(...,
ensure_ascii=False, separators=(",", ":"))``), with no ``response_format``. The reply is read by
``parse_json_to_dict`` (a leading ```` ```json ```` and a trailing ```` ``` ```` stripped, then
``json.loads``; anything else is ``{}``) and kept only if ``criteria_met`` is ``True`` or
``False``; otherwise simple-evals sends the same request again, forever. Assay sends it again
at most ``max_reasks`` times (the same request: no error is quoted back), then fails the call.

Judge configs with ``structured = "simple-evals"`` (``assay grade --protocol simple-evals``)
make exactly this request; with the same grader model, a score from Assay and one from
simple-evals are comparable by construction.

Example:
    >>> exact_body("gpt-4.1", ({"role": "system", "content": "S"},
    ...                        {"role": "user", "content": "G"}), temperature=0.5, max_tokens=2048)
    {'messages': [{'role': 'system', 'content': 'S'}, {'content': 'G', 'role': 'user'}], 'model': 'gpt-4.1', 'max_tokens': 2048, 'temperature': 0.5}
    >>> simple_evals_reply('```json\\n{"criteria_met": true}\\n```').data
    {'criteria_met': True}
    >>> simple_evals_reply('{"criteria_met": "yes"}').kind.value
    'schema_mismatch'
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from assay.judges.structured import ParseResult
from assay.judges.types import FailureKind

MODE = "simple-evals"
_FENCES = re.compile(r"^```json\s*|\s*```$")  # parse_json_to_dict's, as written there


def exact_body(model: str, messages: Sequence[Mapping[str, Any]], *, temperature: float | None,
               max_tokens: int | None) -> dict[str, Any]:
    """The request body the openai SDK sends for simple-evals' grader call (key order kept:
    the system message as ``_pack_message`` builds it, the others as ``dict(content=, role=)``)."""
    body: dict[str, Any] = {"messages": [
        {"role": m["role"], "content": m["content"]} if m.get("role") == "system"
        else {"content": m["content"], "role": m["role"]} for m in messages], "model": model}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if temperature is not None:
        body["temperature"] = temperature
    return body


def simple_evals_reply(text: str) -> ParseResult:
    """A grader reply read as simple-evals reads it: valid only with a boolean ``criteria_met``."""
    cleaned = _FENCES.sub("", text.strip())
    try:
        data = json.loads(cleaned)
    except json.JSONDecodeError as exc:
        return ParseResult(None, FailureKind.UNPARSEABLE, f"JSON decoding failed: {exc}")
    if not isinstance(data, dict):
        return ParseResult(None, FailureKind.SCHEMA_MISMATCH, "the reply is not a JSON object")
    label = data.get("criteria_met")
    if label is True or label is False:
        return ParseResult(data)
    return ParseResult(None, FailureKind.SCHEMA_MISMATCH,
                       f'"criteria_met" must be true or false, got {label!r}')
