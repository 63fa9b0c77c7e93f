"""A request longer than the model's context (HTTP 400, in each server's words) is a
``context_length`` failure with the token counts, never retried, saying what to do."""

from __future__ import annotations

import pytest

from assay.judges import FailureKind
from assay.judges.context_overflow import context_overflow
from assay.testing import Faults

from .helpers import judge_for, request

WORDINGS = ["context_overflow", "context_overflow_vllm", "context_overflow_openai"]


@pytest.mark.parametrize("fault", WORDINGS)
async def test_a_context_overflow_is_context_length_with_both_token_counts(serve, fault):
    server = await serve(faults=Faults(script=[fault]))
    async with judge_for(server) as judge:
        reply = await judge.ask(request())
    assert reply.failure.kind is FailureKind.CONTEXT_LENGTH and reply.failure.status == 400
    assert "2,300 tokens" in reply.failure.message and "2,048 tokens" in reply.failure.message


@pytest.mark.parametrize("fault", WORDINGS)
async def test_a_context_overflow_is_never_retried_nor_taken_for_a_rejected_format(serve, fault):
    server = await serve(faults=Faults(script=[fault] * 5))
    async with judge_for(server) as judge:
        reply = await judge.ask(request())
        assert judge.structured_mode == "json_schema"
    assert reply.attempts == 1 and len(server.requests) == 1


async def test_a_context_length_failure_says_what_to_do(serve):
    server = await serve(faults=Faults(script=["context_overflow"]))
    async with judge_for(server) as judge:
        reply = await judge.ask(request())
    message = reply.failure.message
    assert "larger context" in message and "--evidence-tokens" in message
    assert "--context-tokens" in message


def test_an_overflow_without_counts_is_still_recognised():
    overflow = context_overflow(400, b'{"error": {"code": "context_length_exceeded"}}')
    assert overflow is not None and overflow.request_tokens is None


def test_a_bad_request_of_another_kind_is_no_overflow():
    assert context_overflow(400, b'{"error": {"message": "unknown model"}}') is None
    assert context_overflow(500, b"maximum context length is 10 tokens") is None


def test_anthropics_wording_gives_both_counts():
    body = (
        b'{"type": "error", "error": {"type": "invalid_request_error", '
        b'"message": "prompt is too long: 210000 tokens > 200000 maximum"}}'
    )
    overflow = context_overflow(400, body)
    assert (overflow.request_tokens, overflow.context_tokens) == (210000, 200000)


def test_a_prompt_that_fits_only_without_its_completion_budget_says_so():
    body = (
        b'{"object": "error", "message": "\'max_tokens\' or \'max_completion_tokens\' is too '
        b"large: 1024. This model's maximum context length is 2048 tokens and your request "
        b'has 1500 input tokens (1024 > 2048 - 1500)."}'
    )
    overflow = context_overflow(400, body)
    assert (overflow.request_tokens, overflow.context_tokens) == (2524, 2048)
    message = overflow.message("draft")
    assert "2,524 tokens, 1,024 of them the completion budget" in message
    assert "smaller max_tokens" in message
