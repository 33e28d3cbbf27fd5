"""The two reference pages measured beside the site: the baseline (`_baseline/`, a bare Pyodide
booted in a module worker, running 1 + 1) and the floor (`_floor/`, Pyodide restored as the site
restores it, from a snapshot that imported nothing of ours); what the site adds to a cold start
is its time and bytes above the floor's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sitebuild import NODE, compress, python_assets
from sitebuild.vendor import PYODIDE_FILES

from .harness import BASELINE, FLOOR, kb, ms, ratio

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
