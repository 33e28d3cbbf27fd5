"""Shared fixtures: the built site served on 127.0.0.1, and Debian's Chromium via Playwright."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
PY_READY = "html[data-python=ready]"
sys.path.insert(0, str(ROOT))

from sitebuild import browser as chromium  # noqa: E402
from sitebuild import serve  # noqa: E402
from sitebuild.pages import Builder  # noqa: E402


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The site, built once per test session into a temporary folder."""
    out = tmp_path_factory.mktemp("site")
    Builder(out).build()
    return out


@pytest.fixture(scope="session")
def server(site):
    """Serve the built site on 127.0.0.1 with the same handler as `build.py --serve`."""
    url, httpd = serve.in_background(site)
    yield url
    httpd.shutdown()


@pytest.fixture(scope="session")
def browser():
    if chromium.chromium_path() is None:
        pytest.fail(chromium.MISSING)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = chromium.launch(p)
        yield b
        b.close()


@pytest.fixture()
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


class Watch:
    """Console errors, page errors and requests that leave 127.0.0.1, for one page."""

    def __init__(self, page, base_url: str):
        self.errors: list[str] = []
        self.foreign: list[str] = []
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on(
            "request",
            lambda r: r.url.startswith((base_url, "data:", "blob:")) or self.foreign.append(r.url),
        )
        page.on(
            "worker",
            lambda w: w.on("console", lambda m: m.type == "error" and self.errors.append(m.text)),
        )

    def assert_clean(self):
        assert self.errors == [], self.errors
        assert self.foreign == [], self.foreign


@pytest.fixture()
def page(browser, server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    p = ctx.new_page()
    p.watch = Watch(p, server)
    yield p
    ctx.close()


def open_page(page, server, slug: str, live: bool = False):
    page.goto(f"{server}/{slug}/")
    if live:
        page.wait_for_selector(PY_READY, state="attached", timeout=90_000)


def step_to_end(widget):
    nxt = widget.locator("[data-action=next]")
    while nxt.is_enabled():
        nxt.click()
    counter = widget.locator("[data-role=step-counter]").inner_text()
    k, total = map(int, re.findall(r"\d+", counter))
    assert k == total


def expect_counter(widget, text):
    widget.locator("[data-role=step-counter]", has_text=text).wait_for(timeout=30_000)
