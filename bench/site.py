"""Time the built site in headless Chromium, side by side with a bare Pyodide page, in one run.

Builds the site into a temporary folder (or takes one, `--site`), adds a baseline page (it only
loads the same Pyodide and runs `1 + 1`, in a module worker, as the site does), serves both on
127.0.0.1 with the site's own handler, and measures, on every page whose `<html>` carries
`data-python` (found in the built site):

- cold loads (a fresh browser context each) and warm loads (one context, cached), medians: first
  contentful paint, Python ready, and how soon the page answers a reader's first interaction
  (a stepper's "next" clicked, or a control changed, every few ms from navigation start);
- a reader's path: stage 1 in a fresh context, then "next" clicked through every stage, each
  page's arrival, Python ready and first recompute timed from the click, and its new bytes;
- the bytes each page transfers cold, compressed and not, by content encoding;
- p50/p95 latencies of 50+ control changes per page (from the page's bench hook
  `AE.bench.timings`), and a stepper's steps.

Every time is also given as a ratio to the baseline's boot time measured in the same run, because
the machine is shared and wall times drift. Not part of the test suite.

Usage, from the repo root: .venv/bin/python bench/site.py [--cold 5] [--warm 5] [--changes 60]
[--pages slug,slug] [--no-path] [--site PATH] [--write] [--before]
(`--write` replaces the "## Site speed" section of bench/RESULTS.md; `--before` stores this run
as the "before" column that later runs are compared with.)
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import functools
import http.server
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sitebuild import NODE, serve  # noqa: E402
from sitebuild import browser as chromium  # noqa: E402
from sitebuild.pages import Builder  # noqa: E402
from sitebuild.vendor import PYODIDE_FILES  # noqa: E402

RESULTS = ROOT / "bench" / "RESULTS.md"
HEADING = "## Site speed"
BEFORE_TAG = re.compile(r"<!-- site-bench-before: (\{.*?\}) -->", re.S)
BASELINE = "_baseline"
FIRST_STAGE = "why-allreduce"
# The site's speed targets (issue 16), as ratios to the baseline's boot time, in ms, or in bytes
# (MB = 10^6 bytes, as the tables' kB are 10^3).
READY_RATIO, FIRST_RATIO, NEXT_READY_RATIO = 0.2, 0.1, 0.1
PAGE_BYTES, NEXT_BYTES = 6_000_000, 500_000
STEP_MS, CHART_P95_MS, RECOMPUTE_P95_MS = 16, 50, 50
# The changes start this long after Python is ready, as a reader's first change comes after some
# reading: in the first second the browser is still busy with the page's start (optimising the
# WebAssembly interpreter, collecting garbage), and changes made then take 50-90 ms, not 20-30.
SETTLE_MS = 3000
READ_MS = 1000  # on the reader's path, the time spent on a page before clicking "next"
LOAD_TIMEOUT_MS, ANSWER_TIMEOUT_MS = 120_000, 30_000

BASELINE_HTML = """<!doctype html>
<html lang="en" data-python="loading"><head><meta charset="utf-8">
<link rel="icon" href="data:,"><title>Bare Pyodide</title><script src="baseline.js"></script></head>
<body><p>Loads Pyodide and runs 1 + 1.</p></body></html>
"""
BASELINE_JS = """new Worker(new URL("baseline-worker.mjs", location.href), { type: "module" })
  .onmessage = (e) => document.documentElement.setAttribute("data-python", e.data);
