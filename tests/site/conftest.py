"""A headless Chromium (Debian's) driven by Playwright, shared by the site tests."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    path = _chromium_path()
    if path is None:
        pytest.skip("no Chromium on this machine (make test installs Debian's chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    pg = context.new_page()
    pg.console_errors = []
    pg.on("console", lambda msg: pg.console_errors.append(msg.text) if msg.type == "error" else None)
    pg.on("pageerror", lambda exc: pg.console_errors.append(str(exc)))
    requests: list[str] = []
    pg.on("request", lambda req: requests.append(req.url))
    pg.requested_urls = requests
    yield pg
    context.close()
