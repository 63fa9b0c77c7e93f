"""The rubric data model: criteria, rubrics and taxonomies (items are :mod:`assay.item`)."""

from assay.rubric.criterion import (
    Criterion,
    CriterionExample,
    CriterionKind,
    Option,
    Provenance,
    derive_criterion_id,
    positional_criterion_ids,
)
from assay.rubric.rubric import DuplicatePair, Rubric
from assay.rubric.taxonomy import Taxonomy, TaxonomyNode

__all__ = [
    "Criterion",
    "CriterionExample",
    "CriterionKind",
    "DuplicatePair",
    "Option",
    "Provenance",
    "Rubric",
    "Taxonomy",
    "TaxonomyNode",
    "derive_criterion_id",
    "positional_criterion_ids",
]
