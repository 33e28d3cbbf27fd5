"""Memory after a thousand interactions: the page's JS heap, Python's live objects, Wasm memory.

Usage: python bench/memory.py [--changes 1000]   (builds and serves the site itself)
Changes the stage 2 widget's GPU count back and forth (a new trace each time, worker and
renderer both busy), measuring after a warm-up and again at the end; prints the growth.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sitebuild import browser as chromium  # noqa: E402
from sitebuild import serve  # noqa: E402
from sitebuild.pages import Builder  # noqa: E402

STATS = """() => new Promise(resolve => {
  const w = AE.python.worker, old = w.onmessage;
  w.onmessage = e => { if (e.data.type === 'stats') { w.onmessage = old; resolve(e.data); }
                       else old(e); };
  w.postMessage({ type: 'stats' });  // protocol.js's stats()
})"""


def measure(page, cdp) -> dict:
    cdp.send("HeapProfiler.collectGarbage")
    heap = cdp.send("Runtime.getHeapUsage")["usedSize"]
    worker = page.evaluate(STATS)
    return {"js_heap": heap, "py_objects": worker["objects"], "wasm": worker["wasmBytes"]}


def change(page, n: int) -> None:
    page.evaluate(
        """n => new Promise(resolve => {
        const el = document.querySelector('[data-widget=ring_reduce_scatter]');
        el.addEventListener('ae:settled', () => resolve(), {once: true});
        const c = el.querySelector('[data-param=gpus]');
        c.value = String(n); c.dispatchEvent(new Event('change'));
    })""",
        n,
    )


def main() -> None:
    from playwright.sync_api import sync_playwright  # only when a browser is launched

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--changes", type=int, default=1000)
    a = ap.parse_args()
    site = Path(tempfile.mkdtemp())
    Builder(site).build()
    url, httpd = serve.in_background(site)
    with sync_playwright() as p:
        browser = chromium.launch(p, test_entry=True)
        page = browser.new_page()
        cdp = page.context.new_cdp_session(page)
        page.goto(f"{url}/ring-reduce-scatter/")
        page.wait_for_selector("html[data-python=ready]", state="attached", timeout=120_000)
        for i in range(300):  # warm-up (past the 256 timings the page keeps)
            change(page, 5 + i % 2)
        before = measure(page, cdp)
        for i in range(a.changes):
            change(page, 5 + i % 2)
        after = measure(page, cdp)
        browser.close()
    httpd.shutdown()
    print(f"After 300 warm-up changes, then {a.changes} more on stage 2 (GPU count 5 <-> 6):")
    print("| measure | after warm-up | at the end | growth |\n|---|---:|---:|---:|")
    for key, label in (
        ("js_heap", "page JS heap (bytes)"),
        ("py_objects", "Python live objects"),
        ("wasm", "Wasm memory (bytes)"),
    ):
        b, e = before[key], after[key]
        print(f"| {label} | {b:,} | {e:,} | {100 * (e - b) / b:+.1f}% |")


if __name__ == "__main__":
    main()
