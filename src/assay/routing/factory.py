"""Building a router by kind (``tree``, ``catalogue``, ``embedding``, ``relevance``).

Example::

    router = make_router("relevance", catalogue, caller=caller, threshold=4)
"""

from __future__ import annotations

from typing import Any

from assay.errors import ConfigError
from assay.routing.base import Catalogue, Router

KINDS = ("tree", "catalogue", "embedding", "relevance")
# what each router reads: an option it would ignore is refused (a run must do what it says)
USES: dict[str, frozenset[str]] = {
    "tree": frozenset({"judge", "threshold"}), "catalogue": frozenset({"judge"}),
    "embedding": frozenset({"threshold"}), "relevance": frozenset({"judge", "threshold"}),
    "all": frozenset()}


def ignored_options(kind: str, **given: bool) -> list[str]:
    """The options given (``judge=True``, ``threshold=True``) that router ``kind`` ignores.

    >>> ignored_options("catalogue", judge=True, threshold=True)
    ['threshold']
    >>> ignored_options("all", judge=True, threshold=False)
    ['judge']
    """
    return [name for name, on in given.items() if on and name not in USES.get(kind, frozenset())]


def make_router(kind: str, catalogue: Catalogue, *, caller: Any = None,
                threshold: float | None = None, **options: Any) -> Router:
    """A router of ``kind``; ``threshold`` is τ (embedding) or the 1-5 cut (relevance)."""
    if kind not in KINDS:
        raise ConfigError(f"unknown router {kind!r}; routers: {', '.join(KINDS)}")
    if kind == "embedding":
        from assay.routing.embedding import DEFAULT_THRESHOLD, EmbeddingRouter

        return EmbeddingRouter(catalogue, threshold=DEFAULT_THRESHOLD if threshold is None
                               else threshold, **options)
    if caller is None:
        raise ConfigError(f"the {kind} router calls a model: give it a judge (--router-judge)")
    if kind == "tree":
        from assay.routing.tree import TreeWalkRouter

        if threshold is not None:
            options.setdefault("tau", {"standard": threshold})
        return TreeWalkRouter(catalogue, caller, **options)
    if kind == "catalogue":
        from assay.routing.catalogue import CatalogueRouter

        return CatalogueRouter(catalogue, caller)
    from assay.routing.relevance import RelevanceRouter

    return RelevanceRouter(catalogue, caller, threshold=4 if threshold is None else int(threshold))
