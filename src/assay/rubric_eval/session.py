"""Opening the judges and the job directory that a rubric-evaluation command runs on.

Each stage may use its own judge (seed 000 criticises with a 70B model and rewrites with an 8B
one); identical specs at the same temperature share one :class:`~assay.judges.Judge`. Every
judge is checked before any work starts, and all of them share the optional response cache and
budget.

Temperatures: a judge whose config sets none is sent the paper's for its role
(:data:`PAPER_TEMPERATURES`: 0 for the verifier and atomiser, the perturbation, the pair
judge and the critic; 0.2 for the rewriting editor, as the authors' code sends), so the
endpoint's default never decides. A temperature set in the judge's config (``assay.toml``)
or passed as ``temperature`` wins.

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

PAPER_TEMPERATURES: dict[str, float] = {"verifier": 0.0, "perturber": 0.0, "judge": 0.0,
                                         "critic": 0.0, "editor": 0.2}


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
    from assay.judges.specs import config_from

    response_cache = ResponseCache(cache) if cache is not None else None
    budget = Budget(budget_usd) if budget_usd is not None else None
    by_key: dict[tuple[str, float | None], Judge] = {}
    roles: dict[str, Judge] = {}
    try:
        for role, spec in specs.items():
            config = config_from(spec)
            wanted = temperature if temperature is not None else (
                config.temperature if config.temperature is not None
                else PAPER_TEMPERATURES.get(role))
            key = (spec, wanted)
            if key not in by_key:
                overrides: dict[str, Any] = {} if wanted is None else {"temperature": wanted}
                by_key[key] = make_judge(config, cache=response_cache, budget=budget,
                                         **overrides)
            roles[role] = by_key[key]
        await check_judges(by_key.values())
        yield roles
    finally:
        for judge in by_key.values():
            await judge.aclose()
        if response_cache is not None:
            response_cache.close()


def file_digest(path: str | Path | None) -> str | None:
    """The sha256 of a file's bytes (job configs record their inputs by content)."""
    if path is None:
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
