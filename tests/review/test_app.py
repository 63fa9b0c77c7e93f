"""The review app over real HTTP on loopback: labelling, validation, tokens, rubric versions."""

from __future__ import annotations

import aiohttp
import pytest
from tests.review.conftest import get, post
from typer.testing import CliRunner

from assay.cli import app as cli
from assay.errors import ConfigError
from assay.io import read_rubric
from assay.review import RunLabels
from assay.review.app import check_binding


async def test_an_item_page_shows_votes_and_explanations_escaped(run_dir, serve_app):
    base = await serve_app(run_dir, reviewer="dr_a")
    status, html = await get(f"{base}/items/0")
    assert status == 200
    assert "judge0" in html and "judge1" in html
    assert "&lt;script&gt;" in html and "<script>window" not in html


async def test_agree_stores_the_final_verdict_and_disagree_flips_a_binary_one(run_dir, serve_app,
                                                                             reviewer):
    client = reviewer(await serve_app(run_dir, reviewer="dr_a"))
    status, _ = await client.post("/items/1/label", {"criterion_id": "tweezers", "action": "agree"})
    assert status == 303
    await client.post("/items/1/label", {"criterion_id": "tweezers", "action": "disagree"})
    await client.post("/items/1/label", {"criterion_id": "pain", "action": "correct",
                                         "label": "well", "note": "thorough"})
    with RunLabels.open(run_dir) as labels:
        got = {(l.criterion_id, l.rater): (l.verdict or l.option, l.agrees, l.note) for l in labels.labels()}
    assert got == {("tweezers", "dr_a"): ("MET", False, ""), ("pain", "dr_a"): ("well", False, "thorough")}


@pytest.mark.parametrize("form, message", [
    ({"criterion_id": "nope", "action": "agree"}, "not in item"),
    ({"criterion_id": "pain", "action": "correct", "label": "MET"}, "not allowed"),
    ({"criterion_id": "stinger", "action": "shrug"}, "unknown action"),
    ({"criterion_id": "stinger", "action": "correct", "label": "MET", "note": "x" * 2001}, "longer than"),
])
async def test_every_write_is_validated(run_dir, serve_app, reviewer, form, message):
    client = reviewer(await serve_app(run_dir, reviewer="dr_a"))
    status, text = await client.post("/items/0/label", form)
    assert status == 400 and message in text
    with RunLabels.open(run_dir) as labels:
        assert labels.labels() == []


async def test_labels_from_the_app_are_what_assay_agreement_reads(run_dir, serve_app, reviewer):
    client = reviewer(await serve_app(run_dir, reviewer="dr_a"))
    for i in range(3):
        await client.post(f"/items/{i}/label", {"criterion_id": "stinger", "action": "correct",
                                                "label": "MET"})
    result = CliRunner().invoke(cli, ["agreement", str(run_dir), "--json", str(run_dir / "a.json")])
    assert result.exit_code == 0, result.output
    import json

    reports = {r["judge"].split(":")[1].split("@")[0]: r for r in json.loads((run_dir / "a.json").read_text())["reports"]}
    assert reports["judge0"]["n_pairs"] == 3 and reports["judge0"]["pooled"]["accuracy"]["value"] == 1.0
    assert reports["judge1"]["pooled"]["accuracy"]["value"] == 0.0


async def test_agreement_on_an_ensemble_run_without_labels_says_what_to_do(run_dir):
    result = CliRunner().invoke(cli, ["agreement", str(run_dir)])  # two judges: reliability only
    assert result.exit_code == 0 and "give --labels FILE, or label the run with assay review" in result.output


