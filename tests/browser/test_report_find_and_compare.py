"""In Chromium, the report as a reader uses it on a benchmark: find an item by a phrase from
any turn or its response, compare two runs item by item, and read the same words and colours
everywhere (penalties DETECTED / CLEAR, criteria by their text, judges by their short names)."""

from __future__ import annotations

import json

from tests.report.conftest import AGREE, DISAGREE, grade_run

from assay.report import write_report
from assay.review import RunLabels

FIRST_TURN = "My toddler was stung near the lake this morning by something yellow and striped."
LONG_TURN = ("It is now the afternoon and the swelling has spread from the hand up towards the "
             "elbow, it is warm to the touch and she keeps scratching it even with mittens on; "
             "should I give her the pink antihistamine syrup we have at home?")
RESPONSE = "Apply a cold compress for twenty minutes and watch for spreading redness."


def conversations(path, n=6):
    """Items of several turns: item 0 holds the phrases a reader searches for."""
    with path.open("w") as out:
        for i in range(n):
            turns = ([{"role": "user", "content": FIRST_TURN},
                      {"role": "assistant", "content": "How is she now?"},
                      {"role": "user", "content": LONG_TURN}] if i == 0 else
                     [{"role": "user", "content": f"Bee sting {i}: what do I do?"}])
            out.write(json.dumps({"id": f"t{i}", "prompt": turns,
                                  "response": RESPONSE if i == 0 else f"Answer {i}: ice it.",
                                  "tags": ["theme:emergency" if i % 2 else "theme:hedging"]}) + "\n")
    return path


async def open_report(browser, path):
    page = await browser.new_page(viewport={"width": 1280, "height": 900})
    await page.goto(path.as_uri())
    await page.wait_for_selector("body[data-ready='1']")
    return page


async def search(page, text):
    await page.locator(".filters [name=q]").fill(text)
    await page.wait_for_selector(f".item-list[data-query={json.dumps(text)}]")
    return [await r.get_attribute("id") for r in await page.locator(".item-list tr.item-row").all()]


async def test_a_phrase_from_any_turn_or_the_response_finds_its_item(browser, tmp_path):
    assert LONG_TURN.index("pink antihistamine") > 160  # past the 160-character preview
    run = await grade_run(tmp_path, "run", [AGREE], items=conversations(tmp_path / "talks.jsonl"))
    page = await open_report(browser, write_report([run], tmp_path / "r.html"))
    assert await search(page, "stung near the lake") == ["item-0-0"]  # the first of three turns
    assert await search(page, "PINK ANTIHISTAMINE") == ["item-0-0"]  # any case, past char 160
    assert await search(page, "cold compress for twenty") == ["item-0-0"]  # the response
    assert await search(page, "bee sting 3") == ["item-0-3"]
    assert await search(page, "") == [f"item-0-{i}" for i in range(6)]


async def test_typing_a_search_filters_once_when_typing_pauses(browser, tmp_path):
    run = await grade_run(tmp_path, "run", [AGREE], items=conversations(tmp_path / "talks.jsonl"))
    page = await open_report(browser, write_report([run], tmp_path / "r.html"))
    listed = page.locator(".item-list")
    before = int(await listed.get_attribute("data-draws"))
    typed = "cold compres"  # 12 characters, one input event each, as fast as a typist
    await page.evaluate("""text => {
        const box = document.querySelector(".filters [name=q]");
        for (const character of text) {
            box.value += character;
            box.dispatchEvent(new Event("input", {bubbles: true}));
        }
    }""", typed)
    await page.wait_for_selector(f".item-list[data-query='{typed}']")
    assert int(await listed.get_attribute("data-draws")) == before + 1
    assert await listed.locator("tr.item-row").count() == 1
    box = page.locator(".filters [name=q]")
    await box.press("End")
    await box.press("s")  # a real key press too
    await page.wait_for_selector(".item-list[data-query='cold compress']")
    assert int(await listed.get_attribute("data-draws")) == before + 2


async def test_the_search_placeholders_are_shown_whole(browser, tmp_path):
    run = await grade_run(tmp_path, "run", [AGREE])
    page = await open_report(browser, write_report([run, run], tmp_path / "r.html"))
    for selector in (".filters [name=q]", ".compare-filters [name=q]"):
        fits = await page.evaluate("""selector => {
            const box = document.querySelector(selector), style = getComputedStyle(box);
            const context = document.createElement("canvas").getContext("2d");
            context.font = style.font;
            const room = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
            return [context.measureText(box.placeholder).width, room];
        }""", selector)
        assert fits[0] <= fits[1], (selector, fits)


def regression(view):
    """Run B: item 2 misses the stinger, item 3 DETECTS the tweezers penalty; the rest as A."""
    answer = AGREE.get(view.criterion_id, "MET")
    if "Answer 2" in (view.response_text or "") and view.criterion_id == "stinger":
        return "UNMET"
    if "Answer 3" in (view.response_text or "") and view.criterion_id == "tweezers":
        return "MET"
    return answer


