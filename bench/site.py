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
FLOOR = "_floor"  # Pyodide restored from a snapshot that imported nothing of ours
REFERENCES = (BASELINE, FLOOR)  # the pages that are not the site's
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
BASELINE_JS = """new Worker(new URL("baseline-worker.js", location.href), { type: "module" })
  .onmessage = (e) => document.documentElement.setAttribute("data-python", e.data);
"""
BASELINE_WORKER = """import { loadPyodide } from "./pyodide/pyodide.mjs";
const pyodide = await loadPyodide({ indexURL: new URL("./pyodide/", import.meta.url).href });
self.postMessage(pyodide.runPython("1 + 1") === 2 ? "ready" : "failed");
"""

# The floor: the site's way of starting Python (the snapshot and the WebAssembly fetched as the
# worker loads, beside Pyodide's two scripts; the memory restored with client/js/snapshot.js; the
# empty zip as the standard library), but from a snapshot of a Pyodide that imported nothing of
# ours (buildtools/snapshot.mjs without a core). What the site adds to a cold start is its time
# and bytes above this page's.
FLOOR_HTML = (
    BASELINE_HTML.replace("Bare Pyodide", "Pyodide from a bare snapshot")
    .replace("baseline.js", "floor.js")
    .replace("Loads Pyodide and runs", "Restores a bare snapshot of Pyodide and runs")
)
FLOOR_JS = BASELINE_JS.replace("baseline-worker.js", "floor-worker.js")
FLOOR_WORKER = """import { restoring } from "../static/js/snapshot.js";
const BUILD = __BUILD__;
const SITE = new URL("../", import.meta.url);
const INDEX = new URL("vendor/pyodide/", SITE).href;
const WASM = new URL("pyodide.asm.wasm", INDEX).href;
const snapshot = fetch(new URL("snapshot.bin", import.meta.url)).then((r) => r.arrayBuffer());
const wasm = fetch(WASM);
const fetch0 = self.fetch;
self.fetch = (input, init) => (String(input) === WASM ? wasm : fetch0(input, init));
try {
  const [{ loadPyodide }, asm] = await Promise.all(
    ["pyodide.esm.js", "pyodide.asm.js"].map((f) => import(new URL(f, INDEX).href)));
  const pyodide = await loadPyodide(restoring({
    indexURL: INDEX,
    stdLibURL: new URL(BUILD.nostdlib, SITE).href,
    lockFileContents: { info: BUILD.lock, packages: {} },
    createPyodideModule: asm.default,
  }, snapshot));
  self.fetch = fetch0;
  self.postMessage(pyodide.runPython("1 + 1") === 2 ? "ready" : "failed");
} catch (err) {
  console.error(err);
  self.postMessage("failed");
}
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

# In the page: set the widget's `preset` parameters first (the heaviest input: one update, its
# timing kept), then change one control `n` times, waiting each time for the widget to settle and
# for its frame to be painted; returns the runtime's timing entries of each recompute. With
# `alternate` (a lever's name, widget.js's AE.bench.without), every other change is made without
# that lever, so both sides share the page, its caches and the machine's load.
CHANGE_JS = """async ({ widget, sel, values, n, preset, alternate }) => {
  const w = document.querySelector('[data-widget="' + widget + '"]');
  const c = w.querySelector(sel);
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const latest = () => {
    const last = AE.bench.timings[AE.bench.timings.length - 1];  // the page keeps the latest 256
    return last && last.kind === "recompute" ? last : null;
  };
  let taken = null;
  if (preset) {
    const before = latest();
    const settled = new Promise((r) => w.addEventListener("ae:settled", r, { once: true }));
    AE.widgets.find((x) => x.el === w).update(preset);
    await settled;
    await frame();
    const t = latest();
    taken = t && t !== before ? t : { error: (w.querySelector("[data-error-for]:not(:empty)")
      || { textContent: "no answer" }).textContent };
  }
  const out = [];
  for (let i = 0; i < n; i++) {
    const without = Boolean(alternate) && i % 2 === 1;
    AE.bench.without = new Set(without ? [alternate] : []);
    const settled = new Promise((r) => w.addEventListener("ae:settled", r, { once: true }));
    if (c.type === "checkbox") c.checked = Boolean(values[i % values.length]);
    else c.value = String(values[i % values.length]);
    c.dispatchEvent(new Event("change", { bubbles: true }));
    await settled;
    // the next change comes once this one is on screen (its frame, and the task after the
    // paint), as a reader's would: otherwise it would share the CPU with the previous paint
    await frame();
    const last = latest();
    out.push(last ? { ...last, without: without } : null);
  }
  AE.bench.without = new Set();
  return { timings: out, preset: taken };
}"""

# In the page: rapid input, as a reader holding an arrow key or typing a number: `size` changes
# `gap` ms apart, then the time from the last change to its state on screen (the widget settled
# and idle). Every other burst is made without the lever "coalesce".
BURST_JS = """async ({ widget, sel, values, bursts, size, gap, preset }) => {
  const w = document.querySelector('[data-widget="' + widget + '"]');
  const c = w.querySelector(sel);
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  if (preset) {
    const settled = new Promise((r) => w.addEventListener("ae:settled", r, { once: true }));
    AE.widgets.find((x) => x.el === w).update(preset);
    await settled;
  }
  const out = [];
  for (let b = 0; b < bursts; b++) {
    const without = b % 2 === 1;
    AE.bench.without = new Set(without ? ["coalesce"] : []);
    let fired = false, last = 0;
    const done = new Promise((resolve) => {
      const on = () => {
        if (!fired || w.hasAttribute("aria-busy")) return;
        w.removeEventListener("ae:settled", on);
        resolve(performance.now());
      };
      w.addEventListener("ae:settled", on);
    });
    for (let i = 0; i < size; i++) {
      c.value = String(values[i % values.length]);
      c.dispatchEvent(new Event("change", { bubbles: true }));
      last = performance.now();
      if (i < size - 1) await sleep(gap);
    }
    fired = true;
    const end = await done;
    out.push({ without: without, ms: end - last });
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    await sleep(100);
  }
  AE.bench.without = new Set();
  return out;
}"""

# A stepper's steps; `heavy`: first at the most GPUs and the longest vectors its controls allow.
# With `alternate` (a lever's name), every other step is made without that lever.
STEP_JS = """async ({ n, heavy, alternate }) => {
  const w = document.querySelector('[data-widget][data-kind="stepper"]');
  if (heavy) {
    const preset = {};
    w.querySelectorAll('input[type="number"][data-param]').forEach((c) => {
      const k = c.getAttribute("data-param");
      if (["gpus", "length", "servers"].includes(k) && c.max !== "") preset[k] = Number(c.max);
    });
    const settled = new Promise((r) => w.addEventListener("ae:settled", r, { once: true }));
    AE.widgets.find((x) => x.el === w).update(preset);
    await settled;
    const err = w.querySelector("[data-error-for]:not(:empty)");
    if (err) return { error: JSON.stringify(preset) + ": " + err.textContent };
    heavy = preset;
  }
  const next = w.querySelector('[data-action="next"]');
  const prev = w.querySelector('[data-action="prev"]');
  w.querySelector('[data-action="reset"]').click();
  const out = [];
  let forward = true;
  for (let i = 0; i < n; i++) {
    if (forward && next.disabled) forward = false;
    if (!forward && prev.disabled) forward = true;
    const without = Boolean(alternate) && i % 2 === 1;
    AE.bench.without = new Set(without ? [alternate] : []);
    (forward ? next : prev).click();
    out.push({ ms: AE.bench.timings[AE.bench.timings.length - 1].render, without: without });
    await new Promise((r) => requestAnimationFrame(() => r()));
  }
  AE.bench.without = new Set();
  return { steps: out, preset: heavy || null };
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


@dataclass(frozen=True)
class Scenario:
    """A page's heaviest input (issue 25): `preset` set on `widget` first, then `param` changed
    through `values` (the GPU count between 1,024 and half of it, where the page allows 1,024)."""

    label: str
    widget: str
    param: str
    values: tuple
    preset: tuple = ()  # (name, value) pairs; "log_file": BIG_LOG stands for the 1 MB log

    def params(self) -> dict | None:
        return {k: big_log() if v is BIG_LOG else v for k, v in self.preset} or None


BIG_LOG = object()  # a scenario's stand-in for the log big_log() makes
LOG_SOURCE = ROOT / "tests" / "data" / "nccl-tests" / "nccl-tests-309-16xh100-2nodes-ib-ndr.txt"
GPUS = (1024, 512)
HEAVY = {
    "why-allreduce": [Scenario("1,024 GPUs", "scaling", "gpus", GPUS)],
    "what-each-gpu-sends": [Scenario("1,024 GPUs", "sends", "gpus", GPUS)],
    "latency-ring-vs-tree": [Scenario("1,024 GPUs", "latency", "gpus", GPUS)],
    "across-servers": [Scenario("64 servers (512 GPUs, its most)", "servers_compare", "servers",
                                (64, 32))],
    "ddp-buckets": [
        Scenario("Llama 3 405B, 1,024 GPUs", "ddp_buckets", "gpus", GPUS,
                 (("model", "llama3-405b"),)),
        Scenario("Llama 3 405B, bucket cap", "ddp_buckets", "bucket_cap_mb", (50, 25),
                 (("model", "llama3-405b"),)),
    ],
    "sharded-data-parallel": [
        Scenario("Llama 3 405B, 1,024 GPUs", "shard_memory", "gpus", GPUS,
                 (("model", "llama3-405b"),)),
    ],
    "in-network-reduction": [
        Scenario("1,024 GPUs (128 servers)", "innetwork_bandwidth", "servers", (128, 64)),
    ],
    "your-cluster": [
        Scenario("a 1 MB log, 1,024 GPUs", "cluster", "gpus", GPUS,
                 (("example", ""), ("log", ""), ("log_file", BIG_LOG))),
    ],
}  # fmt: skip


@functools.cache
def big_log() -> str:
    """A cited nccl-tests log repeated up to the calculator's limit (logs/explain.py): the largest
    log the page reads."""
    from allreduce_explainer.logs import explain

    log = LOG_SOURCE.read_text()
    big = log
    while len((big + log).encode()) <= explain.MAX_LOG_BYTES:
        big += log
    return big


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
        if f.parent.name in REFERENCES:
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
    (folder / "baseline-worker.js").write_text(BASELINE_WORKER)


def add_floor(site: Path) -> None:
    """The floor page, beside the site (it uses the site's Pyodide, snapshot.js and empty zip):
    its bare snapshot is made the way the build makes the site's, and cached the same way."""
    from sitebuild import compress, python_assets

    manifest = json.loads((site / python_assets.MANIFEST).read_text())
    stdlib = python_assets.node_tool(python_assets.STDLIB_TOOL)
    snapshot = python_assets.node_tool(python_assets.SNAPSHOT_TOOL, stdlib)
    folder = site / FLOOR
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "snapshot.bin").write_bytes(snapshot)
    for suffix in compress.CODINGS:  # compressed as the site's snapshot is
        (folder / f"snapshot.bin{suffix}").write_bytes(compress.compressed(snapshot, suffix))
    build = {"nostdlib": manifest["nostdlib"], "lock": manifest["lock"]}
    (folder / "index.html").write_text(FLOOR_HTML)
    (folder / "floor.js").write_text(FLOOR_JS)
    (folder / "floor-worker.js").write_text(FLOOR_WORKER.replace("__BUILD__", json.dumps(build)))


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
            if slug not in REFERENCES:
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
        slugs = [*REFERENCES, *(p.slug for p in self.pages)]
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
        if len(slugs) > 2:  # the first page's requests, one by one, with their encodings
            out["requests"] = {"slug": slugs[2], "entries": traffic[slugs[2]]}
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

    def open(self, page, slug: str) -> bool:
        """The page, Python ready, and SETTLE_MS of reading; False if its Python failed."""
        page.goto(self.url(slug))
        page.wait_for_function(
            "() => ['ready', 'failed'].includes(document.documentElement.dataset.python)",
            timeout=LOAD_TIMEOUT_MS,
        )
        if page.evaluate("() => document.documentElement.dataset.python") != "ready":
            return False
        page.wait_for_timeout(SETTLE_MS)
        return True

    def interact(self, page, p: Page, n: int) -> dict:
        if not self.open(page, p.slug):
            return {"error": "Python failed"}
        control = page.evaluate(CONTROL_JS)
        if control is None:
            return {"error": "no control found"}
        for doubling in (False, True):
            values = control_values(control, doubling)
            timings = page.evaluate(CHANGE_JS, {**control, "values": values, "n": n})["timings"]
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
            **spread(ok),
        }
        if p.stepper:
            entry["step"] = self.steps(page, n, heavy=False)
            entry["heavy_step"] = self.steps(page, n, heavy=True)
        entry["heavy"] = [self.scenario(page, sc, n) for sc in HEAVY.get(p.slug, [])]
        return entry

    def steps(self, page, n: int, heavy: bool) -> dict:
        got = page.evaluate(STEP_JS, {"n": n, "heavy": heavy, "alternate": None})
        if "error" in got:
            return {"error": got["error"], "p50": None, "p95": None}
        xs = [x["ms"] for x in got["steps"]]
        return {"p50": percentile(xs, 0.5), "p95": percentile(xs, 0.95), "preset": got["preset"]}

    def lever_steps(self, page, n: int, lever: str) -> dict:
        """A stepper's steps at its heaviest state, every other one without `lever`."""
        got = page.evaluate(STEP_JS, {"n": n, "heavy": True, "alternate": lever})
        if "error" in got:
            return {"error": got["error"]}
        out = {"changes": len(got["steps"])}
        for side, without in (("with", False), ("without", True)):
            xs = [x["ms"] for x in got["steps"] if x["without"] is without]
            out[side] = {"total": {"p50": percentile(xs, 0.5), "p95": percentile(xs, 0.95)}}
        return out

    def scenario(self, page, sc: Scenario, n: int, alternate: str | None = None) -> dict:
        """A heavy input's changes (`alternate`: every other one without that lever)."""
        args = {
            "widget": sc.widget,
            "sel": f'[data-param="{sc.param}"]',
            "n": n,
            "values": list(sc.values),
            "preset": sc.params(),
            "alternate": alternate,
        }
        try:
            got = page.evaluate(CHANGE_JS, args)
        except Exception as e:
            return {"label": sc.label, "error": short(e)}
        timings = got["timings"]
        ok = [t for t in timings if t]
        entry = {
            "label": sc.label,
            "widget": sc.widget,
            "param": sc.param,
            "changes": len(timings),
            "failed": len(timings) - len(ok),
            "preset": got["preset"],
        }
        if alternate:
            entry["with"] = spread([t for t in ok if not t["without"]])
            entry["without"] = spread([t for t in ok if t["without"]])
        else:
            entry.update(spread(ok))
        return entry

    def levers(self, n: int) -> list[dict]:
        """Each lever on and off in the same page, alternately (LEVERS)."""
        slugs = {p.slug for p in self.pages}
        out = []
        ctx = self.context(first=False)
        for lever, slug, sc in LEVERS:
            if slug not in slugs:
                continue
            page = ctx.new_page()
            row = {"lever": lever, "slug": slug, "label": sc.label}
            try:
                if not self.open(page, slug):
                    row["error"] = "Python failed"
                elif lever == "coalesce":
                    args = {
                        "widget": sc.widget,
                        "sel": f'[data-param="{sc.param}"]',
                        "values": list(sc.values),
                        "preset": sc.params(),
                        **BURST,
                    }
                    bursts = page.evaluate(BURST_JS, args)
                    for side, without in (("with", False), ("without", True)):
                        xs = [b["ms"] for b in bursts if b["without"] is without]
                        row[side] = {
                            "total": {"p50": percentile(xs, 0.5), "p95": percentile(xs, 0.95)}
                        }
                    row["changes"] = len(bursts)
                elif lever == "patch-grid":
                    row.update(self.lever_steps(page, n, lever))
                else:
                    if lever == "joined-lanes":
                        page.evaluate(LANES_JS)
                    row.update(self.scenario(page, sc, n, alternate=lever))
                    row["label"] = sc.label
            except Exception as e:
                row["error"] = short(e)
            finally:
                page.close()
            print(f"lever {lever} on {slug} done", file=sys.stderr)
            out.append(row)
        ctx.close()
        return out


