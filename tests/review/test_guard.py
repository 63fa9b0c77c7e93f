"""The review app trusts no other site (loopback, no token: its default mode): cross-site and
cross-port form posts, rebound Host names, reviewer names from form fields, non-finite weights
and malformed bodies, all over real HTTP on loopback."""

from __future__ import annotations

import logging
import math

import pytest
from tests.review.conftest import get, post, stored

from assay.errors import InputError
from assay.review import RubricDecision, save_reviewed_rubric

LABEL = {"criterion_id": "stinger", "action": "correct", "label": "MET"}
ATTACK = {**LABEL, "reviewer": "dr_mallory"}


@pytest.mark.parametrize("path, form", [("/items/0/label", ATTACK),
                                        ("/login", {"reviewer": "dr_mallory"})])
@pytest.mark.parametrize("headers", [
    {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},  # a form on another site
    {"Origin": "http://127.0.0.1:3000", "Sec-Fetch-Site": "same-site"},  # another local port
    {},  # a browser that sends neither header: no session cookie, no CSRF token
], ids=["cross-site", "same-site-other-port", "no-headers"])
async def test_a_form_posted_from_another_site_is_refused_and_stores_nothing(
        run_dir, serve_app, path, form, headers):
    base = await serve_app(run_dir)
    status, _ = await post(base + path, form, headers=headers)
    assert status == 403
    assert stored(run_dir) == {}


@pytest.mark.parametrize("headers, named", [
    ({"Origin": "http://evil.example"}, "Origin"),
    ({"Origin": "null"}, "Origin"),
    ({"Sec-Fetch-Site": "cross-site"}, "Sec-Fetch-Site"),
    ({"Sec-Fetch-Site": "same-site"}, "Sec-Fetch-Site"),
])
async def test_a_write_from_another_origin_is_refused_even_with_a_valid_session(
        run_dir, serve_app, reviewer, headers, named):
    client = reviewer(await serve_app(run_dir, reviewer="dr_a"))
    status, text = await client.post("/items/0/label", LABEL, headers=headers)
    assert status == 403 and named in text
    assert stored(run_dir) == {}


async def test_a_write_from_the_apps_own_page_passes_the_origin_checks(run_dir, serve_app,
                                                                      reviewer):
    base = await serve_app(run_dir, reviewer="dr_a")
    status, _ = await reviewer(base).post("/items/0/label", LABEL, headers={
        "Origin": base, "Sec-Fetch-Site": "same-origin"})
    assert status == 303
    assert stored(run_dir) == {("q0", "stinger", "dr_a"): "MET"}


@pytest.mark.parametrize("token", [None, "0" * 43], ids=["missing", "forged"])
async def test_a_write_without_the_pages_csrf_token_is_refused(run_dir, serve_app, reviewer,
                                                               token):
    client = reviewer(await serve_app(run_dir, reviewer="dr_a"))
    await client.get("/items/0")  # the session cookie is set
    form = LABEL if token is None else {**LABEL, "csrf": token}
    status, text = await client.post("/items/0/label", form, csrf=False)
    assert status == 403 and "CSRF" in text
    assert stored(run_dir) == {}


async def test_a_csrf_token_of_another_session_is_refused(run_dir, serve_app, reviewer):
    base = await serve_app(run_dir, reviewer="dr_a")
    victim, attacker = reviewer(base), reviewer(base)
    await victim.get("/items/0")
    await attacker.get("/items/0")
    status, _ = await attacker.post("/items/0/label", {**LABEL, "csrf": victim.token}, csrf=False)
    assert status == 403


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1.evil.example", "localhost.evil"])
async def test_a_foreign_host_header_is_refused_as_dns_rebinding(run_dir, serve_app, host):
    base = await serve_app(run_dir, reviewer="dr_a")
    port = base.rsplit(":", 1)[1]
    status, text = await get(f"{base}/items/0", headers={"Host": f"{host}:{port}"})
    assert status == 421 and "--allow-host" in text
    status, _ = await post(f"{base}/items/0/label", ATTACK, headers={"Host": f"{host}:{port}"})
    assert status == 421
    assert stored(run_dir) == {}


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]", "review.lan"])
async def test_loopback_names_and_allowed_hosts_are_served(run_dir, serve_app, host):
    base = await serve_app(run_dir, reviewer="dr_a", allow_hosts=["review.lan"])
    port = base.rsplit(":", 1)[1]
    status, _ = await get(f"{base}/items/0", headers={"Host": f"{host}:{port}"})
    assert status == 200


async def test_the_reviewer_comes_from_the_session_not_from_a_form_field(run_dir, serve_app,
                                                                         reviewer):
    client = reviewer(await serve_app(run_dir, reviewer="dr_a"))
    status, _ = await client.post("/items/0/label", ATTACK)
    assert status == 303
    assert stored(run_dir) == {("q0", "stinger", "dr_a"): "MET"}


