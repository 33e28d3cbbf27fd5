"""A cold page's weight: every page opened once in a fresh browser context, beside the floor
(Pyodide restored from a bare snapshot, floor.py) and the bare boot, and everything the browser
downloads to show the page and let the reader use it counted: until Python is ready, every
chart drawn and the network idle (the next page's read-ahead included). The target: a page
within ABOVE_FLOOR of the floor's bytes."""

from __future__ import annotations

import sys

from .harness import BASELINE, FLOOR, LOAD_TIMEOUT_MS, REFERENCES, Session, kb, short, verdict
from .traffic import summarize

ABOVE_FLOOR = 1_500_000  # bytes a page may add to the floor's (1.5 MB, MB = 10^6 bytes)

# Python ready (or failed), and every chart drawn by Plotly (its SVG in the chart's element).
LOADED_JS = """() => {
  const python = document.documentElement.getAttribute("data-python");
  if (python !== "ready") return python === "failed";
  return Array.from(document.querySelectorAll('[data-role="chart"]'))
    .filter((c) => c.checkVisibility())
    .every((c) => c.querySelector(".main-svg"));
}"""


class Weight(Session):
    def weights(self) -> dict:
        """{slug: the bytes of its cold visit (traffic.summarize), plus its parts}."""
        out = {}
        for slug in [*REFERENCES, *(p.slug for p in self.pages)]:
            ctx = self.context(first=False)
            page = ctx.new_page()
            self.traffic.take()
            got: dict = {}
            try:
                page.goto(self.url(slug))
                page.wait_for_function(LOADED_JS, timeout=LOAD_TIMEOUT_MS)
                page.wait_for_load_state("networkidle")
                got["python"] = page.evaluate("document.documentElement.dataset.python")
                got["charts"] = page.evaluate(
                    "document.querySelectorAll('[data-role=chart] .main-svg').length"
                )
            except Exception as e:  # the row says so, the run goes on
                got["error"] = short(e)
            finally:
                ctx.close()
            entries = self.traffic.take()
            got |= summarize(entries)
            got["snapshot"] = sum(e["bytes"] for e in entries if "snapshot" in e["path"])
            got["plotly"] = sum(e["bytes"] for e in entries if "plotly" in e["path"])
            out[slug] = got
            print(f"weighed {slug}: {kb(got['sent'])} kB", file=sys.stderr)
        return out


def weight_lines(w: dict, titles: dict[str, str]) -> list[str]:
    """The table of every page's cold bytes against the floor's, and the count that meets it."""
    floor = w[FLOOR]["sent"]
    rows = [
        "| Page | Charts drawn | Python | Cold bytes (kB) | Snapshot (kB) | Plotly (kB) "
        f"| Above the floor (kB) | ≤ {ABOVE_FLOOR / 1e3:,.0f} kB above |",
        "|---|---:|---|---:|---:|---:|---:|---|",
    ]
    ok = []
    for slug, g in w.items():
        above = g["sent"] - floor
        mark = "" if slug in REFERENCES else verdict(above <= ABOVE_FLOOR and "error" not in g)
        if slug not in REFERENCES:
            ok.append(above <= ABOVE_FLOOR and "error" not in g)
        rows.append(
            f"| {titles.get(slug, slug)} | {g.get('charts', '–')} | {g.get('python', '–')} "
            f"| {kb(g['sent'])} | {kb(g['snapshot'])} | {kb(g['plotly'])} "
            f"| {kb(above)} | {mark}{' ' + g['error'] if 'error' in g else ''} |"
        )
    head = (
        f"Pages within {ABOVE_FLOOR / 1e6:g} MB of the floor's {kb(floor)} kB: "
        f"{sum(ok)}/{len(ok)} {verdict(bool(ok) and all(ok))} (the bare boot: "
        f"{kb(w[BASELINE]['sent'])} kB)."
    )
    return [head, "", *rows]
