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
simple-evals are comparable by construction. Their free-text requests (the model under test,
``assay sample --protocol simple-evals``) are simple-evals' samplers' (:func:`sampler_body`;
the samplers' table is :mod:`assay.sampling.simple_evals`).

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
SAMPLER_MODE = "simple-evals-sampler"  # a free-text request of a simple-evals config
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


# The SDKs' body keys in the order their create() methods write them (the ones a sampler sends;
# quoted in tests/data/simple_evals/sampler_request.md)
_CHAT_ORDER = ("messages", "model", "max_completion_tokens", "max_tokens", "reasoning_effort",
               "seed", "temperature")
_RESPONSES_ORDER = ("input", "max_output_tokens", "model", "reasoning", "temperature")
_ANTHROPIC_ORDER = ("max_tokens", "messages", "model", "system", "temperature")


def sampler_body(wire: str, model: str, messages: Sequence[Mapping[str, Any]], *,
                 temperature: float | None, max_tokens: int | None,
                 extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The body a simple-evals sampler sends for ``messages`` (already in the order and shape
    the sampler sends them: its system message first, the conversation's dicts as they are),
    through the openai SDK (``wire``: ``openai``, ``openai-responses``) or the anthropic one
    (``anthropic``: a system message goes to ``system``); ``extra``: the keys a sampler sends
    beyond these (``reasoning_effort``, ``reasoning``: a ``None`` is sent as ``null``).

    >>> sampler_body("openai", "o1", [{"content": "q", "role": "user"}], temperature=None,
    ...              max_tokens=None, extra={"reasoning_effort": None})
    {'messages': [{'content': 'q', 'role': 'user'}], 'model': 'o1', 'reasoning_effort': None}
    """
    fields: dict[str, Any] = {"model": model}
    if wire == "anthropic":
        fields["messages"] = [dict(m) for m in messages if m.get("role") != "system"]
        system = [m["content"] for m in messages if m.get("role") == "system"]
        if system:
            fields["system"] = system[0]
        order: tuple[str, ...] = _ANTHROPIC_ORDER
    elif wire == "openai-responses":
        fields["input"] = [dict(m) for m in messages]
        order = _RESPONSES_ORDER
    else:
        fields["messages"] = [dict(m) for m in messages]
        order = _CHAT_ORDER
    if max_tokens is not None:
        fields["max_output_tokens" if wire == "openai-responses" else "max_tokens"] = max_tokens
    if temperature is not None:
        fields["temperature"] = temperature
    fields.update(extra or {})
    ordered = {key: fields.pop(key) for key in order if key in fields}
    return {**ordered, **fields}


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
