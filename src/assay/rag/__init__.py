"""RAG clinical QA metrics (seed 002, ASTRID): Conversational Faithfulness, Context Relevance
and Refusal Accuracy, the RAGAS baselines, the Figure 11 diagnosis, harm/helpfulness
classifiers on the triad, and the §8 validation report.

* :mod:`~assay.rag.items` — RAG conversations (JSONL, located errors);
* :mod:`~assay.rag.sentences` — the clinical sentence splitter;
* :mod:`~assay.rag.prompts` / :mod:`~assay.rag.schemas` — Listings 1-4 verbatim, reply schemas;
* :mod:`~assay.rag.faithfulness`, :mod:`~assay.rag.relevance_refusal`, :mod:`~assay.rag.ragas`
  — the metrics, each call a stage of :class:`assay.jobs.StageCaller`;
* :mod:`~assay.rag.grading` — the resumable grading job; :mod:`~assay.rag.diagnosis`;
* :mod:`~assay.rag.matching` — matching the sentences a judge echoes to the answer's own;
* :mod:`~assay.rag.prompt_overrides` — per-model replacements of the listings;
* :mod:`~assay.rag.classify` — classifiers (cross-validated); :mod:`~assay.rag.held_out` —
  Table 2 on a fixed held-out split; :mod:`~assay.rag.label_merge` — clinicians' axes to
  targets; :mod:`~assay.rag.validation` — reports;
* :mod:`~assay.rag.fake_replies` — scripted fake-judge replies for tests and examples.

Example (against the fake judge and the shipped sample)::

    from assay import rag
    items = rag.read_rag_items("examples/rag/items.jsonl")
    run = rag.grade_rag(items, "openai-compatible:fake@http://127.0.0.1:8089/v1", "runs/rag")
    data = rag.labelled_set(items, run.grades, "harmful")
    report, model = rag.train(data, target="harmful")
    rag.save_model("models/harm", model, report)
    print(rag.rag_report(items, {"fake": run.grades}).averages)
"""

from assay.rag.classify import (
    FEATURES,
    LabelledSet,
    TrainedModel,
    TrainReport,
    labelled_set,
    load_model,
    performance,
    save_model,
    train,
)
from assay.rag.diagnosis import DIAGNOSES, diagnose
from assay.rag.faithfulness import cf_ratio, conversational_faithfulness
from assay.rag.grading import (
    RagGrade,
    RagOptions,
    RagRun,
    TurnGrade,
    grade_rag,
    grade_rag_async,
    read_grades,
)
from assay.rag.held_out import HeldOutTable, held_out_table
from assay.rag.items import HAZARD_CONTEXTS, RagItem, Turn, read_rag_items, write_rag_items
from assay.rag.label_merge import merge_labels, read_rules
from assay.rag.prompt_overrides import read_prompt_overrides
from assay.rag.ragas import ragas_context_relevance, ragas_faithfulness
from assay.rag.relevance_refusal import context_relevance, refusal, refusal_correct
from assay.rag.sentences import split_sentences
from assay.rag.validation import RagReport, rag_report

__all__ = [
    "DIAGNOSES", "FEATURES", "HAZARD_CONTEXTS", "HeldOutTable", "LabelledSet", "RagGrade",
    "RagItem", "RagOptions", "RagReport", "RagRun", "TrainReport", "TrainedModel", "Turn",
    "TurnGrade", "cf_ratio", "context_relevance", "conversational_faithfulness", "diagnose",
    "grade_rag", "grade_rag_async", "held_out_table", "labelled_set", "load_model", "merge_labels",
    "performance", "rag_report", "ragas_context_relevance", "ragas_faithfulness", "read_grades",
    "read_prompt_overrides", "read_rag_items", "read_rules", "refusal", "refusal_correct",
    "save_model", "split_sentences", "train", "write_rag_items",
]
