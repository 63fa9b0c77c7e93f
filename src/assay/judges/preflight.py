"""A judge's preflight request: one real request to the completion path before the first
call (a wrong base URL, key or model fails there, before a run is created), what it sends, what
a dry run counts for it, and what its answer means.

Example:
    >>> from assay.judges.transport import HttpResult
    >>> check_preflight_answer("j", "http://h/v1/chat/completions", HttpResult(503, {}, b"busy"))
    >>> check_preflight_answer("j", "http://h/v1/chat/completions", HttpResult(401, {}, b""))
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: judge 'j': http://h/v1/chat/completions refused the API key (HTTP 401)
"""

from __future__ import annotations

import orjson

from assay.errors import ConfigError
from assay.judges.budget import message_chars
from assay.judges.config import JudgeConfig
from assay.judges.local_servers import asks_server
from assay.judges.pricing import CostEstimate, default_pricing, tokens_in, usage_cost
from assay.judges.secrets import redact
from assay.judges.transport import HttpResult
from assay.judges.types import Usage
from assay.logs import get_logger

log = get_logger("assay.judges")
BODY_EXCERPT = 300  # characters of an error reply's body quoted in a message
PREFLIGHT_PROMPT = "Assay preflight check: reply with the JSON object {\"ok\": true}."
PREFLIGHT_MESSAGES = ({"role": "user", "content": PREFLIGHT_PROMPT},)
PREFLIGHT_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
PREFLIGHT_MAX_TOKENS = 16


def preflight_estimate(config: JudgeConfig) -> tuple[int, CostEstimate]:
    """What a judge's preflight sends before its first call, for a dry run: the requests
    (the completion check, and for a local preset its server's own question, free) and the
    check's tokens and dollars at the judge's price.

    >>> from assay.judges.specs import config_from
    >>> requests, cost = preflight_estimate(config_from("openai:gpt-4.1-mini"))
    >>> requests, cost.n_calls, cost.completion_tokens, cost.usd > 0
    (1, 1, 16, True)
    >>> preflight_estimate(config_from("llamacpp:gemma"))[0]
    2
    """
    prompt = tokens_in(message_chars(PREFLIGHT_MESSAGES) + len(orjson.dumps(PREFLIGHT_SCHEMA)))
    completion = config.max_tokens or PREFLIGHT_MAX_TOKENS
    price = config.price or default_pricing().price_for(config.model)
    usd = round(usage_cost(price, Usage(prompt, completion)), 6) if price else 0.0
    requests = 1 + asks_server(config.provider, config.wire)
    return requests, CostEstimate(config.model, 1, prompt, completion, usd,
                                         price is not None)


def check_preflight_answer(judge_id: str, where: str, result: HttpResult) -> None:
    """Raise :class:`ConfigError` for a preflight answer that says the judge cannot work (a
    refused key, no completion endpoint, a refused request); log a transient one (a rate
    limit, a server error: the run goes on and retries as usual). ``result`` is not a 200."""
    status = result.status
    if status in (401, 403):
        raise ConfigError(f"judge {judge_id!r}: {where} refused the API key (HTTP {status})")
    if status in (404, 405):
        raise ConfigError(
            f"judge {judge_id!r}: {where} answered HTTP {status}: no completion endpoint "
            f"there (is the base URL right? it usually ends in /v1): {http_message(result)}")
    if 400 <= status < 500 and status not in (408, 409, 429):
        raise ConfigError(f"judge {judge_id!r}: {where} refused a test request: "
                          f"{http_message(result)}")
    log.warning("judge %s: preflight got HTTP %d (transient; the run retries)", judge_id, status)


def http_message(result: HttpResult) -> str:
    """An HTTP error reply as a message: its status and the start of its body, secrets
    redacted."""
    text = result.body[:BODY_EXCERPT].decode("utf-8", "replace").strip()
    return redact(f"HTTP {result.status}: {text}" if text else f"HTTP {result.status}")
