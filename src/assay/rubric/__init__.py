"""The data model: criteria, rubrics, taxonomies and items."""

from assay.rubric.criterion import (
    Criterion,
    CriterionExample,
    CriterionKind,
    Option,
    Provenance,
    derive_criterion_id,
    positional_criterion_ids,
)
from assay.rubric.item import Item, Message, Passage
from assay.rubric.rubric import DuplicatePair, Rubric
from assay.rubric.taxonomy import Taxonomy, TaxonomyNode

__all__ = [
    "Criterion",
    "CriterionExample",
    "CriterionKind",
    "DuplicatePair",
    "Item",
    "Message",
    "Option",
    "Passage",
    "Provenance",
    "Rubric",
    "Taxonomy",
    "TaxonomyNode",
    "derive_criterion_id",
    "positional_criterion_ids",
]