def spread(timings: list[dict]) -> dict:
    """p50 and p95 of each part of these timing entries."""
    return {
        part: {
            "p50": percentile([t[part] for t in timings], 0.5),
            "p95": percentile([t[part] for t in timings], 0.95),
        }
        for part in ("total", "python", "render")
    }


# Stage 7's lanes drawn as they were before: each shade's boxes as a trace with a gap after
# every box (four corners, then null), which Plotly splits into one piece per box and handles
# piece by piece (884 pieces a lane for Llama 3 405B), where widgets/buckets.py joins them into
# one gapless polygon along the lane's foot. Applied in the page to the state Python sent, on
# the changes made "without" the lever "joined-lanes".
LANES_JS = """() => {
  const w = document.querySelector('[data-widget="ddp_buckets"]');
  const wo = AE.widgets.find((x) => x.el === w);
  const render = wo.view.render;
  const gapped = (xs) => xs.flatMap((x, i) => (i % 4 === 3 ? [x, null] : [x]));
  const apart = (fig) => ({ ...fig, data: fig.data.map((t) => (t.mode !== "none" ? t
    : { ...t, x: gapped(t.x), y: gapped(t.y), customdata: gapped(t.customdata) })) });
  wo.view.render = (s) => {
    if (!AE.bench.without.has("joined-lanes")) return render(s);
    return render({ ...s, figure: apart(s.figure) });
  };
}"""

