"""The whole pipeline over loopback HTTP against the fake judge playing every stage (the shipped
sample), its provenance, its failures, the baselines, and its output feeding ``assay grade``."""

from __future__ import annotations

import json

import pytest
from tests.generate.conftest import fake

import assay
from assay.errors import ConfigError
from assay.generate import agenerate, read_queries
from assay.generate.estimate import estimate_generation
from assay.jobs import CallStore
from assay.testing import FakeSearchServer, Faults

PIPELINE_STAGES = ["route", "rerank", "synthesize_evidence", "extract_facts", "interaction_intent",
                   "filter_facts", "draft_rubric", "audit_rubric"]


async def run(server, queries, kb, tmp_path, **kwargs):
    return await agenerate(str(queries), kb=kb, model=fake(server),
                           out=tmp_path / "rubrics.jsonl", **kwargs)


async def test_the_sample_runs_through_every_stage_and_cites_its_evidence(
        serve, sample_kb, sample_queries, sample_stages, tmp_path):
    server = await serve(stages=sample_stages)
    result = await run(server, sample_queries, sample_kb, tmp_path)
    assert result.status == "complete" and result.written == 3 and not result.failed
    store = CallStore.open(result.job_dir / "calls.sqlite")
    for query_id, record in result.records.items():
        stages = [c.stage for c in store.calls(query_id)]
        assert set(stages) == set(PIPELINE_STAGES), stages
        assert stages[:3] == ["route", "rerank", "synthesize_evidence"]
        retrieved = {e["id"] for e in record["evidence"]}
        rubric = result.rubrics[query_id]
        assert 1 <= len(rubric.criteria) <= 20 and rubric.penalties
        for criterion in rubric.criteria:
            p = criterion.provenance
            assert p.source == "generated" and p.model == "fake"
            assert p.stage in ("audit_rubric", "audit_rules")
            assert p.evidence, criterion.text
            chunks = [e for e in p.evidence if not e.startswith(("intent:", "fact:"))]
            assert set(chunks) <= retrieved
        assert record["cited_chunks"] and set(record["cited_chunks"]) <= retrieved
        flags = [f["label"] for f in record["board"] if f["kind"] == "red_flag"]
        for label in flags:
            assert any(label in c.metadata.get("facts", []) and abs(c.weight) >= 8
                       for c in rubric.criteria)


async def test_the_filter_cannot_drop_a_red_flag_or_negative_constraint(
        serve, sample_kb, sample_queries, sample_stages, tmp_path):
    server = await serve(stages=sample_stages)
    result = await run(server, sample_queries, sample_kb, tmp_path)
    fever = next(r for r in result.records.values() if "2-month-old" in r["query"])
    board = {f["label"]: f["text"] for f in fever["board"]}
    # the scripted filter kept one red flag and no negative constraint
    assert board["N1"] == "Do not give aspirin to children under 16 years."
    assert board["N2"].startswith("Do not sponge")
    assert board["R2"].startswith("A stiff neck")
    assert fever["audit"]["red_flags_added"] == ["R1", "R2"]


async def test_an_uncited_negative_constraint_survives_the_audit_as_a_penalty(
        serve, sample_kb, sample_queries, sample_stages, tmp_path):
    """Issue 30, point 3: the scripted audit leaves "Do not sponge a child with cold water"
    uncited; it ends as a high-stakes criterion, and the audit record says so."""
    server = await serve(stages=sample_stages)
    result = await run(server, sample_queries, sample_kb, tmp_path)
    [(query_id, fever)] = [(q, r) for q, r in result.records.items() if "2-month-old" in r["query"]]
    label = next(f["label"] for f in fever["board"] if f["text"].startswith("Do not sponge"))
    assert label in fever["audit"]["negative_constraints_added"]
    citing = [c for c in result.rubrics[query_id].criteria if label in c.metadata.get("facts", [])]
    assert citing and all(c.weight <= -8 for c in citing)


async def test_generated_rubrics_feed_straight_into_assay_grade(
        serve, sample_kb, sample_queries, sample_stages, tmp_path):
    server = await serve(stages=sample_stages, policy="MET")
    result = await run(server, sample_queries, sample_kb, tmp_path)
    lines = [json.loads(line) for line in (tmp_path / "rubrics.jsonl").read_text().splitlines()]
    assert all(entry["provenance"]["evidence"] for line in lines for entry in line["rubrics"])
    responses = {line["prompt_id"]: "See a doctor today." for line in lines}
    graded = await assay.agrade(tmp_path / "rubrics.jsonl", healthbench=True, responses=responses,
                                judges=[fake(server)], run_dir=tmp_path / "run")
    assert graded.status == "complete" and set(graded.scores) == set(result.rubrics)


