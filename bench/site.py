"""Time the built site in headless Chromium, side by side with a bare Pyodide page, in one run.

Builds the site into a temporary folder, adds a baseline page (it only loads the same Pyodide and
runs `1 + 1`, in a module worker, as the site does), serves both on 127.0.0.1 with the site's own
handler, and measures medians over cold runs (a fresh browser context each) and warm runs (one
context, cached): first contentful paint, when the default stepper of stage 2 answers a "next"
click, when `data-python="ready"`; then p50/p95 latencies of 50+ control changes on stages 1, 2
and 8 (from the page's bench hook `AE.bench.timings`), and the bytes each page transfers cold.
Every time is
also given as a ratio to the baseline's boot time measured in the same run, because the machine
is shared and wall times drift. Not part of the test suite.

Usage, from the repo root: .venv/bin/python bench/site.py [--cold 5] [--warm 5] [--write]
(`--write` replaces the "## Site speed" section of bench/RESULTS.md; `--before` stores this run
as the "before" column that later runs are compared with.)
"""

from __future__ import annotations

import argparse
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
from pathlib import Path

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
# (label, slug, widget whose control the reader changes, that control; None: the first chart's)
PAGES = [
    ("stage 1", "why-allreduce", "scaling", "gpus"),
    ("stage 2", "ring-reduce-scatter", "ring_reduce_scatter", "gpus"),
    ("stage 8", "your-cluster", None, None),
]
STEPPER_PAGE = "ring-reduce-scatter"
# The site's speed targets, as ratios to the baseline's boot time, or in milliseconds.
READY_RATIO, STEPPER_RATIO = 0.5, 0.1
STEP_MS, CHART_P95_MS, TRACE_P95_MS = 16, 50, 100
# The changes start this long after Python is ready, as a reader's first change comes after some
# reading: in the first second the browser is still busy with the page's start (optimising the
# WebAssembly interpreter, collecting garbage), and changes made then take 50-90 ms, not 20-30.
SETTLE_MS = 3000

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
# CSP does not apply): notes when Python is ready and, on a stepper page, clicks "next" every
# millisecond or so until the step counter answers.
INIT_SCRIPT = (
    """(() => {
  const B = (window.__bench = { ready: null, step: null });
  const mark = () => {
    const html = document.documentElement;
    if (B.ready === null && html && html.getAttribute("data-python") === "ready")
      B.ready = performance.now();
  };
  new MutationObserver(mark).observe(document, { attributes: true, subtree: true,
    attributeFilter: ["data-python"] });
  if (!location.pathname.includes("/STEPPER_PAGE/")) return;
  const poll = () => {
    const w = document.querySelector('[data-widget][data-kind="stepper"]');
    const c = w && w.querySelector('[data-role="step-counter"]');
    const b = w && w.querySelector('[data-action="next"]');
    if (c && b) {
      const before = c.textContent;
      b.click();
      if (c.textContent !== before) { B.step = performance.now(); return; }
    }
    setTimeout(poll, 1);
  };
  poll();
})();"""
).replace("STEPPER_PAGE", STEPPER_PAGE)

# In the page: change one control `n` times, waiting each time for the widget to settle and
# for its frame to be painted; returns the runtime's timing entries of each recompute.
CHANGE_JS = """async ({ widget, param, values, n }) => {
  const w = document.querySelector('[data-widget="' + widget + '"]');
  const c = w.querySelector('[data-param="' + param + '"]');
  const out = [];
  for (let i = 0; i < n; i++) {
    const settled = new Promise((r) => w.addEventListener("ae:settled", r, { once: true }));
    c.value = String(values[i % values.length]);
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

# The control to move on a page: its attributes, to choose valid values.
CONTROL_JS = """({ widget, param }) => {
  const w = widget ? document.querySelector('[data-widget="' + widget + '"]')
    : document.querySelector('[data-widget][data-kind="chart"]');
  if (!w) return null;
  const c = param ? w.querySelector('[data-param="' + param + '"]')
    : w.querySelector('input[type="number"][data-param], select[data-param]');
  if (!c) return null;
  return { widget: w.getAttribute("data-widget"), param: c.getAttribute("data-param"),
    tag: c.tagName, value: c.value, min: c.min, max: c.max, step: c.step,
    options: c.tagName === "SELECT" ? Array.from(c.options, (o) => o.value) : [] };
}"""


class Traffic:
    """Bytes the server wrote, per request, so a page's transfer is counted where it is sent."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: list[dict] = []

    def take(self) -> list[dict]:
        with self.lock:
            out, self.entries = self.entries, []
        return out


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
            # the file itself, not the .gz twin the handler may have sent instead
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