# The levers measured side by side (widget.js's AE.bench.without): each on and off, alternately,
# in one page. "layout-once": every chart drawn before any text or table is written, the theme's
# colours read once per theme, and unchanged summaries and tables not rewritten (chart.js);
# "coalesce": an answer that a newer change has made stale is not drawn (widget.js), measured on
# bursts of rapid input (BURST); "joined-lanes": stage 7's lanes as one gapless polygon per
# shade, against a box per gap-separated piece (LANES_JS); "patch-grid": a stepper's step
# rewriting only the cells that changed (stepper.js), against building its grid again, at the
# stepper's heaviest state.
STEPS = Scenario("steps at its most GPUs and longest vectors", "stepper", "next", ())
LEVERS = (
    ("layout-once", "ddp-buckets", HEAVY["ddp-buckets"][0]),
    ("layout-once", "why-allreduce", HEAVY["why-allreduce"][0]),
    ("layout-once", "latency-ring-vs-tree", HEAVY["latency-ring-vs-tree"][0]),
    ("coalesce", "ddp-buckets", HEAVY["ddp-buckets"][0]),
    ("coalesce", "latency-ring-vs-tree", HEAVY["latency-ring-vs-tree"][0]),
    ("joined-lanes", "ddp-buckets", HEAVY["ddp-buckets"][0]),
    ("patch-grid", "in-network-reduction", STEPS),
    ("patch-grid", "ring-reduce-scatter", STEPS),
)
LEVER_TEXT = {
    "layout-once": "every chart drawn before any text or table is written, the theme's colours "
    "read once per theme, unchanged summaries and tables not rewritten (chart.js)",
    "coalesce": "an answer a newer change has made stale is not drawn (widget.js)",
    "joined-lanes": "stage 7's lanes as one gapless polygon per shade, against boxes separated "
    "by gaps",
    "patch-grid": "a stepper's step rewrites only the cells that changed, against building the "
    "grid again (stepper.js)",
}
BURST = {"bursts": 12, "size": 5, "gap": 8}  # 5 changes 8 ms apart, 6 bursts each way


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
        ok = "" if slug in REFERENCES else verdict(b["sent"] <= PAGE_BYTES)
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


