"""Debian's Chromium under Playwright, launched the same way by the browser tests, the screenshot
script and the benchmarks (Playwright cannot download its own browser here)."""

from __future__ import annotations

import shutil

# no sandbox (containers), no GPU, and no traffic of Chromium's own, which tests would count
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
MISSING = (
    "Chromium is missing: run `make test` (it installs Debian's chromium) "
    "or `apt-get install chromium`"
)


def chromium_path() -> str | None:
    return shutil.which("chromium")


def launch(playwright):
    """A headless Chromium from a started `sync_playwright()`; SystemExit if there is none."""
    path = chromium_path()
    if path is None:
        raise SystemExit(MISSING)
    return playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
