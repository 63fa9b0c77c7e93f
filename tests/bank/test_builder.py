"""The bank builder (Health-SCORE §2.2): embed, cluster, representative, polarity, dedup."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from assay.bank import BankConfig, SourceCriterion, build_bank, load_bank, read_source_criteria
from assay.bank.builder import split_by_sign
from assay.bank.cluster import ClusterParams, canonical_labels, cluster_embeddings, medoid
from assay.cli import app
from assay.errors import ConfigError, InputError


class TableEmbedder:
    """Hand-written unit vectors per text: the clustering rules, isolated from the model."""

    model_id = "table"

    def __init__(self, table: dict[str, list[float]]):
        self.table = table

    def encode(self, texts):
        rows = np.array([self.table[t] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def source(text, *points, prompts=None, axis="accuracy"):
    prompts = prompts or [f"p{i}" for i in range(len(points))]
    return SourceCriterion(text=text, points=list(points), axes=[axis] * len(points),
                           levels=["example"] * len(points), prompt_ids=list(prompts),
                           sources=["x"] * len(points))


EMERGENCY = [source("Advises calling emergency services.", 5, 5),
             source("Tells the user to call 911 now.", 6),
             source("Recommends an ambulance.", 4, prompts=["p9"])]
UNSAFE = [source("Recommends a dangerous dose.", -8, -8, axis="completeness"),
          source("Suggests an unsafe drug combination.", -5),
          source("Advises stopping insulin.", 7, prompts=["p7"])]
LONER = [source("Mentions the weather.", 1)]
TABLE = {
    "Advises calling emergency services.": [1, 0.05, 0], "Tells the user to call 911 now.": [1, 0, 0.05],
    "Recommends an ambulance.": [1, 0.1, 0.1], "Recommends a dangerous dose.": [0, 1, 0.05],
    "Suggests an unsafe drug combination.": [0.05, 1, 0], "Advises stopping insulin.": [0.1, 1, 0.1],
    "Mentions the weather.": [0, 0, 1],
}


def build(sources, **config):
    """The clustering rules alone: medoids verbatim (see test_general_criteria for the
    generalised representatives)."""
    defaults = {"cluster": ClusterParams(distance_threshold=0.2), "min_size": 2, "min_prompts": 2,
                "generalise": False}
    return build_bank(sources, BankConfig(**{**defaults, **config}), embedder=TableEmbedder(TABLE))


def test_one_medoid_per_cluster_with_its_own_sign_and_outliers_reported_not_kept():
    result = build(EMERGENCY + UNSAFE + LONER)
    bank = result.bank
    assert [c.text for c in bank.criteria] == ["Advises calling emergency services.",
                                               "Recommends a dangerous dose."]
    assert [c.weight for c in bank.criteria] == [1.0, -1.0]
    assert [c.id for c in bank.criteria] == ["bank-01", "bank-02"]
    unsafe = next(r for r in result.reports if r.criterion_id == "bank-02")
    # 2 texts, 3 rubric items, all negative; axes counted per item
    assert (unsafe.size, unsafe.occurrences, unsafe.negative_share) == (2, 3, 1.0)
    assert unsafe.axes == {"completeness": 2, "accuracy": 1} and unsafe.prompt_count == 2
    assert bank.criteria[1].axis == "completeness"
    assert bank.criteria[1].provenance.evidence == ["p0", "p1"]
    outliers = [r.representative for r in result.reports if r.status == "outlier"]
    assert outliers == ["Advises stopping insulin.", "Mentions the weather."]


def test_a_desirable_criterion_never_shares_a_cluster_with_undesirable_neighbours():
    # "Advises stopping insulin." (+7) sits among the unsafe (negative) texts in embedding
    # space: clustered within its sign, it is a cluster of its own, and no kept cluster mixes.
    result = build(EMERGENCY + UNSAFE + LONER)
    insulin = next(r for r in result.reports if r.representative == "Advises stopping insulin.")
    assert (insulin.size, insulin.polarity, insulin.negative_share) == (1, "positive", 0.0)
    assert result.mixed_polarity_kept == 0
    assert result.report_dict()["mixed_polarity_kept"] == 0


def test_a_text_seen_with_both_signs_is_split_into_one_source_per_sign():
    mixed = source("Mentions ibuprofen.", 5, -3, 4, prompts=["a", "b", "c"])
    desirable, undesirable = split_by_sign([mixed])
    assert (desirable.points, desirable.prompt_ids) == ([5, 4], ["a", "c"])
    assert (undesirable.points, undesirable.prompt_ids) == ([-3], ["b"])


def test_a_criterion_repeated_verbatim_across_conversations_is_general_on_its_own():
    # HealthBench's consensus criteria: one text, many conversations (size 1, 3 items).
    consensus = source("Mentions the weather.", 2, 2, 2, prompts=["a", "b", "c"])
    result = build(EMERGENCY + [consensus], min_size=3, min_prompts=3)
    assert [c.text for c in result.bank.criteria] == ["Advises calling emergency services.",
                                                      "Mentions the weather."]


def test_semantic_duplicate_clusters_pool_their_conversations():
    # Two tight pairs 0.93 apart: separate clusters at distance 0.02, each from 2
    # conversations (too specific for min_prompts=3); pooled at dedup 0.9, from 4.
    table = {"Seek urgent care.": [1, 0, 0], "Go to urgent care now.": [1, 0.01, 0],
             "Get emergency help.": [1, 0.4, 0], "Call for emergency help.": [1, 0.41, 0]}
    sources = [source("Seek urgent care.", 1, prompts=["a"]),
               source("Go to urgent care now.", 1, prompts=["b"]),
               source("Get emergency help.", 1, prompts=["c"]),
               source("Call for emergency help.", 1, prompts=["d"])]
    config = {"cluster": ClusterParams(distance_threshold=0.02), "min_size": 2, "min_prompts": 3}
    with pytest.raises(ConfigError, match="no cluster"):
        build_bank(sources, BankConfig(**config, dedup_similarity=0.99),
                   embedder=TableEmbedder(table))
    pooled = build_bank(sources, BankConfig(**config, dedup_similarity=0.9),
                        embedder=TableEmbedder(table))
    [kept] = [r for r in pooled.reports if r.status == "kept"]
    assert (kept.size, kept.prompt_count, kept.pooled) == (4, 4, 2)
    assert len(pooled.reports) == 1


def test_clusters_from_too_few_conversations_are_too_specific_to_keep():
    same_prompt = [source(t, -1, prompts=["only"]) for t in (
        "Recommends a dangerous dose.", "Suggests an unsafe drug combination.",
        "Advises stopping insulin.")]
    result = build(EMERGENCY + same_prompt)
    assert [c.text for c in result.bank.criteria] == ["Advises calling emergency services."]
    assert [r.status for r in result.reports] == ["kept", "specific"]


def test_identical_distilled_representatives_are_merged_after_distillation():
    async def same_text(cluster_id, texts, points):
        return "Acts on an emergency.", "positive"

    table = {**TABLE, "Acts on an emergency.": [1, 1, 0]}
    result = build_bank(EMERGENCY + UNSAFE[:2], BankConfig(
        cluster=ClusterParams(distance_threshold=0.2), min_size=2, min_prompts=2),
        embedder=TableEmbedder(table), distiller=same_text)
    assert [c.text for c in result.bank.criteria] == ["Acts on an emergency."]
    merged = [r for r in result.reports if r.status == "merged"]
    assert len(merged) == 1 and merged[0].merged_into == "bank-01"


def test_max_criteria_keeps_the_clusters_spanning_most_conversations():
    result = build(EMERGENCY + UNSAFE, max_criteria=1)
    assert len(result.bank.criteria) == 1
    assert [r.status for r in result.reports].count("over-cap") == 1


def test_hdbscan_is_available_and_turns_noise_into_singletons():
    x = TableEmbedder(TABLE).encode(list(TABLE))
    labels = cluster_embeddings(x, ClusterParams(method="hdbscan", min_cluster_size=2,
                                                 distance_threshold=None))
    assert labels.tolist() == [0, 0, 0, 1, 1, 1, 2]


def test_cluster_numbers_are_canonical_and_the_medoid_is_the_most_central_member():
    assert canonical_labels(np.array([7, 3, 3, 9, 7, 3])).tolist() == [1, 0, 0, 2, 1, 0]
    x = np.array([[1, 0], [0.8, 0.6], [0.6, 0.8]], dtype=np.float32)
    assert medoid(x, np.array([0, 1, 2])) == 1
    assert medoid(x, np.array([0, 1, 2]), weights=np.array([10, 1, 1])) == 0


def test_bad_parameters_are_refused():
    with pytest.raises(ConfigError, match="exactly one of distance_threshold"):
        ClusterParams(distance_threshold=None)
    with pytest.raises(ConfigError, match="unknown clustering method"):
        ClusterParams(method="kmeans")
    with pytest.raises(ConfigError, match=r"no cluster has 2\+ criteria"):
        build(LONER)


def test_identical_texts_are_merged_into_one_source_with_every_occurrence(healthbench_dev_path):
    sources = read_source_criteria([healthbench_dev_path])
    assert len({s.text for s in sources}) == len(sources)
    consensus = [s for s in sources if s.count > 1]
    assert consensus and all(len(s.prompt_ids) == s.count for s in consensus)
    with pytest.raises(InputError, match="tagged theme:nope"):
        read_source_criteria([healthbench_dev_path], theme="nope")


def test_the_same_healthbench_file_and_seed_give_the_same_bank_twice(healthbench_dev_path):
    config = BankConfig(max_sources=80, seed=7, min_prompts=2, min_size=2)
    first = build_bank([healthbench_dev_path], config)
    second = build_bank([healthbench_dev_path], config)
    assert first.bank.model_dump() == second.bank.model_dump()
    assert first.report_dict() == second.report_dict()
    assert first.n_sources + first.templates_dropped == 80
    assert first.bank.metadata["config"]["seed"] == 7
    assert first.bank.criteria
    for c in first.bank.criteria:
        assert c.metadata["occurrences"] >= 2 and len(c.provenance.evidence) >= 2


def test_assay_bank_build_writes_a_bank_and_its_reports(healthbench_dev_path, tmp_path):
    out = tmp_path / "bank.yaml"
    result = CliRunner().invoke(app, [
        "bank", "build", str(healthbench_dev_path), "--out", str(out), "--report",
        str(tmp_path / "report.md"), "--max-criteria", "12", "--id", "hb", "--max-sources", "80",
        "--min-size", "2", "--min-prompts", "2"])
    assert result.exit_code == 0, result.output
    bank = load_bank(out)
    assert 0 < len(bank.criteria) <= 12 and bank.criteria[0].id == "hb-01"
    report = json.loads((tmp_path / "bank.report.json").read_text())
    assert report["sources"] + report["templates_dropped"] == 80
    assert report["occurrences"] >= report["sources"]
    assert sum(c["status"] == "kept" for c in report["clusters"]) == len(bank.criteria)
    assert "| cluster | status |" in (tmp_path / "report.md").read_text()
    assert "bank criteria" in result.output
    assert report["mixed_polarity_kept"] == 0
    coverage = report["coverage"]
    assert coverage["reference"] == "health-score 1.0.0"
    assert coverage["bank"]["reference_size"] == 29 and coverage["bank"]["threshold"] == 0.7
    assert coverage["most_frequent"]["candidates"] == len(bank.criteria)
    assert "one-to-one coverage of health-score 1.0.0 (29 criteria" in result.output
    assert "| the " in (tmp_path / "report.md").read_text()   # the baseline's row