"""
BASELINE_WORKER = """import { loadPyodide } from "./pyodide/pyodide.mjs";
const pyodide = await loadPyodide({ indexURL: new URL("./pyodide/", import.meta.url).href });
self.postMessage(pyodide.runPython("1 + 1") === 2 ? "ready" : "failed");
"""

# Runs in every document before its own scripts (through the DevTools protocol, so the page's
# CSP does not apply). It forgets the controls an earlier visit stored (each visit starts from the
# defaults), notes when Python is ready, offers helpers (window.__benchLib), and:
# - on a page listed in FIRST (slug -> "stepper" or "control"), makes the reader's first
#   interaction from navigation start: clicks the stepper's "next" every ms until its step counter
#   changes, or changes the first visible number field or menu (else a box to tick) every few ms
#   until the widget takes the change: `aria-busy` (widget.js sets it as soon as it asks Python,
#   which queues the call while Python loads) or a new AE.bench.timings entry; then notes when the
#   recompute is answered;
# - on the reader's path (sessionStorage KEY holds the click's Date.now() and the next page's
#   path), window.__benchWatch notes, in ms from the click, when the new page has arrived (its
#   path, its DOM parsed, a [data-widget] the old page did not have) and when its Python is ready
#   (data-python="ready" in a new document, or after an `ae:page` event in the same one).
INIT_SCRIPT = """(() => {
  const FIRST = __FIRST__;
  const KEY = "ae-bench-path";
  const B = (window.__bench = { ready: null, first: null, how: null, answer: null, error: null });
  try {
    Object.keys(localStorage).forEach((k) => {
      if (k.startsWith("allreduce-explainer:")) localStorage.removeItem(k);
    });
  } catch (e) { /* no storage: nothing was kept */ }
  const root = () => document.documentElement;
  const python = () => root() && root().getAttribute("data-python");
  new MutationObserver(() => {
    if (B.ready === null && python() === "ready") B.ready = performance.now();
  }).observe(document, { attributes: true, subtree: true, attributeFilter: ["data-python"] });

  const visible = (c) =>
    !c.disabled && (c.checkVisibility ? c.checkVisibility() : !!c.offsetParent);
  const lastTiming = () => {
    const t = window.AE && window.AE.bench && window.AE.bench.timings;
    return t && t.length ? t[t.length - 1] : null;
  };
  // the first control a reader would change: the first visible number field or menu of the first
  // widget that has one, else a box to tick (an unticked one first); while the page is still
  // parsed, only in the first widget
  const pick = () => {
    const parsed = document.readyState !== "loading";
    const widgets = Array.from(document.querySelectorAll("[data-widget]"));
    for (const w of widgets) {
      const fields = w.querySelectorAll('input[type="number"][data-param], select[data-param]');
      const c = Array.from(fields).find(visible);
      if (c) return c;
      if (!parsed) return null;
    }
    for (const w of widgets) {
      const boxes = Array.from(w.querySelectorAll('input[type="checkbox"]')).filter(visible);
      const c = boxes.find((b) => !b.checked) || boxes[0];
      if (c) return c;
    }
    return null;
  };
  // another valid value, from the page's default: for a number, twice or half it (GPU counts
  // stay whole servers), else one step either way, within min and max; for a menu, the next
  // option; a box is ticked or unticked. `attempt` picks the next candidate after a refusal.
  const change = (c, attempt = 0) => {
    if (c.type === "checkbox") c.checked = !c.checked;
    else if (c.tagName === "SELECT") c.selectedIndex = (c.selectedIndex + 1) % c.options.length;
    else {
      const v = Number(c.defaultValue !== "" ? c.defaultValue : c.value);
      const whole = c.step !== "any" && Number.isInteger(Number(c.step || 1));
      const step = whole ? Number(c.step || 1) : Math.abs(v) * 0.25 || 1;
      const lo = c.min === "" ? -Infinity : Number(c.min);
      const hi = c.max === "" ? Infinity : Number(c.max);
      const ok = (x) => x !== v && x >= lo && x <= hi && (!whole || Number.isInteger(x));
      const xs = [v * 2, v / 2, v + step, v - step].filter(ok);
      const x = xs.length ? xs[attempt % xs.length] : v;
      c.value = String(Number(x.toPrecision(12)));
    }
    c.dispatchEvent(new Event("change", { bubbles: true }));
  };
  // change the reader's control once Python answers (a refused value: the next candidate, up to
  // three); resolves with the time from the change to the recompute on screen
  const recompute = (attempt = 0) => new Promise((resolve) => {
    const c = pick();
    if (!c) return resolve({ error: "no control to change" });
    const w = c.closest("[data-widget]"), before = lastTiming(), t0 = performance.now();
    const name = w.getAttribute("data-widget") + "." + (c.getAttribute("data-param") || c.value);
    let settled = false;
    w.addEventListener("ae:settled", () => { settled = true; }, { once: true });
    const check = () => {
      const t = lastTiming();
      if (t && t !== before && t.kind === "recompute")
        return resolve({ ms: performance.now() - t0, total: t.total, python: t.python,
          control: name, attempt: attempt });
      if (settled && attempt < 2) return resolve(recompute(attempt + 1));
      if (settled) return resolve({ error: "the change was answered with an error: " +
        (w.querySelector("[data-error-for]:not(:empty)") || {}).textContent });
      if (performance.now() - t0 > __ANSWER_TIMEOUT__) return resolve({ error: "no answer" });
      setTimeout(check, 2);
    };
    change(c, attempt);
    check();
  });
  window.__benchLib = { pick, change, recompute, lastTiming };

  window.__benchWatch = (fresh) => {
    let arm = null;
    try { arm = JSON.parse(sessionStorage.getItem(KEY)); } catch (e) { /* not on the path */ }
    if (!arm) return;
    const P = (window.__benchPath = { arrival: null, ready: null, page: null, fresh: fresh });
    const since = () => Date.now() - arm.t;
    const bare = (p) => p.replace(/index\\.html$/, "");
    const check = () => {
      if (P.ready !== null) return;
      if (P.arrival === null && bare(location.pathname) === bare(arm.path) &&
          document.readyState !== "loading" &&
          Array.from(document.querySelectorAll("[data-widget]")).some((w) => !w.__benchOld))
        P.arrival = since();
      if (P.arrival !== null && python() === "ready" && (P.fresh || P.page !== null)) {
        P.ready = since();
        observer.disconnect();
        clearInterval(timer);
      }
    };
    document.addEventListener("ae:page", () => {
      if (P.page === null) P.page = since();
      check();
    });
    const observer = new MutationObserver(check);
    observer.observe(document, { childList: true, subtree: true, attributes: true,
      attributeFilter: ["data-python"] });
    const timer = setInterval(check, 4);
    check();
  };
  window.__benchWatch(true);

  const slug = location.pathname.split("/")[1];
  const mode = FIRST[slug];
  if (!mode) return;
  let control = null, widget = null, before = null;
  const poll = () => {
    if (mode === "stepper") {
      const w = document.querySelector('[data-widget][data-kind="stepper"]');
      const c = w && w.querySelector('[data-role="step-counter"]');
      const b = w && w.querySelector('[data-action="next"]');
      if (c && b) {
        const text = c.textContent;
        b.click();
        if (c.textContent !== text) {
          B.first = performance.now();
          B.how = "step";
          return;
        }
      }
      return void setTimeout(poll, 1);
    }
    if (B.first === null) {
      // found once (looking forces the page's style to be computed, which would slow its start)
      if (!control || !control.isConnected) control = pick();
      const c = control;
      if (c) {
        const w = c.closest("[data-widget]");
        before = lastTiming();
        change(c);
        const t = lastTiming();
        if (w.getAttribute("aria-busy") === "true" || (t && t !== before)) {
          B.first = performance.now();
          B.how = t && t !== before ? "answered" : "aria-busy";
          widget = w;
        }
      }
      return void setTimeout(poll, 4);
    }
    const t = lastTiming();
    if (t && t !== before && t.kind === "recompute") B.answer = performance.now();
    else if (widget.getAttribute("aria-busy") !== "true") B.error = "answered with an error";
    else setTimeout(poll, 4);
  };
  poll();
})();"""

# Marks the page's widgets as the old page's, and arms the path watcher: the click is at arm.t.
ARM_JS = """(path) => {
  document.querySelectorAll("[data-widget]").forEach((w) => { w.__benchOld = true; });
  sessionStorage.setItem("ae-bench-path", JSON.stringify({ t: Date.now(), path: path }));
  window.__benchWatch(false);
}"""

PATH_DONE_JS = """() => window.__benchPath && (window.__benchPath.ready !== null
  || document.documentElement.getAttribute("data-python") === "failed")"""

VISIT_JS = """() => ({ ...window.__bench,
  fcp: (performance.getEntriesByName("first-contentful-paint")[0] || {}).startTime,
  status: document.documentElement.getAttribute("data-python"),
  message: (document.querySelector('[data-role="python-status"]') || {}).textContent || null })"""

# In the page: change one control `n` times, waiting each time for the widget to settle and
# for its frame to be painted; returns the runtime's timing entries of each recompute.
CHANGE_JS = """async ({ widget, sel, values, n }) => {
  const w = document.querySelector('[data-widget="' + widget + '"]');
  const c = w.querySelector(sel);
  const out = [];
  for (let i = 0; i < n; i++) {
    const settled = new Promise((r) => w.addEventListener("ae:settled", r, { once: true }));
    if (c.type === "checkbox") c.checked = Boolean(values[i % values.length]);
    else c.value = String(values[i % values.length]);
    c.dispatchEvent(new Event("change", { bubbles: true }));
    await settled;
    // the next change comes once this one is on screen (its frame, and the task after the
    // paint), as a reader's would: otherwise it would share the CPU with the previous paint
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    const last = AE.bench.timings[AE.bench.timings.length - 1];  // the page keeps the latest 256
    out.push(last && last.kind === "recompute" ? last : null);
  }
  return out;
}"""

STEP_JS = """async ({ n }) => {
  const w = document.querySelector('[data-widget][data-kind="stepper"]');
  const next = w.querySelector('[data-action="next"]');
  const prev = w.querySelector('[data-action="prev"]');
  w.querySelector('[data-action="reset"]').click();
  const out = [];
  let forward = true;
  for (let i = 0; i < n; i++) {
    if (forward && next.disabled) forward = false;
    if (!forward && prev.disabled) forward = true;
    (forward ? next : prev).click();
    out.push(AE.bench.timings[AE.bench.timings.length - 1].render);
    await new Promise((r) => requestAnimationFrame(() => r()));
  }
  return out;
}"""

# The control to move on a page: a chart's where there is one, else a stepper's, else the first
# widget's; its first number field or menu, else a box to tick. Its attributes, to choose valid
# values, and a selector for it inside its widget.
CONTROL_JS = """() => {
  const ws = ["chart", "stepper"].flatMap((k) =>
    Array.from(document.querySelectorAll('[data-widget][data-kind="' + k + '"]')))
    .concat(Array.from(document.querySelectorAll("[data-widget]")));
  for (const w of ws) {
    const c = w.querySelector('input[type="number"][data-param], select[data-param]');
    if (!c) continue;
    return { widget: w.getAttribute("data-widget"), kind: w.getAttribute("data-kind"),
      param: c.getAttribute("data-param"),
      sel: '[data-param="' + c.getAttribute("data-param") + '"]',
      tag: c.tagName, type: c.type, value: c.value, min: c.min, max: c.max, step: c.step,
      options: c.tagName === "SELECT" ? Array.from(c.options, (o) => o.value) : [] };
  }
  for (const w of ws) {
    const boxes = Array.from(w.querySelectorAll('input[type="checkbox"][value]'));
    const c = boxes.find((b) => !b.checked) || boxes[0];
    if (!c) continue;
    return { widget: w.getAttribute("data-widget"), kind: w.getAttribute("data-kind"),
      param: c.value, sel: 'input[type="checkbox"][value="' + c.value + '"]', tag: c.tagName,
      type: "checkbox", checked: c.checked };
  }
  return null;
}"""


@dataclass
class Page:
    slug: str
    stage: int | None  # its place on the path from stage 1 through "next", if it is on it
    stepper: bool

    @property
    def label(self) -> str:
        return self.slug if self.stage is None else f"{self.slug} (stage {self.stage})"


def discover(site: Path) -> list[Page]:
    """Every page with widgets (`<html data-python>`), in the order of the "next" links from
    stage 1, then the rest by name."""
    found = {}
    for f in sorted(site.glob("*/index.html")):
        if f.parent.name == BASELINE:
            continue
        text = f.read_text(errors="replace")
        html = re.search(r"<html\b[^>]*>", text)
        if html and "data-python" in html.group(0):
            found[f.parent.name] = text
    chain, slug = [], FIRST_STAGE
    while slug in found and slug not in chain:
        chain.append(slug)
        link = re.search(r"<a\b[^>]*\brel=\"(?:[^\"]* )?next\b[^>]*>", found[slug])
        href = link and re.search(r"href=\"([^\"]*)\"", link.group(0))
        slug = Path(urlsplit(href.group(1)).path).parent.name if href else None
    order = chain + sorted(s for s in found if s not in chain)
    return [
        Page(s, chain.index(s) + 1 if s in chain else None, 'data-kind="stepper"' in found[s])
        for s in order
    ]


class Traffic:
    """Bytes the server wrote, per request, so a page's transfer is counted where it is sent."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: list[dict] = []

    def take(self) -> list[dict]:
        with self.lock:
            out, self.entries = self.entries, []
        return out