async def test_a_malformed_stage_reply_is_asked_again(
        serve, sample_kb, sample_queries, sample_stages, tmp_path):
    server = await serve(stages=sample_stages)
    good = server.stages._replies["draft_rubric"]
    server.stages["draft_rubric"] = ["Sure! Here it is: {rubrics: oops", good]
    result = await run(server, [read_queries(sample_queries)[0].text], sample_kb, tmp_path)
    assert result.status == "complete"
    [call] = CallStore.open(result.job_dir / "calls.sqlite").calls(stage="draft_rubric")
    assert call.ok and call.attempts == 2


async def test_a_stage_that_stays_malformed_fails_its_item_with_a_located_error(
        serve, sample_kb, sample_queries, sample_stages, tmp_path):
    server = await serve(stages=sample_stages)
    server.stages["draft_rubric"] = {"by_prompt": [["150/95", "never json"]],
                                     "default": server.stages._replies["draft_rubric"]}
    result = await run(server, sample_queries, sample_kb, tmp_path)
    [(failed_id, reason)] = result.failed.items()
    assert reason.startswith(f"item {failed_id!r}: stage 'draft_rubric': unparseable")
    assert result.status == "incomplete" and len(result.rubrics) == 2
    [call] = CallStore.open(result.job_dir / "calls.sqlite").calls(failed_id, "draft_rubric")
    assert not call.ok and call.raw == "never json" and "unparseable" in call.failure


BEE = "I was stung by a bee ten minutes ago and my lips are starting to swell. What should I do?"


async def test_a_refused_routing_falls_back_to_the_query_itself(
        serve, sample_kb, sample_stages, tmp_path):
    server = await serve(stages=sample_stages,
                         faults=Faults(at={"Medical Research Assistant": ["refusal"]}))
    result = await run(server, [BEE], sample_kb, tmp_path)
    [record] = result.records.values()
    assert result.status == "complete" and record["search_queries"] == [record["query"]]
    assert record["notes"][0].startswith("route failed, searched with the query itself (refusal")


async def test_a_routing_whose_queries_find_nothing_falls_back_to_the_query_itself(
        serve, sample_kb, sample_stages, tmp_path):
    server = await serve(stages=sample_stages)
    server.stages["route"] = {"intent": "Safety", "queries": ["xyzzy plugh"]}
    result = await run(server, [BEE], sample_kb, tmp_path)
    [record] = result.records.values()
    assert result.status == "complete"
    assert record["search_queries"] == ["xyzzy plugh", record["query"]]
    assert record["notes"][0] == ("the route's search queries found nothing ('xyzzy plugh'), "
                                  "searched with the query itself")
    assert record["evidence"]


async def test_evidence_found_by_neither_the_route_nor_the_query_fails_naming_both(
        serve, sample_kb, sample_stages, tmp_path):
    server = await serve(stages=sample_stages)
    server.stages["route"] = {"intent": "General", "queries": ["xyzzy plugh", "frobnicate"]}
    result = await run(server, "Qwghlm zorkmid?", sample_kb, tmp_path)
    assert result.status == "incomplete" and not result.records
    [(key, reason)] = result.failed.items()
    assert reason == (f"item {key!r}: no evidence found for the search queries 'xyzzy plugh'; "
                      "'frobnicate'; 'Qwghlm zorkmid?'")


async def test_a_routing_that_stays_unparsed_fails_its_item_instead_of_falling_back(
        serve, sample_kb, sample_stages, tmp_path):
    """Issue 27, point 12: a fault is not the model's answer. A clean run would have routed, so
    a search with the raw query would give a rubric that no clean run gives."""
    server = await serve(stages=sample_stages)
    server.stages["route"] = "no json"
    result = await run(server, [BEE], sample_kb, tmp_path)
    assert result.status == "incomplete" and not result.records
    [reason] = result.failed.values()
    assert "stage 'route': unparseable" in reason


async def test_the_one_step_baseline_is_one_call_from_the_query_alone(
        serve, sample_queries, sample_stages, tmp_path):
    server = await serve(stages=sample_stages)
    result = await agenerate(sample_queries, model=fake(server), method="one-step",
                             out=tmp_path / "one.jsonl")
    assert len(server.requests) == 3 and {r["stage"] for r in server.requests} == {"one_step_rubric"}
    assert all(r.penalties and r.criteria[0].provenance.stage == "one_step_rubric"
               for r in result.rubrics.values())


