"""Routing: which criteria of a taxonomy (or a criterion bank) apply to a query.

RubricsTree (seed 003) grades each answer only on the leaves relevant to its query; Health-SCORE
(seed 004) selects criteria per prompt the same way. One interface serves both:

* :class:`Catalogue`: the candidates (``Catalogue.from_taxonomy(tree)`` or
  ``Catalogue.from_criteria(bank)``), each with its path, trigger condition and health-memory
  ``requires``;
* :class:`Router`: ``await router.route(item) -> Routing`` (active entries with reasons, the
  entries the health-memory guard excluded, calls made). Routing never reads the response.

Routers (:func:`make_router` builds one by kind):

=============  =====================================================  =======================
kind           how                                                    calls per query
=============  =====================================================  =======================
``tree``       LLM walks the tree top down, prunes below τ(q, c)      one per depth reached
``catalogue``  RubricsTree's selection prompt over the flat catalogue  1
``embedding``  cosine(query, entry description) >= τ, local model     0
``relevance``  Health-SCORE's 1-5 relevance per entry, >= threshold    one per eligible entry
=============  =====================================================  =======================

:func:`route_items` routes many items through a job directory: one routing per distinct query
(conversation + health memory), cached, resumable, traced.

Modules: ``base`` (the interface), ``tree`` / ``catalogue`` / ``embedding`` / ``relevance``
(the routers), ``prompts`` (the papers' prompts), ``batch`` (cached routing of many items),
``grade`` and ``run`` (grading only the active leaves: :func:`assay.routing.run.route_and_grade`),
``evaluate`` (router vs expert selections, §5.5), ``stress`` (oracle perturbations, §5.6),
``data`` (the shipped starter taxonomy). For a criterion bank (seed 004), build the catalogue
with ``Catalogue.from_criteria(bank)`` and use the ``relevance`` or ``embedding`` router; the
tree walk needs a taxonomy.

Example::

    from assay.routing import Catalogue, make_router, route_items
    catalogue = Catalogue.from_taxonomy(read_taxonomy("tree.yaml"))
    router = make_router("tree", catalogue, caller=StageCaller(judge, job.store))
    routings = await route_items(items, router, job.store)     # {item_id: Routing}
"""

from assay.routing.base import (
    Catalogue,
    Entry,
    Router,
    Routing,
    Selection,
    Trace,
    memory_text,
    query_key,
    query_text,
)
from assay.routing.batch import RoutedBatch, route_items
from assay.routing.factory import KINDS, make_router

__all__ = [
    "KINDS",
    "Catalogue",
    "Entry",
    "RoutedBatch",
    "Router",
    "Routing",
    "Selection",
    "Trace",
    "make_router",
    "memory_text",
    "query_key",
    "query_text",
    "route_items",
]
