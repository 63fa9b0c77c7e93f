"""Real HealthBench rubrics that state a criterion twice: every copy is kept, graded and counted
(as simple-evals does), with stable positional ids and a warning, never an error."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.io import check_file, iter_items, write_items
from assay.rubric import Rubric, derive_criterion_id
from assay.testing import FakeJudgeServer


@pytest.fixture
def twice_row(healthbench_dev_path) -> dict:
    """The first dev example with rubrics[1] repeated word for word at the end, and rubrics[0]
    repeated with other case and spacing."""
    row = json.loads(healthbench_dev_path.read_text().splitlines()[0])
    first = row["rubrics"][0]
    row["rubrics"].append(dict(row["rubrics"][1]))
    row["rubrics"].append({**first, "criterion": "  " + first["criterion"].upper().replace(" ", "  ")})
    return row


@pytest.fixture
def twice_file(tmp_path, twice_row):
    path = tmp_path / "twice.jsonl"
    path.write_text(json.dumps(twice_row) + "\n")
    return path


def test_repeated_texts_get_unique_positional_ids(twice_file, twice_row):
    [item] = iter_items(twice_file)
    ids = [c.id for c in item.rubric.criteria]
    n = len(twice_row["rubrics"])
    assert len(set(ids)) == n == len(item.rubric.criteria)
    assert ids[n - 2] == ids[1] + "-2" and ids[n - 1] == ids[0] + "-2"
    assert ids[0] == derive_criterion_id(twice_row["rubrics"][0]["criterion"])
    assert [c.id for c in next(iter_items(twice_file)).rubric.criteria] == ids  # stable


def test_explicitly_given_ids_must_still_be_unique():
    with pytest.raises(ValueError, match="duplicate criterion id 'a'"):
        Rubric(criteria=[{"id": "a", "text": "Says hi."}, {"id": "a", "text": "Says hi."}])


def test_a_shared_criterion_object_is_not_renamed_in_place():
    rubric = Rubric(criteria=[{"text": "Advises rest."}])
    twice = Rubric(criteria=[rubric.criteria[0], rubric.criteria[0]])
    assert twice.criteria[1].id == rubric.criteria[0].id + "-2"
    assert rubric.criteria[0].id == derive_criterion_id("Advises rest.")


def test_the_round_trip_is_byte_identical(tmp_path, twice_file):
    out = tmp_path / "out.jsonl"
    write_items(iter_items(twice_file), out, format="healthbench")
    assert out.read_bytes() == twice_file.read_bytes()


def test_an_assay_item_file_keeps_the_ids_through_a_round_trip(tmp_path, twice_file):
    items = list(iter_items(twice_file))
    write_items(items, tmp_path / "items.jsonl")
    assert list(iter_items(tmp_path / "items.jsonl")) == items


def test_validate_warns_about_every_duplicate_pair_and_accepts_the_file(twice_file, twice_row):
    warnings: list = []
    _, issues, count = check_file(twice_file, warnings=warnings)
    assert (issues, count) == ([], 1)
    n = len(twice_row["rubrics"])
    assert [(w.line, w.field) for w in warnings] == [
        (1, f"rubrics[{n - 1}].criterion"), (1, f"rubrics[{n - 2}].criterion")]
    assert warnings[1].message.startswith("repeats rubrics[1].criterion word for word; both copies")
    assert warnings[0].message.startswith("repeats rubrics[0].criterion up to case and spacing")
    result = CliRunner().invoke(app, ["validate", str(twice_file)])
    assert result.exit_code == 0, result.output
    assert result.output.count("warning ") == 2 and "0 issues, 2 warnings" in result.output


def test_three_copies_are_three_pairs():
    rubric = Rubric(criteria=[{"text": "Hydrates."}] * 3)
    assert [(p.first, p.second) for p in rubric.duplicate_pairs()] == [(0, 1), (0, 2), (1, 2)]
    assert [c.id[-2:] for c in rubric.criteria[1:]] == ["-2", "-3"]


def scripted(view) -> str:
    return "MET" if len(view.criterion_text.strip()) % 2 == 0 else "UNMET"


async def test_every_copy_is_graded_and_counted_as_simple_evals_does(tmp_path, twice_file, twice_row):
    async with FakeJudgeServer(policy=scripted) as server:
        result = await assay.agrade(twice_file, healthbench=True, ideal=True,
                                    judges=[f"openai-compatible:fake@{server.base_url}"],
                                    run_dir=tmp_path / "run")
    rubrics = twice_row["rubrics"]
    graded = [r["criteria"][0]["criterion_text"] for r in server.requests]
    assert sorted(graded) == sorted(r["criterion"].strip() for r in rubrics)  # one call each
    met = sum(r["points"] for r in rubrics if len(r["criterion"].strip()) % 2 == 0)
    positive = sum(r["points"] for r in rubrics if r["points"] > 0)
    assert result.overall == pytest.approx(min(1.0, max(0.0, met / positive)), abs=1e-12)
    assert result.healthbench.n == 1


def test_convert_and_score_accept_the_file(tmp_path, twice_file):
    out = CliRunner().invoke(app, ["convert", str(twice_file), str(tmp_path / "hb.jsonl"),
                                   "--to", "healthbench"])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "hb.jsonl").read_bytes() == twice_file.read_bytes()
    [item] = iter_items(twice_file)
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text("".join(json.dumps({"item_id": item.id, "criterion_id": c.id,
                                            "verdict": "MET" if c.weight > 0 else "UNMET"}) + "\n"
                                for c in item.rubric.criteria))
    out = CliRunner().invoke(app, ["score", str(verdicts), "--rubric", str(twice_file),
                                   "--formula", "healthbench", "--json", str(tmp_path / "s.json")])
    assert out.exit_code == 0, out.output
    assert json.loads((tmp_path / "s.json").read_text())["summary"]["mean"] == 1.0


def test_a_rubric_shared_by_every_item_is_warned_about_once(tmp_path):
    rubric = {"id": "r", "criteria": [{"text": "Advises rest."}, {"text": "Advises rest."}]}
    path = tmp_path / "items.json"
    path.write_text(json.dumps([{"id": f"q{i}", "prompt": "Hi", "rubric": rubric}
                                for i in range(3)]))
    warnings: list = []
    assert check_file(path, warnings=warnings)[1:] == ([], 3)
    assert [w.field for w in warnings] == ["[0].rubric.criteria[1].text"]