async def test_the_generic_baseline_needs_no_model(sample_queries, tmp_path):
    result = await agenerate(sample_queries, method="generic", out=tmp_path / "generic")
    assert len(result.rubrics) == 3 and result.written == 3
    files = sorted(p.name for p in (tmp_path / "generic").iterdir())
    assert files == sorted(f"{q.id}.yaml" for q in read_queries(sample_queries))
    rubric = next(iter(result.rubrics.values()))
    assert [c.weight for c in rubric.criteria] == [3, 3, 3, 1, 2, 1]


async def test_one_query_can_be_written_as_a_rubric_document(
        serve, sample_kb, sample_stages, tmp_path):
    server = await serve(stages=sample_stages)
    result = await agenerate("My blood pressure was 150/95 at the pharmacy today. Is that "
                             "dangerous?", kb=sample_kb, model=fake(server),
                             out=tmp_path / "bp.yaml")
    from assay.io import read_rubric

    rubric = read_rubric(tmp_path / "bp.yaml")
    assert rubric == next(iter(result.rubrics.values()))


async def test_web_search_evidence_is_searched_once_and_cited(serve, sample_stages, tmp_path):
    server = await serve(stages=sample_stages)
    page = {"title": "High blood pressure - NHS", "url": "https://www.nhs.uk/bp/",
            "content": "A clinic reading of 140/90 or higher may be high blood pressure. A "
                       "reading of 180/120 or higher with chest pain, shortness of breath, vision "
                       "changes or confusion needs emergency services."}
    from assay.evidence import TavilySearch

    async with FakeSearchServer(results={"*": [page]}) as search_server:
        web = TavilySearch(api_key=search_server.key, base_url=search_server.base_url)
        query = "My blood pressure was 150/95 at the pharmacy today. Is that dangerous?"
        # pages=False: this test's URL is not served here (test_pages.py fetches pages)
        first = await agenerate(query, model=fake(server), search=web, out=tmp_path / "o.jsonl",
                                pages=False)
        searches = len(search_server.requests)
        await agenerate(query, model=fake(server), search=web, out=tmp_path / "o.jsonl",
                        pages=False)
    assert searches == 3 and len(search_server.requests) == 3  # resumed: no new search
    assert (tmp_path / "o.jsonl.job" / "records.jsonl").read_text().count("\n") == 1
    [record] = first.records.values()
    assert [e["source"] for e in record["evidence"]] == ["https://www.nhs.uk/bp/"]
    assert record["cited_chunks"] and record["cited_chunks"][0].startswith("web:")


async def test_resuming_with_another_model_is_refused(
        serve, sample_kb, sample_queries, sample_stages, tmp_path):
    server = await serve(stages=sample_stages)
    await run(server, sample_queries, sample_kb, tmp_path, max_criteria=20)
    with pytest.raises(ConfigError, match="max_criteria: 20 -> 12"):
        await run(server, sample_queries, sample_kb, tmp_path, max_criteria=12)


def test_a_dry_run_counts_the_calls_of_each_method(sample_kb, sample_queries):
    queries = read_queries(sample_queries)
    pipeline = estimate_generation(queries, method="pipeline", model="gpt-4.1", kb=sample_kb)
    # 3 queries x 8 stages, and the audit's refinement round (refine_rounds 1): at most 27
    assert pipeline.n_calls == 3 * 9 and pipeline.priced and pipeline.usd > 0
    assert pipeline.stages["audit_rubric"] == 6 and pipeline.stages["route"] == 3
    assert estimate_generation(queries, method="one-step", model="gpt-4.1").n_calls == 3
    assert estimate_generation(queries, method="generic", model="gpt-4.1").n_calls == 0


async def test_the_dry_runs_calls_per_stage_are_the_calls_the_shipped_example_sends(
        serve, sample_kb, sample_queries, sample_stages, tmp_path):
    """Issue 40, point 3: the dry run counted one audit call a query where the shipped example
    sends two (24 estimated, 27 sent); and the preflight request it also sends."""
    from collections import Counter

    from assay.judges.specs import config_from

    server = await serve(stages=sample_stages)
    spec = fake(server)
    estimate = estimate_generation(read_queries(sample_queries), method="pipeline",
                                   model="fake", kb=sample_kb, judges=[config_from(spec)])
    result = await run(server, sample_queries, sample_kb, tmp_path)
    assert result.status == "complete"
    store = CallStore.open(result.job_dir / "calls.sqlite")
    sent = Counter(c.stage for c in store.calls())
    assert all(c.attempts == 1 for c in store.calls())  # no retry: the counts must be equal
    assert estimate.stages == dict(sent) and sum(sent.values()) == estimate.n_calls == 27
    assert estimate.preflight_requests == server.preflights == store.totals().preflight_requests == 1


