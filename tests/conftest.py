"""Shared fixtures: the built site served on 127.0.0.1, and Debian's Chromium via Playwright."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import settings

from helpers import ARTIFACTS, FAST, HOSTED, ROOT, TIMEOUT_MS, Watch

sys.path.insert(0, str(ROOT))

from sitebuild import browser as chromium  # noqa: E402
from sitebuild import serve  # noqa: E402
from sitebuild.pages import Builder  # noqa: E402

settings.register_profile("fast", max_examples=10)
if FAST:
    settings.load_profile("fast")

LAYERS = {"browser": "browser", "pyodide": "pyodide", "site": "build"}  # folder -> marker


def pytest_collection_modifyitems(items):
    """Each test is marked by its layer's folder: tests/browser needs Chromium, tests/pyodide
    Node and Pyodide, tests/site a built site (Node); tests/core and tests/cli need neither."""
    for item in items:
        layer = Path(item.fspath).parent.name
        if layer in LAYERS:
            item.add_marker(LAYERS[layer])


class _Browser:
    """Chromium whose every new context waits TIMEOUT_MS by default (one timeout for all tests)."""

    def __init__(self, browser):
        self._browser = browser

    def new_context(self, **kwargs):
        ctx = self._browser.new_context(**kwargs)
        ctx.set_default_timeout(TIMEOUT_MS)
        return ctx

    def __getattr__(self, name):
        return getattr(self._browser, name)


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The site, built once per test session into a temporary folder."""
    out = tmp_path_factory.mktemp("site")
    Builder(out).build()
    return out


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Path:
    """The pages alone (no Python or vendor assets), built once per session: all the tests that
    read the pages' HTML need (they read it, never write it)."""
    out = tmp_path_factory.mktemp("pages")
    Builder(out).build_pages()
    return out


@pytest.fixture(scope="session")
def hosted(tmp_path_factory) -> Path:
    """The site's pages built for the public address HOSTED (build.py --url): the banks' files,
    oembed.json and its discovery links, built once per session."""
    out = tmp_path_factory.mktemp("hosted")
    Builder(out, HOSTED).build_pages()
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
    from playwright.sync_api import sync_playwright  # only when a browser is launched

    with sync_playwright() as p:
        b = chromium.launch(p, test_entry=True)
        yield _Browser(b)
        b.close()


@pytest.fixture()
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture()
def page(browser, server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    p = ctx.new_page()
    p.watch = Watch(p, server)
    yield p
    ctx.close()