def within_ms(p95: float | None, limit: float) -> bool:
    return p95 is not None and p95 <= limit


def interaction_table(r: dict, titles: dict[str, str]) -> list[str]:
    rows = [
        "| Page | Control (input) | Changes | Total p50 / p95 (ms) | Python p50 / p95 "
        "| Render p50 / p95 | Target |",
        "|---|---|---:|---:|---:|---:|---|",
    ]

    def row(title: str, what: str, e: dict, limit: float) -> str:
        p95 = e["total"]["p95"]
        line = (
            f"| {title} | {what} | {e['changes']} | {ms(e['total']['p50'])} / {ms(p95)} "
            f"| {ms(e['python']['p50'])} / {ms(e['python']['p95'])} "
            f"| {ms(e['render']['p50'])} / {ms(e['render']['p95'])} "
            f"| p95 ≤ {limit} ms: {verdict(within_ms(p95, limit))} |"
        )
        return line + (f" {e['failed']} changes answered with an error" if e["failed"] else "")

    def step(title: str, what: str, s: dict, n: int) -> str:
        if s.get("error"):
            return f"| {title} | {what}: {s['error']} | | | | | FAIL |"
        return (
            f"| {title} | {what} | {n} | {ms(s['p50'])} / {ms(s['p95'])} | – "
            f"| {ms(s['p50'])} / {ms(s['p95'])} "
            f"| p95 ≤ {STEP_MS} ms: {verdict(within_ms(s['p95'], STEP_MS))} |"
        )

    for slug, e in r["interactions"].items():
        title = titles.get(slug, slug)
        if "error" in e:
            rows.append(f"| {title} | {e['error']} | | | | | FAIL |")
            continue
        limit = CHART_P95_MS if e["kind"] == "chart" else RECOMPUTE_P95_MS
        rows.append(row(title, f"{e['widget']}.{e['param']} ({e['kind']})", e, limit))
        for h in e.get("heavy", []):
            if "error" in h or (h["preset"] or {}).get("error"):
                why = h.get("error") or h["preset"]["error"]
                rows.append(f"| {title} | {h['label']}: {why} | | | | | FAIL |")
                continue
            rows.append(row(title, f"{h['widget']}.{h['param']}, {h['label']}", h, CHART_P95_MS))
        if "step" in e:
            rows.append(step(title, "a stepper step (no Python)", e["step"], e["changes"]))
        if "heavy_step" in e:
            preset = ", ".join(f"{k} {v}" for k, v in (e["heavy_step"].get("preset") or {}).items())
            rows.append(
                step(
                    title,
                    f"a stepper step at {preset or 'its most'}",
                    e["heavy_step"],
                    e["changes"],
                )
            )
    return rows


