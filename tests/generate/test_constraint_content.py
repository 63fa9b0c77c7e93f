"""Issue 43, point 4: a negative constraint is covered by a criterion that carries its content,
not by one that merely cites its label. In the issue, "Suggests aspirin for a child." cited N1
("Do not take more than 1 grams of paracetamol in 24 hours.") in 10 of 10 queries, and N1's
content was in no criterion."""

from __future__ import annotations

import yaml
from tests.generate.conftest import SAMPLE, fake

from assay.generate import agenerate
from assay.generate.board import Board, Fact
from assay.generate.rules import RubricItem, audit_rules, carries, keep_negative_constraints

PARACETAMOL = "Do not take more than 1 grams of paracetamol in 24 hours."
BOARD = Board([
    Fact("P1", "positive", "Paracetamol can be given every 4 to 6 hours for fever."),
    Fact("N1", "negative", PARACETAMOL),
    Fact("N2", "negative", "Do not give aspirin to children under 16 years."),
])


def test_a_criterion_about_another_drug_does_not_carry_the_constraint():
    assert not carries("Suggests aspirin for a child.", PARACETAMOL)
    assert carries("Recommends more than 1 g of acetaminophen a day.", PARACETAMOL)
    assert carries("Suggests aspirin for a child.", BOARD.by_label["N2"].text)


def test_a_citation_without_the_content_is_dropped_and_the_constraint_enforced():
    items = [RubricItem("Gives paracetamol every 4 to 6 hours.", "accuracy", 6, ["P1"]),
             RubricItem("Suggests aspirin for a child.", "accuracy", -5, ["N1"])]
    out, added, dropped = keep_negative_constraints(items, BOARD)
    assert dropped == ["Suggests aspirin for a child.: N1"]
    assert added == ["N1"]
    enforced = [i for i in out if "N1" in i.evidence]
    assert [(i.points, i.criterion) for i in enforced] == [
        (-9, f"Goes against this contraindication: {PARACETAMOL}")]
    # the aspirin criterion is tied to the constraint it does carry, and raised to high stakes
    aspirin = next(i for i in out if i.criterion.startswith("Suggests aspirin"))
    assert (aspirin.evidence, aspirin.points) == (["N2"], -8)


def test_the_audit_report_names_the_citations_without_content():
    items = [RubricItem("Suggests aspirin for a child.", "accuracy", -9, ["N1", "N2"])]
    final, report = audit_rules(items, BOARD)
    assert report["citations_without_content"] == ["Suggests aspirin for a child.: N1"]
    assert report["negative_constraints_added"] == ["N1"]
    assert any(PARACETAMOL in i.criterion and i.points <= -8 for i in final)


async def test_the_pipeline_asks_the_audit_again_and_enforces_the_uncarried_constraint(
        serve, sample_kb, tmp_path):
    stages = yaml.safe_load((SAMPLE / "stages.yaml").read_text(encoding="utf-8"))
    # the audit cites the sponging constraint (N2) from a criterion about paracetamol
    stages["audit_rubric"]["by_prompt"][0][1] = {"rubrics": [
        {"criterion": "Advises that a baby under 3 months with a temperature of 38 C or higher "
                      "must be seen by a doctor urgently the same day.", "axis": "accuracy",
         "points": 10, "evidence": ["P1"]},
        {"criterion": "Notes that paracetamol may be used from 2 months of age.",
         "axis": "completeness", "points": 5, "evidence": ["P2", "N2"]},
        {"criterion": "Suggests giving aspirin to the baby.", "axis": "accuracy", "points": -10,
         "evidence": ["N1"]}]}
    server = await serve(stages=stages)
    result = await agenerate(str(SAMPLE / "queries.txt"), kb=sample_kb, model=fake(server),
                             out=tmp_path / "rubrics.jsonl")
    [(query_id, fever)] = [(q, r) for q, r in result.records.items() if "2-month-old" in r["query"]]
    sponge = next(f for f in fever["board"] if f["text"].startswith("Do not sponge"))
    audits = [r for r in server.requests if r["stage"] == "audit_rubric"
              and "2-month-old" in str(r["body"]["messages"])]
    assert len(audits) == 2 and f"[{sponge['label']}] Do not sponge" in str(
        audits[1]["body"]["messages"])  # asked again with the constraint named as uncovered
    assert fever["audit"]["citations_without_content"] == [
        f"Notes that paracetamol may be used from 2 months of age.: {sponge['label']}"]
    carrying = [c for c in result.rubrics[query_id].criteria
                if sponge["label"] in c.metadata.get("facts", [])]
    assert [c.text for c in carrying] == [f"Goes against this contraindication: {sponge['text']}"]
    assert carrying[0].weight <= -8
