"""The generation pipeline of seed 000 for one query, stage by stage.

=======================  ===================================================================
stage (= schema name)    what it does
=======================  ===================================================================
``route``                intent and 3–5 search queries (Table 9); if the model refuses, or
                         its queries find nothing, the raw query (any other failure fails the
                         item, retried on resume)
(retrieval, no model)    each search query against the knowledge base (and the web, if on),
                         candidates fused by reciprocal rank
``rerank``               the model picks the top 5 candidates (when there are more than 5)
``synthesize_evidence``  the evidence block: consensus, red flags, one excerpt per source
``extract_facts``        atomic facts: positive facts, negative constraints, red flags
``interaction_intent``   persona, missing-context questions, tone (concurrent with the above)
``filter_facts``         query-aware filtering; the safety override is re-applied in code
``draft_rubric``         the first rubric from the Reference Board (axes, tiers, < 15 items)
``audit_rubric``         gap analysis, QC, merging; asked again (``refine_rounds``) while a red
                         flag or negative constraint is uncited; then the rules in code
=======================  ===================================================================

Every call goes through :class:`assay.jobs.StageCaller` (judges layer, trace, resume); the
deterministic parts are in :mod:`~assay.generate.board`, :mod:`~assay.generate.rules` and
:mod:`~assay.generate.retrieval`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import asdict, dataclass, replace
from typing import Any

from assay.errors import AssayError
from assay.evidence.chunking import Chunk
from assay.evidence.fusion import reciprocal_rank_fusion
from assay.evidence.kb import KnowledgeBase
from assay.evidence.pages import PageText, fetch_pages, require_page_text
from assay.evidence.websearch import SearchResult, WebSearch, dedupe_by_url
from assay.generate import retrieval
from assay.generate.baselines import generic_rubric
from assay.generate.board import Board, build_board, safety_override
from assay.generate.queries import Query
from assay.generate.rules import (
    MAX_CRITERIA,
    MAX_DRAFT,
    RubricItem,
    audit_rules,
    coerce_items,
    enforce_citations,
    uncarried_constraints,
)
from assay.generate.schemas import (
    BUDGETS,
    SCHEMAS,
    rerank_schema,
    rubric_budget,
    rubric_schema,
)
from assay.generate.templates import StageTemplate, load_templates
from assay.jobs import CallStore, StageCaller, StageError
from assay.judges.completion import CompletionBudget
from assay.rubric import Criterion, Provenance, Rubric

METHODS = ("pipeline", "one-step", "generic")


@dataclass(frozen=True)
class GenerateConfig:
    """Settings of a generation job (all part of the job's config: changing one is a new job)."""

    method: str = "pipeline"
    per_query_hits: int = 5
    top_k: int = 5
    rerank: bool = True
    retrieval_mode: str = "auto"
    web_results: int = 2
    pages: bool = True  # fetch each web hit's page text (Trafilatura), else keep the snippet
    max_draft: int = MAX_DRAFT
    max_criteria: int = MAX_CRITERIA
    refine_rounds: int = 1
    # about how many tokens of source text the evidence synthesis sees, all chunks together
    # (None: each chunk's first 5,000 characters); lower it for a model with a small context
    evidence_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}")
        if self.evidence_tokens is not None and self.evidence_tokens < 1:
            raise ValueError("evidence_tokens must be at least 1")

    def as_dict(self) -> dict[str, Any]:
        settings = asdict(self)
        if self.evidence_tokens is None:  # unset: a job from before the option resumes as it was
            del settings["evidence_tokens"]
        return settings


