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

This file runs the measures and writes the report; the measures are in bench/sitespeed/, by what
they measure: startup.py (cold, warm, the reader's path), interaction.py (changes, steps, heavy
inputs, levers), traffic.py (bytes), floor.py (the baseline and floor pages), over harness.py.

Usage, from the repo root: .venv/bin/python bench/site.py [--cold 5] [--warm 5] [--changes 60]
[--pages slug,slug] [--no-path] [--site PATH] [--write] [--before] [--bytes]
(`--write` replaces the "## Site speed" section of bench/RESULTS.md; `--before` stores this run
as the "before" column that later runs are compared with. `--bytes` measures only every page's
cold bytes against the floor's, sitespeed/weight.py, and `--write` then replaces the "## Page
bytes" section.)
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sitespeed.floor import add_baseline, add_floor, floor_lines  # noqa: E402
from sitespeed.harness import (  # noqa: E402
    BASELINE,
    CHART_P95_MS,
    FIRST_RATIO,
    FLOOR,
    NEXT_BYTES,
    NEXT_READY_RATIO,
    PAGE_BYTES,
    READ_MS,
    READY_RATIO,
    REFERENCES,
    SETTLE_MS,
    STEP_MS,
    discover,
    kb,
    machine,
    ms,
    ratio,
    titles_for,
    verdict,
    within,
    within_ms,
)
from sitespeed.interaction import (  # noqa: E402
    HEAVY,
    LEVER_TEXT,
    LOG_SOURCE,
    Interaction,
    big_log,
    interaction_table,
    lever_table,
    page_results,
    page_table,
)
from sitespeed.startup import Startup, load_table, path_table  # noqa: E402
from sitespeed.traffic import Traffic, bytes_table, counting_handler, requests_table  # noqa: E402
from sitespeed.weight import ABOVE_FLOOR, Weight, weight_lines  # noqa: E402

from sitebuild import browser as chromium  # noqa: E402
from sitebuild import serve  # noqa: E402
from sitebuild.pages import Builder  # noqa: E402

RESULTS = ROOT / "bench" / "RESULTS.md"


class Bench(Startup, Interaction, Weight):
    """Every measure, on one browser and the one served site."""


HEADING = "## Site speed"
BEFORE_TAG = re.compile(r"<!-- site-bench-before: (\{.*?\}) -->", re.S)


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
            f'A reader\'s path: {r["path"][0]["slug"]} opened in a fresh context, then "next" '
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
        "Per page, the targets at each page's heaviest inputs (its own control above and "
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


BYTES_HEADING = "## Page bytes"


def write_section(heading: str, body: list[str]) -> None:
    """Replace `heading`'s section of RESULTS (to the next "## "), or add it at the end."""
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    if heading in text:
        start = text.index(heading)
        nxt = text.find("\n## ", start + len(heading))
        text = text[:start].rstrip() + "\n" + ("" if nxt < 0 else text[nxt:])
    RESULTS.write_text(text.rstrip() + "\n\n" + "\n".join([heading, "", *body]) + "\n")


def bytes_report(r: dict, rev: str) -> list[str]:
    return [
        "Run with `.venv/bin/python bench/site.py --bytes --write`.",
        "",
        f"Measured {r['date']} on {r['machine']}, the site built at {rev}. Headless Chromium "
        "against `build.py`'s handler on 127.0.0.1; every page whose `<html>` has `data-python` "
        "opened once in a fresh browser context, beside the floor (Pyodide restored, the way the "
        "site's worker restores it, from a bare snapshot: one that imported nothing of ours, made "
        "by the build's own tool) and the bare boot (Pyodide as npm ships it, `1 + 1`). A "
        "page's bytes are everything the server wrote (headers included, Brotli where the "
        "browser asks for it) from navigation until Python is ready, every visible chart drawn "
        "by Plotly and the network idle (the next page's read-ahead included). The target: "
        f"each page within {ABOVE_FLOOR / 1e6:g} MB of the floor.",
        "",
        *weight_lines(r["weights"], titles_for(r)),
    ]


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
    ap.add_argument("--bytes", action="store_true", help="only every page's cold bytes")
    a = ap.parse_args(argv)
    if a.site is not None and not (a.site / "index.html").is_file():
        ap.error(f"--site: {a.site} has no index.html (build it with build.py)")
    from playwright.sync_api import sync_playwright  # only when a browser is launched

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
                browser = chromium.launch(p, test_entry=True)
                bench = Bench(browser, base, traffic, pages, every[0].slug)
                if a.bytes:
                    r = {"weights": bench.weights()}
                    browser.close()
                    return finish_bytes(r, every, a.write, a.site)
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


def finish_bytes(r: dict, every: list, write_it: bool, given: Path | None) -> None:
    r["labels"] = {p.slug: p.label for p in every}
    r["date"] = datetime.date.today().isoformat()
    r["machine"] = machine()
    rev = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    site = f"`{rev}`" if given is None else f"`{rev}`'s bench, the site given with `--site`"
    lines = bytes_report(r, site)
    print("\n".join(lines))
    if write_it:
        write_section(BYTES_HEADING, lines)
        print(f"wrote {RESULTS}", file=sys.stderr)


if __name__ == "__main__":
    main()
