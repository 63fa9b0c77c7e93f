"""Issue 43, point 5: the bank beats the most frequent criteria. HealthBench's consensus
templates are left out before clustering; each cluster becomes one general criterion (without
the instance details of one conversation, written with its subject); the clusters whose
criteria recur across conversations in general words come first. On the 60 dev conversations
(the data the defaults were chosen on) the bank covers 20 or more of the paper's 29 criteria
one-to-one at cosine 0.5, 4 or more above the 40 most frequent HealthBench criteria."""

from __future__ import annotations

import pytest
from tests.bank.test_builder import TABLE, TableEmbedder, source

from assay.bank import BankConfig, build_bank, load_health_score
from assay.bank.cluster import ClusterParams
from assay.bank.generalise import Generality, as_criterion, without_instance_details


def template(text, *points, prompts):
    s = source(text, *points, prompts=prompts)
    s.levels = ["cluster"] * len(points)
    return s


STEP = ("Step 1: Does the response seek more context from the user by asking follow up "
        "questions? If not, fail.")


def test_consensus_templates_are_left_out_before_clustering():
    table = {**TABLE, STEP: [1, 0.02, 0.02]}
    sources = [source("Advises calling emergency services.", 5, 5),
               source("Tells the user to call 911 now.", 6),
               template(STEP, 5, 5, 5, 5, prompts=["a", "b", "c", "d"])]
    config = BankConfig(cluster=ClusterParams(distance_threshold=0.2), generalise=False)
    build = build_bank(sources, config, embedder=TableEmbedder(table))
    assert build.templates_dropped == 1 and build.n_sources == 2
    assert all(STEP not in r.examples for r in build.reports)
    assert build.bank.metadata["templates_dropped"] == 1
    kept = build_bank(sources, BankConfig(cluster=config.cluster, generalise=False,
                                          drop_templates=False), embedder=TableEmbedder(table))
    assert any(STEP in r.examples for r in kept.reports)


def test_each_cluster_becomes_one_criterion_without_one_conversations_details():
    real = [(("Advises urgent referral if pneumonia is getting severe, such as fast breathing "
              "(more than 30 breaths per minute) or confusion. (Justification: signs of "
              "severity.)"), "Advises urgent referral if pneumonia is getting severe."),
            (("Clearly mentions assessing vital signs such as temperature, heart rate, "
              "respiratory rate, and blood pressure."), "Clearly mentions assessing vital signs."),
            (("Fails to ask if the patient is experiencing additional red flag symptoms such as "
              "vomiting blood or bile, recent head injury, and/or abdominal pain."),
             "Fails to ask if the patient is experiencing additional red flag symptoms."),
            (("Clearly explains immediate first-aid steps for a bee sting: remove stinger by "
              "scraping with a card, wash the area."),
             "Clearly explains immediate first-aid steps for a bee sting.")]
    for text, general in real:
        assert without_instance_details(text) == general
    assert as_criterion("Clearly mentions assessing vital signs.") == \
        "The response clearly mentions assessing vital signs."


def test_the_generality_weight_counts_words_common_across_conversations(healthbench_dev_path):
    from assay.bank.sources import read_source_criteria

    generality = Generality(read_source_criteria([healthbench_dev_path]))
    general = generality.of("The response lists other consultation options.")
    specific = generality.of("The response explains that someone nearby should begin CPR.")
    assert general == 1.0 and specific < general


@pytest.mark.slow  # embeds the dev set's ~700 criteria
def test_the_bank_beats_the_forty_most_frequent_criteria_on_the_dev_set(healthbench_dev_path):
    build = build_bank([healthbench_dev_path], BankConfig(reference="health-score",
                                                          coverage_threshold=0.5))
    assert len(build.bank.criteria) == 40 and build.templates_dropped > 0
    coverage = build.coverage
    assert coverage.most_frequent.candidates == 40
    assert coverage.bank.matched >= 20 and coverage.bank.matched >= \
        coverage.most_frequent.matched + 4, (coverage.bank.matched, coverage.most_frequent.matched)
    assert not any(c.text.startswith("Step 1") for c in build.bank.criteria)
    assert load_health_score().id == "health-score"
