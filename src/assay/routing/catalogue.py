"""Router (b): the whole catalogue in one call, RubricsTree's published selection prompt (P1).

The model returns the selected IDs, an enum of the eligible leaves' IDs (the ones the prompt
shows): any other ID, or a placeholder such as ``"..."``, does not fit the reply schema and is
asked again by the judges layer, never kept. A model that still names unknown IDs after the
re-asks has answered (a deterministic answer, not a fault): its unknown IDs are dropped, its
known ones kept, and the dropped ones recorded in the routing (``details["dropped_ids"]``,
summed in the run's routing summary and report), so one stray ID does not unscore the item.

Example::

    router = CatalogueRouter(Catalogue.from_taxonomy(tree), caller)
    routing = await router.route(item)        # one call of stage "route_catalogue"
"""

from __future__ import annotations

from typing import Any

from assay.jobs import StageCaller, StageError, messages_of
from assay.judges.structured import reply_object
from assay.routing.base import Catalogue, Entry, Router, Selection, Trace, memory_text, query_text
from assay.routing.prompts import (
    CATALOGUE_PROMPT,
    catalogue_budget,
    catalogue_prompt,
    catalogue_schema,
    prompt_version,
)

STAGE = "route_catalogue"


class CatalogueRouter(Router):
    kind = "catalogue"

    def __init__(self, catalogue: Catalogue, caller: StageCaller):
        super().__init__(catalogue)
        self.caller = caller

    def config(self) -> dict[str, Any]:
        return {**super().config(), "model": self.caller.judge.id,
                "prompt": prompt_version(CATALOGUE_PROMPT)}

    async def select(self, query, eligible: list[Entry], trace: Trace) -> list[Selection]:
        prompt = catalogue_prompt(query_text(query), memory_text(query), eligible)
        ids = [e.id for e in eligible]
        try:
            data = await self.caller.ask(STAGE, messages_of(None, prompt), catalogue_schema(ids),
                                         item_id=query.id, budget=catalogue_budget(len(ids)))
            chosen = data["rubric_ids"]
        except StageError as exc:
            trace.calls += 1
            split = known_and_unknown(exc.raw, ids) if exc.unreadable else None
            if split is None:  # a fault, or a reply without a list of ids: the item fails
                raise
            chosen, trace.details["dropped_ids"] = split
        else:
            trace.calls += 1
        return [Selection(id=i, reason="selected from the catalogue") for i in chosen]


def known_and_unknown(raw: str, ids: list[str]) -> tuple[list[str], list[str]] | None:
    """The ids a catalogue reply names, split into those among ``ids`` and the others (each
    once, in the reply's order); None when the reply holds no list of ids.

    >>> known_and_unknown('{"rubric_ids": ["a1", "zz", "a1", "..."]}', ["a1", "a2"])
    (['a1'], ['zz', '...'])
    >>> known_and_unknown("no JSON", ["a1"]) is None
    True
    """
    reply = reply_object(raw)
    named = reply.get("rubric_ids") if reply is not None else None
    if not isinstance(named, list) or not all(isinstance(i, str) for i in named):
        return None
    unique, eligible = list(dict.fromkeys(named)), set(ids)
    return [i for i in unique if i in eligible], [i for i in unique if i not in eligible]