def summarize(entries: list[dict]) -> dict:
    """A page's requests: bytes written (headers included), the same with each encoded body
    counted at its file's size, and the bytes written under each content encoding."""
    by_encoding: dict[str, int] = {}
    for e in entries:
        key = e["encoding"] or "identity"
        by_encoding[key] = by_encoding.get(key, 0) + e["bytes"]
    return {
        "sent": sum(e["bytes"] for e in entries),
        "identity": sum(e["identity"] if e["encoding"] else e["bytes"] for e in entries),
        "requests": len(entries),
        "encodings": by_encoding,
    }


class CountingWriter:
    def __init__(self, raw, counter: list[int]):
        self.raw, self.counter = raw, counter

    def write(self, data) -> int:
        self.counter[0] += len(data)
        return self.raw.write(data)

    def __getattr__(self, name):
        return getattr(self.raw, name)


def counting_handler(traffic: Traffic, site: Path):
    class Counting(serve.Handler):
        def setup(self) -> None:
            super().setup()
            self.sent = [0]
            self.encoding = None
            self.wfile = CountingWriter(self.wfile, self.sent)

        def send_header(self, keyword: str, value: str) -> None:
            if keyword.lower() == "content-encoding":
                self.encoding = value
            super().send_header(keyword, value)

        def finish(self) -> None:
            super().finish()
            path = getattr(self, "path", "").split("?")[0]
            # the file itself, not the .gz (or .br) twin the handler may have sent instead
            plain = http.server.SimpleHTTPRequestHandler.translate_path
            local = Path(plain(self, path)) if path else None
            if local is not None and local.is_dir():
                local = local / "index.html"
            identity = local.stat().st_size if local is not None and local.is_file() else 0
            with traffic.lock:
                traffic.entries.append(
                    {
                        "path": path,
                        "bytes": self.sent[0],
                        "encoding": self.encoding,
                        "identity": identity,
                        "status": getattr(self, "_status", None),
                    }
                )

        def send_response(self, code, message=None) -> None:
            self._status = code
            super().send_response(code, message)

    return functools.partial(Counting, directory=str(site))


