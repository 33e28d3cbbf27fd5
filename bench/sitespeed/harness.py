"""What every measure of the site bench shares: the pages a built site has widgets on, a browser
context whose init script (INIT_SCRIPT) times each document, one visit, a page opened and let
settle, the site's speed targets, and the formats of the tables' numbers."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:  # the bytes' module, which uses this one's targets
    from .traffic import Traffic

ROOT = Path(__file__).resolve().parents[2]
BASELINE = "_baseline"
FLOOR = "_floor"  # Pyodide restored from a snapshot that imported nothing of ours
REFERENCES = (BASELINE, FLOOR)  # the pages that are not the site's
# The site's speed targets, as ratios to the baseline's boot time, in ms, or in bytes
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

VISIT_JS = """() => ({ ...window.__bench,
  fcp: (performance.getEntriesByName("first-contentful-paint")[0] || {}).startTime,
  status: document.documentElement.getAttribute("data-python"),
  message: (document.querySelector('[data-role="python-status"]') || {}).textContent || null })"""


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
    chain, slug = [], first_stage(found)
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


def first_stage(found: dict[str, str]) -> str | None:
    """The page a reader starts from: the one with a "next" link and no "previous" one."""
    return next(
        (s for s, text in found.items() if 'rel="next"' in text and 'rel="prev"' not in text), None
    )


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


def spread(timings: list[dict]) -> dict:
    """p50 and p95 of each part of these timing entries."""
    return {
        part: {
            "p50": percentile([t[part] for t in timings], 0.5),
            "p95": percentile([t[part] for t in timings], 0.95),
        }
        for part in ("total", "python", "render")
    }


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


def within_ms(p95: float | None, limit: float) -> bool:
    return p95 is not None and p95 <= limit


def titles_for(r: dict) -> dict[str, str]:
    return {
        BASELINE: "bare Pyodide (baseline)",
        FLOOR: "Pyodide from a bare snapshot (floor)",
        **r.get("labels", {}),
    }


class Session:
    """One browser and the served site: a context, a visit, a page opened or settled."""

    def __init__(self, browser, base: str, traffic: Traffic, pages: list[Page], first: str):
        self.browser, self.base, self.traffic, self.pages = browser, base, traffic, pages
        self.first = first  # the first stage, where a reader's path starts

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