async def test_without_a_reviewer_each_browser_logs_in_with_its_own_name(run_dir, serve_app,
                                                                         reviewer):
    base = await serve_app(run_dir)
    first, second = reviewer(base), reviewer(base)
    status, _ = await first.get("/items/0", allow_redirects=False)
    assert status == 303  # to the login page
    assert (await first.post("/login", {"reviewer": "dr_a"}))[0] == 303
    assert (await second.post("/login", {"reviewer": "dr_b"}))[0] == 303
    await first.post("/items/0/label", {**LABEL, "reviewer": "dr_b"})
    await second.post("/items/0/label", {**LABEL, "label": "UNMET"})
    assert stored(run_dir) == {("q0", "stinger", "dr_a"): "MET",
                               ("q0", "stinger", "dr_b"): "UNMET"}
    assert 'id="reviewer">dr_a<' in (await first.get("/"))[1]


async def test_a_write_before_logging_in_is_refused(run_dir, serve_app, reviewer):
    client = reviewer(await serve_app(run_dir))
    await client.get("/login")  # a session and its token, but no name yet
    status, text = await client.post("/items/0/label", LABEL)
    assert status == 403 and "log in" in text
    assert stored(run_dir) == {}


@pytest.mark.parametrize("name", ["", "   ", "x" * 101, "dr\x00a"])
async def test_a_login_needs_a_printable_name_of_at_most_100_characters(run_dir, serve_app,
                                                                        reviewer, name):
    status, text = await reviewer(await serve_app(run_dir)).post("/login", {"reviewer": name})
    assert status == 400 and "reviewer name" in text


@pytest.mark.parametrize("weight", ["nan", "inf", "-inf", "1e309", "ten"])
async def test_a_weight_that_is_not_a_finite_number_is_a_400(run_dir, serve_app, reviewer,
                                                              weight):
    client = reviewer(await serve_app(run_dir, reviewer="dr_a"))
    status, text = await client.post("/rubrics/q0", {"action:stinger": "edit",
                                                     "weight:stinger": weight})
    assert status == 400 and "not a finite number" in text
    assert not (run_dir / "reviewed-rubrics").exists() or not any(
        (run_dir / "reviewed-rubrics").iterdir())


def test_saving_a_reviewed_rubric_refuses_a_non_finite_weight(tmp_path):
    from assay.rubric import Criterion, Rubric

    rubric = Rubric(id="r", criteria=[Criterion(id="a", text="Says A.")])
    with pytest.raises(InputError, match="not a finite number"):
        save_reviewed_rubric(rubric, [RubricDecision("a", "edit", weight=math.inf)], tmp_path,
                             reviewer="dr_a")
    assert list(tmp_path.glob("*.yaml")) == []


@pytest.mark.parametrize("body, content_type, status", [
    (b"\xff\xfe=%%%", "application/x-www-form-urlencoded", 400),  # not UTF-8
    (b"--x\r\nbroken", "multipart/form-data; boundary=x", 400),  # a part without headers
    (b"a=b", "multipart/form-data", 400),  # no boundary
    (b'{"criterion_id": "stinger"}', "application/json", 415),
], ids=["bad-utf8", "broken-multipart", "no-boundary", "json"])
async def test_a_malformed_body_is_a_4xx_and_one_log_line(run_dir, serve_app, reviewer, caplog,
                                                          body, content_type, status):
    client = reviewer(await serve_app(run_dir, reviewer="dr_a"))
    await client.get("/items/0")
    with caplog.at_level(logging.INFO):
        async with client.http.post(f"{client.base}/items/0/label", data=body, headers={
                "Content-Type": content_type, "X-CSRF-Token": client.token}) as response:
            assert response.status == status
    logged = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(logged) == 1 and logged[0].name == "assay.review"
    assert logged[0].exc_info is None and "\n" not in logged[0].getMessage()
    assert stored(run_dir) == {}


async def test_the_cli_passes_reviewer_and_allowed_hosts_to_the_app(run_dir):
    import asyncio
    import re

    from tests.runs.test_resume import ASSAY

    process = await asyncio.create_subprocess_exec(
        *ASSAY, "review", str(run_dir), "--port", "0", "--reviewer",
        "dr_a", "--allow-host", "review.lan", stderr=asyncio.subprocess.PIPE)
    try:
        line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
        assert "as dr_a" in line
        base = re.search(r"http://127\.0\.0\.1:\d+", line).group(0)
        port = base.rsplit(":", 1)[1]
        for _ in range(100):  # the port is printed just before the server listens
            try:
                status, html = await get(f"{base}/items/0", headers={"Host": f"review.lan:{port}"})
                break
            except OSError:
                await asyncio.sleep(0.1)
        assert status == 200 and 'id="reviewer">dr_a<' in html
        assert (await get(f"{base}/items/0", headers={"Host": f"evil.example:{port}"}))[0] == 421
    finally:
        process.terminate()
        await process.wait()