class Bench:
    def __init__(self, browser, base: str, traffic: Traffic, present: list[tuple]):
        self.browser, self.base, self.traffic, self.present = browser, base, traffic, present

    def context(self):
        ctx = self.browser.new_context(viewport={"width": 1280, "height": 900})
        ctx.add_init_script(INIT_SCRIPT)
        return ctx

    def visit(self, ctx, slug: str) -> dict:
        """One navigation: paint, stepper answer and Python ready, ms from navigation start."""
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{self.base}/{slug}/index.html")
        page.wait_for_function(
            "() => window.__bench.ready !== null"
            " || document.documentElement.getAttribute('data-python') === 'failed'",
            timeout=120_000,
        )
        if slug == STEPPER_PAGE:
            page.wait_for_function("() => window.__bench.step !== null", timeout=30_000)
        got = page.evaluate(
            """() => ({ ready: window.__bench.ready, step: window.__bench.step,
                fcp: (performance.getEntriesByName("first-contentful-paint")[0] || {}).startTime,
                status: document.documentElement.getAttribute("data-python") })"""
        )
        page.close()
        if got["status"] != "ready":
            raise SystemExit(f"{slug}: Python did not start ({errors})")
        return got

    def loads(self, cold: int, warm: int) -> dict:
        """Cold and warm visits of the baseline and every page, interleaved so drift hits all."""
        slugs = [BASELINE] + [p[1] for p in self.present]
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
                out[mode][slug] = {
                    k: median([v[k] for v in visits]) for k in ("fcp", "step", "ready")
                }
        for slug, entries in traffic.items():
            out["bytes"][slug] = {
                "sent": sum(e["bytes"] for e in entries),
                "identity": sum(e["identity"] if e["encoding"] else e["bytes"] for e in entries),
                "requests": len(entries),
            }
        return out

    def interactions(self, n: int) -> dict:
        out = {}
        ctx = self.context()
        for label, slug, widget, param in self.present:
            page = ctx.new_page()
            page.goto(f"{self.base}/{slug}/index.html")
            page.wait_for_selector("html[data-python=ready]", state="attached", timeout=120_000)
            page.wait_for_timeout(SETTLE_MS)
            control = page.evaluate(CONTROL_JS, {"widget": widget, "param": param})
            if control is None:
                out[label] = {"error": "no control found"}
                continue
            values = control_values(control)
            timings = page.evaluate(CHANGE_JS, {**control, "values": values, "n": n})
            ok = [t for t in timings if t]
            kind = page.evaluate(
                "(w) => document.querySelector('[data-widget=\"' + w + '\"]')"
                ".getAttribute('data-kind')",
                control["widget"],
            )
            entry = {
                "widget": control["widget"],
                "param": control["param"],
                "kind": kind,
                "changes": len(timings),
                "failed": len(timings) - len(ok),
            }
            for part in ("total", "python", "render"):
                xs = [t[part] for t in ok]
                entry[part] = {"p50": percentile(xs, 0.5), "p95": percentile(xs, 0.95)}
            if slug == STEPPER_PAGE:
                steps = page.evaluate(STEP_JS, {"n": n})
                entry["step"] = {"p50": percentile(steps, 0.5), "p95": percentile(steps, 0.95)}
            out[label] = entry
            page.close()
        ctx.close()
        return out


