"""The browser's files in the wheel, staged from their one home when a wheel is built.

A notebook widget draws with the site's views (esbuild's bundle of client/js/notebook.js),
styles and widget partials and with Plotly.js,
and must find them in the installed package (no network at run time). They live in git only
under client/ and templates/widgets/, and Plotly.js only in node_modules (the file the site's
build vendors, sitebuild/vendor.py), so this hook maps them into `allreduce_explainer/static/`
as the wheel is written, with hatchling's forced inclusion. An sdist carries the Plotly files at
their node_modules path, so a wheel built from the sdist finds them where this table says.
Editable installs get none of it: their checkout has every file where it lives.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PLOTLY = "node_modules/plotly.js-basic-dist-min"
NOTEBOOK = "allreduce_explainer/static/notebook.js"  # esbuild's bundle of client/js/notebook.js
BUNDLED = "client/notebook.bundle.js"  # the same, in the sdist
STATIC = {  # path in the checkout -> path in the wheel
    "client/css": "allreduce_explainer/static/css",
    "templates/widgets": "allreduce_explainer/static/templates/widgets",
    f"{PLOTLY}/plotly-basic.min.js": "allreduce_explainer/static/plotly/plotly-basic.min.js",
    f"{PLOTLY}/LICENSE": "allreduce_explainer/static/plotly/LICENSE",
}


class StaticAssets(BuildHookInterface):
    """Adds STATIC to a wheel, and the Plotly files (ignored by git) to an sdist."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "editable":
            return
        wanted = STATIC if self.target_name == "wheel" else vendored()
        missing = [source for source in wanted if not (Path(self.root) / source).exists()]
        if missing:
            raise SystemExit(f"{', '.join(missing)} missing: run `npm ci` (or `make setup`) first")
        build_data["force_include"].update(wanted)
        # the notebook's module: the wheel's, and the sdist's too (a wheel built from the sdist
        # has no esbuild), at the path the wheel reads it from
        inside = NOTEBOOK if self.target_name == "wheel" else BUNDLED
        build_data["force_include"][notebook_module(Path(self.root))] = inside


def notebook_module(root: Path) -> str:
    """The notebook's ES module: client/js/notebook.js and what it imports, bundled by esbuild
    (the wheel carries it, not client/js), or the sdist's copy when there is no esbuild."""
    esbuild = root / "node_modules" / ".bin" / "esbuild"
    if not esbuild.exists() and (root / BUNDLED).exists():
        return str(root / BUNDLED)
    if not esbuild.exists():
        raise SystemExit(f"{esbuild} missing: run `npm ci` (or `make setup`) first")
    dest = Path(tempfile.mkdtemp()) / "notebook.js"
    entry = root / "client" / "js" / "notebook.js"
    flags = ["--bundle", "--format=esm", "--minify", "--charset=utf8", "--log-level=warning"]
    subprocess.run([str(esbuild), str(entry), *flags, f"--outfile={dest}"], check=True)
    return str(dest)


def vendored() -> dict[str, str]:
    """The files from node_modules, at the same path in the sdist as in the checkout."""
    return {source: source for source in STATIC if source.startswith(PLOTLY)}
