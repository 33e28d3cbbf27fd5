"""Build the explainer into site/, one module per job, in the order the build runs them:

- `python_assets`: the worker's Python files (the core's zip, the compiled standard library, the
  memory snapshot, made by Node tools on the shipped Pyodide), the manifest that names them, and
  the worker stamped with it;
- `vendor`: Pyodide and Plotly.js copied from node_modules, with their checksums;
- `page`: content/*.md read as `Page` records, every front-matter key checked, a stage numbered
  by its place; `stageref`: `{{ stage("slug") }}`, a stage's number with its link;
- `prose`: Markdown with math and widget placeholders, to HTML;
- `lessons`: each page as a lesson: its reading and study time (the rule is in its docstring) and
  the glossary's links at each term's first use;
- `pages`: the stage pages, the embeds, the glossary and the home page (`Builder`, which runs
  every job);
- `compress`: the gzip twins;
- `serve`: the development server; `browser`: how tests and benchmarks launch Chromium.

The paths and the content security policy below are shared by several of them.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))  # the core, without installing it

PACKAGE = ROOT / "src" / "allreduce_explainer"
CONTENT = ROOT / "content"
TEMPLATES = ROOT / "templates"  # Jinja2 only
CLIENT = ROOT / "client"  # the browser's code, copied to site/static/
NODE = ROOT / "node_modules"
SITE = ROOT / "site"
# Node tools' outputs and big gzip files, cached by content between builds
TOOL_CACHE = NODE / ".cache" / "allreduce-explainer"
# Scripts only from the site itself, plus WebAssembly compilation for Pyodide. Inline styles are
# allowed because Plotly.js writes its own <style> element and style attributes on its SVG. The
# pages carry it in a <meta> tag; the server sends it as a header too, which the worker obeys.
CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
    "worker-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'"
)
