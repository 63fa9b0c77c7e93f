"""A real headless Chromium (Debian's package, installed by scripts/setup.sh) driven by
Playwright. Nothing is downloaded: Playwright is pointed at /usr/bin/chromium."""

from __future__ import annotations

import shutil

import pytest

CHROMIUM_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("Chromium is not installed: run scripts/setup.sh (it installs Debian's "
                    "chromium package) or apt-get install chromium")
    return path


@pytest.fixture
async def browser():
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        instance = await playwright.chromium.launch(executable_path=chromium_path(),
                                                    args=CHROMIUM_FLAGS)
        try:
            yield instance
        finally:
            await instance.close()