def page_results(e: dict) -> tuple[tuple[float | None, str], tuple[float | None, str] | None]:
    """A page's worst chart-change p95 and worst step p95 over its inputs, with the input."""
    charts = []
    if e.get("kind") == "chart":
        charts.append((e["total"]["p95"], f"{e['widget']}.{e['param']}"))
    for h in e.get("heavy", []):
        if "error" in h or (h["preset"] or {}).get("error"):
            charts.append((None, h["label"]))
        else:
            charts.append((h["total"]["p95"], h["label"]))
    steps = [
        (e[k]["p95"], name)
        for k, name in (("step", "defaults"), ("heavy_step", "its most"))
        if k in e
    ]
    worst = lambda xs: max(xs, key=lambda x: float("inf") if x[0] is None else x[0])  # noqa: E731
    return (worst(charts) if charts else (None, "")), (worst(steps) if steps else None)


def page_table(r: dict, titles: dict[str, str]) -> list[str]:
    """Issue 25's targets per page: chart changes and stepper steps, at their heaviest inputs."""
    rows = [
        f"| Page | Chart changes: worst p95 (ms), input | ≤ {CHART_P95_MS} ms "
        f"| Stepper steps: worst p95 (ms), state | ≤ {STEP_MS} ms |",
        "|---|---:|---|---:|---|",
    ]
    for slug, e in r["interactions"].items():
        title = titles.get(slug, slug)
        if "error" in e:
            rows.append(f"| {title} | {e['error']} | FAIL | | |")
            continue
        (chart, what), step = page_results(e)
        chart_cell = "no chart" if not what else f"{ms(chart)}, {what}"
        chart_ok = "" if not what else verdict(within_ms(chart, CHART_P95_MS))
        step_cell = "no stepper" if step is None else f"{ms(step[0])}, {step[1]}"
        step_ok = "" if step is None else verdict(within_ms(step[0], STEP_MS))
        rows.append(f"| {title} | {chart_cell} | {chart_ok} | {step_cell} | {step_ok} |")
    return rows


