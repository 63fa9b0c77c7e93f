"""The size caps hold for router prompts as for judge prompts: a health memory over its cap is
refused where it is read (file, line, field); a router prompt over the prompt cap is not sent."""

from __future__ import annotations

import json

import pytest

from assay.errors import InputError
from assay.io import iter_items
from assay.item import Item
from assay.jobs import CallStore
from assay.limits import MAX_MEMORY_CHARS, MAX_PROMPT_CHARS
from assay.routing import Catalogue, route_items
from assay.routing.catalogue import CatalogueRouter


def test_a_memory_over_its_cap_is_refused_with_file_line_and_field(tmp_path):
    notes = ["x" * 1000] * (MAX_MEMORY_CHARS // 1000 + 1)
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps({"id": "ok", "prompt": "hi"}) + "\n"
                    + json.dumps({"id": "big", "prompt": "hi", "health_memory": {"notes": notes}})
                    + "\n")
    with pytest.raises(InputError) as caught:
        list(iter_items(path))
    [issue] = caught.value.issues
    assert (issue.source, issue.line, issue.field) == (str(path), 2, "health_memory")
    assert "over the limit of 200,000 (assay.limits.MAX_MEMORY_CHARS)" in issue.message


async def test_a_router_prompt_over_the_cap_fails_its_item_and_is_never_sent(caller_on, tree,
                                                                             tmp_path):
    caller, server = await caller_on(stages={"route_catalogue": {"rubric_ids": ["a1"]}})
    router = CatalogueRouter(Catalogue.from_taxonomy(tree), caller)
    items = [Item(id="huge", prompt="x" * (MAX_PROMPT_CHARS + 1)), Item(id="ok", prompt="hi")]
    batch = await route_items(items, router, CallStore.open(tmp_path / "r.sqlite"))
    assert list(batch.routings) == ["ok"]
    assert "over the limit of 1,000,000: not sent" in batch.failed["huge"]
    assert len(server.requests) == 1
