"""In Chromium, the review app as a clinician-researcher uses it: curate a rubric of multi-line
HealthBench criteria without touching what was not edited, find an item by what it says in the
item list (search, filters, pages), and read verdicts in the report's words and colours."""

from __future__ import annotations

import json
from pathlib import Path

from aiohttp import web
from tests.report.conftest import AGREE, DISAGREE, grade_run

from assay.io import read_rubric, read_rubric_file
from assay.review import RunLabels
from assay.review.app import indexed, make_app

DEV = Path(__file__).resolve().parents[1] / "data" / "healthbench" / "dev.jsonl"
ROW = "bfd1bcc3-3e40-4a15-a554-d51983ed6122"  # 9 criteria, two of several lines (1,406 chars)


async def serve(target, **options):
    runner = web.AppRunner(make_app(target, **options))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    await indexed(runner.app)
    return runner, f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"


async def test_editing_one_multi_line_criterion_keeps_every_other_byte_for_byte(browser, tmp_path):
    row = next(r for r in map(json.loads, DEV.read_text().splitlines()) if r["prompt_id"] == ROW)
    path = tmp_path / "rubrics.jsonl"
    path.write_text(json.dumps(row) + "\n")
    original = read_rubric_file(path).per_item[ROW]
    multi = [c for c in original.criteria if "\n" in c.text]
    assert len(multi) == 2 and max(len(c.text) for c in multi) == 1406
    edited, untouched = min(multi, key=lambda c: len(c.text)), max(multi, key=lambda c: len(c.text))
    line = edited.text.splitlines()[1]
    new_text = edited.text.replace(line, line + " (checked by the reviewer)", 1)

    runner, base = await serve(path, reviewer="dr_a")
    try:
        page = await browser.new_page()
        await page.goto(f"{base}/rubrics/{ROW}")
        box = page.locator(f"textarea[name='text:{edited.id}']")
        assert await box.input_value() == edited.text  # every line break shown
        assert await page.locator(f"textarea[name='text:{untouched.id}']").input_value() == untouched.text
        await box.fill(new_text)
        await page.locator("#save-rubric").click()
        await page.wait_for_selector("#saved")
        version = page.locator("section.version[data-version='2']")
        assert "1 change · 8 criteria unchanged" in await version.inner_text()
        change = version.locator(f"tr.change.edited[data-criterion='{edited.id}'] td.diff")
        assert await change.locator("ins").inner_text() == " (checked by the reviewer)"
        assert await change.locator("del").count() == 0
    finally:
        await runner.cleanup()

    saved = read_rubric(tmp_path / "reviewed-rubrics" / f"{original.id}.v2.yaml")
    by_id = {c.id: c for c in saved.criteria}
    assert by_id[edited.id].text == new_text and "\n" in by_id[edited.id].text
    assert by_id[edited.id].provenance.note == "edited by dr_a"
    for criterion in original.criteria:
        if criterion.id != edited.id:  # the others byte for byte, recorded as accepted
            assert by_id[criterion.id] == criterion
    decisions = saved.metadata["review"]["decisions"]
    assert [c for c, action in decisions.items() if action != "accept"] == [edited.id]


async def test_a_second_save_builds_on_the_first_and_shows_each_versions_diff(browser, tmp_path):
    import yaml
    from tests.runs.conftest import RUBRIC

    path = tmp_path / "bee.yaml"
    path.write_text(yaml.safe_dump(RUBRIC))
    runner, base = await serve(path, reviewer="dr_a")
    try:
        page = await browser.new_page()
        await page.goto(f"{base}/rubrics/bee")
        await page.locator("select[name='action:tone']").select_option("reject")
        await page.locator("#save-rubric").click()
        await page.wait_for_selector("#saved")
        await page.locator("textarea[name='text:stinger']").fill("Explains how to scrape the stinger out.")
        await page.locator("input[name='weight:pain']").fill("3")
        await page.locator("#save-rubric").click()
        await page.wait_for_selector("#saved")
        versions = page.locator("section.version")
        assert await versions.evaluate_all("s => s.map(x => x.dataset.version)") == ["3", "2"]
        third, second = versions.nth(0), versions.nth(1)
        assert "Version 3 against 2" in await third.inner_text()
        assert await third.locator("tr.change").evaluate_all("r => r.map(x => x.dataset.criterion)") == [
            "stinger", "pain"]
        stinger = third.locator("tr[data-criterion='stinger'] td.diff")
        assert await stinger.locator("del").all_inner_texts() == ["remove", "stinger."]
        assert await stinger.locator("ins").all_inner_texts() == ["scrape", "stinger out."]
        assert await third.locator("tr[data-criterion='pain'] td:last-child").inner_text() == "4.0 → 3.0"
        assert await second.locator("tr.change.removed").evaluate_all("r => r.map(x => x.dataset.criterion)") == [
            "tone"]
    finally:
        await runner.cleanup()
    third = read_rubric(tmp_path / "reviewed-rubrics" / "bee.v3.yaml")
    assert [c.id for c in third.criteria] == ["stinger", "tweezers", "pain"]
    assert third.metadata["review"]["decisions"] == {
        "stinger": "edit", "tweezers": "accept", "pain": "edit"}


