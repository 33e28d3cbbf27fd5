"""Shared fixtures: the built site served on 127.0.0.1, and Debian's Chromium via Playwright."""

from __future__ import annotations

import functools
import http.server
import shutil
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
sys.path.insert(0, str(ROOT))

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The site, built once per test session into a temporary folder."""
    import build

    out = tmp_path_factory.mktemp("site")
    build.Builder(out).build()
    return out


@pytest.fixture(scope="session")
def server(site):
    """Serve the built site on 127.0.0.1 with the same handler as `build.py --serve`."""
    import build

    handler = functools.partial(build.Handler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="session")
def browser():
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail(
            "Chromium is missing: run `make test` (it installs Debian's chromium) "
            "or `apt-get install chromium`"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture()
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