def lever_table(r: dict, titles: dict[str, str]) -> list[str]:
    rows = [
        "| Lever | Page, input | Measured | With it: p50 / p95 (ms) | Without: p50 / p95 | Kept |",
        "|---|---|---|---:|---:|---|",
    ]
    for x in r.get("levers", []):
        where = f"{titles.get(x['slug'], x['slug'])}, {x['label']}"
        if "error" in x or "with" not in x:
            rows.append(f"| {x['lever']} | {where} | {x.get('error', 'no figures')} | | | |")
            continue
        how = (
            f"{x['changes']} bursts of {BURST['size']} changes {BURST['gap']} ms apart, from the "
            "last change to its state on screen"
            if x["lever"] == "coalesce"
            else f"{x['changes']} steps, alternately with and without"
            if x["lever"] == "patch-grid"
            else f"{x['changes']} changes, alternately with and without"
        )
        a, b = x["with"]["total"], x["without"]["total"]
        kept = "yes" if within_ms(a["p95"], b["p95"] if b["p95"] is not None else -1) else "no"
        kept = f"{kept} (this run)"
        rows.append(
            f"| {x['lever']} | {where} | {how} | {ms(a['p50'])} / {ms(a['p95'])} "
            f"| {ms(b['p50'])} / {ms(b['p95'])} | {kept} |"
        )
    return rows