async def test_a_healthbench_file_gets_its_own_lines_back_with_generated_rubrics(
        healthbench_dev_path, tmp_path):
    source = tmp_path / "two.jsonl"
    source.write_text("".join(healthbench_dev_path.read_text().splitlines(keepends=True)[:2]))
    await agenerate(source, method="generic", out=tmp_path / "out.jsonl")
    before = [json.loads(line) for line in source.read_text().splitlines()]
    after = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    for old, new in zip(before, after, strict=True):
        assert {k: v for k, v in new.items() if k != "rubrics"} == \
            {k: v for k, v in old.items() if k != "rubrics"}
        assert [r["points"] for r in new["rubrics"]] == [3, 3, 3, 1, 2, 1]


def test_assay_generate_is_callable_from_the_top_level_package():
    result = assay.generate(["Is 38.5 C a fever in a toddler?"], method="generic")
    [rubric] = result.rubrics.values()
    assert rubric.criteria[0].id == "clinical_correctness" and result.status == "complete"


async def test_routing_is_cut_to_five_distinct_search_queries(serve, sample_kb, sample_stages,
                                                               tmp_path):
    server = await serve(stages=sample_stages)
    server.stages["route"] = {"intent": "x", "queries": ["a sting", "a sting",
                                                         *[f"bee sting {i}" for i in range(6)]]}
    result = await run(server, [("I was stung by a bee ten minutes ago and my lips are starting "
                                "to swell. What should I do?")], sample_kb, tmp_path)
    [record] = result.records.values()
    assert record["search_queries"] == ["a sting", "bee sting 0", "bee sting 1", "bee sting 2",
                                        "bee sting 3"]


async def test_empty_evidence_fails_the_item_at_the_synthesis_stage(serve, sample_kb,
                                                                    sample_stages, tmp_path):
    server = await serve(stages=sample_stages)
    server.stages["synthesize_evidence"] = {"evidence_sources": [], "synthesis": {
        "consensus": "", "red_flags": []}}
    result = await run(server, ["I was stung by a bee."], sample_kb, tmp_path)
    [(key, reason)] = result.failed.items()
    assert reason == f"item {key!r}: stage 'synthesize_evidence': Empty Evidence"
    assert [r["stage"] for r in server.requests] == ["route", "rerank", "synthesize_evidence"]


async def test_a_spent_budget_stops_cleanly_and_a_larger_one_finishes_the_job(
        serve, sample_kb, sample_queries, sample_stages, tmp_path):
    server = await serve(stages=sample_stages)
    config = tmp_path / "assay.toml"
    config.write_text(f'[judges.priced]\nspec = "{fake(server)}"\n'
                      'price = { input = 1000.0, output = 1000.0 }\n', encoding="utf-8")
    args = {"kb": sample_kb, "model": "priced", "config_file": config,
            "out": tmp_path / "r.jsonl"}
    first = await agenerate(sample_queries, budget=8.0, **args)
    assert first.status == "budget" and first.failed and first.totals.cost_usd > 0
    assert first.totals.cost_usd <= 8.0  # a hard cap: calls in flight reserved their cost
    sent = len(server.requests)
    again = await agenerate(sample_queries, budget=1000.0, **args)
    assert again.status == "complete" and len(again.rubrics) == 3
    assert again.resumed == len(first.rubrics)
    assert len(server.requests) - sent < again.totals.calls  # finished calls were not redone


async def test_the_evidence_token_budget_bounds_the_sources_the_synthesis_sees(
        serve, sample_kb, sample_queries, sample_stages, tmp_path):
    server = await serve(stages=sample_stages)
    result = await run(server, sample_queries, sample_kb, tmp_path, evidence_tokens=50)
    assert result.status == "complete"
    for request in (r for r in server.requests if r["stage"] == "synthesize_evidence"):
        prompt = request["body"]["messages"][-1]["content"]
        sources = prompt.split("SOURCE: ")[1:]
        assert sources and all(len(s.split("\n", 1)[1].split("\n\n")[0]) <= 200 // len(sources)
                               for s in sources)


async def test_every_stage_sends_its_declared_completion_budget(
        serve, sample_kb, sample_queries, sample_stages, tmp_path):
    server = await serve(stages=sample_stages)
    await run(server, sample_queries, sample_kb, tmp_path)
    sent = {r["stage"]: r["body"]["max_tokens"] for r in server.requests}
    assert sent["route"] == 256 and sent["rerank"] == 128
    assert sent["draft_rubric"] == 150 * 2 * 15 and sent["audit_rubric"] == 150 * 2 * 20