def control_values(c: dict) -> list:
    """Valid values to cycle through, none equal to the next one, so each change recomputes."""
    if c["tag"] == "SELECT":
        opts = c["options"]
        i = opts.index(c["value"]) if c["value"] in opts else 0
        return opts[i + 1 :] + opts[: i + 1]
    v = float(c["value"])
    lo = float(c["min"]) if c["min"] else float("-inf")
    hi = float(c["max"]) if c["max"] else float("inf")
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


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


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


def load_table(r: dict, titles: dict[str, str]) -> list[str]:
    rows = [
        "| Page | Mode | First paint (ms) | Stepper answers (ms) | Python ready (ms) "
        "| Ready / baseline | Stepper / baseline |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for mode in ("cold", "warm"):
        boot = r[mode][BASELINE]["ready"]
        for slug, fig in r[mode].items():
            rows.append(
                f"| {titles[slug]} | {mode} | {ms(fig['fcp'])} | {ms(fig['step'])} "
                f"| {ms(fig['ready'])} | {ratio(fig['ready'], boot)} "
                f"| {ratio(fig['step'], boot)} |"
            )
    return rows


def bytes_table(r: dict, titles: dict[str, str]) -> list[str]:
    rows = [
        "| Page | Requests | Transferred (compressed, kB) | Uncompressed (kB) |",
        "|---|---:|---:|---:|",
    ]
    for slug, b in r["bytes"].items():
        rows.append(
            f"| {titles[slug]} | {b['requests']} | {b['sent'] / 1e3:,.0f} "
            f"| {b['identity'] / 1e3:,.0f} |"
        )
    return rows


def interaction_table(r: dict) -> list[str]:
    rows = [
        "| Page | Control | Changes | Total p50 / p95 (ms) | Python p50 / p95 "
        "| Render p50 / p95 | Target |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for label, e in r["interactions"].items():
        if "error" in e:
            rows.append(f"| {label} | {e['error']} | | | | | |")
            continue
        limit = TRACE_P95_MS if e["kind"] == "stepper" else CHART_P95_MS
        p95 = e["total"]["p95"]
        target = f"p95 ≤ {limit} ms: {verdict(p95 is not None and p95 <= limit)}"
        rows.append(
            f"| {label} | {e['widget']}.{e['param']} ({e['kind']}) | {e['changes']} "
            f"| {ms(e['total']['p50'])} / {ms(p95)} "
            f"| {ms(e['python']['p50'])} / {ms(e['python']['p95'])} "
            f"| {ms(e['render']['p50'])} / {ms(e['render']['p95'])} | {target} |"
        )
        if e["failed"]:
            rows[-1] += f" {e['failed']} changes answered with an error"
        if "step" in e:
            s = e["step"]
            rows.append(
                f"| {label} | a stepper step (no Python) | {e['changes']} "
                f"| {ms(s['p50'])} / {ms(s['p95'])} | – | {ms(s['p50'])} / {ms(s['p95'])} "
                f"| p95 ≤ {STEP_MS} ms: {verdict(s['p95'] <= STEP_MS)} |"
            )
    return rows


def targets(r: dict) -> list[str]:
    lines = []
    for mode in ("cold", "warm"):
        boot = r[mode][BASELINE]["ready"]
        for slug, fig in r[mode].items():
            if slug == BASELINE:
                continue
            ok = fig["ready"] <= READY_RATIO * boot
            lines.append(
                f"- {slug}, {mode}: Python ready at {fig['ready'] / boot:.2f}× the baseline "
                f"(target ≤ {READY_RATIO}×): {verdict(ok)}"
            )
        step = r[mode].get(STEPPER_PAGE, {}).get("step")
        if step is not None:
            lines.append(
                f"- stage 2 stepper, {mode}: answers at {step / boot:.3f}× the baseline "
                f"(target ≤ {STEPPER_RATIO}×): {verdict(step <= STEPPER_RATIO * boot)}"
            )
    return lines


def titles_for(present: list[tuple]) -> dict[str, str]:
    return {BASELINE: "bare Pyodide (baseline)", **{p[1]: f"{p[0]} ({p[1]})" for p in present}}


def report(r: dict, cold: int, warm: int) -> str:
    titles = titles_for([p for p in PAGES if p[1] in r["cold"]])
    missing = [f"{p[0]} ({p[1]}): not built yet" for p in PAGES if p[1] not in r["cold"]]
    lines = [
        f"Measured {r['date']} on {r['machine']}. Headless Chromium against `build.py`'s "
        f"handler on 127.0.0.1; medians of {cold} cold runs (a fresh browser context each) and "
        f"{warm} warm runs (one context, cached), all in one run, interleaved with the baseline "
        "page (it only loads the same Pyodide files, as npm ships them, in a module worker and "
        "runs `1 + 1`). Times are ms from navigation start.",
        "",
        *load_table(r, titles),
        "",
        *targets(r),
        *(f"- {m}" for m in missing),
        "",
        "Bytes per page, first cold visit (what the server wrote, headers included; "
        "uncompressed: the same with each compressed body counted at its original size):",
        "",
        *bytes_table(r, titles),
        "",
        f"Interactions, starting {SETTLE_MS / 1000:g} s after Python is ready, each change once "
        "the previous one is painted (`AE.bench.timings`: the change event to the re-rendered "
        "view, Python time inside the worker, rendering time):",
        "",
        *interaction_table(r),
    ]
    return "\n".join(lines)


def comparison(before: dict, after: dict) -> list[str]:
    rows = [
        "| Measurement | Before | After |",
        "|---|---:|---:|",
    ]
    for mode in ("cold", "warm"):
        for slug in after[mode]:
            b, a = before[mode].get(slug), after[mode][slug]
            for key, name in (("ready", "Python ready"), ("step", "stepper answers")):
                if a[key] is None:
                    continue
                bb = b[key] if b else None
                was = (
                    "not built yet"
                    if bb is None
                    else f"{ms(bb)} ms ({ratio(bb, before[mode][BASELINE]['ready'])})"
                )
                rows.append(
                    f"| {name}, {slug}, {mode} | {was} | {ms(a[key])} ms "
                    f"({ratio(a[key], after[mode][BASELINE]['ready'])}) |"
                )
    for slug, a in after["bytes"].items():
        b = before["bytes"].get(slug)
        was = "not built yet" if not b else f"{b['sent'] / 1e3:,.0f} kB"
        rows.append(f"| bytes transferred, {slug}, cold | {was} | {a['sent'] / 1e3:,.0f} kB |")
    for label, a in after["interactions"].items():
        b = before["interactions"].get(label, {})
        if "total" not in a:
            continue
        bt = b.get("total", {}).get("p95")
        was = "not built yet" if bt is None else f"{ms(bt)} ms"
        rows.append(
            f"| {label} recompute p95 ({a['widget']}.{a['param']}) | {was} "
            f"| {ms(a['total']['p95'])} ms |"
        )
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


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cold", type=int, default=5, help="cold runs per page")
    ap.add_argument("--warm", type=int, default=5, help="warm runs per page")
    ap.add_argument("--changes", type=int, default=60, help="control changes per page (≥ 50)")
    ap.add_argument("--write", action="store_true", help="write bench/RESULTS.md")
    ap.add_argument("--before", action="store_true", help="store this run as the 'before'")
    ap.add_argument("--site", type=Path, help="measure this built site instead of building one")
    a = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="ae-bench-") as tmp:
        site = a.site or Path(tmp) / "site"
        if a.site is None:
            Builder(site).build()
        if not (site / BASELINE).exists():
            add_baseline(site)
        present = [p for p in PAGES if (site / p[1] / "index.html").is_file()]
        traffic = Traffic()
        base, httpd = serve.in_background(site, counting_handler(traffic, site))
        try:
            with sync_playwright() as p:
                browser = chromium.launch(p)
                bench = Bench(browser, base, traffic, present)
                r = bench.loads(a.cold, a.warm)
                r["interactions"] = bench.interactions(a.changes)
                browser.close()
        finally:
            httpd.shutdown()
    r["date"] = datetime.date.today().isoformat()
    r["machine"] = machine()
    print(report(r, a.cold, a.warm))
    if a.write:
        write(r, a.cold, a.warm, a.before)
        print(f"wrote {RESULTS}", file=sys.stderr)


if __name__ == "__main__":
    main()