def talks(path, n):
    """``n`` items; the first of several turns, one word of its first turn found nowhere else."""
    with path.open("w") as out:
        for i in range(n):
            turns = ([{"role": "user", "content": "Stung on the ankle by a hornet at the allotment."},
                      {"role": "assistant", "content": "Any swelling?"},
                      {"role": "user", "content": "A little. What should I do?"}] if i == 7 else
                     [{"role": "user", "content": f"Bee sting {i}: what now?"}])
            out.write(json.dumps({"id": f"q{i}", "prompt": turns, "response": f"Answer {i}: ice it.",
                                  "tags": ["theme:emergency" if i % 2 else "theme:hedging"]}) + "\n")
    return path


async def test_the_item_list_finds_by_any_turn_filters_and_pages(browser, tmp_path):
    run = await grade_run(tmp_path, "run", [AGREE, {**AGREE, "stinger": "UNMET"}],
                          items=talks(tmp_path / "talks.jsonl", 55))
    with RunLabels.open(run) as labels:  # dr_a labelled every criterion of q0
        for criterion, label in (("stinger", {"verdict": "MET"}), ("tweezers", {"verdict": "UNMET"}),
                                 ("pain", {"option": "partly"}), ("tone", {"option": "calm"})):
            labels.put("q0", criterion, "dr_a", **label)
    runner, base = await serve(run, reviewer="dr_a")
    try:
        page = await browser.new_page()
        await page.goto(base + "/")
        entries = page.locator("tr.item-entry")
        assert await entries.count() == 50 and "55 items · page 1 of 2" in await page.locator("#found").inner_text()
        assert "Bee sting 0: what now?" in await entries.first.locator("td.preview").inner_text()
        await page.locator("#next-page").click()
        await page.wait_for_selector("text=page 2 of 2")
        assert await entries.count() == 5
        await page.locator("form.find [name=q]").fill("HORNET at the allot")  # the first turn
        await page.locator("#find").click()
        await page.wait_for_selector("text=1 item · page 1 of 1")
        assert await entries.locator("a.item-link").all_inner_texts() == ["q7"]
        assert "A little. What should I do?" in await entries.locator("td.preview").inner_text()
        await page.locator("#clear").click()
        await page.locator("form.find [name=theme]").select_option("emergency")
        await page.wait_for_selector("text=27 items · page 1 of 1")
        await page.locator("form.find [name=show]").select_option("unlabelled")
        await page.wait_for_selector("text=27 items")  # q0 is of the other theme
        await page.locator("form.find [name=theme]").select_option("")
        await page.wait_for_selector("text=54 items · page 1 of 2")  # all but q0, labelled
        await page.locator("form.find [name=show]").select_option("disagreement")
        await page.wait_for_selector("text=55 items")  # the judges differ on every stinger
    finally:
        await runner.cleanup()


async def test_verdicts_wear_the_reports_words_and_colours(browser, tmp_path):
    run = await grade_run(tmp_path, "run", [{**AGREE, "tweezers": "MET"}, DISAGREE])
    runner, base = await serve(run, reviewer="dr_a")
    try:
        page = await browser.new_page()
        await page.goto(base + "/items/1")
        penalty = page.locator("tr[data-criterion='tweezers']")
        votes = penalty.locator("td:nth-child(3) span")
        words = await votes.evaluate_all("s => s.map(x => [x.textContent, x.className])")
        assert sorted(words) == [["CLEAR", "good"], ["DETECTED", "harmful"]]  # red, as the report
        judge = penalty.locator("b.judge").first
        assert await judge.inner_text() == "judge0"
        assert (await judge.get_attribute("title")).startswith("openai-compatible:judge0@")
        stinger = page.locator("tr[data-criterion='stinger'] td.final span")
        assert await stinger.get_attribute("class") in ("good", "missed")
        options = await penalty.locator("select[name=label] option").all_inner_texts()
        assert "DETECTED (MET)" in options and "CLEAR (UNMET)" in options
    finally:
        await runner.cleanup()