class Generator:
    """Generates one query's rubric; see the module docstring. ``fast`` answers ``rerank``
    (the paper's Smart-Fast split); by default the main caller does."""

    def __init__(self, caller: StageCaller | None, *, kb: KnowledgeBase | None = None,
                 web: WebSearch | None = None, config: GenerateConfig = GenerateConfig(),
                 templates: dict[str, StageTemplate] | None = None,
                 fast: StageCaller | None = None, store: CallStore | None = None):
        if config.method == "pipeline" and kb is None and web is None:
            raise AssayError("the pipeline needs evidence: a knowledge base (--kb) and/or web "
                             "search (--search)")
        if config.method == "pipeline" and web is not None and config.pages:
            require_page_text()  # before the first call, not a silent fall back to snippets
        self.caller, self.fast, self.kb, self.web, self.config = caller, fast or caller, kb, web, \
            config
        self.templates = templates or load_templates()
        self.store = store or (caller.store if caller is not None else None)

    @property
    def model(self) -> str | None:
        return self.caller.model if self.caller is not None else None

    async def __call__(self, query: Query) -> dict[str, Any]:
        if self.config.method == "generic":
            rubric = generic_rubric(query.id)
            return {"id": query.id, "query": query.text, "method": "generic",
                    "rubric": rubric.model_dump(mode="json", exclude_defaults=True)}
        if self.config.method == "one-step":
            return await self.one_step(query)
        return await self.pipeline(query)

    async def _ask(self, stage: str, item: Query, caller: StageCaller | None = None, *,
                   schema: dict[str, Any] | None = None, budget: CompletionBudget | None = None,
                   **values: Any) -> dict[str, Any]:
        """The reply of ``stage``, with the stage's own schema and budget unless given."""
        template = self.templates[stage]
        caller = caller or self.caller
        if caller is None:  # only the generic method runs without a model
            raise AssayError(f"stage {stage!r} calls a model: give the Generator a caller")
        return await caller.ask(
            stage, template.render(**values), schema or SCHEMAS[stage], item_id=item.id,
            template_version=template.version, budget=budget or BUDGETS.get(stage))

    async def _ask_rubric(self, stage: str, item: Query, max_items: int,
                          **values: Any) -> dict[str, Any]:
        """A rubric stage's reply: at most twice the criteria its prompt allows (the rules
        trim it to the limit afterwards), with a budget for that many."""
        bound = 2 * max_items
        return await self._ask(stage, item, schema=rubric_schema(bound),
                               budget=rubric_budget(bound), **values)

    async def one_step(self, query: Query) -> dict[str, Any]:
        reply = await self._ask_rubric("one_step_rubric", query, self.config.max_criteria,
                                       query=query.text)
        items, notes = coerce_items(reply, "one_step_rubric")
        rubric = self._rubric(query, items, {}, method="one-step")
        return {"id": query.id, "query": query.text, "method": "one-step", "notes": notes,
                "rubric": rubric.model_dump(mode="json", exclude_defaults=True)}

    async def pipeline(self, query: Query) -> dict[str, Any]:
        notes: list[str] = []
        try:
            route = await self._ask("route", query, query=query.text)
        except StageError as exc:  # [R]: a failed routing falls back to the raw query ...
            if not exc.refused:  # ... but a fault fails the item: a resumed job asks again
                raise
            route = {"intent": "General", "queries": [query.text]}
            notes.append(f"route failed, searched with the query itself ({exc.reason})")
        search_queries = list(dict.fromkeys(q for q in route["queries"] if str(q).strip()))[:5] \
            or [query.text]
        candidates = await self._candidates(search_queries, notes)
        if not candidates and query.text not in search_queries:  # [R]'s fallback again
            notes.append("the route's search queries found nothing ("
                         + "; ".join(map(repr, search_queries))
                         + "), searched with the query itself")
            search_queries.append(query.text)
            candidates = await self._candidates([query.text], notes)
        if not candidates:
            raise AssayError(f"item {query.id!r}: no evidence found for the search queries "
                             + "; ".join(map(repr, search_queries)))
        chosen = await self._rerank(query, candidates)
        block = await self._ask("synthesize_evidence", query, query=query.text,
                                raw_text=retrieval.raw_text(chosen, self.config.evidence_tokens),
                                format_instructions=retrieval.format_instructions(
                                    SCHEMAS["synthesize_evidence"]))
        evidence = retrieval.evidence_text(block)
        if not evidence.strip():
            raise AssayError(f"item {query.id!r}: stage 'synthesize_evidence': Empty Evidence")
        raw_facts, intent = await asyncio.gather(
            self._ask("extract_facts", query, evidence=evidence),
            self._ask("interaction_intent", query, query=query.text, evidence=evidence))
        filtered = await self._ask("filter_facts", query, query=query.text,
                                   facts=json.dumps(raw_facts, indent=2, ensure_ascii=False))
        board = build_board(safety_override(raw_facts, filtered), intent, chosen)
        if not board.has_medical_facts:
            raise AssayError(f"item {query.id!r}: stage 'extract_facts': no atomic fact "
                             "extracted from the evidence")
        draft = await self._draft(query, board, notes)
        final, report = await self._audit(query, board, draft, notes)
        chunk_ids = {c.id for c in chosen}
        rubric = self._rubric(query, final, {f.label: f for f in board.facts}, method="pipeline")
        return {
            "id": query.id, "query": query.text, "method": "pipeline",
            "rubric": rubric.model_dump(mode="json", exclude_defaults=True),
            "intent": route.get("intent"), "search_queries": search_queries,
            "evidence": [{"id": c.id, "title": c.title, "source": c.source, "start": c.start,
                          "end": c.end} for c in chosen],
            "board": board.as_dict(), "audit": report, "notes": notes,
            "cited_chunks": sorted({cid for f in board.facts for cid in f.chunks} & chunk_ids),
        }

    async def _candidates(self, search_queries: list[str], notes: list[str]) -> list[Chunk]:
        rankings: list[list[str]] = []
        chunks: dict[str, Chunk] = {}
        web = await self._web_results(search_queries) if self.web is not None else {}
        same: dict[str, str] = {}  # final URL or page text -> the chunk that already holds it
        for sq in search_queries:
            if self.kb is not None:
                hits = self.kb.search(retrieval.clean_search_query(sq) or sq,
                                      k=self.config.per_query_hits, mode=self.config.retrieval_mode)
                rankings.append([h.chunk.id for h in hits])
                chunks.update((h.chunk.id, h.chunk) for h in hits)
            if self.web is not None:
                ranking: list[str] = []
                for r in web[sq]:
                    note = f"web page {r.url}: {r.page_error}, kept the search snippet"
                    if r.page_error and note not in notes:
                        notes.append(note)
                    chunk = r.as_chunk()
                    keys = _page_keys(r)  # hashes the page: once
                    held = next((same[k] for k in keys if k in same), chunk.id)
                    same.update((k, held) for k in keys)
                    chunks.setdefault(held, chunk)
                    if held not in ranking:
                        ranking.append(held)
                rankings.append(ranking)
        return [chunks[cid] for cid, _ in reciprocal_rank_fusion(rankings)]

    async def _web_results(self, search_queries: list[str]) -> dict[str, list[SearchResult]]:
        """Each search query's web results; with page text, every page of every query fetched
        together, ``PAGE_CONCURRENCY`` (4) at a time, each URL once."""
        assert self.web is not None
        found = await asyncio.gather(*(self._web_search(self.web, sq) for sq in search_queries))
        by_query = dict(zip(search_queries, found, strict=True))
        if not self.config.pages:
            return by_query
        pages = await self._pages([r.url for results in found for r in results])
        return {sq: [replace(r, page_text=pages[r.url].text, page_error=pages[r.url].error,
                             final_url=pages[r.url].final_url) for r in results]
                for sq, results in by_query.items()}

    async def _web_search(self, web: WebSearch, query: str) -> list[SearchResult]:
        """Web results, stored in the job so a resumed job does not search (and pay) again."""
        key = "web:" + hashlib.sha256(f"{web.name}\x00{query}".encode()).hexdigest()[:16]
        stored = self.store.meta(key) if self.store is not None else None
        if stored is None:
            results = dedupe_by_url(await web.search(query, max_results=self.config.web_results))
            stored = [r.as_dict() for r in results]
            if self.store is not None:
                self.store.set_meta(key, stored)
        return [SearchResult(**r) for r in stored]

    async def _pages(self, urls: list[str]) -> dict[str, PageText]:
        """Each URL's page text, fetched once per job (stored in the job, so a resumed job does
        not fetch again); an error of this machine (the ``pages`` extra missing) is never
        stored, so installing the extra and resuming fetches the page."""
        keys = {url: "page:" + hashlib.sha256(url.encode()).hexdigest()[:16] for url in urls}
        known = {url: self.store.meta(key) for url, key in keys.items()} \
            if self.store is not None else {}
        missing = [url for url in keys if known.get(url) is None]
        for page in await fetch_pages(missing) if missing else []:
            known[page.url] = page.as_dict()
            if self.store is not None and page.lasting:
                self.store.set_meta(keys[page.url], page.as_dict())
        return {url: PageText(**row) for url, row in known.items() if row is not None}

    async def _rerank(self, query: Query, candidates: list[Chunk]) -> list[Chunk]:
        k = self.config.top_k
        if len(candidates) <= k or not self.config.rerank:
            return candidates[:k]
        reply = await self._ask("rerank", query, self.fast, query=query.text, top_k=k,
                                schema=rerank_schema(len(candidates), k),
                                candidates=retrieval.candidates_text(candidates))
        picked = retrieval.select_indices(reply.get("indices"), n_candidates=len(candidates),
                                          top_k=k)
        return [candidates[i] for i in picked]

    async def _draft(self, query: Query, board: Board, notes: list[str]) -> list[RubricItem]:
        reply = await self._ask_rubric("draft_rubric", query, self.config.max_draft,
                                       user_query=query.text, facts=board.facts_text(),
                                       intent=board.intent_text(), max_draft=self.config.max_draft)
        items, dropped = coerce_items(reply, "draft_rubric")
        notes.extend(f"draft: {n}" for n in dropped)
        return items

    async def _audit(self, query: Query, board: Board, draft: list[RubricItem], notes: list[str]
                     ) -> tuple[list[RubricItem], dict[str, Any]]:
        current, uncovered_note, rounds = draft, "", 0
        while True:
            reply = await self._ask_rubric(
                "audit_rubric", query, self.config.max_criteria, user_query=query.text,
                max_criteria=self.config.max_criteria,
                facts=board.facts_text(), intent=board.intent_text(), uncovered=uncovered_note,
                draft=json.dumps([{"criterion": i.criterion, "axis": i.axis, "points": i.points,
                                   "evidence": i.evidence} for i in current], indent=2,
                                 ensure_ascii=False))
            items, dropped = coerce_items(reply, "audit_rubric")
            notes.extend(f"audit: {n}" for n in dropped)
            cited, _ = enforce_citations(items, board)
            missing = _uncovered_safety(cited, board)
            if not missing or rounds >= self.config.refine_rounds or not items:
                break
            rounds += 1
            current = cited
            uncovered_note = ("\nUNCOVERED (add a criterion for each of these; they must not be "
                              "merged):\n" + "\n".join(f"[{f.label}] {f.text}" for f in board.facts
                                                       if f.label in missing))
        final, report = audit_rules(items or draft, board, max_criteria=self.config.max_criteria)
        report["refine_rounds"] = rounds
        return final, report

    def _rubric(self, query: Query, items: list[RubricItem], facts: dict[str, Any], *,
                method: str) -> Rubric:
        criteria = []
        for item in items:
            chunk_ids = [cid for label in item.evidence if label in facts
                         for cid in facts[label].chunks]
            # a cited fact no retrieved chunk carries is still cited, as traced to the evidence
            # block only; intent items are cited as such
            other_refs = [f"intent:{label}" if facts[label].kind in ("question", "tone")
                          else f"fact:{label}" for label in item.evidence
                          if label in facts and not facts[label].chunks]
            evidence = list(dict.fromkeys(chunk_ids + other_refs))
            criteria.append(Criterion(
                text=item.criterion, weight=item.points, axis=item.axis,
                tags=[f"axis:{item.axis}"], metadata={"facts": item.evidence} if item.evidence
                else {},
                provenance=Provenance(source="generated", stage=item.stage, model=self.model,
                                      evidence=evidence)))
        criteria = _unique_ids(criteria)
        if not any(c.weight > 0 for c in criteria):
            raise AssayError(f"item {query.id!r}: the generated rubric has no positive criterion")
        return Rubric(id=query.id, criteria=criteria,
                      metadata={"generated": {"method": method, "model": self.model,
                                              "query": query.text,
                                              "kb": self.kb.fingerprint if self.kb else None}})


