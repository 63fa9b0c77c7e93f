"""The review queue: the next item with a verdict this reviewer has not labelled, disagreements
first on request; a save comes back where the reviewer was, or moves on when the item is done."""

from __future__ import annotations

from tests.report.conftest import AGREE, grade_run

from assay.review import RunLabels


async def test_the_queue_opens_disagreements_first_then_the_rest_in_order(run_dir, serve_app, reviewer):
    with RunLabels.open(run_dir) as labels:  # another reviewer differs from the final on item 2
        labels.put("q2", "tweezers", "dr_b", verdict="MET")
    client = reviewer(await serve_app(run_dir, reviewer="dr_a"))
    async with client.http.get(client.base + "/next?order=disagreements", allow_redirects=False) as r:
        assert r.status == 303 and r.headers["Location"] == "/items/2?order=disagreements"
    async with client.http.get(client.base + "/next?order=input", allow_redirects=False) as r:
        assert r.headers["Location"] == "/items/0?order=input"


async def test_a_save_comes_back_at_the_criterion_just_labelled(run_dir, serve_app, reviewer):
    client = reviewer(await serve_app(run_dir, reviewer="dr_a"))
    await client.get("/items/1?order=input")
    async with client.http.post(client.base + "/items/1/label", allow_redirects=False, data={
            "criterion_id": "pain", "action": "agree", "csrf": client.token, "queue": "1",
            "order": "input"}) as r:
        assert r.headers["Location"] == "/items/1?order=input&saved=pain#criterion-2"


async def test_the_last_label_of_an_item_in_the_queue_moves_on_and_an_empty_queue_says_done(
        tmp_path, serve_app, reviewer):
    run = await grade_run(tmp_path, "one", [AGREE], n=2)
    client = reviewer(await serve_app(run, reviewer="dr_a"))
    await client.get("/items/0?order=input")
    for criterion in ("stinger", "tweezers", "pain"):
        await client.post("/items/0/label", {"criterion_id": criterion, "action": "agree",
                                             "queue": "1", "order": "input"})
    async with client.http.post(client.base + "/items/0/label", allow_redirects=False, data={
            "criterion_id": "tone", "action": "agree", "csrf": client.token, "queue": "1",
            "order": "input"}) as r:
        assert r.headers["Location"] == "/next?after=0&order=input&saved=tone"
    async with client.http.get(client.base + "/next?after=0&order=input", allow_redirects=False) as r:
        assert r.headers["Location"] == "/items/1?order=input"
    with RunLabels.open(run) as labels:
        for criterion in ("stinger", "tweezers", "pain", "tone"):
            labels.put("q1", criterion, "dr_a", verdict="MET")
    async with client.http.get(client.base + "/next?order=input", allow_redirects=False) as r:
        assert r.headers["Location"] == "/?done=1"


async def test_an_unknown_queue_order_is_a_400(run_dir, serve_app, reviewer):
    client = reviewer(await serve_app(run_dir, reviewer="dr_a"))
    status, text = await client.get("/next?order=random")
    assert status == 400 and "one of input, disagreements" in text
