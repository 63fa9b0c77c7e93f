"""Per-prompt selection (Health-SCORE §2.4, App. G) over the routing layer's relevance router."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from assay.bank import RelevanceSelector, load_health_score
from assay.bank.selection import CriterionSelector, prompt_key
from assay.cli import app
from assay.errors import ConfigError
from assay.jobs import CallStore, StageCaller
from assay.judges import make_judge

# The relevance prompt shows the criterion after "# Rubric Criterion": score by its text.
SOAP = {"by_prompt": [["Response uses appropriate SOAP formatting", {"score": 5,
                                                                      "justification_short": "note"}],
                      ["fabricate", {"score": 4, "justification_short": "data"}],
                      ["antibiotic", '```json\n{"score": 3, "justification_short": "maybe",}\n```']],
        "default": {"score": 1, "justification_short": "unrelated"}}
NOTE_REQUEST = [{"role": "system", "content": "You write clinical notes."},
                {"role": "user", "content": "Write a SOAP note: 54M, BP 150/95, on lisinopril."}]


@pytest.fixture
async def selector_on(serve, tmp_path):
    judges = []

    async def start(stages, store="calls.sqlite", **options):
        server = await serve(stages={"route_relevance": stages})
        judge = make_judge(f"openai-compatible:fake@{server.base_url}")
        judges.append(judge)
        caller = StageCaller(judge, CallStore.open(tmp_path / store))
        return RelevanceSelector(caller, load_health_score(), **options), server

    yield start
    for judge in judges:
        await judge.aclose()


async def test_each_criterion_is_rated_once_and_those_at_threshold_are_kept(selector_on):
    selector, server = await selector_on(SOAP)
    selection = await selector.select(NOTE_REQUEST)
    assert len(server.requests) == 29                       # one call per (prompt, criterion)
    assert selection.ids == ["hs-02", "hs-12"]              # scores 4 and 5; threshold 4
    assert selection.scores["hs-15"] == 3                   # fenced reply with a trailing comma
    assert selection.scores["hs-01"] == 1 and not selection.fallback_used
    assert [c.weight for c in selection.criteria] == [1.0, 1.0]
    prompt = server.requests[0]["body"]["messages"][-1]["content"]
    assert prompt.startswith("You are a careful, concise evaluator.")
    assert "system: You write clinical notes.\n\nuser: Write a SOAP note" in prompt
    assert isinstance(selector, CriterionSelector)


async def test_a_stricter_threshold_keeps_fewer_and_the_fallback_keeps_the_best(selector_on):
    strict, _ = await selector_on(SOAP, threshold=5)
    assert (await strict.select(NOTE_REQUEST)).ids == ["hs-12"]
    nothing = {"by_prompt": [["fabricate", {"score": 3, "justification_short": "x"}]],
               "default": {"score": 2, "justification_short": "x"}}
    best, _ = await selector_on(nothing, store="b.sqlite")
    fell = await best.select(NOTE_REQUEST)
    assert fell.ids == ["hs-02"] and fell.fallback_used
    none, _ = await selector_on(nothing, store="n.sqlite", fallback="none")
    assert (await none.select(NOTE_REQUEST)).ids == []
    every, _ = await selector_on(nothing, store="a.sqlite", fallback="all")
    assert len((await every.select(NOTE_REQUEST)).ids) == 29


async def test_selection_is_cached_by_prompt_in_memory_and_across_processes(selector_on):
    selector, server = await selector_on(SOAP)
    import asyncio

    group = await asyncio.gather(*(selector.select(NOTE_REQUEST) for _ in range(8)))  # 8 rollouts
    assert len(server.requests) == 29 and all(s == group[0] for s in group)
    assert selector.calls_saved == 7 * 29
    other = [{"role": "user", "content": "Is 150/95 high?"}]
    await selector.select(other)
    assert len(server.requests) == 58
    restarted = RelevanceSelector(selector.router.caller, load_health_score())
    again = await restarted.select(NOTE_REQUEST)             # a new process, the same store
    assert len(server.requests) == 58 and again.ids == group[0].ids


def test_the_prompt_key_ignores_everything_but_roles_and_contents():
    assert prompt_key([{"role": "user", "content": "a", "name": "x"}]) == prompt_key(
        [{"role": "user", "content": "a"}])
    assert prompt_key([{"role": "user", "content": "a"}]) != prompt_key(
        [{"role": "system", "content": "a"}])


def test_thresholds_off_the_scale_and_unknown_fallbacks_are_refused():
    with pytest.raises(ConfigError, match="outside the 1-5 scale"):
        RelevanceSelector(None, load_health_score(), threshold=6)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="unknown fallback"):
        RelevanceSelector(None, load_health_score(), fallback="random")  # type: ignore[arg-type]


def test_assay_bank_select_writes_one_selection_per_item(healthbench_dev_path, tmp_path):
    from assay.testing import FakeJudgeServer

    items = tmp_path / "items.jsonl"
    items.write_text("".join(line + "\n" for line in
                             healthbench_dev_path.read_text().splitlines()[:2]))
    out = tmp_path / "sel.jsonl"
    with FakeJudgeServer.run_in_thread(stages={"route_relevance": SOAP}) as server:
        result = CliRunner().invoke(app, ["bank", "select", str(items), "--judge",
                                          f"openai-compatible:fake@{server.base_url}",
                                          "--out", str(out), "--quiet"])
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 58
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["selected"] for r in rows] == [["hs-02", "hs-12"]] * 2
    assert "2.0 of 29 criteria selected on average" in result.output
    shown = CliRunner().invoke(app, ["bank", "prompt", "health-score-adaptive", "--selection",
                                     str(out), "--item", rows[0]["item_id"]])
    assert shown.exit_code == 0 and "1. The response should not fabricate" in shown.output


def bank_select(items, out, store, url, *options):
    return CliRunner().invoke(app, ["bank", "select", str(items), "--judge",
                                    f"openai-compatible:fake@{url}", "--out", str(out),
                                    "--store", str(store), "--quiet", *options])


@pytest.fixture
def two_items(healthbench_dev_path, tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(line + "\n" for line in
                             healthbench_dev_path.read_text().splitlines()[:2]))
    return items


def selected(out):
    return [json.loads(line)["selected"] for line in out.read_text().splitlines()]


def test_bank_select_with_another_threshold_recomputes_from_the_stored_ratings(two_items,
                                                                               tmp_path):
    from assay.testing import FakeJudgeServer

    store, out = tmp_path / "s.sqlite", tmp_path / "sel.jsonl"
    with FakeJudgeServer.run_in_thread(stages={"route_relevance": SOAP}) as server:
        assert bank_select(two_items, out, store, server.base_url).exit_code == 0
        result = bank_select(two_items, out, store, server.base_url, "--threshold", "5")
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 58                  # no rating asked twice
    assert selected(out) == [["hs-12"]] * 2                # not the stored threshold-4 ones


def test_bank_select_with_another_fallback_recomputes(two_items, tmp_path):
    from assay.testing import FakeJudgeServer

    nothing = {"by_prompt": [["fabricate", {"score": 3, "justification_short": "x"}]],
               "default": {"score": 2, "justification_short": "x"}}
    store, out = tmp_path / "s.sqlite", tmp_path / "sel.jsonl"
    with FakeJudgeServer.run_in_thread(stages={"route_relevance": nothing}) as server:
        assert bank_select(two_items, out, store, server.base_url).exit_code == 0
        assert selected(out) == [["hs-02"]] * 2
        result = bank_select(two_items, out, store, server.base_url, "--fallback", "all")
        assert result.exit_code == 0, result.output
    assert [len(ids) for ids in selected(out)] == [29, 29]


def test_bank_select_with_another_bank_selects_from_that_bank(two_items, tmp_path):
    from assay.testing import FakeJudgeServer

    health_score = load_health_score()
    bank = tmp_path / "bank.json"
    bank.write_text(json.dumps({"id": "mine", "criteria": [
        {"id": "m-01", "text": health_score.criterion("hs-12").text},
        {"id": "m-02", "text": health_score.criterion("hs-01").text}]}))
    store, out = tmp_path / "s.sqlite", tmp_path / "sel.jsonl"
    with FakeJudgeServer.run_in_thread(stages={"route_relevance": SOAP}) as server:
        assert bank_select(two_items, out, store, server.base_url).exit_code == 0
        result = bank_select(two_items, out, store, server.base_url, "--bank", str(bank))
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 58                  # both texts were rated already
    assert selected(out) == [["m-01"]] * 2