async def test_a_token_is_required_on_every_request_when_set(run_dir, serve_app):
    base = await serve_app(run_dir, reviewer="dr_a", token="s3cret-token")
    assert (await get(f"{base}/"))[0] == 401
    assert (await post(f"{base}/items/0/label", {"criterion_id": "stinger", "action": "agree"}))[0] == 401
    assert (await get(f"{base}/", headers={"Authorization": "Bearer s3cret-token"}))[0] == 200
    jar = aiohttp.CookieJar(unsafe=True)  # browsers keep cookies of 127.0.0.1; aiohttp needs asking
    async with aiohttp.ClientSession(cookie_jar=jar) as session:  # ?token= once, then the cookie
        async with session.get(f"{base}/?token=s3cret-token") as first:
            assert first.status == 200
        async with session.get(f"{base}/items/0") as second:
            assert second.status == 200


def test_binding_beyond_loopback_needs_a_token():
    check_binding("127.0.0.1", None)
    check_binding("::1", None)
    with pytest.raises(ConfigError, match="needs --token"):
        check_binding("0.0.0.0", None)
    check_binding("0.0.0.0", "tok")


async def test_rubric_review_saves_a_new_version_with_provenance(run_dir, serve_app, reviewer):
    client = reviewer(await serve_app(run_dir, reviewer="dr_a"))
    status, _ = await client.post("/rubrics/q0", {
        "action:stinger": "edit", "text:stinger": "Explains how to scrape out the stinger.",
        "weight:stinger": "6", "action:tweezers": "reject", "action:pain": "accept",
        "action:tone": "accept"})
    assert status == 303
    [path] = (run_dir / "reviewed-rubrics").iterdir()
    rubric = read_rubric(path)
    assert path.name == "bee.v2.yaml" and rubric.version == "2"
    assert [c.id for c in rubric.criteria] == ["stinger", "pain", "tone"]
    stinger = rubric.criteria[0]
    assert (stinger.text, stinger.weight, stinger.provenance.author) == (
        "Explains how to scrape out the stinger.", 6.0, "dr_a")
    review = rubric.metadata["review"]
    assert review["decisions"] == {"stinger": "edit", "tweezers": "reject", "pain": "accept", "tone": "accept"}
    assert review["parent_version"] == "1" and review["reviewer"] == "dr_a"


async def test_rejecting_every_criterion_is_refused(run_dir, serve_app, reviewer):
    client = reviewer(await serve_app(run_dir, reviewer="dr_a"))
    form = {f"action:{c}": "reject" for c in ("stinger", "tweezers", "pain", "tone")}
    status, text = await client.post("/rubrics/q0", form)
    assert status == 400 and "needs at least one" in text


async def test_a_rubric_file_is_reviewed_on_its_own_and_saved_beside_it(tmp_path, serve_app,
                                                                       reviewer):
    import yaml
    from tests.runs.conftest import RUBRIC

    path = tmp_path / "generated.yaml"
    path.write_text(yaml.safe_dump(RUBRIC))
    base = await serve_app(path, reviewer="dr_a")
    status, html = await get(f"{base}/")
    assert status == 200 and 'href="/rubrics/bee"' in html
    assert (await get(f"{base}/items/0"))[0] == 404
    status, _ = await reviewer(base).post("/rubrics/bee", {"action:tone": "reject"})
    assert status == 303
    saved = read_rubric(tmp_path / "reviewed-rubrics" / "bee.v2.yaml")
    assert [c.id for c in saved.criteria] == ["stinger", "tweezers", "pain"]


async def test_an_edit_made_while_the_decision_says_accept_is_kept(run_dir, serve_app, reviewer):
    client = reviewer(await serve_app(run_dir, reviewer="dr_a"))
    status, _ = await client.post("/rubrics/q0", {
        "action:stinger": "accept", "text:stinger": "Scrapes the stinger out sideways.",
        "weight:stinger": "5", "action:tweezers": "accept", "text:tweezers":
        "Recommends squeezing the stinger with tweezers.", "weight:tweezers": "-3"})
    assert status == 303
    rubric = read_rubric(run_dir / "reviewed-rubrics" / "bee.v2.yaml")
    assert rubric.criteria[0].text == "Scrapes the stinger out sideways."
    assert rubric.metadata["review"]["decisions"]["stinger"] == "edit"
    assert rubric.metadata["review"]["decisions"]["tweezers"] == "accept"  # unchanged text


