"""In a real browser: the report renders its figures and never runs model text; a reviewer
labels verdicts in the app and the labels reach assay agreement."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from aiohttp import web
from tests.report.conftest import AGREE, DISAGREE, grade_run
from typer.testing import CliRunner

from assay.cli import app as cli
from assay.report import write_report
from assay.review import RunLabels
from assay.review.app import indexed, make_app

SCREENSHOTS = os.environ.get("ASSAY_SCREENSHOTS")  # set to a folder to refresh the README's


@pytest.fixture
async def run_dir(tmp_path):
    return await grade_run(tmp_path, "run", [AGREE, DISAGREE])


async def test_the_report_renders_its_figures_and_escapes_model_text(browser, run_dir, tmp_path):
    report = write_report([run_dir], tmp_path / "report.html")
    page = await browser.new_page(viewport={"width": 1280, "height": 900})
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    await page.goto(report.as_uri())
    await page.wait_for_selector("body[data-ready='1']")
    if SCREENSHOTS:
        await page.screenshot(path=str(Path(SCREENSHOTS) / "report.png"))
    box = await page.locator("#histogram-1 svg").bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 50
    assert await page.evaluate("window.__pwned") is None  # the <script> in a response never ran
    await page.locator("#item-0-0").click()  # drawn on demand, as text
    assert "<script>window.__pwned = 1</script>" in await page.locator(".item-list .detail").inner_text()
    assert await page.evaluate("window.__pwned") is None
    assert requests == [report.as_uri()]  # nothing else loaded, from the network or anywhere


async def test_the_item_list_filters_sorts_and_disagreement_links_open_their_item(
        browser, run_dir, tmp_path):
    report = write_report([run_dir], tmp_path / "report.html")
    page = await browser.new_page(viewport={"width": 1280, "height": 900})
    await page.goto(report.as_uri())
    await page.wait_for_selector("body[data-ready='1']")
    rows = page.locator(".item-list tr.item-row")
    assert await rows.count() == 4
    await page.locator(".filters [name=theme]").select_option("emergency")
    assert [await r.get_attribute("id") for r in await rows.all()] == ["item-0-1", "item-0-3"]
    await page.locator(".filters [name=q]").fill("q3")
    await page.wait_for_selector(".item-list[data-query='q3']")  # drawn once typing pauses
    assert [await r.get_attribute("id") for r in await rows.all()] == ["item-0-3"]
    await page.locator(".disagreement-list a.item-link", has_text="q2").click()  # filtered out
    await page.wait_for_selector("#item-0-2.open")
    assert await page.locator(".filters [name=q]").input_value() == ""
    detail = page.locator(".item-list tr.detail-row:not([hidden]) .detail")
    assert "Bee sting 2?" in await detail.inner_text()
    penalty = detail.locator("tr[data-criterion='tweezers'] td.final span")
    assert (await penalty.inner_text(), await penalty.get_attribute("class")) == ("CLEAR", "good")
    await page.locator(".filters [name=sort]").select_option("score-desc")
    assert await rows.count() == 4


async def test_a_reviewer_labels_three_verdicts_and_agreement_is_recomputed(browser, run_dir):
    runner = web.AppRunner(make_app(run_dir, reviewer="dr_a"))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    await indexed(runner.app)
    base = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
    try:
        page = await browser.new_page()
        await page.goto(base + "/")
        await page.locator("a.item-link").first.click()
        for number in range(3):
            row = page.locator("tr[data-criterion='stinger']")
            await row.locator("select[name=label]").select_option("MET")
            await row.locator("input[name=note]").fill(f"checked {number}")
            await row.locator("button[value=correct]").click()
            await page.wait_for_selector("#saved")
            assert "checked" in await page.locator("tr[data-criterion='stinger'] .current").inner_text()
            if SCREENSHOTS and number == 0:
                await page.screenshot(path=str(Path(SCREENSHOTS) / "review.png"))
            await page.locator("#next").click()
    finally:
        await runner.cleanup()
    out = run_dir / "agreement.json"
    result = CliRunner().invoke(cli, ["agreement", str(run_dir), "--json", str(out)])
    assert result.exit_code == 0, result.output
    reports = {r["judge"].split(":")[1].split("@")[0]: r for r in json.loads(out.read_text())["reports"]}
    assert reports["judge0"]["n_pairs"] == 3 and reports["judge0"]["pooled"]["accuracy"]["value"] == 1.0
    assert reports["judge1"]["pooled"]["accuracy"]["value"] == 0.0


EVIL_PAGE = """<!DOCTYPE html><form id="f" method="post" action="{target}/items/0/label">
<input name="criterion_id" value="stinger"><input name="action" value="correct">
<input name="label" value="MET"><input name="reviewer" value="dr_mallory"></form>
<script>document.getElementById("f").submit()</script>"""


async def test_a_page_on_another_port_cannot_post_a_label_in_the_reviewers_browser(browser,
                                                                                   run_dir):
    """127.0.0.1 on another port is the same site: the browser sends the session cookie, and
    the Origin / Sec-Fetch-Site checks and the missing CSRF token still refuse the write."""
    review = web.AppRunner(make_app(run_dir, reviewer="dr_a"))
    evil = web.Application()
    runners = [review, web.AppRunner(evil)]
    base = ""

    async def evil_page(_):
        return web.Response(text=EVIL_PAGE.format(target=base), content_type="text/html")

    evil.router.add_get("/", evil_page)
    ports = []
    for runner in runners:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        ports.append(site._server.sockets[0].getsockname()[1])
    base = f"http://127.0.0.1:{ports[0]}"
    try:
        page = await browser.new_page()
        await page.goto(base + "/items/0")  # the reviewer has the app open: a session cookie
        attacked = await browser.new_page()
        async with attacked.expect_navigation(url=f"{base}/items/**"):
            await attacked.goto(f"http://127.0.0.1:{ports[1]}/")
        assert "writes come only from the app's own pages" in await attacked.content()
    finally:
        for runner in runners:
            await runner.cleanup()
    with RunLabels.open(run_dir) as labels:
        assert labels.labels() == []


async def test_without_reviewer_the_browser_logs_in_and_its_labels_carry_that_name(browser,
                                                                                   run_dir):
    runner = web.AppRunner(make_app(run_dir))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    base = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
    try:
        page = await browser.new_page()
        await page.goto(base + "/items/1")
        assert page.url == base + "/login"
        await page.locator("input[name=reviewer]").fill("dr_b")
        await page.locator("#login").click()
        await page.wait_for_selector("#reviewer")
        await page.goto(base + "/items/1")
        row = page.locator("tr[data-criterion='stinger']")
        await row.locator("button[value=agree]").click()
        await page.wait_for_selector("#saved")
    finally:
        await runner.cleanup()
    with RunLabels.open(run_dir) as labels:
        assert [(l.item_id, l.criterion_id, l.rater) for l in labels.labels()] == [
            ("q1", "stinger", "dr_b")]


async def test_a_reviewer_labels_fifty_verdicts_disagreements_first_without_the_mouse(browser, tmp_path):
    run = await grade_run(tmp_path, "big", [AGREE, DISAGREE], n=13)  # 13 items x 4 criteria = 52
    with RunLabels.open(run) as labels:  # another reviewer differs from the final on items 7 and 11
        labels.put("q7", "tweezers", "dr_b", verdict="MET")
        labels.put("q11", "tweezers", "dr_b", verdict="MET")
    runner = web.AppRunner(make_app(run, reviewer="dr_a"))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    base = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
    try:
        page = await browser.new_page()
        await page.goto(base + "/")
        visited = []
        async with page.expect_navigation():
            await page.keyboard.press("s")  # start the queue, disagreements first
        for _ in range(50):
            visited.append(page.url.split("/items/")[1].split("?")[0])
            async with page.expect_navigation():
                await page.keyboard.press("a")  # agree with the selected verdict
        with RunLabels.open(run) as labels:
            mine = [label for label in labels.labels() if label.rater == "dr_a"]
        assert len(mine) == 50 and all(label.agrees for label in mine)
        order = list(dict.fromkeys(visited))
        assert order[:2] == ["7", "11"]  # the items with a human disagreement came first
        assert order[2:] == [str(i) for i in range(13) if i not in (7, 11)][:len(order) - 2]
    finally:
        await runner.cleanup()
