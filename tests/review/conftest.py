"""A graded run to review, the review app on a loopback port, and clients that act as its
own pages do (a session cookie and the page's CSRF token) or as no page at all."""

from __future__ import annotations

import re

import aiohttp
import pytest
from aiohttp import web
from tests.report.conftest import AGREE, DISAGREE, grade_run

from assay.review import RunLabels
from assay.review.app import indexed, make_app


@pytest.fixture
async def run_dir(tmp_path):
    return await grade_run(tmp_path, "run", [AGREE, DISAGREE])


@pytest.fixture
async def serve_app():
    runners = []

    async def start(run_dir, **kwargs):
        runner = web.AppRunner(make_app(run_dir, **kwargs))
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        await indexed(runner.app)  # the item list is read in the background: the whole of it
        runners.append(runner)
        return f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"

    yield start
    for runner in runners:
        await runner.cleanup()


CSRF = re.compile(r'name="csrf" value="([^"]+)"')


class Reviewer:
    """A client that acts as the app's own pages do: it keeps the session cookie and sends the
    CSRF token of the last page it read (``post(..., csrf=False)`` leaves it out)."""

    def __init__(self, base: str):
        self.base = base
        self.http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        self.token: str | None = None

    async def get(self, path: str, **kwargs):
        async with self.http.get(self.base + path, **kwargs) as response:
            text = await response.text()
        if found := CSRF.search(text):
            self.token = found.group(1)
        return response.status, text

    async def post(self, path: str, data: dict, *, csrf: bool = True, **kwargs):
        if csrf and self.token is None:  # read the page that holds this form first
            await self.get(path.removesuffix("/label"))
        form = {**data, "csrf": self.token} if csrf else data
        async with self.http.post(self.base + path, data=form, allow_redirects=False,
                                  **kwargs) as response:
            if path == "/login":  # a login starts a new session, with its own token
                self.token = None
            return response.status, await response.text()

    async def close(self):
        await self.http.close()


@pytest.fixture
async def reviewer():
    clients = []

    def make(base):
        clients.append(Reviewer(base))
        return clients[-1]

    yield make
    for client in clients:
        await client.close()


async def post(url, data, **kwargs):
    """A POST from no page at all: no session, no CSRF token."""
    async with aiohttp.ClientSession() as session, \
            session.post(url, data=data, allow_redirects=False, **kwargs) as response:
        return response.status, await response.text()


async def get(url, **kwargs):
    async with aiohttp.ClientSession() as session, session.get(url, **kwargs) as response:
        return response.status, await response.text()


def stored(run_dir):
    with RunLabels.open(run_dir) as labels:
        return {(l.item_id, l.criterion_id, l.rater): l.verdict or l.option for l in labels.labels()}