async def test_two_runs_compared_item_by_item_sorted_filtered_and_side_by_side(browser, tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    a = await grade_run(tmp_path / "a", "run-a", [AGREE])
    b = await grade_run(tmp_path / "b", "run-b", [regression])
    page = await open_report(browser, write_report([a, b], tmp_path / "r.html"))
    rows = page.locator("#compare-0 tr.compare-row")
    ids = lambda: rows.evaluate_all("rows => rows.map(r => r.dataset.item)")
    assert await ids() == ["q2", "q3", "q0", "q1"]  # B − A, the largest fall first
    changes = await rows.evaluate_all("rows => rows.map(r => r.children[4].textContent)")
    assert changes == ["-0.455", "-0.273", "0.000", "0.000"]  # 5 and 3 points of 11 lost
    await page.locator("#compare-0 th[data-sort=d]").click()  # again: the largest rise first
    assert (await ids())[-2:] == ["q3", "q2"]
    await page.locator("#compare-0 [name=changed]").check()
    assert sorted(await ids()) == ["q2", "q3"]
    await rows.filter(has_text="q3").click()
    flipped = page.locator("#compare-0 .sides-table tr.flipped")
    assert await flipped.count() == 1
    assert "tweezers" in await flipped.locator("td").first.inner_text()
    a_side, b_side = flipped.locator("td.side-a span"), flipped.locator("td.side-b span")
    assert (await a_side.inner_text(), await a_side.get_attribute("class")) == ("CLEAR", "good")
    assert (await b_side.inner_text(), await b_side.get_attribute("class")) == ("DETECTED", "harmful")
    await page.locator("#compare-0 .sides-box a").click()  # open the item in run A
    await page.wait_for_selector("#item-0-3.open")


LONG_CRITERION = ("Advises watching for signs of anaphylaxis — swelling of the face, lips or "
                  "throat, wheezing, difficulty breathing or swallowing, dizziness, a racing "
                  "heart — and calling emergency services at once if any appear, even after the "
                  "first hour has passed.")


async def test_words_colours_names_and_points_read_the_same_everywhere(browser, tmp_path):
    from tests.runs.conftest import RUBRIC

    rubric = {**RUBRIC, "criteria": [*RUBRIC["criteria"], {"id": "anaphylaxis", "text": LONG_CRITERION,
                                                          "weight": 1}]}
    run = await grade_run(tmp_path, "run", [regression, {**AGREE, "anaphylaxis": "MET"}],
                          rubric=rubric)
    with RunLabels.open(run) as labels:
        labels.put("q1", "stinger", "dr_a", verdict="MET")
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["totals"].update(prompt_tokens=1234567, completion_tokens=89012)
    (run / "manifest.json").write_text(json.dumps(manifest))
    page = await open_report(browser, write_report([run], tmp_path / "r.html"))

    judge = page.locator(".card .judge").first  # judges by their short names, whole id on hover
    assert await judge.inner_text() == "judge0"
    assert (await judge.get_attribute("title")).startswith("openai-compatible:judge0@http://")
    assert "1,234,567 / 89,012" in await page.locator(".cards").inner_text()

    await page.locator("#toc a[href='#criteria-1']").click()  # a table of contents
    assert page.url.endswith("#criteria-1")
    failed = page.locator("table.criteria-outcomes tr td:first-child")
    # ranked by points lost: pain 4 × 2 (partly), stinger 5 (q2), tweezers 3 (q3)
    assert [t.split(" ")[0] for t in (await failed.all_inner_texts())[:3]] == [
        "How", "Explains", "Recommends"]

    long_cell = page.locator("table.criteria-outcomes details.long")  # shortened, expandable
    assert await long_cell.count() == 1
    assert LONG_CRITERION not in await long_cell.inner_text()
    await long_cell.locator("summary").click()
    assert LONG_CRITERION in await long_cell.inner_text()

    agreement = page.locator("table.agreement td:first-child").first  # the text, not the id
    assert await agreement.inner_text() == "Explains how to remove the stinger."

    await page.locator("#item-0-3").click()  # points earned of possible, costliest first
    assert (await page.locator("#item-0-3 td.points").inner_text()) == "7 of 12"
    detail = page.locator(".item-list tr.detail-row:not([hidden]) .detail")
    assert "7 of 12 points earned" in await detail.locator("p.points").inner_text()
    lost = await detail.locator("table.criteria td.lost").all_inner_texts()
    assert lost == ["3", "2", "0", "0", "0"]
    first = detail.locator("table.criteria tr[data-criterion='tweezers']")
    assert await first.locator("td.final span").get_attribute("class") == "harmful"
    vote = first.locator("span.judge").first
    assert await vote.inner_text() == "judge0" and "@http://" in await vote.get_attribute("title")


async def test_per_criterion_judge_agreement_is_drawn_when_opened(browser, tmp_path):
    run = await grade_run(tmp_path, "run", [AGREE, DISAGREE], n=12)
    page = await open_report(browser, write_report([run], tmp_path / "r.html"))
    section = page.locator("#judge-criteria-1")
    assert await section.locator("table").count() == 0  # nothing drawn up front
    await section.locator("summary").click()
    await section.locator("table.judge-heatmap").wait_for()
    rows = section.locator("table.judge-heatmap tr")
    texts = await rows.evaluate_all("rows => rows.slice(1).map(r => r.children[0].textContent)")
    assert "Explains how to remove the stinger." in texts and len(texts) == 4
    stinger = rows.filter(has_text="Explains how to remove the stinger.")
    assert await stinger.locator("td").nth(1).inner_text() == "12"
    colour = await stinger.locator("td").nth(4).evaluate("cell => cell.style.background")
    assert colour == "rgb(238, 196, 196)"  # the judges never agree on it: red

