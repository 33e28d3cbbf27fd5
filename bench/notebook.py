"""The widgets in a real JupyterLab, in Chromium, in one run: for every chart widget at its
heaviest input (HEAVY in bench/sitespeed/interaction.py, the site's own scenarios), a control
change answered by the kernel and redrawn, p50 and p95; for every stepper at its most GPUs,
longest vectors and most servers, a step; and the wheel's size beside the site's own bytes.

Times are widget.js's own record (AE.bench.timings), as bench/site.py reads them on the site: a
change from the reader's event to the new state rendered, a step's render. A change's time is
split three ways: the kernel's share (what Python took inside the kernel, the answer's pythonMs),
the drawing (the views' render of the answer in the page), and what is in between: the request
and the answer on their way, browser to JupyterLab's server to the kernel's shell and back on its
IOPub, each a process of its own waiting for a core.

    python bench/notebook.py [--changes 20] [--steps 30] [--site DIR] [--write]

--write: bench/NOTEBOOK.md; --site: a site build.py built (else one is built, a few minutes).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / p) for p in ("src", ".", "bench", "tests", "tests/notebook")]

import nbformat  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402
from sitespeed import interaction  # noqa: E402
from sitespeed.harness import discover, percentile  # noqa: E402
from sitespeed.traffic import Traffic  # noqa: E402

from allreduce_explainer.widgets import REGISTRY, views  # noqa: E402
from nbservers import jupyterlab  # noqa: E402
from sitebuild import browser as chromium  # noqa: E402
from sitebuild import serve  # noqa: E402
from sitebuild.pages import Builder  # noqa: E402

WAIT_MS = 180_000

CHANGE_JS = """async ({ prefix, sel, values, n }) => {
  const w = [...document.querySelectorAll(".ae-notebook-host")]
    .map((h) => h.shadowRoot.querySelector('[data-widget^="' + prefix + '"]')).find(Boolean);
  const c = w.querySelector(sel);
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const out = [];
  for (let i = 0; i < n; i++) {
    const settled = new Promise((r) => w.addEventListener("ae:settled", r, { once: true }));
    const before = AE.bench.timings[AE.bench.timings.length - 1];
    c.value = String(values[i % values.length]);
    c.dispatchEvent(new Event("change", { bubbles: true }));
    await settled;
    await frame();
    const last = AE.bench.timings[AE.bench.timings.length - 1];
    const err = w.querySelector("[data-error-for]:not(:empty)");
    out.push(last !== before ? last : { error: err ? err.textContent : "no answer" });
  }
  return out;
}"""

STEP_JS = """async ({ prefix, n }) => {
  const w = [...document.querySelectorAll(".ae-notebook-host")]
    .map((h) => h.shadowRoot.querySelector('[data-widget^="' + prefix + '"]')).find(Boolean);
  const next = w.querySelector('[data-action="next"]');
  const prev = w.querySelector('[data-action="prev"]');
  const out = [];
  let forward = true;
  for (let i = 0; i < n; i++) {
    if (forward && next.disabled) forward = false;
    if (!forward && prev.disabled) forward = true;
    (forward ? next : prev).click();
    out.push(AE.bench.timings[AE.bench.timings.length - 1].render);
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  }
  return out;
}"""


def heaviest_stepper(name: str) -> dict:
    """A stepper's heaviest state, as bench/site.py's STEP_JS picks it: the most GPUs, the
    longest vectors and the most servers its controls allow."""
    spec = REGISTRY[name].spec
    return {k: int(spec[k].hi) for k in ("gpus", "length", "servers") if k in spec}


def cells(log: Path) -> tuple[list[str], list[dict], list[str]]:
    """The notebook's cells: one per heavy chart scenario, one per stepper."""
    code = ["from allreduce_explainer.notebook import show"]
    scenarios = [sc for group in interaction.HEAVY.values() for sc in group]
    for sc in scenarios:
        preset = {k: v for k, v in sc.preset if v is not interaction.BIG_LOG}
        big = [k for k, v in sc.preset if v is interaction.BIG_LOG]
        args = "".join(f", {k}={v!r}" for k, v in preset.items())
        args += "".join(f", {k}=open({str(log)!r}).read()" for k in big)
        code.append(f"show({sc.widget!r}{args})")
    steppers = [n for n, w in REGISTRY.items() if w.view == views.STEPPER]
    for name in steppers:
        args = "".join(f", {k}={v}" for k, v in heaviest_stepper(name).items())
        code.append(f"show({name!r}{args})")
    return code, scenarios, steppers


