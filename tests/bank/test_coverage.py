"""One-to-one coverage of a reference criterion set, and the most-frequent baseline."""

from __future__ import annotations

import numpy as np
import pytest

from assay.bank import SourceCriterion
from assay.bank.coverage import bank_coverage, most_frequent, one_to_one_coverage
from assay.errors import ConfigError
from assay.rubric import Criterion, Rubric


def unit(*rows):
    x = np.array(rows, dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


class TableEmbedder:
    model_id = "table"

    def __init__(self, table):
        self.table = table

    def encode(self, texts):
        return unit(*[self.table[t] for t in texts])


def test_six_wordings_of_one_idea_cover_one_reference_criterion():
    reference = unit([1, 0], [0, 1])
    copies = unit(*([[1, 0.01]] * 6))
    coverage = one_to_one_coverage(["urgent", "dose"], reference, list("abcdef"), copies,
                                   threshold=0.7)
    assert (coverage.matched, coverage.share) == (1, 0.5)
    assert [m.reference for m in coverage.matches] == ["urgent"]


def test_the_matching_maximises_total_similarity_then_counts_pairs_over_the_threshold():
    # r1 is close to both b1 (0.99) and b2 (0.8); r2 only to b1 (0.75). The best alignment
    # (total 0.8 + 0.75 > 0.99 + 0.15) pairs r1-b2 and r2-b1: both counted at 0.7, one at 0.78.
    sim = np.array([[0.99, 0.8], [0.75, 0.15]])
    reference = np.eye(2)
    coverage = one_to_one_coverage(["r1", "r2"], reference, ["b1", "b2"], sim.T, threshold=0.7)
    assert sorted((m.reference, m.candidate) for m in coverage.matches) == [("r1", "b2"),
                                                                            ("r2", "b1")]
    strict = one_to_one_coverage(["r1", "r2"], reference, ["b1", "b2"], sim.T, threshold=0.78)
    assert [(m.reference, m.candidate, m.similarity) for m in strict.matches] == [
        ("r1", "b2", 0.8)]


def test_a_bad_threshold_is_refused():
    with pytest.raises(ConfigError, match=r"coverage threshold must be in \(0, 1\]"):
        one_to_one_coverage(["r"], unit([1, 0]), ["b"], unit([1, 0]), threshold=0)


def test_the_frequency_baseline_takes_the_most_repeated_texts_ties_by_conversations():
    a = SourceCriterion("A", [1, 1], prompt_ids=["p", "p"])
    b = SourceCriterion("B", [1])
    c = SourceCriterion("C", [1, 1], prompt_ids=["p", "q"])
    assert [s.text for s in most_frequent([a, b, c], 2)] == ["C", "A"]


def test_bank_coverage_sets_the_bank_beside_the_same_number_of_most_frequent_texts():
    table = {"Ref urgent": [1, 0, 0], "Ref dose": [0, 1, 0],
             "Seek care now": [1, 0.1, 0], "Check the dose": [0.1, 1, 0],
             "Weather": [0, 0, 1], "Seek care today": [1, 0.12, 0]}
    reference = Rubric(id="ref", version="2", criteria=[
        Criterion(id="r-urgent", text="Ref urgent"), Criterion(id="r-dose", text="Ref dose")])
    bank = Rubric(id="bank", criteria=[Criterion(id="bank-01", text="Seek care now"),
                                       Criterion(id="bank-02", text="Check the dose")])
    # The two most frequent sources say the same thing twice: they cover one criterion.
    sources = [SourceCriterion("Seek care now", [1] * 5), SourceCriterion("Weather", [1]),
               SourceCriterion("Seek care today", [1] * 4), SourceCriterion("Check the dose", [1])]
    coverage = bank_coverage(bank, sources, reference, TableEmbedder(table), threshold=0.9)
    assert coverage.reference == "ref 2"
    assert (coverage.bank.matched, coverage.most_frequent.matched) == (2, 1)
    assert coverage.most_frequent.candidates == 2
    assert coverage.to_dict()["most_frequent"]["matches"][0]["candidate"] == "source-1"
