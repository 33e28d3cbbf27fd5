"""Build the explainer into site/ (and serve it on 127.0.0.1 with --serve).

Pages come from content/*.md (front matter and prose), templates/ (Jinja2) and client/ (the
browser's code). Every widget's default state is computed here by the same Python function that
the browser's worker runs later, and inlined, so a page reads, steps and draws before Python has
started in the browser. The jobs are in the package sitebuild/, one module each.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sitebuild import SITE
from sitebuild.pages import Builder
from sitebuild.serve import serve


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--serve", action="store_true", help="serve the site after building it")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--out", type=Path, default=SITE, help="output folder (default site/)")
    ap.add_argument(
        "--url", default="", help="the address the site is hosted at, for the question banks' links"
    )
    a = ap.parse_args(argv)
    Builder(a.out, a.url).build()
    print(f"Built {a.out}")
    if a.serve:
        serve(a.out, a.port)


if __name__ == "__main__":
    main()
