"""Free-text requests (the model under test) through the judges layer, over real HTTP."""

from __future__ import annotations

from tests.judges.helpers import FAST_RETRY

from assay.judges import JudgeRequest, make_judge
from assay.testing import Faults, ModelScript

QUESTION = ({"role": "user", "content": "I was stung by a bee. What now?"},)


def text_request(sample: int = 0) -> JudgeRequest:
    return JudgeRequest(QUESTION, None, "sample", text=True, sample=sample)


async def test_a_free_text_request_asks_for_no_reply_format_and_returns_the_text(serve):
    server = await serve(models={"bot": ModelScript(answers={"bee": "Scrape the stinger out."})})
    async with make_judge(f"openai-compatible:bot@{server.base_url}") as model:
        reply = await model.ask(text_request())
    assert reply.ok
    assert reply.data == {"text": "Scrape the stinger out.", "finish_reason": "stop",
                          "reasoning": None}
    body = server.requests[0]["body"]
    assert "response_format" not in body and body["messages"] == list(QUESTION)


async def test_thinking_is_kept_apart_from_the_answer_that_is_graded(serve):
    server = await serve(models={"r1": ModelScript(answers={"bee": {
        "text": "Scrape it out.", "reasoning": "Stingers pump venom."}})})
    async with make_judge(f"openai-compatible:r1@{server.base_url}") as model:
        reply = await model.ask(text_request())
    assert reply.data["text"] == "Scrape it out."
    assert reply.data["reasoning"] == "Stingers pump venom."


async def test_inline_think_tags_are_moved_out_of_the_visible_answer(serve):
    server = await serve(models={"qwen": ModelScript(
        default="<think>\nvenom sac\n</think>\n\nScrape it out.")})
    async with make_judge(f"openai-compatible:qwen@{server.base_url}") as model:
        reply = await model.ask(text_request())
    assert (reply.data["text"], reply.data["reasoning"]) == ("Scrape it out.", "venom sac")


async def test_anthropic_thinking_blocks_are_kept_apart(serve):
    server = await serve(models={"claude": ModelScript(answers={"bee": {
        "text": "Scrape it out.", "reasoning": "Check for allergy."}})})
    async with make_judge(f"anthropic:claude@{server.base_url}") as model:
        reply = await model.ask(text_request())
    assert reply.data == {"text": "Scrape it out.", "finish_reason": "end_turn",
                          "reasoning": "Check for allergy."}
    assert "tools" not in server.requests[0]["body"]


async def test_a_length_stop_is_recorded_not_hidden(serve):
    server = await serve(models={"bot": ModelScript(answers={"bee": {
        "text": "Scrape the sting", "finish_reason": "length"}})})
    async with make_judge(f"openai-compatible:bot@{server.base_url}") as model:
        reply = await model.ask(text_request())
    assert reply.data["finish_reason"] == "length" and reply.data["text"] == "Scrape the sting"


async def test_the_models_own_refusal_is_its_answer_with_the_stop_recorded(serve):
    server = await serve(models={"bot": ModelScript()}, faults=Faults(script=["refusal"]))
    async with make_judge(f"openai-compatible:bot@{server.base_url}") as model:
        reply = await model.ask(text_request())
    assert reply.data["finish_reason"] == "refusal"
    assert reply.data["text"] == "I'm sorry, but I can't help with that."


async def test_no_visible_answer_is_a_failure_never_an_empty_answer(serve):
    server = await serve(models={"o3": ModelScript(answers={"bee": {
        "text": "", "reasoning": "long thoughts", "finish_reason": "length"}})})
    async with make_judge(f"openai-compatible:o3@{server.base_url}") as model:
        reply = await model.ask(text_request())
    assert not reply.ok and reply.data is None
    assert reply.failure.kind == "empty" and "length" in reply.failure.message


async def test_a_content_filter_stop_is_a_failure(serve):
    server = await serve(models={"bot": ModelScript(answers={"bee": {
        "text": "Partial", "finish_reason": "content_filter"}})})
    async with make_judge(f"openai-compatible:bot@{server.base_url}") as model:
        reply = await model.ask(text_request())
    assert not reply.ok and reply.failure.kind == "refusal"


async def test_samples_of_one_prompt_are_separate_calls_with_their_own_seed(serve):
    server = await serve(models={"bot": ModelScript(answers={"bee": ["one", "two", "three"]})})
    async with make_judge(f"openai-compatible:bot@{server.base_url}", seed=10) as model:
        texts = [(await model.ask(text_request(k))).data["text"] for k in range(3)]
    assert [r["body"]["seed"] for r in server.requests] == [10, 11, 12]
    assert texts == ["two", "three", "one"]  # seeds 10, 11, 12 pick entries 1, 2, 0


async def test_samples_have_distinct_cache_keys_and_structured_keys_are_unchanged(serve):
    server = await serve(models={"bot": ModelScript()})
    async with make_judge(f"openai-compatible:bot@{server.base_url}") as model:
        keys = {model.cache_key(text_request(k)) for k in range(3)}
        structured = model.cache_key(JudgeRequest(QUESTION, None, "sample"))
    assert len(keys) == 3 and structured not in keys


async def test_a_failed_sample_is_retried_like_any_call(serve):
    server = await serve(models={"bot": ModelScript(default="fine")},
                         faults=Faults(script=["server_error", "rate_limit"], retry_after=0.01))
    async with make_judge(f"openai-compatible:bot@{server.base_url}", retry=FAST_RETRY) as model:
        reply = await model.ask(text_request())
    assert reply.ok and reply.attempts == 3