def add_baseline(site: Path) -> None:
    """The bare page: the same Pyodide files, as npm ships them, loaded the documented way."""
    folder = site / BASELINE
    (folder / "pyodide").mkdir(parents=True)
    for f in PYODIDE_FILES:
        shutil.copyfile(NODE / "pyodide" / f, folder / "pyodide" / f)
    (folder / "index.html").write_text(BASELINE_HTML)
    (folder / "baseline.js").write_text(BASELINE_JS)
    (folder / "baseline-worker.mjs").write_text(BASELINE_WORKER)


def median(values: list[float | None]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def short(error: Exception) -> str:
    return str(error).strip().splitlines()[0][:200]


class Bench:
    def __init__(self, browser, base: str, traffic: Traffic, pages: list[Page]):
        self.browser, self.base, self.traffic, self.pages = browser, base, traffic, pages

    def context(self, first: bool = True):
        """A fresh context; `first`: its pages make the reader's first interaction at once."""
        modes = {p.slug: "stepper" if p.stepper else "control" for p in self.pages} if first else {}
        script = INIT_SCRIPT.replace("__FIRST__", json.dumps(modes))
        ctx = self.browser.new_context(viewport={"width": 1280, "height": 900})
        ctx.add_init_script(script.replace("__ANSWER_TIMEOUT__", str(ANSWER_TIMEOUT_MS)))
        return ctx

    def url(self, slug: str) -> str:
        return f"{self.base}/{slug}/index.html"

    def visit(self, ctx, slug: str) -> dict:
        """One navigation: paint, Python ready, the first interaction taken and answered, in ms
        from navigation start; a page whose Python fails is reported, with the page's reason."""
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            page.goto(self.url(slug))
            page.wait_for_function(
                "() => window.__bench.ready !== null"
                " || document.documentElement.getAttribute('data-python') === 'failed'",
                timeout=LOAD_TIMEOUT_MS,
            )
            if slug != BASELINE:
                page.wait_for_function(
                    "() => window.__bench.first !== null && (window.__bench.how === 'step'"
                    " || window.__bench.answer !== null || window.__bench.error !== null)",
                    timeout=ANSWER_TIMEOUT_MS,
                )
            got = page.evaluate(VISIT_JS)
        except Exception as e:  # a timeout, a crash: the page's row says so, the run goes on
            got = {"status": "error", "error": short(e)}
            with contextlib.suppress(Exception):
                got = {**page.evaluate(VISIT_JS), "error": short(e)}
        finally:
            page.close()
        if errors:
            got["page_errors"] = errors[:3]
        return got

    def loads(self, cold: int, warm: int) -> dict:
        """Cold and warm visits of the baseline and every page, interleaved so drift hits all."""
        slugs = [BASELINE] + [p.slug for p in self.pages]
        runs = {mode: {s: [] for s in slugs} for mode in ("cold", "warm")}
        traffic = {s: [] for s in slugs}
        for i in range(cold):
            for slug in slugs:
                ctx = self.context()
                self.traffic.take()
                runs["cold"][slug].append(self.visit(ctx, slug))
                if i == 0:
                    traffic[slug] = self.traffic.take()
                ctx.close()
            print(f"cold run {i + 1}/{cold} done", file=sys.stderr)
        for slug in slugs:
            ctx = self.context()
            self.visit(ctx, slug)  # fills the cache
            for _ in range(warm):
                runs["warm"][slug].append(self.visit(ctx, slug))
            ctx.close()
        print("warm runs done", file=sys.stderr)
        out = {"cold": {}, "warm": {}, "bytes": {}}
        for mode in ("cold", "warm"):
            for slug, visits in runs[mode].items():
                if not visits:
                    continue
                fig = {k: median([v.get(k) for v in visits]) for k in ("fcp", "ready", "first")}
                fig["answer"] = median([v.get("answer") for v in visits])
                fig["how"] = next((v["how"] for v in visits if v.get("how")), None)
                fig["runs"] = len(visits)
                problems = [v for v in visits if v.get("status") != "ready" or v.get("error")]
                fig["failed"] = len(problems)
                if problems:
                    p = problems[0]
                    fig["problem"] = (
                        f"Python {p.get('status')} ({p.get('message')})"
                        if p.get("status") != "ready"
                        else p.get("error")
                    )
                out[mode][slug] = fig
        for slug, entries in traffic.items():
            out["bytes"][slug] = summarize(entries)
        if len(slugs) > 1:  # the first page's requests, one by one, with their encodings
            out["requests"] = {"slug": slugs[1], "entries": traffic[slugs[1]]}
        return out

    def path(self) -> list[dict]:
        """Stage 1 in a fresh context, then "next" clicked through every stage, as a reader."""
        ctx = self.context(first=False)
        page = ctx.new_page()
        rows = []
        self.traffic.take()
        try:
            page.goto(self.url(FIRST_STAGE))
            page.wait_for_function(
                "() => window.__bench.ready !== null"
                " || document.documentElement.getAttribute('data-python') === 'failed'",
                timeout=LOAD_TIMEOUT_MS,
            )
            got = page.evaluate(VISIT_JS)
            row = {"slug": FIRST_STAGE, "navigation": "opened", "ready_from_start": got["ready"]}
            row.update(self.settle(page, got["status"]))
            rows.append(row)
            while True:
                page.wait_for_timeout(READ_MS)  # a reader reads; the page may prefetch
                reading = summarize(self.traffic.take())["sent"]
                href = page.evaluate(
                    "() => { const a = document.querySelector('a[rel~=next]:not([hidden])'); "
                    "return a ? a.href : null; }"
                )
                if not href:
                    break
                row = {"slug": Path(urlsplit(href).path).parent.name, "while_reading": reading}
                rows.append(row)
                print(f"path: {row['slug']}", file=sys.stderr)
                page.evaluate(ARM_JS, urlsplit(href).path)
                page.click("a[rel~=next]:not([hidden])")
                status = self.arrived(page)
                got = page.evaluate("() => window.__benchPath")
                row["navigation"] = "full" if got["fresh"] else "same document"
                row.update({k: got[k] for k in ("arrival", "ready", "page")})
                if got["ready"] is None:
                    row["error"] = f"Python {status}"
                row.update(self.settle(page, status))
                page.evaluate("() => sessionStorage.removeItem('ae-bench-path')")
        except Exception as e:  # the path stops here, its rows so far are kept
            rows.append({"slug": "(path stopped)", "error": short(e)})
        finally:
            ctx.close()
        return rows

    def arrived(self, page) -> str:
        """Wait for the path watcher to see the new page ready (or its Python fail), across a
        full navigation (the old document's context is destroyed on the way) or a swap."""
        for _ in range(20):
            try:
                page.wait_for_function(PATH_DONE_JS, timeout=LOAD_TIMEOUT_MS)
                return page.evaluate("() => document.documentElement.getAttribute('data-python')")
            except Exception as e:
                if "context was destroyed" not in str(e) and "navigat" not in str(e):
                    raise
        raise RuntimeError("the page kept navigating")

    def settle(self, page, status: str | None) -> dict:
        """The first recompute of the page just reached, and its new bytes so far."""
        out = {}
        if status == "ready":
            r = page.evaluate("() => window.__benchLib.recompute()")
            out["recompute"] = r.get("ms")
            out["recompute_total"] = r.get("total")
            out["control"] = r.get("control")
            if "error" in r:
                out["error"] = r["error"]
        out["bytes"] = summarize(self.traffic.take())
        return out

    def interactions(self, n: int) -> dict:
        out = {}
        ctx = self.context(first=False)
        for p in self.pages:
            page = ctx.new_page()
            try:
                out[p.slug] = self.interact(page, p, n)
            except Exception as e:
                out[p.slug] = {"error": short(e)}
            finally:
                page.close()
        ctx.close()
        return out

    def interact(self, page, p: Page, n: int) -> dict:
        page.goto(self.url(p.slug))
        page.wait_for_function(
            "() => ['ready', 'failed'].includes(document.documentElement.dataset.python)",
            timeout=LOAD_TIMEOUT_MS,
        )
        if page.evaluate("() => document.documentElement.dataset.python") != "ready":
            return {"error": "Python failed"}
        page.wait_for_timeout(SETTLE_MS)
        control = page.evaluate(CONTROL_JS)
        if control is None:
            return {"error": "no control found"}
        for doubling in (False, True):
            values = control_values(control, doubling)
            timings = page.evaluate(CHANGE_JS, {**control, "values": values, "n": n})
            ok = [t for t in timings if t]
            if (
                len(ok) == len(timings)
                or control["type"] == "checkbox"
                or control["tag"] == "SELECT"
            ):
                break
        entry = {
            "widget": control["widget"],
            "param": control["param"],
            "kind": control["kind"],
            "values": values,
            "changes": len(timings),
            "failed": len(timings) - len(ok),
        }
        for part in ("total", "python", "render"):
            xs = [t[part] for t in ok]
            entry[part] = {"p50": percentile(xs, 0.5), "p95": percentile(xs, 0.95)}
        if p.stepper:
            steps = page.evaluate(STEP_JS, {"n": n})
            entry["step"] = {"p50": percentile(steps, 0.5), "p95": percentile(steps, 0.95)}
        return entry


def control_values(c: dict, doubling: bool = False) -> list:
    """Valid values to cycle through, none equal to the next one, so each change recomputes:
    up to four steps from the default, or (`doubling`, for a field that refuses those, as GPU
    counts that must fill whole servers do) twice the default and back."""
    if c["type"] == "checkbox":
        return [not c["checked"], c["checked"]]
    if c["tag"] == "SELECT":
        opts = c["options"]
        i = opts.index(c["value"]) if c["value"] in opts else 0
        return opts[i + 1 :] + opts[: i + 1]
    v = float(c["value"])
    lo = float(c["min"]) if c["min"] else float("-inf")
    hi = float(c["max"]) if c["max"] else float("inf")
    if doubling:
        other = 2 * v if 2 * v <= hi else v / 2
        return [int(x) if float(x).is_integer() else x for x in (other, v)]
    step = float(c["step"]) if c["step"] not in ("", "any") else None
    up = [v + k * step for k in range(1, 5)] if step else [v * 1.25**k for k in range(1, 5)]
    down = [v - k * step for k in range(1, 5)] if step else [v / 1.25**k for k in range(1, 5)]
    candidates = [x for x in up if x <= hi] or [x for x in down if x >= lo]
    values = candidates + [v]
    return [int(x) if float(x).is_integer() else round(x, 6) for x in values]


def ratio(x: float | None, base: float | None) -> str:
    return "" if x is None or not base else f"{x / base:.2f}×"


def ms(x: float | None) -> str:
    return "–" if x is None else f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def kb(x: int | None) -> str:
    return "–" if x is None else f"{x / 1e3:,.0f}"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def within(x: float | None, limit: float | None) -> bool:
    return x is not None and limit is not None and x <= limit


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        chromium = subprocess.run(
            ["chromium", "--version"], capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        chromium = "chromium"
    return f"{cpu}, nproc = {os.cpu_count()}; {chromium.split(' built')[0]}"


HOW = {"step": "step", "aria-busy": "taken", "answered": "answered"}


def load_table(r: dict, titles: dict[str, str]) -> list[str]:
    rows = [
        "| Page | Mode | First paint (ms) | First interaction (ms) | Python ready (ms) "
        "| Ready / baseline | First interaction / baseline | First change answered (ms) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for mode in ("cold", "warm"):
        boot = r[mode].get(BASELINE, {}).get("ready")
        for slug, fig in r[mode].items():
            first = fig.get("first")
            how = f" ({HOW.get(fig.get('how'), fig.get('how'))})" if first is not None else ""
            rows.append(
                f"| {titles.get(slug, slug)} | {mode} | {ms(fig['fcp'])} | {ms(first)}{how} "
                f"| {ms(fig['ready'])} | {ratio(fig['ready'], boot)} | {ratio(first, boot)} "
                f"| {ms(fig.get('answer'))} |"
            )
            if fig.get("failed"):
                rows[-1] = rows[-1][:-1] + f" {fig['failed']}/{fig['runs']} runs: "
                rows[-1] += f"{fig['problem']} |"
    return rows


def bytes_table(r: dict, titles: dict[str, str]) -> list[str]:
    rows = [
        "| Page | Requests | Transferred (compressed, kB) | Uncompressed (kB) "
        f"| By encoding (kB) | ≤ {PAGE_BYTES / 1e6:g} MB |",
        "|---|---:|---:|---:|---|---|",
    ]
    for slug, b in r["bytes"].items():
        enc = ", ".join(f"{k} {kb(v)}" for k, v in sorted(b.get("encodings", {}).items()))
        ok = "" if slug == BASELINE else verdict(b["sent"] <= PAGE_BYTES)
        rows.append(
            f"| {titles.get(slug, slug)} | {b['requests']} | {kb(b['sent'])} "
            f"| {kb(b['identity'])} | {enc} | {ok} |"
        )
    return rows


def requests_table(r: dict) -> list[str]:
    rows = [
        "| Request | Status | Content-Encoding | Transferred (kB) | File (kB) |",
        "|---|---:|---|---:|---:|",
    ]
    entries = sorted(r["requests"]["entries"], key=lambda e: -e["bytes"])
    for e in entries:
        rows.append(
            f"| `{e['path']}` | {e['status']} | {e['encoding'] or 'identity'} "
            f"| {e['bytes'] / 1e3:,.1f} | {e['identity'] / 1e3:,.1f} |"
        )
    return rows


def path_table(r: dict, titles: dict[str, str]) -> list[str]:
    boot = r["cold"].get(BASELINE, {}).get("ready")
    rows = [
        "| Page | Navigation | Arrived (ms) | Python ready (ms) | Ready / baseline "
        "| First recompute (ms) | New bytes (kB) | Fetched while reading the page before (kB) "
        f"| Ready ≤ {NEXT_READY_RATIO}× | New bytes ≤ {NEXT_BYTES / 1e6:g} MB |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for row in r.get("path", []):
        title = titles.get(row["slug"], row["slug"])
        if row.get("navigation") == "opened":
            rows.append(
                f"| {title} | opened (cold) | – | {ms(row.get('ready_from_start'))} "
                f"from navigation start | {ratio(row.get('ready_from_start'), boot)} "
                f"| {ms(row.get('recompute'))} | {kb(row['bytes']['sent'])} | – | | |"
            )
        elif "bytes" in row:
            new = row["bytes"]["sent"] + row.get("while_reading", 0)
            ready_ok = within(row.get("ready"), boot and NEXT_READY_RATIO * boot)
            rows.append(
                f"| {title} | {row['navigation']} | {ms(row.get('arrival'))} "
                f"| {ms(row.get('ready'))} | {ratio(row.get('ready'), boot)} "
                f"| {ms(row.get('recompute'))} | {kb(row['bytes']['sent'])} "
                f"| {kb(row.get('while_reading'))} | {verdict(ready_ok)} "
                f"| {verdict(new <= NEXT_BYTES)} |"
            )
        else:
            rows.append(f"| {title} | | | | | | | | FAIL | |")
        if row.get("error"):
            rows[-1] += f" {row['error']}"
    return rows


def interaction_table(r: dict, titles: dict[str, str]) -> list[str]:
    rows = [
        "| Page | Control | Changes | Total p50 / p95 (ms) | Python p50 / p95 "
        "| Render p50 / p95 | Target |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for slug, e in r["interactions"].items():
        title = titles.get(slug, slug)
        if "error" in e:
            rows.append(f"| {title} | {e['error']} | | | | | FAIL |")
            continue
        limit = CHART_P95_MS if e["kind"] == "chart" else RECOMPUTE_P95_MS
        p95 = e["total"]["p95"]
        target = f"p95 < {limit} ms: {verdict(p95 is not None and p95 < limit)}"
        rows.append(
            f"| {title} | {e['widget']}.{e['param']} ({e['kind']}) | {e['changes']} "
            f"| {ms(e['total']['p50'])} / {ms(p95)} "
            f"| {ms(e['python']['p50'])} / {ms(e['python']['p95'])} "
            f"| {ms(e['render']['p50'])} / {ms(e['render']['p95'])} | {target} |"
        )
        if e["failed"]:
            rows[-1] += f" {e['failed']} changes answered with an error"
        if "step" in e:
            s = e["step"]
            ok = s["p95"] is not None and s["p95"] < STEP_MS
            rows.append(
                f"| {title} | a stepper step (no Python) | {e['changes']} "
                f"| {ms(s['p50'])} / {ms(s['p95'])} | – | {ms(s['p50'])} / {ms(s['p95'])} "
                f"| p95 < {STEP_MS} ms: {verdict(ok)} |"
            )
    return rows


def targets(r: dict) -> list[str]:
    """The load targets, cold: Python ready and the first interaction, against the baseline."""
    boot = r["cold"].get(BASELINE, {}).get("ready")
    lines = []
    for slug, fig in r["cold"].items():
        if slug == BASELINE:
            continue
        for key, name, limit in (
            ("ready", "Python ready", READY_RATIO),
            ("first", "first interaction taken", FIRST_RATIO),
        ):
            x = fig.get(key)
            got = "never" if x is None or not boot else f"at {x / boot:.3f}× the baseline"
            lines.append(
                f"- {slug}, cold: {name} {got} (target ≤ {limit}×): "
                f"{verdict(within(x, boot and limit * boot))}"
            )
    return lines


def summary(r: dict) -> list[str]:
    """How many pages meet each target."""
    boot = r["cold"].get(BASELINE, {}).get("ready")
    pages = [s for s in r["cold"] if s != BASELINE]

    def count(name: str, oks: list[bool]) -> str:
        return f"- {name}: {sum(oks)}/{len(oks)} {verdict(bool(oks) and all(oks))}"

    out = [
        count(
            f"cold Python ready ≤ {READY_RATIO}× baseline",
            [within(r["cold"][s]["ready"], boot and READY_RATIO * boot) for s in pages],
        ),
        count(
            f"cold first interaction ≤ {FIRST_RATIO}× baseline",
            [within(r["cold"][s].get("first"), boot and FIRST_RATIO * boot) for s in pages],
        ),
        count(
            f"cold page ≤ {PAGE_BYTES / 1e6:g} MB compressed",
            [r["bytes"][s]["sent"] <= PAGE_BYTES for s in pages if s in r["bytes"]],
        ),
    ]
    steps = [row for row in r.get("path", []) if row.get("navigation") != "opened"]
    if steps:
        out.append(
            count(
                f'"next": Python ready ≤ {NEXT_READY_RATIO}× baseline after the click',
                [within(x.get("ready"), boot and NEXT_READY_RATIO * boot) for x in steps],
            )
        )
        out.append(
            count(
                f'"next": new bytes ≤ {NEXT_BYTES / 1e6:g} MB',
                [
                    "bytes" in x and x["bytes"]["sent"] + x.get("while_reading", 0) <= NEXT_BYTES
                    for x in steps
                ],
            )
        )
    oks = []
    for e in r["interactions"].values():
        if "error" in e:
            oks.append(False)
            continue
        limit = CHART_P95_MS if e["kind"] == "chart" else RECOMPUTE_P95_MS
        oks.append(e["total"]["p95"] is not None and e["total"]["p95"] < limit)
        if "step" in e:
            oks.append(e["step"]["p95"] is not None and e["step"]["p95"] < STEP_MS)
    out.append(count("interactions p95 (charts, recomputes, steps)", oks))
    return out


def titles_for(r: dict) -> dict[str, str]:
    return {BASELINE: "bare Pyodide (baseline)", **r.get("labels", {})}


def report(r: dict, cold: int, warm: int) -> str:
    titles = titles_for(r)
    lines = [
        f"Measured {r['date']} on {r['machine']}. Headless Chromium against `build.py`'s "
        f"handler on 127.0.0.1; medians of {cold} cold runs (a fresh browser context each) and "
        f"{warm} warm runs (one context, cached), all in one run, interleaved with the baseline "
        "page (it only loads the same Pyodide files, as npm ships them, in a module worker and "
        "runs `1 + 1`). Every page whose `<html>` has `data-python` is measured. Times are ms "
        "from navigation start. First interaction: from navigation start, on a page with a "
        'stepper its "next" is clicked every millisecond until the step counter changes '
        '("step"); elsewhere the first visible number field or menu of the first widget that '
        "has one (the teachers' sheet: a box to tick) is changed every 4 ms until the widget "
        'takes the change ("taken": `aria-busy`, which widget.js sets when it asks Python, '
        'which queues the call while Python starts; "answered": a new `AE.bench.timings` '
        "entry); the last column is when that change's recompute was answered.",
        "",
        "Targets met:",
        "",
        *summary(r),
        "",
        *load_table(r, titles),
        "",
        *targets(r),
        "",
    ]
    if r.get("path"):
        lines += [
            f'A reader\'s path: {FIRST_STAGE} opened in a fresh context, then "next" '
            f"(`a[rel=next]`) clicked through every stage, {READ_MS / 1000:g} s spent reading each "
            "page first (where it may prefetch the next). From the click: arrived (the URL's "
            "path is the next page's, its DOM parsed, a `[data-widget]` the old page did not "
            'have), Python ready (`data-python="ready"` in the new document, or after an '
            "`ae:page` event when the page is swapped in the same document); first recompute: "
            "one control changed once Python is ready, to its `AE.bench.timings` entry; new "
            "bytes: written by the server from the click until that recompute. The bytes "
            "target counts them with those fetched while reading the page before. Ratios are "
            "to the cold baseline boot.",
            "",
            *path_table(r, titles),
            "",
        ]
    lines += [
        "Bytes per page, first cold visit (what the server wrote, headers included; "
        "uncompressed: the same with each compressed body counted at its original size; "
        "by encoding: the `Content-Encoding` each response was sent with):",
        "",
        *bytes_table(r, titles),
        "",
        *(
            [
                f"The requests of {r['requests']['slug']}'s first cold visit, largest first:",
                "",
                *requests_table(r),
                "",
            ]
            if r.get("requests")
            else []
        ),
        f"Interactions, starting {SETTLE_MS / 1000:g} s after Python is ready, each change once "
        "the previous one is painted (`AE.bench.timings`: the change event to the re-rendered "
        "view, Python time inside the worker, rendering time); one control per page, a chart's "
        "where there is one, else a stepper's:",
        "",
        *interaction_table(r, titles),
    ]
    return "\n".join(lines)


# Runs stored before the bench covered every page named three pages by label.
LEGACY_LABELS = {"stage 1": "why-allreduce", "stage 2": "ring-reduce-scatter"}


def comparison(before: dict, after: dict) -> list[str]:
    rows = [
        "| Measurement | Before | After |",
        "|---|---:|---:|",
    ]
    for mode in ("cold", "warm"):
        old_boot = before[mode].get(BASELINE, {}).get("ready")
        for slug, a in after[mode].items():
            b = before[mode].get(slug) or {}
            for key, name in (("ready", "Python ready"), ("first", "first interaction")):
                was = b.get(key, b.get("step") if key == "first" else None)
                if a.get(key) is None:
                    continue
                then = "not measured" if was is None else f"{ms(was)} ms ({ratio(was, old_boot)})"
                rows.append(
                    f"| {name}, {slug}, {mode} | {then} | {ms(a[key])} ms "
                    f"({ratio(a[key], after[mode][BASELINE]['ready'])}) |"
                )
    for slug, a in after["bytes"].items():
        b = before["bytes"].get(slug)
        was = "not measured" if not b else f"{kb(b['sent'])} kB"
        rows.append(f"| bytes transferred, {slug}, cold | {was} | {kb(a['sent'])} kB |")
    old = {LEGACY_LABELS.get(k, k): v for k, v in before.get("interactions", {}).items()}
    for slug, a in after["interactions"].items():
        if "total" not in a:
            continue
        b = old.get(slug, {})
        same = b.get("widget") == a["widget"] and b.get("param") == a["param"]
        bt = b.get("total", {}).get("p95") if same else None
        was = "not measured" if bt is None else f"{ms(bt)} ms"
        rows.append(
            f"| {slug} recompute p95 ({a['widget']}.{a['param']}) | {was} "
            f"| {ms(a['total']['p95'])} ms |"
        )
    olds = {row["slug"]: row for row in before.get("path", [])}
    for row in after.get("path", []):
        b = olds.get(row["slug"], {})
        if row.get("navigation") in (None, "opened") or row.get("ready") is None:
            continue
        was = "not measured" if b.get("ready") is None else f"{ms(b['ready'])} ms"
        rows.append(f'| "next" to {row["slug"]}: Python ready | {was} | {ms(row["ready"])} ms |')
    return rows


def write(r: dict, cold: int, warm: int, as_before: bool) -> None:
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    old = ""
    if HEADING in text:
        start = text.index(HEADING)
        nxt = text.find("\n## ", start + len(HEADING))
        old = text[start:] if nxt < 0 else text[start:nxt]
        text = text.replace(old, "").rstrip() + "\n"
    found = BEFORE_TAG.search(old)
    before = r if as_before else (json.loads(found.group(1)) if found else None)
    parts = [HEADING, "", "Run with `make bench` (or `.venv/bin/python bench/site.py --write`)."]
    parts += ["", "### Latest run", "", report(r, cold, warm)]
    if before is not None and not as_before:
        parts += ["", f"### Before and after (before: {before['date']})", ""]
        parts += comparison(before, r)
        parts += ["", "Ratios in brackets are to the baseline measured in the same run."]
    if before is not None:
        parts += ["", f"<!-- site-bench-before: {json.dumps(before)} -->"]
    RESULTS.write_text(text.rstrip() + "\n\n" + "\n".join(parts) + "\n")


def positive(flag: str, least: int):
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            n = least - 1
        if n < least:
            raise argparse.ArgumentTypeError(f"{flag} takes a whole number ≥ {least}, not {text!r}")
        return n

    return parse


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cold", type=positive("--cold", 1), default=5, help="cold runs per page")
    ap.add_argument("--warm", type=positive("--warm", 0), default=5, help="warm runs per page")
    ap.add_argument(
        "--changes", type=positive("--changes", 1), default=60, help="changes per page (≥ 50)"
    )
    ap.add_argument("--pages", help="only these pages (slugs, comma-separated)")
    ap.add_argument("--no-path", action="store_true", help='skip the reader\'s path ("next")')
    ap.add_argument("--write", action="store_true", help="write bench/RESULTS.md")
    ap.add_argument("--before", action="store_true", help="store this run as the 'before'")
    ap.add_argument("--site", type=Path, help="measure this built site instead of building one")
    a = ap.parse_args(argv)
    if a.site is not None and not (a.site / "index.html").is_file():
        ap.error(f"--site: {a.site} has no index.html (build it with build.py)")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="ae-bench-") as tmp:
        site = a.site or Path(tmp) / "site"
        if a.site is None:
            Builder(site).build()
        pages = every = discover(site)
        if a.pages:
            wanted = [s.strip() for s in a.pages.split(",") if s.strip()]
            unknown = [s for s in wanted if s not in {p.slug for p in pages}]
            if unknown:
                ap.error(f"--pages: no page with widgets named {', '.join(unknown)}")
            pages = [p for p in pages if p.slug in wanted]
        if not (site / BASELINE).exists():
            add_baseline(site)
        traffic = Traffic()
        base, httpd = serve.in_background(site, counting_handler(traffic, site))
        try:
            with sync_playwright() as p:
                browser = chromium.launch(p)
                bench = Bench(browser, base, traffic, pages)
                r = bench.loads(a.cold, a.warm)
                r["path"] = [] if a.no_path else bench.path()
                r["interactions"] = bench.interactions(a.changes)
                browser.close()
        finally:
            httpd.shutdown()
    r["labels"] = {p.slug: p.label for p in every}
    r["date"] = datetime.date.today().isoformat()
    r["machine"] = machine()
    print(report(r, a.cold, a.warm))
    if a.write:
        write(r, a.cold, a.warm, a.before)
        print(f"wrote {RESULTS}", file=sys.stderr)


if __name__ == "__main__":
    main()
