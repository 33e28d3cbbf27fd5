"""Build the explainer into site/ (and serve it on 127.0.0.1 with --serve).

Pages come from content/*.md (front matter and prose), templates/ (Jinja2) and client/ (the
browser's code). Every widget's default state is computed here by the same Python function that
the browser's worker runs later, and inlined, so a page reads, steps and draws before Python has
started in the browser. The jobs are in the package sitebuild/, one module each.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from allreduce_explainer.errors import ParamError
from allreduce_explainer.exercises.export import site_address
from sitebuild import SITE
from sitebuild.embeds import NO_SITE_URL, SITE_URL_ENV
from sitebuild.pages import Builder
from sitebuild.serve import serve


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--serve", action="store_true", help="serve the site after building it")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--out", type=Path, default=SITE, help="output folder (default site/)")
    ap.add_argument(
        "--url",
        default=os.environ.get(SITE_URL_ENV, ""),
        help=f"the address the site is hosted at (default ${SITE_URL_ENV}): the question banks, "
        "oEmbed files and snippets link to it",
    )
    ap.add_argument(
        "--scorm-solutions",
        action="store_true",
        help="keep the worked solutions in the SCORM packages' pages (hidden by default)",
    )
    a = ap.parse_args(argv)
    try:
        url = site_address(a.url, "url")
    except ParamError as e:
        ap.error(f"argument --url: {e.message}")
    if not url:
        print(NO_SITE_URL, file=sys.stderr)
    Builder(a.out, url, scorm_solutions=a.scorm_solutions).build()
    print(f"Built {a.out}")
    if a.serve:
        serve(a.out, a.port)


if __name__ == "__main__":
    main()
