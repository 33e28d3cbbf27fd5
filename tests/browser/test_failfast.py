"""Start-up fails fast: a file Python needs that is refused, answered with an error or cut short
ends in data-python="failed" and a one-sentence reason within 5 s, the precomputed page usable."""

from __future__ import annotations

import time

import pytest

from helpers import PY_READY, step_to_end

FAILED = "html[data-python=failed]"
WITHIN_S = 5  # the contract: the reason is shown this long after the failure, at most
# What Python needs to start, as the worker asks for it; the standard library and the core's zip
# are asked for only when Python imports a module the snapshot lacks (test_*_later below).
FILES = {
    "pyodide.esm.js": "**/vendor/pyodide/pyodide.esm.js",
    "pyodide.asm.js": "**/vendor/pyodide/pyodide.asm.js",
    "pyodide.asm.wasm": "**/vendor/pyodide/pyodide.asm.wasm",
    "snapshot": "**/py/snapshot-*.bin",
}
LATER = {  # zip -> (its files, a Python import that needs it, the status's words)
    "stdlib": ("**/py/stdlib-*.zip", "import colorsys", "the standard library"),
    "core": ("**/py/core-*.zip", "import allreduce_explainer.selfcheck", "the simulation's code"),
}
FAULTS = ("aborted", "404", "500", "cut short")


def fault(kind: str, hits: list[float]):
    """A route handler that fails a request the way `kind` says, noting when it did."""

    def handle(route):
        hits.append(time.monotonic())
        if kind == "aborted":
            route.abort()
        elif kind in ("404", "500"):
            route.fulfill(status=int(kind), body=f"{kind} from the test")
        else:  # the first half of the real file, as a connection that dropped would leave it
            real = route.fetch()
            body = real.body()
            kept = {k: v for k, v in real.headers.items() if k.lower() == "content-type"}
            route.fulfill(status=200, headers=kept, body=body[: len(body) // 2])

    return handle


def open_with_fault(browser, server, slug: str, pattern: str, kind: str, until: str) -> tuple:
    """Open `slug` with the file at `pattern` failing as `kind` and wait until the page matches
    `until`: its context, the page and the times the file was asked for."""
    ctx = browser.new_context()
    hits: list[float] = []
    ctx.route(pattern, fault(kind, hits))
    page = ctx.new_page()
    page.goto(f"{server}/{slug}/")
    page.wait_for_selector(until, state="attached")
    return ctx, page, hits


def fails_fast(browser, server, slug: str, pattern: str, kind: str) -> tuple:
    """Open `slug` with the file at `pattern` failing as `kind`; return the page, its context and
    the status line once Python has given up, checking it did so within WITHIN_S."""
    ctx, page, hits = open_with_fault(browser, server, slug, pattern, kind, FAILED)
    gave_up = time.monotonic()
    assert hits, f"{pattern} was never asked for"
    assert gave_up - hits[0] <= WITHIN_S, (slug, pattern, kind, gave_up - hits[0])
    status = page.locator("[data-role=python-status]").inner_text()
    assert status.startswith("Python could not start ("), status
    assert "precomputed" in status and status.count(". ") == 0, status  # one sentence
    return ctx, page, status


@pytest.mark.parametrize("kind", FAULTS)
@pytest.mark.parametrize("name", sorted(FILES))
def test_each_file_failing_each_way_ends_the_start_up_at_once(browser, server, name, kind):
    ctx, page, status = fails_fast(browser, server, "ring-reduce-scatter", FILES[name], kind)
    if name != "pyodide.esm.js" or kind != "cut short":  # a cut-short loader fails to parse
        word = {"snapshot": "snapshot-"}.get(name, name.split(".asm")[0])
        assert word in status, status
    w = page.locator("[data-widget=ring_reduce_scatter]")
    step_to_end(w)  # the precomputed states still step
    assert "owns the complete sum" in w.locator("[data-role=narration]").inner_text()
    ctx.close()


def live_pages(site) -> list[str]:
    pages = site.glob("*/index.html")
    return sorted(p.parent.name for p in pages if "data-python" in p.read_text())


def test_every_page_gives_up_at_once_without_webassembly(browser, server, site):
    """As behind a network that blocks WebAssembly downloads."""
    slugs = live_pages(site)
    assert len(slugs) >= 10, slugs
    for slug in slugs:
        ctx, page, status = fails_fast(browser, server, slug, FILES["pyodide.asm.wasm"], "aborted")
        assert "pyodide.asm.wasm" in status, (slug, status)
        assert page.locator("[data-widget]").count() > 0
        ctx.close()


@pytest.mark.parametrize("kind", FAULTS)
def test_stdlib_lost_when_booting_without_the_snapshot(browser, server, kind):
    """A mangled snapshot makes Python start from scratch, which needs the standard library."""
    ctx = browser.new_context()
    ctx.route(FILES["snapshot"], lambda r: r.fulfill(status=200, body=b"garbage"))
    hits: list[float] = []
    ctx.route("**/py/stdlib-*.zip", fault(kind, hits))
    page = ctx.new_page()
    page.goto(f"{server}/ring-reduce-scatter/")
    page.wait_for_selector(FAILED, state="attached")
    assert time.monotonic() - hits[0] <= WITHIN_S
    assert "stdlib-" in page.locator("[data-role=python-status]").inner_text()
    ctx.close()


@pytest.mark.parametrize("kind", FAULTS)
@pytest.mark.parametrize("role", sorted(LATER))
def test_a_zip_lost_when_python_asks_for_it_later(browser, server, role, kind):
    pattern, statement, words = LATER[role]
    ctx, page, hits = open_with_fault(
        browser, server, "ring-reduce-scatter", pattern, kind, PY_READY
    )
    assert not hits  # not fetched at start-up
    with pytest.raises(Exception, match=words):
        page.workers[0].evaluate(f"() => self.pyodide.runPython('{statement}')")
    page.wait_for_selector(FAILED, state="attached")
    assert time.monotonic() - hits[0] <= WITHIN_S
    status = page.locator("[data-role=python-status]").inner_text()
    assert status.startswith(f"Python stopped ({words}"), status
    ctx.close()
