"""Pyodide and Plotly.js, copied from the pinned npm packages, with a SHA256SUMS to check them."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from . import NODE

# Pyodide's files: their names in the npm package, and in the site. Its two ES modules ship as .js:
# a course platform serves a package's files by its own table of types, where .mjs is unknown
# (sitebuild/moodle_types.py), and a browser runs a module script only under a JavaScript type.
PYODIDE_FILES = {
    "pyodide.mjs": "pyodide.esm.js",
    "pyodide.asm.mjs": "pyodide.asm.js",
    "pyodide.asm.wasm": "pyodide.asm.wasm",
    "python_stdlib.zip": "python_stdlib.zip",
    "pyodide-lock.json": "pyodide-lock.json",
}
PLOTLY = "plotly.js-basic-dist-min/plotly-basic.min.js"


def copy_vendor(site: Path) -> None:
    """site/vendor/: Pyodide's files, Plotly.js and their checksums."""
    missing = [f for f in PYODIDE_FILES if not (NODE / "pyodide" / f).exists()]
    if missing or not (NODE / PLOTLY).exists():
        raise SystemExit("node_modules is missing pyodide or plotly.js: run `npm ci` first")
    for f, name in PYODIDE_FILES.items():
        dest = site / "vendor" / "pyodide" / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(NODE / "pyodide" / f, dest)
    shutil.copyfile(NODE / PLOTLY, site / "vendor" / "plotly-basic.min.js")
    write_sums(site / "vendor")


def write_sums(folder: Path) -> None:
    """SHA256SUMS of every vendored file, in `sha256sum -c` format, to check what is shipped."""
    lines = [
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(folder).as_posix()}\n"
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "SHA256SUMS"
    ]
    (folder / "SHA256SUMS").write_text("".join(lines))
