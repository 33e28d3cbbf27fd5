"""Adding a stage, as docs/ARCHITECTURE.md's "Adding a stage" says, done for real: a throwaway
stage with one chart, its page and its widget module written into a temporary copy of the repo
(and nothing else the build reads), then the copy's pages built. The new page must be the last
stage, linked from the one before it, with its chart drawn by the generic partial from its
record, a partial its record names drawn above the chart, and its URL parameters on the course
page. A per-stage list typed by hand anywhere the build reads would fail this build, or leave
the stage out of what is checked here."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from bs4 import BeautifulSoup

from helpers import stages

ROOT = Path(__file__).resolve().parents[2]
COPIED = (  # what the build reads
    "src",
    "sitebuild",
    "templates",
    "content",
    "client",
    "buildtools",
    "LICENSE",
    "CITATION.cff",
    "README.md",  # sitebuild/doors.py holds the README and the labs to the names of sources
    "labs",
)
SLUG = "throwaway-stage"

CONTENT = """\
---
title: "A throwaway stage"
slug: throwaway-stage
order: {order}
summary: A stage written by a test to check what adding a stage takes.
objectives:
  - You will be able to count the GPUs of a throwaway chart.
  - You will be able to read its headline.
practice:
  - [q1]
  - [q1]
builds_on: [why-allreduce]
takeaways:
  - Adding a stage takes the files the architecture document lists.
questions:
  - q: What does this stage check?
    a: That a new stage needs only the files the architecture document lists.
review_minutes: 2
---

A stage that only a test reads. It places one chart:

{{{{ widget("throwaway") }}}}
"""

WIDGET = '''\
"""A throwaway stage's one chart: GPUs against themselves."""

from __future__ import annotations

from ..params import Param, spec, validated
from . import Widget, views

SPEC = spec(Param("gpus", 8, "int", "GPUs", 2, 64))


def throwaway(params=None) -> dict:
    """The count drawn as a line, its headline the count."""
    p = validated(params, SPEC)
    xs = list(range(2, p["gpus"] + 1))
    main = views.part(
        figure={"data": [{"x": xs, "y": xs, "type": "scatter"}], "layout": {}},
        summary=f"{p['gpus']} GPUs.",
        table={"columns": ["GPUs"], "rows": [[x] for x in xs]},
    )
    return views.chart(params=p, main=main, readouts={"gpus": str(p["gpus"])})


RECORDS = (
    Widget(
        "throwaway",
        throwaway,
        SPEC,
        views.CHART,
        label="A throwaway chart",
        headline=(("gpus", "GPUs counted"),),
        layout=(("chart", "The throwaway data as a table"),),
        extras=("throwaway_extra",),
    ),
)
'''

EXTRA = '<p class="hint" data-role="throwaway-extra">Predict first: {{ state.params.gpus }}?</p>\n'


def scaffold(repo: Path) -> None:
    """The copy, and the stage in it: its content file and its widget module; its chart has no
    partial of its own, only a piece its record names (what a prediction form would be)."""
    for name in COPIED:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(src, repo / name)
    # installed, not written: the bundler (esbuild) the build runs on client/js
    (repo / "node_modules").symlink_to(ROOT / "node_modules")
    order = len(stages()) + 1
    (repo / "content" / f"{order:02d}-{SLUG}.md").write_text(CONTENT.format(order=order))
    (repo / "src" / "allreduce_explainer" / "widgets" / "throwaway.py").write_text(WIDGET)
    (repo / "templates" / "widgets" / "throwaway_extra.html").write_text(EXTRA)


def test_a_new_stage_takes_its_page_and_its_widget_module_and_builds(tmp_path):
    repo, site = tmp_path / "repo", tmp_path / "site"
    scaffold(repo)
    build = textwrap.dedent(f"""
        from pathlib import Path
        from sitebuild.pages import Builder
        Builder(Path({str(site)!r}), placeholders=False).build_pages()
    """)
    env = {"PYTHONPATH": f"{repo / 'src'}:{repo}", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", build], cwd=repo, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]

    page = BeautifulSoup((site / SLUG / "index.html").read_text(), "html.parser")
    n = len(stages()) + 1
    assert f"Stage {n}" in page.get_text()
    chart = page.select_one("figure[data-widget=throwaway]")
    assert chart["aria-label"] == "A throwaway chart" and chart["data-kind"] == "chart"
    assert chart.select_one("[data-headline][data-readout=gpus]").get_text() == "8"
    extra = chart.select_one("[data-role=throwaway-extra]")
    assert extra is not None and "8?" in extra.get_text()
    # the record's extras come above its layout: the chart and its table's caption
    assert extra.find_next("div", attrs={"data-role": "chart"}) is not None
    assert chart.select_one("details.chart-data summary").get_text() == (
        "The throwaway data as a table"
    )
    before = BeautifulSoup((site / stages()[-1].slug / "index.html").read_text(), "html.parser")
    assert before.select_one("a[rel=next]")["href"].endswith(f"{SLUG}/index.html")
    course = (site / "use-in-your-course" / "index.html").read_text()
    assert "throwaway" in course and "A throwaway stage" in course
