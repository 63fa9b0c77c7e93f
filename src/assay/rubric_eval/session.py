"""Opening the judges and the job directory that a rubric-evaluation command runs on.

Each stage may use its own judge (seed 000 criticises with a 70B model and rewrites with an 8B
one); identical specs share one :class:`~assay.judges.Judge`. Every judge is checked before any
work starts, and all of them share the optional response cache and budget.

Example::

    async with open_judges({"critic": "openai:gpt-4.1", "editor": "openai:gpt-4.1-mini"}) as j:
        caller = StageCaller(j["critic"], job.store)
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from assay.judges import make_judge
from assay.judges.judge import Judge


@asynccontextmanager
async def open_judges(
    specs: Mapping[str, str],
    *,
    cache: str | Path | None = None,
    budget_usd: float | None = None,
    temperature: float | None = None,
) -> AsyncIterator[dict[str, Judge]]:
    """``{role: Judge}`` for ``{role: spec}``, checked for reachability, closed on exit."""
    from assay.judges.budget import Budget
    from assay.judges.cache import ResponseCache
    from assay.judges.factory import check_judges

    response_cache = ResponseCache(cache) if cache is not None else None
    budget = Budget(budget_usd) if budget_usd is not None else None
    overrides: dict[str, Any] = {} if temperature is None else {"temperature": temperature}
    by_spec: dict[str, Judge] = {}
    try:
        for spec in dict.fromkeys(specs.values()):
            by_spec[spec] = make_judge(spec, cache=response_cache, budget=budget, **overrides)
        await check_judges(by_spec.values())
        yield {role: by_spec[spec] for role, spec in specs.items()}
    finally:
        for judge in by_spec.values():
            await judge.aclose()
        if response_cache is not None:
            response_cache.close()


def file_digest(path: str | Path | None) -> str | None:
    """The sha256 of a file's bytes (job configs record their inputs by content)."""
    if path is None:
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