def _uncovered_safety(items: list[RubricItem], board: Board) -> list[str]:
    """Red flags no criterion cites and negative constraints no criterion carries (cites and
    states: :func:`~assay.generate.rules.carries`)."""
    cited = {e for i in items for e in i.evidence}
    uncarried = set(uncarried_constraints(items, board))
    return [f.label for f in board.facts if f.label in uncarried
            or (f.kind == "red_flag" and f.label not in cited)]


def _page_keys(result: SearchResult) -> list[str]:
    """What makes two web results one source: the URL their page ended at, and the page's
    text (the same article under two addresses)."""
    keys = [f"url:{_url_key(result.final_url or result.url)}"]
    if result.page_text:
        keys.append("text:" + hashlib.sha256(" ".join(result.page_text.split()).encode())
                    .hexdigest())
    return keys


def _url_key(url: str) -> str:
    """A URL without its fragment and trailing slash, scheme and host in lower case."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/"),
                       parts.query, ""))


def _unique_ids(criteria: list[Criterion]) -> list[Criterion]:
    seen: dict[str, int] = {}
    out = []
    for c in criteria:
        n = seen.get(c.id, 0)
        seen[c.id] = n + 1
        out.append(c if n == 0 else c.model_copy(update={"id": f"{c.id}-{n + 1}"}))
    return out
