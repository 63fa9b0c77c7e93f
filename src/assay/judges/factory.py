"""Building judges from specs or configs, and checking them before a run.

Example:
    >>> judge = make_judge("vllm:Qwen/Qwen3-8B")     # loopback: no key needed
    >>> judge.id, judge.config.base_url
    ('vllm:Qwen/Qwen3-8B', 'http://127.0.0.1:8000/v1')
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path

from assay.judges.budget import Budget
from assay.judges.cache import ResponseCache
from assay.judges.config import JudgeConfig
from assay.judges.judge import Judge
from assay.judges.pricing import Pricing
from assay.judges.secrets import url_credentials
from assay.judges.specs import config_from, resolve_api_key
from assay.judges.transport import Transport
from assay.judges.wires import wire_for


def make_judge(
    spec_or_config: str | JudgeConfig,
    *,
    cache: ResponseCache | None = None,
    budget: Budget | None = None,
    pricing: Pricing | None = None,
    config_file: str | Path | None = None,
    **overrides,
) -> Judge:
    """A :class:`Judge` for a spec string (``openai:gpt-4.1-mini``,
    ``openai-compatible:MODEL@URL``, a named judge of ``assay.toml``) or a :class:`JudgeConfig`.

    ``overrides`` replace config fields (``temperature=0``, ``timeout_s=10``, ...). Raises
    :class:`assay.errors.ConfigError` for an unknown provider or a missing key; call
    ``await judge.check()`` (or :func:`check_judges`) to also catch an unreachable endpoint.
    """
    config = config_from(spec_or_config, config_file)
    if overrides:
        config = JudgeConfig.model_validate({**config.model_dump(), **overrides})
    key = resolve_api_key(config)
    wire = wire_for(config)
    base_url, basic = url_credentials(config.base_url)
    secret_headers = wire.auth_headers(config, key)
    if basic is not None and not any(h.lower() == "authorization" for h in secret_headers):
        secret_headers["Authorization"] = basic  # user:password@ of the URL, never in the URL
    transport = Transport(
        base_url,
        wire.static_headers(config),
        config.timeout_s,  # None: each attempt is bounded by the judge's fitted timeout
        secret_headers=secret_headers,
        max_connections=0,
    )
    return Judge(config, transport, cache=cache, budget=budget, pricing=pricing)


async def check_judges(judges: Iterable[Judge], timeout_s: float = 5.0) -> None:
    """Preflight every judge at once; the first problem is raised as ConfigError."""
    await asyncio.gather(*(judge.check(timeout_s) for judge in judges))
