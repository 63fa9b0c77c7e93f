"""Router (b): the whole catalogue in one call, RubricsTree's published selection prompt (P1).

The model returns the selected IDs, an enum of the eligible leaves' IDs (the ones the prompt
shows): any other ID, or a placeholder such as ``"..."``, does not fit the reply schema and is
asked again by the judges layer, never kept.

Example::

    router = CatalogueRouter(Catalogue.from_taxonomy(tree), caller)
    routing = await router.route(item)        # one call of stage "route_catalogue"
"""

from __future__ import annotations

from typing import Any

from assay.jobs import StageCaller, messages_of
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
        data = await self.caller.ask(STAGE, messages_of(None, prompt), catalogue_schema(ids),
                                     item_id=query.id, budget=catalogue_budget(len(ids)))
        trace.calls += 1
        return [Selection(id=i, reason="selected from the catalogue") for i in data["rubric_ids"]]
