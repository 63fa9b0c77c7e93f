"""The prompt-caching rules in code are the providers' own: each figure is read from the passage
quoted in tests/data/provider_docs/prompt_caching.md (Anthropic's and OpenAI's pages)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assay.judges.pricing import BATCH_PRICE_FACTOR
from assay.judges.prompt_caching import (
    OPENAI_MIN_TOKENS,
    OPENAI_STEP_TOKENS,
    TTL_SECONDS,
    WRITE_FACTOR,
    min_cacheable_tokens,
)
from assay.testing import bill

DOCS = (Path(__file__).parents[1] / "data" / "provider_docs" / "prompt_caching.md").read_text()
PROSE = re.sub(r"\s*\n>?\s*", " ", DOCS)  # the quotes as running text


def said(phrase: str) -> bool:
    return phrase in PROSE


def model_id(name: str) -> str:
    """A model's name as the docs write it, as its API id starts: "Claude Sonnet 4.5" ->
    "claude-sonnet-4-5", "Claude Haiku 3.5" -> "claude-3-5-haiku", "Claude Mythos Preview" ->
    "claude-mythos"."""
    words = name.replace("(deprecated)", "").split()[1:]
    family, version = words[0].lower(), words[1] if len(words) > 1 else ""
    if not re.fullmatch(r"\d+(\.\d+)?", version):
        return f"claude-{family}"
    dashed = version.replace(".", "-")
    return f"claude-{family}-{dashed}" if int(version.split(".")[0]) >= 4 else f"claude-{dashed}-{family}"


def quoted_minimums() -> dict[str, int]:
    """``{model id: minimum}`` from the quoted "Cache limitations" list."""
    found = {}
    for tokens, names in re.findall(r"^> - (\d+) tokens for (.+)$", DOCS, re.MULTILINE):
        for name in re.split(r",\s*(?:and\s+)?|\s+and\s+", names):
            if name.strip():
                found[model_id(name.strip())] = int(tokens)
    return found


def test_the_quoted_list_is_read_whole():
    minimums = quoted_minimums()
    assert minimums["claude-sonnet-4-5"] == 1024 and minimums["claude-3-7-sonnet"] == 1024
    assert len(minimums) == 13


@pytest.mark.parametrize(("model", "tokens"), sorted(quoted_minimums().items()))
def test_each_claude_models_minimum_is_the_quoted_one(model, tokens):
    assert min_cacheable_tokens("anthropic", model) == tokens
    assert min_cacheable_tokens("anthropic", f"{model}-20250929") == tokens  # a dated id


def test_a_claude_model_the_docs_do_not_list_gets_the_largest_minimum():
    assert min_cacheable_tokens("anthropic", "claude-future-9") == max(quoted_minimums().values())


def test_the_write_and_read_prices_and_lifetimes_are_the_quoted_ones():
    assert said("5-minute cache write tokens are 1.25 times the base input tokens price")
    assert said("1-hour cache write tokens are 2 times the base input tokens price")
    assert WRITE_FACTOR == {"5m": 1.25, "1h": 2.0} == {"5m": bill.WRITE_5M, "1h": bill.WRITE_1H}
    assert said("the cache has a 5-minute lifetime") and TTL_SECONDS == {"5m": 300, "1h": 3600}
    assert said("stack with other pricing modifiers such as the Batch API discount")
    assert bill.BATCH_SHARE == BATCH_PRICE_FACTOR == 0.5


def test_openais_automatic_caching_starts_at_1024_tokens_in_steps_of_128():
    assert said("Caching is enabled automatically for prompts that are 1024 tokens or longer")
    assert said("cache hits occurring in increments of 128 tokens")
    assert (OPENAI_MIN_TOKENS, OPENAI_STEP_TOKENS) == (1024, 128)
    assert min_cacheable_tokens("openai", "gpt-4.1") == 1024