# JupyterLab as installed, the package's optional server extension off, and the same JupyterLab
# with it turned on (notebook/server.py sets TCP_NODELAY on the kernel's websocket; README):
# measured one after the other in one run, as is the site itself in the same browser
EXTENSION = "--ServerApp.jpserver_extensions=allreduce_explainer.notebook.server="
OFF = "JupyterLab with the package's server extension off (as installed)"
ON = "JupyterLab with the package's server extension turned on"
SERVERS = {OFF: (EXTENSION + "False",), ON: (EXTENSION + "True",)}


def measure(changes: int, steps: int, options: tuple[str, ...]) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="ae-notebook-bench-"))
    log = folder / "big.log"
    log.write_text(interaction.big_log())
    code, scenarios, steppers = cells(log)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in code])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, folder / "bench.ipynb")
    out = {"changes": [], "steps": []}
    with jupyterlab(folder, options=options) as url, sync_playwright() as p:
        browser = chromium.launch(p, test_entry=True)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.set_default_timeout(WAIT_MS)
        page.goto(url.format(path="bench.ipynb"))
        page.wait_for_function(
            "window.jupyterapp && document.body.textContent.includes('Python 3 (ipykernel) | Idle')"
        )
        page.evaluate("jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_function(
            "[...document.querySelectorAll('.ae-notebook-host')]"
            f".filter(h => h.shadowRoot.querySelector('[data-widget]')).length === {len(code) - 1}"
        )
        for sc in scenarios:
            sel = f'[data-param="{sc.param}"]'
            args = {"prefix": sc.widget + "-", "sel": sel, "values": list(sc.values), "n": changes}
            got = page.evaluate(CHANGE_JS, args)
            ok = [t for t in got if "total" in t]
            errors = sorted({t["error"] for t in got if "error" in t})
            totals = [t["total"] for t in ok]
            out["changes"].append(
                {
                    "widget": sc.widget,
                    "label": sc.label,
                    "n": len(ok),
                    "p50": percentile(totals, 0.5),
                    "p95": percentile(totals, 0.95),
                    "kernel_p50": percentile([t["python"] for t in ok], 0.5),
                    "render_p50": percentile([t["render"] for t in ok], 0.5),
                    "between_p50": percentile(
                        [t["total"] - t["render"] - t["python"] for t in ok], 0.5
                    ),
                    "errors": errors,
                }
            )
        for name in steppers:
            got = page.evaluate(STEP_JS, {"prefix": name + "-", "n": steps})
            out["steps"].append(
                {
                    "widget": name,
                    "state": heaviest_stepper(name),
                    "p50": percentile(got, 0.5),
                    "p95": percentile(got, 0.95),
                }
            )
        browser.close()
    return out


def measure_site(site: Path, changes: int) -> dict:
    """The same scenarios on the site's own pages, in the same browser, its worker answering:
    bench/site.py's scenario code (sitespeed/interaction.py), so the two rows compare."""
    out = {"changes": [], "steps": []}
    base, httpd = serve.in_background(site)
    try:
        with sync_playwright() as p:
            browser = chromium.launch(p, test_entry=True)
            bench = interaction.Interaction(browser, base, Traffic(), discover(site), "")
            ctx = bench.context(first=False)
            for slug, group in interaction.HEAVY.items():
                page = ctx.new_page()
                if not bench.open(page, slug):
                    raise SystemExit(f"{slug}: Python failed to start on the site")
                for sc in group:
                    r = bench.scenario(page, sc, changes)
                    out["changes"].append(site_row(sc, r))
                page.close()
            browser.close()
    finally:
        httpd.shutdown()
    return out


def site_row(sc: interaction.Scenario, r: dict) -> dict:
    """A site scenario's spread in the notebook table's columns: there the worker is the kernel,
    and nothing is in between but the page's message to its worker."""
    if "error" in r:
        raise SystemExit(f"{sc.widget}, {sc.label}: {r['error']}")
    total, python, render = r["total"], r["python"], r["render"]
    return {
        "widget": sc.widget,
        "label": sc.label,
        "n": r["changes"] - r["failed"],
        "p50": total["p50"],
        "p95": total["p95"],
        "kernel_p50": python["p50"],
        "render_p50": render["p50"],
        "between_p50": None,
        "errors": [],
    }