async def test_the_rubric_page_shows_the_query_and_after_a_save_the_version_and_its_diff(
        run_dir, serve_app, reviewer):
    client = reviewer(await serve_app(run_dir, reviewer="dr_a"))
    status, html = await client.get("/rubrics/q1")
    assert status == 200 and "The query" in html and "Bee sting 1?" in html
    await client.post("/rubrics/q1", {"action:tweezers": "reject"})
    status, html = await client.get("/rubrics/q1?saved=bee.v2.yaml")
    assert "Saved as reviewed-rubrics/bee.v2.yaml" in html
    version = html.split('data-version="2"')[1].split("</section>")[0]
    assert "Version 2 against 1" in version and "3 criteria unchanged" in version
    assert 'class="change removed" data-criterion="tweezers"' in version
    editor = html.split('id="rubric-form"')[1].split("</form>")[0]  # the editor shows version 2
    assert 'name="text:tweezers"' not in editor and 'name="text:stinger"' in editor
    status, html = await client.get("/rubrics/q1?saved=../../etc/passwd")
    assert status == 200 and "Saved as" not in html


async def test_agreement_between_reviewers_is_reported_with_the_judges(run_dir, serve_app, reviewer):
    """Two reviewers label the same four verdicts through the app and differ on one: percent
    agreement 3/4, reported beside the judges' agreement with them."""
    for name, labels in (("dr_a", ["MET", "MET", "UNMET", "MET"]),
                         ("dr_b", ["MET", "MET", "UNMET", "UNMET"])):
        client = reviewer(await serve_app(run_dir, reviewer=name))
        for i, label in enumerate(labels):
            await client.post(f"/items/{i}/label", {"criterion_id": "stinger", "action": "correct",
                                                    "label": label})
    result = CliRunner().invoke(cli, ["agreement", str(run_dir), "--json", str(run_dir / "a.json")])
    assert result.exit_code == 0, result.output
    assert "Between reviewers (dr_a, dr_b)" in result.output
    import json

    between = json.loads((run_dir / "a.json").read_text())["between_reviewers"]
    assert between["judges"] == ["dr_a", "dr_b"]
    assert between["percent_agreement"]["value"] == 0.75


async def test_item_pages_are_served_from_the_store_before_the_index_is_read(run_dir):
    """The app starts without reading the run: an item page opens at once; the item list says
    how far the background reading has got, and the queue waits for it."""
    from assay.review.index import RunIndex

    index = RunIndex.open(run_dir)
    try:
        assert len(index) == 4 and index.entries == [] and not index.ready
        item = index.item(2)  # from the store, scored as the index will score it
        assert (item.id, item.conversation) == ("q2", [("user", "Bee sting 2?")])
        index.build()
        assert index.ready and [e.id for e in index.entries] == ["q0", "q1", "q2", "q3"]
        assert index.entries[2].score == item.score
        assert [c.final for c in index.entries[2].criteria] == [c.final for c in item.criteria]
    finally:
        index.close()


async def test_a_run_the_index_cannot_read_is_a_500_not_a_short_list(run_dir, serve_app,
                                                                     reviewer):
    import sqlite3

    with sqlite3.connect(run_dir / "run.sqlite") as db:  # item q2's record is damaged
        db.execute("UPDATE items SET json = '{\"id\": \"q2\"' WHERE id = 'q2'")
    client = reviewer(await serve_app(run_dir, reviewer="dr_a"))
    status, text = await client.get("/")
    assert status == 500 and "could not read the run's items" in text
    assert (await client.get("/items/1"))[0] == 200  # the other items still open
    assert (await client.get("/next"))[0] == 500
