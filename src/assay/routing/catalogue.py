"""Router (b): the whole catalogue in one call, RubricsTree's published selection prompt (P1).

The model returns the selected IDs; IDs that are not in the catalogue (or not eligible) are
dropped and listed in the routing's ``details["unknown_ids"]``.

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
    CATALOGUE_SCHEMA,
    catalogue_prompt,
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
        data = await self.caller.ask(STAGE, messages_of(None, prompt), CATALOGUE_SCHEMA,
                                     item_id=query.id)
        trace.calls += 1
        known = {e.id for e in eligible}
        ids = [str(i).strip() for i in data.get("rubric_ids", [])]
        unknown = [i for i in ids if i not in known]
        if unknown:
            trace.details["unknown_ids"] = unknown
        return [Selection(id=i, reason="selected from the catalogue") for i in ids if i in known]
