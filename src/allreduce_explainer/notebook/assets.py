"""Where the browser's files are: in the installed wheel, or in the checkout they come from.

The wheel carries them under `allreduce_explainer/static/` (hatch_build.py stages them there from
client/, templates/widgets/ and node_modules/); an editable install or a checkout on PYTHONPATH
reads them where they live in git, so a widget drawn in a notebook from a checkout uses the very
files the site's build copies.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
STATIC = PACKAGE / "static"
CHECKOUT = PACKAGE.parent.parent  # src/allreduce_explainer -> the repository's root
# name -> (path inside static/, path inside the checkout): hatch_build.STATIC's table, read back
PLACES = {
    "notebook.js": ("notebook.js", "client/js/notebook.js"),
    "css": ("css/site.css", "client/css/site.css"),
    "templates": ("templates", "templates"),
    "plotly": (
        "plotly/plotly-basic.min.js",
        "node_modules/plotly.js-basic-dist-min/plotly-basic.min.js",
    ),
}


def path(name: str) -> Path:
    """The file or folder `name` (a key of PLACES), from the wheel if it has it, else the checkout;
    a clear error naming both places if neither holds it."""
    in_wheel, in_checkout = PLACES[name]
    for candidate in (STATIC / in_wheel, CHECKOUT / in_checkout):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(
        f"the notebook widgets need {in_wheel} from the wheel's static/ (or {in_checkout} in a "
        "checkout, after `npm ci`): install the wheel `make dist` builds"
    )


def bundle(entry: str, form: str) -> bytes:
    """client/js/`entry` and every module it imports, as one minified script, by esbuild (npm,
    pinned in package.json) from the checkout: `form` "iife" for a page's classic script (it runs
    from file:// and under a course platform's .js type), "esm" for the notebook's module."""
    esbuild = CHECKOUT / "node_modules" / ".bin" / "esbuild"
    if not esbuild.exists():
        raise FileNotFoundError(f"{esbuild} missing: run `npm ci` (or `make setup`) first")
    done = subprocess.run(
        [
            str(esbuild),
            str(CHECKOUT / "client" / "js" / entry),
            "--bundle",
            f"--format={form}",
            "--minify",
            "--charset=utf8",
            "--log-level=warning",
        ],
        capture_output=True,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"esbuild could not bundle client/js/{entry}:\n{done.stderr.decode()}")
    return done.stdout
