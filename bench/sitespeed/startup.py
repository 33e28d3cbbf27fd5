"""Start-up: every page cold (a fresh context each) and warm (cached), first paint, Python ready
and the reader's first interaction taken and answered, in ms from navigation start; and a
reader's path, stage 1 opened and then "next" clicked through every stage, each page's arrival,
Python ready and first recompute timed from the click."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urlsplit

from .harness import (
    BASELINE,
    LOAD_TIMEOUT_MS,
    NEXT_BYTES,
    NEXT_READY_RATIO,
    READ_MS,
    REFERENCES,
    VISIT_JS,
    Session,
    kb,
    median,
    ms,
    ratio,
    short,
    verdict,
    within,
)
from .traffic import summarize

# Marks the page's widgets as the old page's, and arms the path watcher: the click is at arm.t.
ARM_JS = """(path) => {
  document.querySelectorAll("[data-widget]").forEach((w) => { w.__benchOld = true; });
  sessionStorage.setItem("ae-bench-path", JSON.stringify({ t: Date.now(), path: path }));
  window.__benchWatch(false);
}"""

PATH_DONE_JS = """() => window.__benchPath && (window.__benchPath.ready !== null
  || document.documentElement.getAttribute("data-python") === "failed")"""


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


class Startup(Session):
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
            page.goto(self.url(self.first))
            page.wait_for_function(
                "() => window.__bench.ready !== null"
                " || document.documentElement.getAttribute('data-python') === 'failed'",
                timeout=LOAD_TIMEOUT_MS,
            )
            got = page.evaluate(VISIT_JS)
            row = {"slug": self.first, "navigation": "opened", "ready_from_start": got["ready"]}
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
