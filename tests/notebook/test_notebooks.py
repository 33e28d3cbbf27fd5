"""Every lab under notebooks/ runs top to bottom in a real kernel (nbclient), and its cells show
what they say: a widget view, the widget's readouts, and the reader's code's answers, checked here
against formulas written out in the test.

Marked `notebook` (a kernel per notebook: some seconds each).
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from helpers import ROOT

pytestmark = pytest.mark.notebook

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@functools.cache
def _executed(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    env_path = os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))
    os.environ["PYTHONPATH"] = env_path  # the kernel imports this checkout's code
    client = NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": ROOT}}
    )
    client.execute()
    return nb


def _text(cell) -> str:
    out = []
    for o in cell.get("outputs", []):
        out.append(o.get("text", "") or o.get("data", {}).get("text/plain", ""))
    return "".join(out)


def test_one_lab_per_stage():
    stages = sorted(p.name for p in (ROOT / "content").glob("[0-9][0-9]-*.md"))
    assert [p.stem for p in NOTEBOOKS] == [s.removesuffix(".md") for s in stages]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_lab_runs_and_shows_its_widget(path):
    nb = _executed(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    widget_cell = next(c for c in code if "show(" in c.source)
    views = [o for o in widget_cell.outputs if WIDGET_VIEW in o.get("data", {})]
    assert len(views) == 1, widget_cell.outputs
    assert _text(code[-1]).strip(), "the reader's own cell printed nothing"


def test_busbw_lab_prints_nccl_tests_factor():
    """nccl-tests' all-reduce busbw = algbw * 2(n-1)/n (PERFORMANCE.md of nccl-tests)."""
    nb = _executed(ROOT / "notebooks" / "04-what-each-gpu-sends.ipynb")
    text = _text([c for c in nb.cells if c.cell_type == "code"][-1])
    algbw, busbw = map(float, re.findall(r"([\d.]+) GB/s", text))
    assert algbw == pytest.approx(1e9 / 5e-3 / 1e9, abs=0.05)
    assert busbw == pytest.approx(algbw * 2 * 7 / 8, abs=0.05)