def sizes(site: Path) -> dict:
    """The wheel, built as `make dist` builds it, beside the built site's bytes (every file,
    and what a reader's browser fetches: the site's compressed twins are not counted twice)."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-I", "-m", "build", "--no-isolation", "--wheel", "--outdir", tmp,
             "."],
            cwd=ROOT, check=True, capture_output=True,
        )  # fmt: skip
        wheel = next(Path(tmp).glob("*.whl"))
        with zipfile.ZipFile(wheel) as z:
            installed = sum(i.file_size for i in z.infolist())
        wheel_bytes = wheel.stat().st_size
        files = [f for f in site.rglob("*") if f.is_file()]
        plain = sum(f.stat().st_size for f in files if f.suffix not in (".br", ".gz"))
    return {"wheel": wheel_bytes, "wheel_installed": installed, "site": plain}


def table(r: dict) -> list[str]:
    ms = lambda v: "–" if v is None else f"{v:.1f}"  # noqa: E731
    rows = [
        "| widget | input | changes | p50 ms | p95 ms | kernel p50 ms | drawing p50 ms "
        "| in between p50 ms | target |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in r["changes"]:
        verdict = "met" if c["p95"] is not None and c["p95"] <= 100 else "missed"
        note = f" ({'; '.join(c['errors'])})" if c["errors"] else ""
        rows.append(
            f"| {c['widget']} | {c['label']} | {c['n']} | {ms(c['p50'])} | {ms(c['p95'])} | "
            f"{ms(c['kernel_p50'])} | {ms(c['render_p50'])} | {ms(c['between_p50'])} | "
            f"100 ms p95: {verdict}{note} |"
        )
    if not r["steps"]:
        return rows
    rows += [
        "",
        "| stepper | state | step p50 ms | step p95 ms | target |",
        "|---|---|---|---|---|",
    ]
    for s in r["steps"]:
        verdict = "met" if s["p95"] is not None and s["p95"] <= 50 else "missed"
        state = json.dumps(s["state"]).replace("|", "/")
        rows.append(
            f"| {s['widget']} | {state} | {ms(s['p50'])} | {ms(s['p95'])} | 50 ms p95: {verdict} |"
        )
    return rows


def side_by_side(off: dict, on: dict) -> list[str]:
    """A change's p50 and p95 with the extension off (the default) beside on, widget by widget:
    the same scenarios, in the order both ran them."""
    ms = lambda v: "–" if v is None else f"{v:.1f}"  # noqa: E731
    rows = [
        "| widget | input | p50 ms off | p50 ms on | p95 ms off | p95 ms on |",
        "|---|---|---|---|---|---|",
    ]
    for a, b in zip(off["changes"], on["changes"], strict=True):
        rows.append(
            f"| {a['widget']} | {a['label']} | {ms(a['p50'])} | {ms(b['p50'])} | "
            f"{ms(a['p95'])} | {ms(b['p95'])} |"
        )
    return rows


def size_table(z: dict) -> list[str]:
    return [
        "| bytes | MB |",
        "|---|---|",
        f"| the wheel | {z['wheel'] / 1e6:.2f} |",
        f"| the wheel, installed | {z['wheel_installed'] / 1e6:.2f} |",
        f"| the built site (every file, no compressed twins) | {z['site'] / 1e6:.2f} |",
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--changes", type=int, default=20)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--write", action="store_true", help="write bench/NOTEBOOK.md")
    ap.add_argument("--site", type=Path, help="a site built by build.py (else one is built)")
    args = ap.parse_args()
    if args.site is not None and not (args.site / "index.html").is_file():
        ap.error(f"--site: {args.site} has no index.html (build it with build.py)")
    load = os.getloadavg()[0]
    got = {label: measure(args.changes, args.steps, options) for label, options in SERVERS.items()}
    rows = ["## A change, the extension off (as installed) and on", ""]
    rows += [*side_by_side(got[OFF], got[ON]), ""]
    for label, r in got.items():
        rows += [f"## {label}", "", *table(r), ""]
    with tempfile.TemporaryDirectory(prefix="ae-notebook-site-") as tmp:
        site = args.site or Path(tmp) / "site"
        if args.site is None:
            Builder(site).build()
        rows += ["## The site, its worker answering", "",
                 *table(measure_site(site, args.changes)), ""]  # fmt: skip
        rows += ["## The wheel beside the site", "", *size_table(sizes(site))]
    print("\n".join(rows))
    if args.write:
        when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        head = [
            "# The widgets in JupyterLab",
            "",
            f"`python bench/notebook.py {' '.join(sys.argv[1:])}`, {when}, on {platform.machine()} "
            f"({platform.processor() or 'cpu'}), Python {platform.python_version()}, "
            f"headless Chromium, one run; load average {load:.1f} at the start and "
            f"{os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores (the machine is "
            "shared: the kernel's own share is the column that depends least on it). A change's "
            "time is the kernel's share, the drawing, and what is in between: the request and "
            "the answer on their way through JupyterLab's server.",
            "",
            "The site's own change times for the same widgets and inputs are measured in the "
            "same run, in the same browser, with bench/site.py's scenario code: there the "
            "page's worker answers, and the kernel's column is its Python.",
            "",
        ]
        (ROOT / "bench" / "NOTEBOOK.md").write_text("\n".join(head + rows) + "\n")


if __name__ == "__main__":
    main()