def floor_lines(r: dict) -> list[str]:
    """The site's cold start and bytes as ratios to the bare boot and to the floor."""
    cold, by = r["cold"], r["bytes"]
    boot, floor = cold.get(BASELINE, {}).get("ready"), cold.get(FLOOR, {}).get("ready")
    boot_b, floor_b = by.get(BASELINE, {}).get("sent"), by.get(FLOOR, {}).get("sent")
    rows = [
        "| Page | Python ready, cold (ms) | / bare boot | / floor | Bytes, cold (kB) "
        "| / bare boot | / floor | Above the floor (kB) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for slug, fig in cold.items():
        b = by.get(slug, {}).get("sent")
        above = "–" if b is None or floor_b is None else kb(b - floor_b)
        rows.append(
            f"| {slug} | {ms(fig.get('ready'))} | {ratio(fig.get('ready'), boot)} "
            f"| {ratio(fig.get('ready'), floor)} | {kb(b)} | {ratio(b, boot_b)} "
            f"| {ratio(b, floor_b)} | {above} |"
        )
    return rows


def targets(r: dict) -> list[str]:
    """The load targets, cold: Python ready and the first interaction, against the baseline."""
    boot = r["cold"].get(BASELINE, {}).get("ready")
    lines = []
    for slug, fig in r["cold"].items():
        if slug in REFERENCES:
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
    pages = [s for s in r["cold"] if s not in REFERENCES]

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
    charts, steps = [], []
    for e in r["interactions"].values():
        if "error" in e:
            charts.append(False)
            continue
        (chart, what), step = page_results(e)
        if what:
            charts.append(within_ms(chart, CHART_P95_MS))
        if step is not None:
            steps.append(within_ms(step[0], STEP_MS))
    out.append(count(f"chart changes p95 ≤ {CHART_P95_MS} ms, heaviest inputs, pages", charts))
    out.append(count(f"stepper steps p95 ≤ {STEP_MS} ms, heaviest states, pages", steps))
    return out


def titles_for(r: dict) -> dict[str, str]:
    return {
        BASELINE: "bare Pyodide (baseline)",
        FLOOR: "Pyodide from a bare snapshot (floor)",
        **r.get("labels", {}),
    }


def report(r: dict, cold: int, warm: int) -> str:
    titles = titles_for(r)
    lines = [
        f"Measured {r['date']} on {r['machine']}. Headless Chromium against `build.py`'s "
        f"handler on 127.0.0.1; medians of {cold} cold runs (a fresh browser context each) and "
        f"{warm} warm runs (one context, cached), all in one run, interleaved with the baseline "
        "page (it only loads the same Pyodide files, as npm ships them, in a module worker and "
        "runs `1 + 1`) and the floor page (Pyodide restored from a snapshot that imported "
        "nothing of ours, made as the build makes the site's, the way the site's worker "
        "restores it, then `1 + 1`). Every page whose `<html>` has `data-python` is measured. "
        "Times are ms "
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
        "The floor: the site's cold start and bytes (first cold visit) against the bare boot "
        "and against Pyodide restored from a bare snapshot; what a page adds is above the floor:",
        "",
        *floor_lines(r),
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
        "",
        "Per page, issue 25's targets at each page's heaviest inputs (its own control above and "
        "the inputs below; a stepper at its defaults and at the most GPUs and the longest "
        "vectors it allows):",
        "",
        *page_table(r, titles),
        "",
        "The heaviest inputs: "
        + "; ".join(f"{slug}: {', '.join(sc.label for sc in scs)}" for slug, scs in HEAVY.items())
        + f" (the log: {LOG_SOURCE.name} repeated to {len(big_log().encode()):,} bytes, the "
        "most the page reads; its paste is the first timing below).",
        "",
        *paste_lines(r),
        "",
        "Levers, each measured on and off in the same page (widget.js's `AE.bench.without`):",
        "",
        *lever_table(r, titles),
        "",
        *(f"- {name}: {text}" for name, text in LEVER_TEXT.items()),
    ]
    return "\n".join(lines)


def paste_lines(r: dict) -> list[str]:
    """The heavy presets' own timings (the 1 MB log pasted, Llama 3 405B chosen)."""
    out = []
    for slug, e in r["interactions"].items():
        for h in e.get("heavy", []) if "error" not in e else []:
            t = h.get("preset")
            if t and "total" in t:
                out.append(
                    f"- {slug}, {h['label']}: the preset taken in {ms(t['total'])} ms "
                    f"(Python {ms(t['python'])}, render {ms(t['render'])})"
                )
    return out


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
        if not (site / FLOOR).exists():
            add_floor(site)
        traffic = Traffic()
        base, httpd = serve.in_background(site, counting_handler(traffic, site))
        try:
            with sync_playwright() as p:
                browser = chromium.launch(p)
                bench = Bench(browser, base, traffic, pages)
                r = bench.loads(a.cold, a.warm)
                r["path"] = [] if a.no_path else bench.path()
                r["interactions"] = bench.interactions(a.changes)
                r["levers"] = bench.levers(a.changes)
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
